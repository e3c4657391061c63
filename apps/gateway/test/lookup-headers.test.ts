// Look-up request headers (decision 0042): static ones from GATEWAY_LOOKUP_HEADERS and ones templated
// from the caller's token claims, checked at a real HTTP/JSON service that records the headers it got.
// Claim-derived values partition operation groups, batches and the cache: no request and no cached
// answer mixes callers whose values differ.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityLoader } from '@wirestream/lookups';
import { waitFor } from '@wirestream/testkit';
import { createAuthenticator, createLookupLoaders, parseLookupHeaders } from '../src/index.js';
import { collect, startTestGateway, type TestGateway } from './support/gateway.js';
import { startProfileService, type ProfileService } from './support/profile-service.js';
import { withProfileLookup } from './support/subgraph.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const QUERY = 'subscription { listingUpdated { listing_id profile { title } } }';

async function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ scope: 'subscribe:*', ...claims }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
}

let service: ProfileService;
let t: TestGateway;
beforeAll(async () => {
  service = await startProfileService();
  const headers = parseLookupHeaders(['listings:Authorization=Bearer static-token', 'listings:X-Partner={claims.partner_id}']);
  const keyClaims = [...new Set([...headers.values()].flatMap((h) => h.claims))];
  const loaders = new Map<string, EntityLoader>();
  t = await startTestGateway(
    {},
    { lookups: loaders, authenticator: createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, keyClaims }) },
    (ws) => {
      const settings = { sources: new Map(), httpSources: new Map([['listings', `${service.base}/profiles?ids={keys}#items`]]), headers, timeoutMs: 2_000, cacheTtlMs: 60_000, cacheMaxEntries: 1_000, maxBatchSize: 100, maxConcurrentRequests: 4 };
      for (const [name, loader] of createLookupLoaders(ws, settings)) loaders.set(name, loader);
    },
    withProfileLookup,
  );
});
afterAll(async () => {
  await t?.stop();
  await service?.stop();
});

describe('look-up headers from settings and claims', () => {
  it('sends the static header always and the claim header per caller; batches and cache never mix callers', async () => {
    expect(parseLookupHeaders(['listings:X-Partner={claims.partner_id}']).get('listings')?.claims).toEqual(['partner_id']);
    const p1a = collect(t.connect({ token: await token({ partner_id: 'p1' }) }), QUERY);
    const p1b = collect(t.connect({ token: await token({ partner_id: 'p1' }) }), QUERY);
    const p2 = collect(t.connect({ token: await token({ partner_id: 'p2' }) }), QUERY);
    const none = collect(t.connect({ token: await token({}) }), QUERY);
    // One document, three groups: p1's two callers share one, p2 and the caller without the claim have their own.
    await waitFor(() => t.gateway.stats().subscriptions === 4, { message: 'four subscribed' });
    expect(t.gateway.stats().groups).toBe(3);

    const first = [await t.publishListing('lst-a'), await t.publishListing('lst-b')];
    await waitFor(() => [p1a, p1b, p2, none].every((s) => s.results.length === 2), { message: 'two events each' });
    const titles = (s: ReturnType<typeof collect>) => s.results.map((r) => (r.data as { listingUpdated: { profile: { title: string } | null } }).listingUpdated.profile?.title);
    expect(titles(p1a)).toEqual(['title of lst-a for p1', 'title of lst-b for p1']);
    expect(titles(p1b)).toEqual(titles(p1a));
    expect(titles(p2)).toEqual(['title of lst-a for p2', 'title of lst-b for p2']);
    // The caller without the claim: the field's error, the event's position kept, and no request for it.
    expect(titles(none)).toEqual([undefined, undefined]);
    expect(none.results.map((r) => r.errors?.[0]?.message)).toEqual(Array(2).fill('look-up source "listings": header x-partner needs the caller\'s claim "partner_id", which its token lacks'));
    expect(none.results.map((r) => (r.extensions as { position: { offset: string } }).position.offset)).toEqual(first);

    expect(service.requests.length).toBeGreaterThan(0);
    const idsBy = new Map<string, string[]>();
    for (const r of service.requests) {
      expect(r.headers['authorization']).toBe('Bearer static-token');
      const partner = r.headers['x-partner'];
      expect(partner === 'p1' || partner === 'p2').toBe(true);
      idsBy.set(String(partner), [...(idsBy.get(String(partner)) ?? []), ...(new URL(r.url, 'http://x').searchParams.get('ids') ?? '').split(',')]);
    }
    // Each caller partition asked each key once (p1's two callers shared their group, hence its look-ups).
    expect([...idsBy.entries()].sort()).toEqual([['p1', ['lst-a', 'lst-b']], ['p2', ['lst-a', 'lst-b']]]);

    // Warm caches, per partition: the same keys again send nothing, and each caller still gets its own answer.
    const asked = service.requests.length;
    await t.publishListing('lst-a');
    await waitFor(() => [p1a, p2].every((s) => s.results.length === 3), { message: 'a third event' });
    expect(service.requests.length).toBe(asked);
    expect(titles(p1a)[2]).toBe('title of lst-a for p1');
    expect(titles(p2)[2]).toBe('title of lst-a for p2');
  });

  it('refuses a bad setting with a one-line error naming it', () => {
    expect(() => parseLookupHeaders(['listings:Bad Name=x'])).toThrow(/^GATEWAY_LOOKUP_HEADERS: expected <source>:<Header-Name>=<value>/);
    expect(() => parseLookupHeaders(['listings:X(y)=x'])).toThrow('GATEWAY_LOOKUP_HEADERS: look-up source "listings": "X(y)" is not a valid header name');
  });
});
