// SSE events that wait in the writer's own queue (transport/pending-writes.ts, decision 0030): a
// client that stops reading while MBs of events go out and then reads again gets every event once,
// in order, each with its own `id:` — though most of them never went into uWS's buffer — and every
// HTTP chunk holds whole events of at most uWS's cork buffer, 16 KiB − 64 (one bigger event alone), so
// what uWS holds for the response stays small. Real redis-server, real uWS server, a raw HTTP client
// (fetch would keep reading into its own buffers).
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { channelName, encodeEnvelope, historyAppendArgs, historyPartitionsKey, shardOf } from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { startTestGateway, type TestGateway } from './support/gateway.js';

const LIMIT = 64 * 1024 * 1024; // 64 MiB: nothing here is a slow consumer
const SOCKET_BUFFER = 8_192; // GATEWAY_SOCKET_BUFFER_BYTES, the default
const CHUNK_BYTES = 16 * 1024 - 64; // the SSE writer's chunk bound: uWS's cork buffer
const EVENT_BYTES = 2_000;
const PARTITION = 1;

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ maxBackpressureBytes: LIMIT, socketBufferBytes: SOCKET_BUFFER });
});
afterAll(async () => {
  await t?.stop();
});

/** Publishes `count` events of about EVENT_BYTES each from offset `from`, history first, as ingest would. */
async function publishBig(from: number, count: number, on: TestGateway = t): Promise<void> {
  const publisher = new Redis(on.redisServer.url);
  const filler = 'x'.repeat(EVENT_BYTES);
  const channel = channelName('ws', on.topic, shardOf('lst-big', 16));
  for (let i = from; i < from + count; i += 100) {
    const pipeline = publisher.pipeline();
    for (let j = i; j < Math.min(i + 100, from + count); j++) {
      const payload = JSON.stringify({ event_id: `big-${j}`, event_type: 'ListingUpdated', listing_id: 'lst-big', occurred_at: filler });
      const envelope = encodeEnvelope({ topic: on.topic, partition: PARTITION, offset: String(j), key: 'lst-big', ts: Date.now() }, payload);
      pipeline.call('XADD', ...historyAppendArgs('wsh', on.topic, PARTITION, String(j), channel, envelope));
      pipeline.sadd(historyPartitionsKey('wsh', on.topic), String(PARTITION));
      pipeline.publish(channel, envelope);
    }
    await pipeline.exec();
  }
  publisher.disconnect();
}

/** A POST stream read by hand: the response head, then the body's HTTP chunks as they arrive. */
interface RawStream {
  readonly socket: Socket;
  /** Each HTTP chunk's data, as the server wrote it. */
  readonly chunks: Buffer[];
  /** Bytes of chunk data received. */
  bytes(): number;
}

