// @lookup fields resolved from a real federation subgraph through `_entities`, end to end on real
// Redis with graphql-ws clients: one request per distinct key set shared by every operation group,
// a warm cache sends nothing, order and positions hold while the subgraph answers in 0–50 ms, and a
// subgraph that is down yields field errors with positions (and is asked again once back).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityLoader } from '@wirestream/lookups';
import { waitFor } from '@wirestream/testkit';
import { createMetricsRegistry, type Registry } from '@wirestream/telemetry';
import { createLookupLoaders, createLookupMetrics, type LookupSettings } from '../src/index.js';
import { startSubgraph, withProfileLookup, type TestSubgraph } from './support/subgraph.js';
import { collect, startTestGateway, type TestGateway } from './support/gateway.js';

interface Frame {
  readonly data?: { listingUpdated: { listing_id: string; profile?: { title: string } | null } | null } | null;
  readonly errors?: readonly { message: string; path?: readonly (string | number)[] }[];
  readonly extensions?: { position?: { offset: string } };
}

const settings = (url: string, overrides: Partial<LookupSettings> = {}): LookupSettings => ({
  sources: new Map([['listings', url]]),
  timeoutMs: 2_000,
  cacheTtlMs: 60_000,
  cacheMaxEntries: 10_000,
  maxBatchSize: 100,
  maxConcurrentRequests: 8,
  ...overrides,
});

/** A gateway whose schema has `ListingEvent.profile @lookup(source: "listings")`, wired to `subgraph`. */
async function gatewayOver(subgraph: TestSubgraph, overrides: Partial<LookupSettings> = {}): Promise<{ t: TestGateway; loaders: Map<string, EntityLoader>; registry: Registry }> {
  const loaders = new Map<string, EntityLoader>();
  const registry = createMetricsRegistry({ service: 'gateway' });
  const observers = createLookupMetrics(registry);
  const t = await startTestGateway(
    { subscribeBurst: 1_000, subscribeRatePerSecond: 1_000 },
    { lookups: loaders },
    (ws) => {
      for (const [name, loader] of createLookupLoaders(ws, settings(subgraph.url, overrides), { observers })) loaders.set(name, loader);
    },
    withProfileLookup,
  );
  return { t, loaders, registry };
}

describe('batching across operation groups', () => {
  let subgraph: TestSubgraph;
  let t: TestGateway;
  let registry: Registry;
  beforeAll(async () => {
    subgraph = await startSubgraph();
    ({ t, registry } = await gatewayOver(subgraph));
  });
  afterAll(async () => {
    await t?.stop();
    await subgraph?.stop();
  });

  it('asks the subgraph once per distinct key for 1,000 distinct operations, and not at all with the cache warm', async () => {
    const OPERATIONS = 1_000;
    const PER_CONNECTION = 50;
    const subs: ReturnType<typeof collect>[] = [];
    for (let c = 0; c < OPERATIONS / PER_CONNECTION; c++) {
      const client = t.connect();
      for (let i = 0; i < PER_CONNECTION; i++) {
        const n = c * PER_CONNECTION + i;
        // Distinct documents: one operation group each.
        subs.push(collect(client, `subscription { listingUpdated { listing_id profile { title } op${n}: event_type } }`));
      }
    }
    await waitFor(() => t.gateway.stats().subscriptions === OPERATIONS && t.gateway.stats().groups === OPERATIONS && t.gateway.stats().confirmedChannels === 16, {
      timeoutMs: 30_000,
      message: '1,000 operation groups live',
    });

    const keys = ['lst-a', 'lst-b', 'lst-c', 'lst-a', 'lst-b', 'lst-c'];
    for (const key of keys) await t.publishListing(key);
    await waitFor(() => subs.every((s) => s.results.length === keys.length), { timeoutMs: 30_000, message: 'six events to every operation' });
    const cold = await subgraph.counts();
    expect(cold.representations).toBe(3);
    expect(cold.requests).toBeLessThanOrEqual(3);
    expect([...cold.keys].sort()).toEqual(['lst-a', 'lst-b', 'lst-c']);
    for (const s of subs) {
      expect((s.results as Frame[]).map((f) => f.data?.listingUpdated?.profile?.title)).toEqual(keys.map((k) => `Title of ${k}`));
    }

    // Warm: the same keys again cost the subgraph nothing.
    for (const key of keys) await t.publishListing(key);
    await waitFor(() => subs.every((s) => s.results.length === 2 * keys.length), { timeoutMs: 30_000, message: 'six more events to every operation' });
    const warm = await subgraph.counts();
    expect(warm.requests).toBe(cold.requests);
    expect(warm.representations).toBe(cold.representations);
    // The per-source series agree with the subgraph: its requests, three misses, every other load a hit.
    const text = await registry.metrics();
    const value = (name: string, labels: Record<string, string>): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
      return Number(line?.split(' ').pop());
    };
    const listings = { source: 'listings' };
    expect(value('wirestream_gateway_lookup_requests_total', listings)).toBe(cold.requests);
    expect(value('wirestream_gateway_lookup_batch_size_sum', listings)).toBe(3);
    expect(value('wirestream_gateway_lookup_loads_total', { ...listings, cache: 'miss' })).toBe(3);
    expect(value('wirestream_gateway_lookup_loads_total', { ...listings, cache: 'hit' })).toBe(2 * keys.length * OPERATIONS - 3);
    expect(text).not.toMatch(/^wirestream_gateway_lookup_errors_total\{[^}]*source="listings"[^}]*\} [1-9]/m); // none counted
    for (const s of subs) s.dispose();
  }, 120_000);
});

