// The legacy subscriptions-transport-ws core (`graphql-ws` subprotocol) without a transport: frames in
// as text, frames out through a recording writer, on the real in-process bus and the same hub.
import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, encodeEnvelope, shardOf } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { waitFor } from '@wirestream/testkit';
import {
  createAuthenticator,
  createConnectionState,
  createHub,
  createLegacyProtocol,
  createMemoryBus,
  createOperationCompiler,
  createRateLimiter,
  type Connection,
  type ConnectionWriter,
} from '../src/index.js';

interface TestConn extends Connection<TestConn> {
  readonly sent: Record<string, unknown>[];
  closedWith: { code: number; reason: string } | undefined;
}

const LISTING = 'subscription { listingUpdated { listing_id } }';

function setup() {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const bus = createMemoryBus();
  const logger = createLogger({ name: 'legacy-test', destination: createMemorySink() });
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
  const subscribeRateLimiter = createRateLimiter({ ratePerSecond: 10, burst: 5 });
  const hub = createHub<TestConn>({ schema, broker: bus.broker, history: bus.history, logger, writer });
  const protocol = createLegacyProtocol<TestConn>(
    { schema, compiler: createOperationCompiler(schema), hub, writer, authenticator: createAuthenticator({ mode: 'anonymous' }), subscribeRateLimiter, logger },
    { connectionInitWaitTimeoutMs: 50, maxSubscriptionsPerConnection: 2, maxSubscriptionIdLength: 16 },
  );
  const open = (): TestConn => {
    const c: TestConn = { ...createConnectionState<TestConn>(subscribeRateLimiter), sent: [], closedWith: undefined };
    protocol.open(c);
    return c;
  };
  const send = (c: TestConn, message: unknown): void => protocol.message(c, typeof message === 'string' ? message : JSON.stringify(message));
  const ready = async (): Promise<TestConn> => {
    const c = open();
    send(c, { type: 'connection_init', payload: {} });
    await waitFor(() => c.sent.some((m) => m['type'] === 'connection_ack'), { timeoutMs: 1_000, intervalMs: 1 });
    return c;
  };
  const publish = (listingId: string, offset: number): void => {
    const text = encodeEnvelope({ topic: 'listing-events', partition: 0, offset: String(offset), key: listingId, ts: Date.now() }, JSON.stringify({ listing_id: listingId }));
    bus.publish(channelName('ws', 'listing-events', shardOf(listingId, 16)), text, { topic: 'listing-events', partition: 0, offset: String(offset) });
  };
  return { hub, protocol, open, send, ready, publish };
}