function openRawStream(port: number, query: string): Promise<RawStream> {
  const body = JSON.stringify({ query });
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let received = 0;
  let input = Buffer.alloc(0);
  let headDone = false;
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (data: Buffer) => {
      input = Buffer.concat([input, data]);
      if (!headDone) {
        const end = input.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = input.subarray(0, end).toString('latin1');
        if (!head.startsWith('HTTP/1.1 200') || !/transfer-encoding: chunked/i.test(head)) reject(new Error(`unexpected response head: ${head}`));
        headDone = true;
        input = input.subarray(end + 2); // uWS writes each chunk as `\r\n<hex>\r\n<data>`
        resolve({ socket, chunks, bytes: () => received });
      }
      // Chunks: `\r\n<hex size>\r\n<data>`, the last one of size 0.
      for (;;) {
        const sizeEnd = input.indexOf('\r\n', 2);
        if (input.length < 2 || sizeEnd < 0) return;
        const size = Number.parseInt(input.subarray(2, sizeEnd).toString('latin1'), 16);
        if (input.length < sizeEnd + 2 + size) return;
        chunks.push(Buffer.from(input.subarray(sizeEnd + 2, sizeEnd + 2 + size)));
        received += size;
        input = input.subarray(sizeEnd + 2 + size);
      }
    });
    socket.write(
      `POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

interface Parsed {
  readonly id: string | undefined;
  readonly offset: string | undefined;
  readonly start: boolean;
}

/** The `next` events of the stream, from the chunks' text (comments skipped). */
function eventsOf(chunks: readonly Buffer[]): Parsed[] {
  const out: Parsed[] = [];
  for (const block of Buffer.concat(chunks).toString('utf8').split('\n\n')) {
    const lines = block.split('\n').filter((l) => l !== '' && !l.startsWith(':'));
    if (lines.length === 0) continue;
    const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
    const data = JSON.parse(lines.find((l) => l.startsWith('data: '))?.slice(6) ?? 'null') as { extensions?: { position?: { offset: string }; start?: unknown } } | null;
    out.push({ id, offset: data?.extensions?.position?.offset, start: data?.extensions?.start !== undefined });
  }
  return out;
}

describe('SSE events waiting in the writer', () => {
  it('reach a client that stopped reading, once each and in order with their own ids, in chunks of whole events no bigger than the cork buffer', async () => {
    const port = Number(new URL(t.httpBase).port);
    const stream = await openRawStream(port, 'subscription { listingUpdated { occurred_at } }');
    await waitFor(() => t.gateway.stats().subscriptions === 1 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });

    // Stop reading: the kernel's buffers fill, uWS holds a little, the rest waits in the writer.
    stream.socket.pause();
    const events = 12_000; // ~24 MB: far past the kernel's buffers on loopback
    await publishBig(0, events);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const whilePaused = stream.bytes();
    expect(whilePaused).toBeLessThan(events * EVENT_BYTES); // the client really stopped reading
    stream.socket.resume();

    const nexts = (): Parsed[] => eventsOf(stream.chunks).filter((e) => !e.start);
    await waitFor(() => stream.bytes() >= events * EVENT_BYTES && nexts().length === events, { message: `${events} events`, timeoutMs: 60_000 });
    const got = nexts();
    expect(got.map((e) => e.offset)).toEqual(Array.from({ length: events }, (_, i) => String(i)));
    // Each event's cursor names its own position (heads of waiting events are taken in order, at the flush).
    expect(got.every((e) => e.id?.endsWith(`.${PARTITION}:${e.offset}`))).toBe(true);
    // One HTTP chunk per write, of whole events (or comment lines), at most the cork buffer but for one bigger event.
    const eventSize = Math.max(...stream.chunks.map((c) => c.toString('utf8').split('\n\n')[0]?.length ?? 0)) + 2;
    expect(stream.chunks.every((c) => c.at(-1) === 0x0a)).toBe(true);
    expect(Math.max(...stream.chunks.map((c) => c.length))).toBeLessThanOrEqual(Math.max(CHUNK_BYTES, eventSize));

    // Caught up: later events arrive at once (nothing is left waiting).
    await publishBig(events, 3);
    await waitFor(() => nexts().length === events + 3, { message: 'live again' });
    stream.socket.destroy();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'stream closed' });
  }, 90_000);
});

describe('the slow-consumer close of an SSE stream', () => {
  // uWS cuts a response 10 s after a write it had to buffer unless its writable event fires: a reader
  // that stays paused past that lost the last event (issue 34). The writer keeps the ended stream's
  // socket for a grace period instead, so the reconnect event reaches a reader that reads again.
  it('reaches a reader that stays paused 15 s after its stream was ended, then the response ends', async () => {
    const slow = await startTestGateway({ maxBackpressureBytes: 262_144, socketBufferBytes: SOCKET_BUFFER, sseHeartbeatMs: 60_000 });
    try {
      const stream = await openRawStream(Number(new URL(slow.httpBase).port), 'subscription { listingUpdated { occurred_at } }');
      await waitFor(() => slow.gateway.stats().subscriptions === 1 && slow.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
      let closed = false;
      stream.socket.on('close', () => (closed = true));
      stream.socket.pause();
      for (let from = 0; slow.gateway.stats().subscriptions === 1; from += 500) {
        expect(from, 'the paused stream was never ended as a slow consumer').toBeLessThan(50_000);
        await publishBig(from, 500, slow);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      expect(closed).toBe(false);
      stream.socket.resume();
      await waitFor(() => closed || stream.chunks.at(-1)?.length === 0, { message: 'the response ended', timeoutMs: 20_000 });
      expect(stream.chunks.at(-1)?.length, 'the terminating chunk').toBe(0);
      const blocks = Buffer.concat(stream.chunks).toString('utf8').split('\n\n').filter((b) => b.split('\n').some((l) => l.startsWith('data: ')));
      const last = JSON.parse(blocks.at(-1)!.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { extensions?: { reconnect?: { code?: string } } };
      expect(last.extensions?.reconnect?.code).toBe('slow_consumer');
      stream.socket.destroy();
    } finally {
      await slow.stop();
    }
  }, 120_000);
});
