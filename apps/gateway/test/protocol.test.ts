// The graphql-transport-ws core without a transport: frames in as text, frames out through a
// recording writer, on the real in-process bus. What the uWS adapter adds is tested in gateway.test.ts.
import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, encodeEnvelope, shardOf } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { waitFor } from '@wirestream/testkit';
import {
  createAuthenticator,
  createConnectionState,
  createHub,
  createMemoryBus,
  createOperationCompiler,
  createProtocol,
  createRateLimiter,
  type Connection,
  type ConnectionWriter,
} from '../src/index.js';

interface TestConn extends Connection<TestConn> {
  readonly sent: Record<string, unknown>[];
  closedWith: { code: number; reason: string } | undefined;
}

function setup() {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const bus = createMemoryBus();
  const logger = createLogger({ name: 'protocol-test', destination: createMemorySink() });
  const writer: ConnectionWriter<TestConn> = {
    send: (c, frame) => void c.sent.push(JSON.parse(frame) as Record<string, unknown>),
    sendFrames: (c, head, payloads) => payloads.forEach((p) => c.sent.push(JSON.parse(head + p + '}') as Record<string, unknown>)),
    close(c, code, reason) {
      c.closedWith = { code, reason };
      c.closed = true;
    },
    hasRoom: () => true,
    replayChunkBytes: 65_536,
  };
  const subscribeRateLimiter = createRateLimiter({ ratePerSecond: 10, burst: 3 });
  const hub = createHub<TestConn>({ schema, broker: bus.broker, logger, writer });
  const protocol = createProtocol<TestConn>(
    { schema, compiler: createOperationCompiler(schema), hub, writer, authenticator: createAuthenticator({ mode: 'anonymous' }), subscribeRateLimiter, logger },
    { connectionInitWaitTimeoutMs: 50, maxSubscriptionsPerConnection: 2 },
  );
  const open = (): TestConn => {
    const c: TestConn = { ...createConnectionState<TestConn>(subscribeRateLimiter), sent: [], closedWith: undefined };
    protocol.open(c);
    return c;
  };
  const send = (c: TestConn, message: unknown): void => protocol.message(c, typeof message === 'string' ? message : JSON.stringify(message));
  const ready = async (): Promise<TestConn> => {
    const c = open();
    send(c, { type: 'connection_init' });
    await waitFor(() => c.sent.some((m) => m['type'] === 'connection_ack'), { timeoutMs: 1_000, intervalMs: 1 });
    return c;
  };
  return { bus, hub, protocol, open, send, ready };
}

const LISTING = 'subscription { listingUpdated { listing_id } }';

describe('protocol core', () => {
  it('acknowledges init, streams a subscription, answers ping, and completes', async () => {
    const { bus, hub, protocol, send, ready } = setup();
    const c = await ready();
    send(c, { type: 'ping', payload: { t: 1 } });
    expect(c.sent.at(-1)).toEqual({ type: 'pong', payload: { t: 1 } });
    send(c, { id: 's1', type: 'subscribe', payload: { query: LISTING } });
    await waitFor(() => hub.stats().confirmedChannels === 16, { timeoutMs: 1_000, intervalMs: 1 });
    const envelope = encodeEnvelope({ topic: 'listing-events', partition: 0, offset: '0', key: 'lst-1', ts: Date.now() }, '{"listing_id":"lst-1"}');
    bus.publish(channelName('ws', 'listing-events', shardOf('lst-1', 16)), envelope);
    await waitFor(() => c.sent.some((m) => m['type'] === 'next'), { timeoutMs: 1_000, intervalMs: 1 });
    expect(c.sent.at(-1)).toMatchObject({ id: 's1', type: 'next', payload: { data: { listingUpdated: { listing_id: 'lst-1' } } } });
    send(c, { id: 's1', type: 'complete' });
    expect(hub.stats()).toMatchObject({ subscribers: 0, groups: 0 });
    send(c, { id: 's2', type: 'subscribe', payload: { query: LISTING } });
    protocol.closed(c);
    expect(hub.stats().subscribers).toBe(0);
  });

  it('answers a query once from the schema and completes it', async () => {
    const { send, ready } = setup();
    const c = await ready();
    send(c, { id: 'q', type: 'subscribe', payload: { query: '{ topics }' } });
    expect(c.sent.slice(-2)).toEqual([
      { id: 'q', type: 'next', payload: { data: { topics: ['bid-events', 'listing-events'] } } },
      { id: 'q', type: 'complete' },
    ]);
  });

  it('closes with the graphql-ws codes: bad frame 4400, subscribe before ack 4401, duplicate id 4409, double init 4429, no init 4408', async () => {
    const { open, send, ready } = setup();
    const bad = open();
    send(bad, '{"type":');
    expect(bad.closedWith?.code).toBe(4400);
    const early = open();
    send(early, { id: '1', type: 'subscribe', payload: { query: LISTING } });
    expect(early.closedWith).toEqual({ code: 4401, reason: 'Unauthorized' });
    const dup = await ready();
    send(dup, { id: '1', type: 'subscribe', payload: { query: LISTING } });
    send(dup, { id: '1', type: 'subscribe', payload: { query: LISTING } });
    expect(dup.closedWith?.code).toBe(4409);
    const twice = await ready();
    send(twice, { type: 'connection_init' });
    expect(twice.closedWith?.code).toBe(4429);
    const silent = open();
    await waitFor(() => silent.closedWith, { timeoutMs: 1_000, intervalMs: 5 });
    expect(silent.closedWith?.code).toBe(4408);
  });

  it('refuses a subscription id past GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH with 4400 before storing it; one at the limit is served', async () => {
    const { hub, send, ready } = setup();
    const atLimit = await ready();
    send(atLimit, { id: 'i'.repeat(128), type: 'subscribe', payload: { query: LISTING } });
    expect(atLimit.closedWith).toBeUndefined();
    expect(hub.stats().subscribers).toBe(1);
    const tooLong = await ready();
    send(tooLong, { id: 'i'.repeat(129), type: 'subscribe', payload: { query: LISTING } });
    expect(tooLong.closedWith).toEqual({ code: 4400, reason: 'Invalid subscribe: the subscription id has 129 characters; the limit is 128 (GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH)' });
    expect(tooLong.subscriptions?.size ?? 0).toBe(0);
    expect(hub.stats().subscribers).toBe(1);
  });

  it('bounds subscriptions and subscribe rate per connection with an error per refusal, not a close', async () => {
    const { send, ready } = setup();
    const c = await ready();
    for (let i = 0; i < 4; i++) send(c, { id: `s${i}`, type: 'subscribe', payload: { query: LISTING } });
    const errors = c.sent.filter((m) => m['type'] === 'error');
    expect(errors.map((e) => e['id'])).toEqual(['s2', 's3']);
    expect(JSON.stringify(errors[0])).toMatch(/Too many subscriptions on this connection: the limit is 2/);
    expect(JSON.stringify(errors[1])).toMatch(/Too many subscribe messages/);
    expect(c.closedWith).toBeUndefined();
  });
});
