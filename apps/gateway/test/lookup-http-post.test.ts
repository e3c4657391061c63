// The HTTP/JSON source's batched POST form (decision 0042): the keys as a JSON body, a JSON path to the
// results, end to end through a gateway on real Redis to a real HTTP service that records what it got.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityLoader } from '@wirestream/lookups';
import { waitFor } from '@wirestream/testkit';
import { createLookupLoaders, type LookupSettings } from '../src/index.js';
import { collect, schemaFor, startTestGateway, type TestGateway } from './support/gateway.js';
import { startProfileService, type ProfileService } from './support/profile-service.js';
import { withProfileLookup } from './support/subgraph.js';

const settings = (httpSource: string): LookupSettings => ({
  sources: new Map(),
  httpSources: new Map([['listings', httpSource]]),
  timeoutMs: 2_000,
  cacheTtlMs: 60_000,
  cacheMaxEntries: 1_000,
  maxBatchSize: 100,
  maxConcurrentRequests: 4,
});

let service: ProfileService;
let t: TestGateway;
beforeAll(async () => {
  service = await startProfileService();
  const loaders = new Map<string, EntityLoader>();
  t = await startTestGateway(
    {},
    { lookups: loaders },
    (ws) => {
      for (const [name, loader] of createLookupLoaders(ws, settings(`POST ${service.base}/profiles/batch#data.profiles {"ids":{keys}}`))) loaders.set(name, loader);
    },
    withProfileLookup,
  );
});
afterAll(async () => {
  await t?.stop();
  await service?.stop();
});

describe('the HTTP/JSON source, POST form', () => {
  it('posts each batch\'s distinct keys as a JSON body and reads the entities at the path, for every operation', async () => {
    const titles = collect(t.connect(), 'subscription { listingUpdated { listing_id profile { title } } }');
    const views = collect(t.connect(), 'subscription { listingUpdated { listing_id profile { views } } }');
    await waitFor(() => t.gateway.stats().groups === 2, { message: 'two operation groups' });
    const keys = ['lst-a', 'lst-bb', 'lst-a', 'lst-ccc'];
    await Promise.all(keys.map((k) => t.publishListing(k)));
    await waitFor(() => titles.results.length === 4 && views.results.length === 4, { message: 'four events to each' });

    const profileOf = (r: (typeof titles.results)[number]) => (r.data as { listingUpdated: { profile: unknown } }).listingUpdated.profile;
    expect(titles.results.map(profileOf)).toEqual(keys.map((k) => ({ title: `title of ${k}` })));
    expect(views.results.map(profileOf)).toEqual(keys.map((k) => ({ views: k.length })));
    expect(service.requests.length).toBeGreaterThan(0);
    const asked: string[] = [];
    for (const r of service.requests) {
      expect([r.method, r.url, r.headers['content-type']]).toEqual(['POST', '/profiles/batch', 'application/json']);
      const body = JSON.parse(r.body) as { ids: string[] };
      expect(Object.keys(body)).toEqual(['ids']);
      asked.push(...body.ids);
    }
    // Shared by both groups, each distinct key once (batches are per slice; the cache answers repeats).
    expect(asked.sort()).toEqual(['lst-a', 'lst-bb', 'lst-ccc']);
  });

  it('refuses a body template without {keys} or that is not JSON, naming the setting', () => {
    const ws = schemaFor('lookup-post', withProfileLookup);
    expect(() => createLookupLoaders(ws, settings('POST http://127.0.0.1:1/batch {"ids":"all"}'))).toThrow('GATEWAY_LOOKUP_HTTP_SOURCES: look-up source "listings": its POST body must hold {keys} once, where the array of keys goes, got {"ids":"all"}');
    expect(() => createLookupLoaders(ws, settings('POST http://127.0.0.1:1/batch {ids:{keys}}'))).toThrow('GATEWAY_LOOKUP_HTTP_SOURCES: look-up source "listings": its POST body is not JSON once {keys} is an array, got {ids:{keys}}');
  });
});