describe('legacy protocol core (subscriptions-transport-ws)', () => {
  it('acks with ka, runs starts sent before the ack, delivers `data` from the shared group, answers stop with complete', async () => {
    const { hub, open, send, publish } = setup();
    const c = open();
    // Its client sends start right behind connection_init, without waiting for the ack.
    send(c, { type: 'connection_init', payload: {} });
    send(c, { id: '1', type: 'start', payload: { query: LISTING } });
    await waitFor(() => hub.stats().confirmedChannels === 16, { timeoutMs: 1_000, intervalMs: 1 });
    expect(c.sent.slice(0, 2)).toEqual([{ type: 'connection_ack' }, { type: 'ka' }]);
    publish('lst-a', 0);
    await waitFor(() => c.sent.length === 3, { timeoutMs: 1_000, intervalMs: 1 });
    expect(c.sent[2]).toEqual({ id: '1', type: 'data', payload: { data: { listingUpdated: { listing_id: 'lst-a' } }, extensions: { position: expect.objectContaining({ offset: '0' }) as unknown } } });
    send(c, { id: '1', type: 'stop' });
    expect(c.sent[3]).toEqual({ id: '1', type: 'complete' });
    expect(hub.stats().subscribers).toBe(0);
  });

  it('forgets a start stopped before the ack', async () => {
    const { hub, open, send } = setup();
    const c = open();
    send(c, { type: 'connection_init', payload: {} });
    send(c, { id: '1', type: 'start', payload: { query: LISTING } });
    send(c, { id: '1', type: 'stop' });
    await waitFor(() => c.sent.some((m) => m['type'] === 'connection_ack'), { timeoutMs: 1_000, intervalMs: 1 });
    expect(c.sent).toEqual([{ id: '1', type: 'complete' }, { type: 'connection_ack' }, { type: 'ka' }]);
    expect(hub.stats().subscribers).toBe(0);
  });

  it('answers queries with data then complete, and operation errors with `error` carrying the errors', async () => {
    const { send, ready } = setup();
    const c = await ready();
    send(c, { id: 'q', type: 'start', payload: { query: '{ __typename }' } });
    send(c, { id: 'bad', type: 'start', payload: { query: 'subscription { nope }' } });
    const [, , data, complete, error] = c.sent;
    expect(data).toMatchObject({ id: 'q', type: 'data', payload: { data: { __typename: 'Query' } } });
    expect(complete).toEqual({ id: 'q', type: 'complete' });
    expect(error).toMatchObject({ id: 'bad', type: 'error', payload: [{ message: expect.stringContaining('nope') as unknown }] });
  });

  it('gives the starting point as a data-less `data` when asked (extensions.start)', async () => {
    const { send, ready } = setup();
    const c = await ready();
    send(c, { id: 's', type: 'start', payload: { query: LISTING, extensions: { start: true } } });
    await waitFor(() => c.sent.length === 3, { timeoutMs: 1_000, intervalMs: 1 });
    expect(c.sent[2]).toMatchObject({ id: 's', type: 'data', payload: { extensions: { start: { positions: {} } } } });
  });

  it('turns hostile input into protocol errors, never a throw, and keeps serving', async () => {
    const { send, ready, open } = setup();
    const c = await ready();
    const hostile: unknown[] = [
      'not json',
      '[1,2]',
      'null',
      '{"type":7}',
      { type: 'start' },
      { id: '', type: 'start', payload: { query: LISTING } },
      { id: 'x'.repeat(10_000), type: 'start', payload: { query: LISTING } },
      { id: '2', type: 'start' },
      { id: '3', type: 'start', payload: { query: 42 } },
      { id: '4', type: 'start', payload: { query: LISTING, variables: [1] } },
      { id: '5', type: 'start', payload: { query: LISTING, extensions: { start: 'yes' } } },
      { id: '6', type: 'start', payload: { query: LISTING, extensions: { resume: { epoch: 1 } } } },
      { id: '7', type: 'start', payload: { query: LISTING, operationName: 5 } },
      { type: 'subscribe', id: '8', payload: { query: LISTING } },
      { type: 'connection_init' },
      { id: 'nobody', type: 'stop' },
    ];
    for (const message of hostile) expect(() => send(c, message)).not.toThrow();
    const answers = c.sent.slice(2);
    expect(answers.map((m) => m['type'])).toEqual([
      ...Array<string>(4).fill('connection_error'),
      ...Array<string>(9).fill('error'),
      'error',
      'connection_error',
    ]);
    expect(c.closedWith).toBeUndefined();
    // The long id is refused without being stored or echoed back.
    expect(JSON.stringify(answers[6])).toContain('the limit is 16 (GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH)');
    expect(answers[6]).not.toHaveProperty('id');
    expect(c.subscriptions?.size ?? 0).toBe(0);

    const early = open();
    send(early, { id: '1', type: 'start', payload: { query: LISTING } });
    expect(early.sent).toEqual([{ id: '1', type: 'error', payload: [{ message: 'Send connection_init before start' }] }]);
    await waitFor(() => early.closedWith !== undefined, { timeoutMs: 1_000, intervalMs: 1 });
    expect(early.closedWith).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
    send(c, { type: 'connection_terminate' });
    expect(c.closedWith).toEqual({ code: 1000, reason: 'connection_terminate' });
  });

  it('applies the same limits: subscriptions per connection, and a start id in use replaces its subscription', async () => {
    const { hub, send, ready } = setup();
    const c = await ready();
    send(c, { id: 'a', type: 'start', payload: { query: LISTING } });
    send(c, { id: 'a', type: 'start', payload: { query: LISTING } });
    expect(hub.stats().subscribers).toBe(1);
    send(c, { id: 'b', type: 'start', payload: { query: LISTING } });
    send(c, { id: 'c', type: 'start', payload: { query: LISTING } });
    expect(c.sent.at(-1)).toMatchObject({ id: 'c', type: 'error', payload: [{ message: expect.stringContaining('the limit is 2') as unknown }] });
    expect(hub.stats().subscribers).toBe(2);
  });
});
