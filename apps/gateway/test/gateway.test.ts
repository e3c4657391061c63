// Integration: the gateway in-process on a free port, a real redis-server, the official graphql-ws client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@wirestream/testkit';
import { createMetricsRegistry } from '@wirestream/telemetry';
import { createGatewayMetrics } from '../src/index.js';
import { collect, LISTING, rawSocket, refusedUpgrade, startTestGateway, type ExecutionResult, type TestGateway } from './support/gateway.js';

let t: TestGateway;
let gateway: TestGateway['gateway'];
let url: string;
let httpBase: string;
let topic: string;

const connect = () => t.connect();
const publishListing = (listingId: string, eventType?: string, atOffset?: string) => t.publishListing(listingId, eventType, atOffset);

beforeAll(async () => {
  const registry = createMetricsRegistry({ service: 'gateway-test', processMetrics: false });
  t = await startTestGateway(
    { connectionInitWaitTimeoutMs: 500, maxSubscriptionsPerConnection: 5 },
    { metrics: { registry, series: createGatewayMetrics(registry) } },
  );
  ({ gateway, url, httpBase, topic } = t);
});

afterAll(() => t?.stop());

describe('HTTP probes', () => {
  it('answers /healthz, /readyz and /stats', async () => {
    expect((await fetch(`${httpBase}/healthz`)).status).toBe(200);
    const ready = await fetch(`${httpBase}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe('ready');
    const stats = (await (await fetch(`${httpBase}/stats`)).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ ready: true, draining: false });
    expect((await fetch(`${httpBase}/nope`)).status).toBe(404);
    // Debug endpoints are off unless configured.
    expect((await fetch(`${httpBase}/debug/memory`)).status).toBe(404);
  });
});

describe('fan-out', () => {
  it('executes once per distinct operation and delivers to every subscriber, with positions', async () => {
    const a = collect(connect(), LISTING);
    const b = collect(connect(), LISTING);
    const filtered = collect(connect(), 'subscription($id: ID) { listingUpdated(listing_id: $id) { listing_id } }', { id: 'lst-7' });
    await waitFor(() => gateway.stats().groups === 2 && gateway.stats().confirmedChannels === 16, {
      message: 'two groups with all 16 channels subscribed in Redis',
    });
    const executionsBefore = gateway.stats().executions;

    const offsets = [await publishListing('lst-1'), await publishListing('lst-7'), await publishListing('lst-2')];
    await waitFor(() => a.results.length === 3 && b.results.length === 3 && filtered.results.length === 1, {
      message: 'deliveries to all three clients',
    });

    expect(a.results.map((r) => (r.data as { listingUpdated: { listing_id: string } }).listingUpdated.listing_id)).toEqual([
      'lst-1',
      'lst-7',
      'lst-2',
    ]);
    expect(b.results).toEqual(a.results);
    expect(a.results[0]?.extensions).toEqual({ position: { topic, partition: 0, offset: offsets[0], epoch: expect.any(String) as unknown } });
    expect(filtered.results[0]?.data).toEqual({ listingUpdated: { listing_id: 'lst-7' } });
    // 3 events for the shared operation + 1 matching event for the filtered one: not 3 × subscribers.
    expect(gateway.stats().executions - executionsBefore).toBe(4);

    // Prometheus agrees with the engine's own counters, and saw the event-to-wire latency.
    const metrics = await (await fetch(`${httpBase}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
    expect(value('wirestream_gateway_frames_out_total')).toBe(gateway.stats().framesOut);
    expect(value('wirestream_gateway_events_in_total')).toBe(gateway.stats().eventsIn);
    expect(value('wirestream_gateway_operations')).toBe(2);
    expect(value('wirestream_gateway_connections')).toBeGreaterThanOrEqual(3);
    expect(value('wirestream_gateway_bytes_out_total')).toBeGreaterThan(0);
    expect(value('wirestream_gateway_event_to_wire_seconds_count')).toBe(gateway.stats().executions);

    a.dispose();
    b.dispose();
    filtered.dispose();
    await waitFor(() => gateway.stats().groups === 0 && gateway.stats().channels === 0, {
      message: 'groups and Redis channels released after complete',
    });
  });

  it('drops re-published positions: at-least-once upstream, no duplicates to clients', async () => {
    const sub = collect(connect(), LISTING);
    await waitFor(() => gateway.stats().subscriptions === 1 && gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
    const before = gateway.stats().duplicates;
    const first = await publishListing('lst-5');
    await publishListing('lst-5', 'ListingUpdated', first); // the same position again (ingest restarted)
    const second = await publishListing('lst-6');
    await publishListing('lst-5', 'ListingUpdated', first); // an older one, after a newer one
    await waitFor(() => gateway.stats().duplicates === before + 2, { message: 'two duplicates dropped' });
    await waitFor(() => sub.results.length === 2, { message: 'two deliveries' });
    expect(sub.results.map((r) => (r.extensions as { position: { offset: string } }).position.offset)).toEqual([first, second]);
    sub.dispose();
    // Redis pub/sub is at-most-once: the next test must not publish before its own subscription exists.
    await waitFor(() => gateway.stats().groups === 0, { message: 'released' });
  });

  it('filters on non-key arguments too', async () => {
    const closed = collect(connect(), 'subscription { listingUpdated(event_type: "ListingClosed") { listing_id event_type } }');
    await waitFor(() => gateway.stats().subscriptions === 1 && gateway.stats().confirmedChannels === 16, { message: 'this test\'s subscription live (no stale one)' });
    await publishListing('lst-3', 'ListingUpdated');
    await publishListing('lst-3', 'ListingClosed');
    await waitFor(() => closed.results.length === 1, { message: 'the one closed event' });
    expect(closed.results[0]?.data).toEqual({ listingUpdated: { listing_id: 'lst-3', event_type: 'ListingClosed' } });
    closed.dispose();
  });

  it('answers a query once and completes', async () => {
    const client = connect();
    const result = await new Promise<ExecutionResult>((resolve, reject) => {
      let value: ExecutionResult | undefined;
      client.subscribe({ query: '{ topics }' }, { next: (r) => (value = r), error: reject, complete: () => (value ? resolve(value) : reject(new Error('no result'))) });
    });
    expect(result.data).toEqual({ topics: ['bid-events', topic].sort() });
  });
});

describe('bad input gets a clear answer and the server stays up', () => {
  it('an invalid subscription gets GraphQL errors, not a closed socket', async () => {
    const client = connect();
    const bad = collect(client, 'subscription { listingUpdated { no_such_field } }');
    await waitFor(() => bad.errors.length === 1, { message: 'validation error' });
    expect(JSON.stringify(bad.errors[0])).toContain('Cannot query field \\"no_such_field\\" on type \\"ListingEvent\\"');
    const syntax = collect(client, 'subscription {');
    await waitFor(() => syntax.errors.length === 1, { message: 'syntax error' });
    expect(JSON.stringify(syntax.errors[0])).toContain('Syntax Error');
    // The same socket still works.
    const good = collect(client, LISTING);
    await waitFor(() => gateway.stats().subscriptions === 1 && gateway.stats().confirmedChannels === 16, { message: 'this test\'s subscription live (no stale one)' });
    await publishListing('lst-9');
    await waitFor(() => good.results.length === 1, { message: 'delivery after errors' });
    good.dispose();
  });

  it('limits subscriptions per connection with an error naming the limit', async () => {
    const client = connect();
    const subs = Array.from({ length: 6 }, (_, i) => collect(client, `subscription S${i} { listingUpdated { listing_id } }`));
    await waitFor(() => subs[5]?.errors.length === 1, { message: 'sixth subscription refused' });
    expect(JSON.stringify(subs[5]?.errors[0])).toContain('the limit is 5');
    for (const s of subs) s.dispose();
  });

  it.each([
    ['subscribe before connection_init', [{ id: '1', type: 'subscribe', payload: { query: LISTING } }], 4401, 'Unauthorized'],
    ['double connection_init', [{ type: 'connection_init' }, { type: 'connection_init' }], 4429, 'Too many initialisation requests'],
    ['duplicate subscription id', [{ type: 'connection_init' }, { id: 'x', type: 'subscribe', payload: { query: LISTING } }, { id: 'x', type: 'subscribe', payload: { query: LISTING } }], 4409, 'Subscriber for x already exists'],
    ['unknown message type', [{ type: 'connection_init' }, { type: 'hello' }], 4400, ''],
    ['subscribe without payload', [{ type: 'connection_init' }, { id: '1', type: 'subscribe' }], 4400, 'payload'],
    ['a field of the wrong type', [{ type: 'connection_init' }, { id: 7, type: 'subscribe', payload: { query: LISTING } }], 4400, 'id'],
  ])('%s closes with %i', async (_name, frames, code, reason) => {
    const raw = rawSocket(url);
    await raw.opened;
    for (const frame of frames) raw.ws.send(JSON.stringify(frame));
    const closed = await raw.closed;
    expect(closed.code).toBe(code);
    expect(closed.reason).toContain(reason);
  });

  it('closes on invalid JSON (4400), a binary frame (4400) and init timeout (4408)', async () => {
    const json = rawSocket(url);
    await json.opened;
    json.ws.send('{not json');
    expect((await json.closed).code).toBe(4400);

    const binary = rawSocket(url);
    await binary.opened;
    binary.ws.send(Buffer.from('{"type":"connection_init"}'), { binary: true });
    expect(await binary.closed).toEqual({ code: 4400, reason: 'Binary frames are not part of graphql-transport-ws; send text' });

    const silent = rawSocket(url);
    await silent.opened;
    expect(await silent.closed).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
  });

  it('refuses a missing subprotocol with 4406, and one it does not speak at the upgrade, naming those it speaks', async () => {
    const none = rawSocket(url, null);
    expect(await none.closed).toEqual({ code: 4406, reason: 'Subprotocol not acceptable: use graphql-transport-ws or graphql-ws' });
    // Upgrading without a subprotocol would make `ws` (and browsers) fail the handshake with only 1006.
    const refused = await refusedUpgrade(url, ['mqtt', 'wamp.2.json']);
    expect(refused).toEqual({
      status: 400,
      body: 'Subprotocol not acceptable: offered "mqtt, wamp.2.json"; this gateway speaks graphql-transport-ws, graphql-ws (subscriptions-transport-ws, deprecated) (Sec-WebSocket-Protocol)',
    });
    // Offered among others, the one it speaks is chosen.
    const mixed = rawSocket(url, ['mqtt', 'graphql-transport-ws']);
    await mixed.opened;
    expect(mixed.ws.protocol).toBe('graphql-transport-ws');
    mixed.ws.close();
  });

  it('with GATEWAY_LEGACY_PROTOCOL off, refuses a graphql-ws offer at the upgrade naming only graphql-transport-ws', async () => {
    const off = await startTestGateway({ legacyProtocol: false });
    try {
      expect(await refusedUpgrade(off.url, ['graphql-ws'])).toEqual({
        status: 400,
        body: 'Subprotocol not acceptable: offered "graphql-ws"; this gateway speaks graphql-transport-ws (Sec-WebSocket-Protocol)',
      });
    } finally {
      await off.stop();
    }
  });

  it('answers ping with pong', async () => {
    const raw = rawSocket(url);
    await raw.opened;
    raw.ws.send(JSON.stringify({ type: 'connection_init' }));
    raw.ws.send(JSON.stringify({ type: 'ping', payload: { n: 1 } }));
    await waitFor(() => raw.messages.length === 2, { message: 'ack and pong' });
    expect(raw.messages).toEqual([{ type: 'connection_ack' }, { type: 'pong', payload: { n: 1 } }]);
    raw.ws.close();
  });

  it('frames the shared payload bytes with each socket\'s own subscription id, non-ASCII ids and text intact', async () => {
    // The writer encodes a group's payloads once and lays every frame out from bytes: the head (the
    // socket's subscription id, any Unicode) is encoded per socket, the payload's bytes are shared.
    const ids = ['ünï-订阅-1', 'plain-2'];
    const sockets = ids.map((id) => {
      const raw = rawSocket(url);
      void raw.opened.then(() => {
        raw.ws.send(JSON.stringify({ type: 'connection_init' }));
        raw.ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query: 'subscription { listingUpdated { listing_id event_type } }' } }));
      });
      return raw;
    });
    await waitFor(() => gateway.stats().subscriptions === 2 && gateway.stats().confirmedChannels === 16, { message: 'both subscribed' });
    await publishListing('lst-ü', 'Prisänderung ✓');
    await publishListing('lst-2');
    await waitFor(() => sockets.every((r) => r.messages.length === 3), { message: 'ack and two events on each socket' });
    for (const [i, raw] of sockets.entries()) {
      const nexts = raw.messages.slice(1) as { id: string; type: string; payload: { data: unknown } }[];
      expect(nexts.map((m) => [m.id, m.type, m.payload.data])).toEqual([
        [ids[i], 'next', { listingUpdated: { listing_id: 'lst-ü', event_type: 'Prisänderung ✓' } }],
        [ids[i], 'next', { listingUpdated: { listing_id: 'lst-2', event_type: 'ListingUpdated' } }],
      ]);
      raw.ws.close();
    }
    await waitFor(() => gateway.stats().subscriptions === 0, { message: 'both gone' });
  });

  it('drops a malformed envelope from Redis without affecting others', async () => {
    const sub = collect(connect(), LISTING);
    await waitFor(() => gateway.stats().subscriptions === 1 && gateway.stats().confirmedChannels === 16, { message: 'this test\'s subscription live (no stale one)' });
    const before = gateway.stats().badEnvelopes;
    await t.publishRaw('not an envelope');
    await publishListing('lst-4');
    await waitFor(() => sub.results.length === 1, { message: 'the good event' });
    expect(gateway.stats().badEnvelopes).toBe(before + 1);
    expect(t.sink.lines.some((l) => l['msg'] === 'dropped a malformed envelope from Redis')).toBe(true);
    sub.dispose();
  });
});