describe('order and failures', () => {
  let subgraph: TestSubgraph;
  let t: TestGateway;
  let loaders: Map<string, EntityLoader>;
  beforeAll(async () => {
    subgraph = await startSubgraph({ maxDelayMs: 50 });
    ({ t, loaders } = await gatewayOver(subgraph, { timeoutMs: 2_000 }));
  });
  afterAll(async () => {
    await t?.stop();
    await subgraph?.stop();
  });

  it('delivers every event once and in offset order per group while the subgraph answers in 0–50 ms', async () => {
    const a = collect(t.connect(), 'subscription { listingUpdated { listing_id profile { title views } } }');
    const b = collect(t.connect(), 'subscription { listingUpdated { profile { title } listing_id } }');
    const plain = collect(t.connect(), 'subscription { listingUpdated { listing_id } }');
    await waitFor(() => t.gateway.stats().subscriptions === 3 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
    const published: string[] = [];
    const ids: string[] = [];
    for (let chunk = 0; chunk < 30; chunk++) {
      // Ten events at a time, as ingest publishes a chunk; a key per event (each misses the cache),
      // some missing or failing at the subgraph. Offsets are taken in call order.
      const chunkIds = Array.from({ length: 10 }, (_, j) => {
        const i = chunk * 10 + j;
        return j === 4 ? `missing-${i}` : j === 7 ? `broken-${i}` : `ord-${i}`;
      });
      ids.push(...chunkIds);
      published.push(...(await Promise.all(chunkIds.map((id) => t.publishListing(id)))));
    }
    await waitFor(() => [a, b, plain].every((s) => s.results.length >= 300), { timeoutMs: 30_000, message: 'every event to every group' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const s of [a, b, plain]) expect((s.results as Frame[]).map((f) => f.extensions?.position?.offset)).toEqual(published);
    const frames = a.results as Frame[];
    ids.forEach((id, i) => {
      const frame = frames[i] as Frame;
      if (id.startsWith('missing-')) expect(frame.data?.listingUpdated?.profile).toBeNull();
      else if (id.startsWith('broken-')) {
        expect(frame.data?.listingUpdated?.profile).toBeNull();
        expect(frame.errors?.[0]?.path).toEqual(['listingUpdated', 'profile']);
        expect(frame.errors?.[0]?.message).toBe(`look-up source "listings": profile store failed for ${id}`);
      } else expect(frame.data?.listingUpdated?.profile?.title, JSON.stringify(frame.errors)).toBe(`Title of ${id}`);
    });
    // Batched: events that arrive together share a request (counted at the subgraph and in the loader).
    const counts = await subgraph.counts();
    expect(counts.representations).toBe(300);
    expect(counts.requests).toBeLessThan(300);
    expect(loaders.get('listings')?.stats).toMatchObject({ requests: counts.requests, representations: 300 });
    for (const s of [a, b, plain]) s.dispose();
  });

  it('with the subgraph down, events still arrive with field errors and positions; once back, look-ups resume', async () => {
    const sub = collect(t.connect(), 'subscription { listingUpdated { listing_id profile { title } } }');
    await waitFor(() => t.gateway.stats().subscriptions === 1, { message: 'subscribed (the previous test unsubscribed)' });
    const { port } = subgraph;
    await subgraph.stop();
    const down = [await t.publishListing('down-1'), await t.publishListing('down-2')];
    await waitFor(() => sub.results.length === 2, { message: 'two events while the subgraph is down' });
    for (const [i, frame] of (sub.results as Frame[]).entries()) {
      expect(frame.extensions?.position?.offset).toBe(down[i]);
      expect(frame.data).toEqual({ listingUpdated: { listing_id: `down-${i + 1}`, profile: null } });
      expect(frame.errors?.[0]?.path).toEqual(['listingUpdated', 'profile']);
      expect(frame.errors?.[0]?.message).toMatch(/^look-up source "listings" (is unreachable|did not answer within 2000 ms)/);
    }
    // The same port again: failures were not cached, so the same key is asked for once more.
    subgraph = await startSubgraph({ port });
    await t.publishListing('down-1');
    await waitFor(() => sub.results.length === 3, { message: 'an event after the subgraph came back' });
    expect((sub.results[2] as Frame).data?.listingUpdated?.profile?.title).toBe('Title of down-1');
    expect((sub.results[2] as Frame).errors).toBeUndefined();
    sub.dispose();
  });
});

describe('a plain HTTP/JSON source', () => {
  let server: Server;
  const asked: string[][] = [];
  let t: TestGateway;
  beforeAll(async () => {
    // A real HTTP service: GET /profiles?ids=a,b → { "items": [{ id, title }] }, 0–50 ms late; "missing-" ids it does not know.
    server = createServer((req, res) => {
      const ids = (new URL(req.url ?? '/', 'http://x').searchParams.get('ids') ?? '').split(',');
      asked.push(ids);
      const items = ids.filter((id) => !id.startsWith('missing-')).map((id) => ({ id, title: `HTTP title of ${id}` }));
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ items }));
      }, Math.random() * 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const loaders = new Map<string, EntityLoader>();
    const httpSettings = { ...settings('unused'), sources: new Map<string, string>(), httpSources: new Map([['listings', `http://127.0.0.1:${port}/profiles?ids={keys}#items`]]) };
    t = await startTestGateway({}, { lookups: loaders }, (ws) => {
      for (const [name, loader] of createLookupLoaders(ws, httpSettings)) loaders.set(name, loader);
    }, withProfileLookup);
  });
  afterAll(async () => {
    await t?.stop();
    server?.closeAllConnections();
    server?.close();
  });

  it('asks once per chunk for its distinct keys, matches entities by key, in order', async () => {
    const a = collect(t.connect(), 'subscription { listingUpdated { listing_id profile { title } } }');
    const b = collect(t.connect(), 'subscription { listingUpdated { profile { id } listing_id } }');
    await waitFor(() => t.gateway.stats().subscriptions === 2 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
    const ids = Array.from({ length: 40 }, (_, i) => (i % 20 === 3 ? `missing-${i % 20}` : `http-${i % 20}`));
    const published: string[] = [];
    for (let i = 0; i < ids.length; i += 10) published.push(...(await Promise.all(ids.slice(i, i + 10).map((id) => t.publishListing(id)))));
    await waitFor(() => a.results.length === 40 && b.results.length === 40, { message: 'forty events to both' });
    for (const s of [a, b]) expect((s.results as Frame[]).map((f) => f.extensions?.position?.offset)).toEqual(published);
    expect((a.results as Frame[]).map((f) => f.data?.listingUpdated?.profile?.title ?? null)).toEqual(ids.map((id) => (id.startsWith('missing-') ? null : `HTTP title of ${id}`)));
    // Twenty distinct keys, each asked once (the second round is cached), in fewer requests than keys.
    expect(asked.flat().sort()).toEqual([...new Set(ids)].sort());
    expect(asked.length).toBeLessThan(20);
    a.dispose();
    b.dispose();
  });
});
