// Frames that wait for a socket in the writer's own queue (transport/pending-writes.ts, decision 0024):
// a client that stops reading for a while and then reads again gets every frame once, in order, with
// the server's control frames (here a pong) in their place among the events — though most of what
// waited for it never went into uWS's buffer. Real redis-server, real uWS server, a raw ws client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { channelName, encodeEnvelope, shardOf } from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { rawSocket, startTestGateway, type TestGateway } from './support/gateway.js';

const LIMIT = 64 * 1024 * 1024; // 64 MiB: nothing here is a slow consumer
const EVENT_BYTES = 8_000;

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ maxBackpressureBytes: LIMIT });
});
afterAll(async () => {
  await t?.stop();
});

interface Frame {
  readonly type: string;
  readonly id?: string;
  readonly payload?: { extensions?: { position?: { offset: string } } };
}

/** Publishes `count` events of about EVENT_BYTES each from offset `from`, as ingest would. */
async function publishBig(from: number, count: number): Promise<void> {
  const publisher = new Redis(t.redisServer.url);
  const filler = 'x'.repeat(EVENT_BYTES);
  for (let i = from; i < from + count; i += 100) {
    const pipeline = publisher.pipeline();
    for (let j = i; j < Math.min(i + 100, from + count); j++) {
      const payload = JSON.stringify({ event_id: `big-${j}`, event_type: 'ListingUpdated', listing_id: 'lst-big', occurred_at: filler });
      pipeline.publish(channelName('ws', t.topic, shardOf('lst-big', 16)), encodeEnvelope({ topic: t.topic, partition: 1, offset: String(j), key: 'lst-big', ts: Date.now() }, payload));
    }
    await pipeline.exec();
  }
  publisher.disconnect();
}

describe('frames waiting in the writer', () => {
  it('reach a client that stopped reading, once each and in order, control frames in their place', async () => {
    const client = rawSocket(t.url);
    await client.opened;
    client.ws.send(JSON.stringify({ type: 'connection_init' }));
    await waitFor(() => client.messages.length === 1, { message: 'ack' });
    client.ws.send(JSON.stringify({ id: 'big', type: 'subscribe', payload: { query: 'subscription { listingUpdated { occurred_at } }' } }));
    await waitFor(() => t.gateway.stats().subscriptions === 1 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });

    // Stop reading: the kernel's buffers fill, uWS holds a little, the rest waits in the writer.
    const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const events = 3_000; // ~24 MB: far past the kernel's buffers on loopback
    const framesBefore = t.gateway.stats().framesOut;
    await publishBig(0, events / 2);
    // The hub has handed the first half to the writer (Redis acknowledging the publishes does not
    // mean the gateway processed them: on a busy machine the ping could overtake them).
    await waitFor(() => t.gateway.stats().framesOut >= framesBefore + events / 2, { message: 'first half written', timeoutMs: 30_000 });
    client.ws.send(JSON.stringify({ type: 'ping' })); // answered with a pong after the first half
    await publishBig(events / 2, events / 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.resume();

    await waitFor(() => client.messages.length === 1 + events + 1, { message: `ack + ${events} events + pong`, timeoutMs: 60_000 });
    const frames = client.messages.slice(1) as Frame[];
    const pongAt = frames.findIndex((f) => f.type === 'pong');
    const nexts = frames.filter((f) => f.type === 'next');
    expect(nexts.map((f) => f.payload?.extensions?.position?.offset)).toEqual(Array.from({ length: events }, (_, i) => String(i)));
    expect(pongAt).toBeGreaterThanOrEqual(events / 2); // after every event published before the ping
    expect(nexts.every((f) => f.id === 'big')).toBe(true);

    // Caught up: later events arrive at once (nothing is left waiting).
    await publishBig(events, 3);
    await waitFor(() => client.messages.length === 1 + events + 1 + 3, { message: 'live again' });
    client.ws.close();
    await client.closed;
  }, 90_000);
});
