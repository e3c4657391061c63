// Integration: the where argument through the gateway, a real redis-server and the official graphql-ws client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createEnvelopeHeadEncoder, shardOf, type RecordHeaders } from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { createAuthenticator } from '../src/index.js';
import { collect, startTestGateway, type ExecutionResult, type TestGateway } from './support/gateway.js';

let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway();
});

afterAll(() => t?.stop());

const BY_TYPE = 'subscription($w: ListingEventWhere) { listingUpdated(where: $w) { listing_id event_type } }';
const events = (results: readonly ExecutionResult[]) =>
  results.map((r) => {
    const data = r.data?.['listingUpdated'] as { listing_id: string; event_type: string } | undefined;
    return `${data?.listing_id}/${data?.event_type}`;
  });

describe('where', () => {
  it('delivers only matching events; equal filters share one group; a pinned key subscribes its shard only', async () => {
    const pinned = collect(t.connect(), 'subscription { listingUpdated(where: { listing_id: { eq: "lst-1" } }) { listing_id event_type } }');
    await waitFor(() => t.gateway.stats().groups === 1 && t.gateway.stats().confirmedChannels === 1, { message: 'one group on one channel' });

    const a = collect(t.connect(), BY_TYPE, { w: { event_type: { in: ['BidPlaced', 'ListingClosed'] } } });
    // Equal, written differently: in another order, with a repeat, wrapped in and.
    const b = collect(t.connect(), BY_TYPE, { w: { and: [{ event_type: { in: ['ListingClosed', 'BidPlaced', 'BidPlaced'] } }] } });
    await waitFor(() => t.gateway.stats().groups === 2 && t.gateway.stats().confirmedChannels === 16, { message: 'two groups, every channel' });

    await t.publishListing('lst-1', 'ListingUpdated');
    await t.publishListing('lst-2', 'BidPlaced');
    await t.publishListing('lst-3', 'Other');
    await t.publishListing('lst-1', 'ListingClosed');
    // Matches every filter: once it arrives everywhere, everything before it has been delivered (one Redis connection, in order).
    await t.publishListing('lst-1', 'BidPlaced');
    await waitFor(() => [a, b, pinned].every((s) => events(s.results).includes('lst-1/BidPlaced')), { message: 'the last event everywhere' });

    expect(events(a.results)).toEqual(['lst-2/BidPlaced', 'lst-1/ListingClosed', 'lst-1/BidPlaced']);
    expect(events(b.results)).toEqual(events(a.results));
    expect(events(pinned.results)).toEqual(['lst-1/ListingUpdated', 'lst-1/ListingClosed', 'lst-1/BidPlaced']);
    expect(t.gateway.stats().groups).toBe(2);
    for (const s of [a, b, pinned]) s.dispose();
    await waitFor(() => t.gateway.stats().groups === 0, { message: 'groups released' });
  });

  it('refuses a filter over a limit before execution, with a GraphQL error naming the setting', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `lst-${i}`);
    const refused = collect(t.connect(), BY_TYPE, { w: { listing_id: { in: many } } });
    await waitFor(() => refused.errors.length > 0, { message: 'the subscribe refused' });
    expect(JSON.stringify(refused.errors)).toMatch(/listing_id\.in lists 101 values, over the limit of 100 \(GATEWAY_MAX_FILTER_IN_LIST\)/);
    expect(t.gateway.stats().groups).toBe(0);
  });
});

// The example SDL declares @topic itself: the declaration gains headers, listingUpdated copies two.
const withHeaders = (sdl: string) =>
  sdl
    .replace('keyFormat: TopicKeyFormat = STRING)', 'keyFormat: TopicKeyFormat = STRING, headers: [String!])')
    .replace(/(@topic\(name: "listing-events[^"]*", key: "listing_id")\)/, '$1, headers: ["tenant", "event-type"])');

let offset = 1_000;

/** Publishes a full listing event as ingest writes it for a topic with headers (its h from `headers`). */
async function publishEvent(
  g: TestGateway,
  listingId: string,
  options: { readonly key?: string | null; readonly headers?: RecordHeaders; readonly seller?: string; readonly categories?: readonly string[]; readonly bids?: readonly number[] } = {},
): Promise<void> {
  const at = String(offset++);
  const payload = {
    event_id: `e-${at}`,
    event_type: 'ListingUpdated',
    listing_id: listingId,
    occurred_at: 'now',
    listing: {
      listing_id: listingId,
      title: 'Lamp',
      status: 'ACTIVE',
      category_path: options.categories ?? [],
      image_urls: [],
      seller_info: { seller_id: options.seller ?? '1', display_name: 's', is_verified: true },
      current_price: { amount_cents: 1, currency_code: 'EUR' },
      recent_bids: (options.bids ?? []).map((cents, i) => ({ bid_id: `b${i}`, bidder_id: 'u', amount: { amount_cents: cents, currency_code: 'EUR' }, placed_at: 'now', is_auto_bid: false })),
    },
  };
  const head = createEnvelopeHeadEncoder(g.topic, ['tenant', 'event-type'])(0, at, options.key === undefined ? listingId : options.key, Date.now(), undefined, options.headers ?? {});
  await g.publishRaw(`${head}${JSON.stringify(payload)}}`, shardOf(listingId, 16));
}

const ids = (results: readonly ExecutionResult[]) => results.map((r) => (r.data?.['listingUpdated'] as { event_id: string } | undefined)?.event_id);
const BY_WHERE = 'subscription($w: ListingEventWhere) { listingUpdated(where: $w) { event_id } }';

describe('where on the Kafka key, headers and list fields (decision 0025)', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startTestGateway({}, {}, () => {}, withHeaders);
  });
  afterAll(() => h?.stop());

  it('filters on _key, _headers (by their where names) and some/every/none/has/isEmpty of lists', async () => {
    const byHeader = collect(h.connect(), BY_WHERE, { w: { _headers: { event_type: { eq: 'BidPlaced' }, tenant: { in: ['acme', 'globex'] } } } });
    const noTenant = collect(h.connect(), BY_WHERE, { w: { _headers: { tenant: { exists: false } } } });
    const byKey = collect(h.connect(), BY_WHERE, { w: { _key: { in: ['k-1', 'k-2'] } } });
    const byLists = collect(h.connect(), BY_WHERE, { w: { listing: { category_path: { has: 'lamps' }, recent_bids: { some: { amount: { amount_cents: { gte: 1000 } } } } } } });
    const every = collect(h.connect(), BY_WHERE, { w: { listing: { recent_bids: { every: { amount: { amount_cents: { gte: 1000 } } } }, category_path: { isEmpty: false } } } });
    // Live delivery starts when Redis confirms a shard's channel: an event published before that is history's, and history is off here.
    await waitFor(() => h.gateway.stats().groups === 5 && h.gateway.stats().confirmedChannels === h.gateway.stats().channels, { message: 'five groups on confirmed channels' });

    const before = offset;
    await publishEvent(h, 'lst-1', { key: 'k-1', headers: { tenant: Buffer.from('acme'), 'event-type': Buffer.from('BidPlaced') } }); // 0
    await publishEvent(h, 'lst-2', { key: 'k-3', headers: { tenant: 'initech', 'event-type': 'BidPlaced' } }); // 1
    await publishEvent(h, 'lst-3', { key: null, categories: ['home', 'lamps'], bids: [500, 1500] }); // 2
    await publishEvent(h, 'lst-4', { key: 'k-2', categories: ['lamps'], bids: [1000, 2000], headers: { 'event-type': 'BidPlaced' } }); // 3
    await publishEvent(h, 'lst-5', { categories: ['home'], bids: [] }); // 4
    // Matches every filter: once it arrived everywhere, so did every event before it (one channel order per shard; a shared last shard).
    await publishEvent(h, 'lst-6', { key: 'k-2', categories: ['lamps'], bids: [1200], headers: { tenant: 'globex', 'event-type': 'BidPlaced' } }); // 5
    const e = (i: number) => `e-${before + i}`;
    await waitFor(() => [byHeader, byKey, byLists, every].every((s) => ids(s.results).includes(e(5))) && ids(noTenant.results).includes(e(4)), { message: 'the last events everywhere' });

    expect(ids(byHeader.results)).toEqual([e(0), e(5)]);
    expect(ids(noTenant.results).sort()).toEqual([e(2), e(3), e(4)].sort());
    expect(ids(byKey.results).sort()).toEqual([e(0), e(3), e(5)].sort());
    expect(ids(byLists.results).sort()).toEqual([e(2), e(3), e(5)].sort());
    // every on an empty list is true (lst-5 has no bids), as in Prisma.
    expect(ids(every.results).sort()).toEqual([e(3), e(4), e(5)].sort());
    for (const s of [byHeader, noTenant, byKey, byLists, every]) s.dispose();
    await waitFor(() => h.gateway.stats().groups === 0, { message: 'groups released' });
  });
});

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';
const token = (claims: Record<string, unknown>) =>
  new SignJWT({ scope: 'subscribe:*', ...claims }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));

describe('filters bound to token claims (GATEWAY_JWT_FILTER_RULES)', () => {
  let c: TestGateway;
  beforeAll(async () => {
    const authenticator = createAuthenticator({
      mode: 'jwt',
      hs256Secret: SECRET,
      filterRules: ['listing.seller_info.seller_id=partner_id', 'bidPlaced:listing_id=listing'],
    });
    c = await startTestGateway({}, { authenticator }, () => {}, withHeaders);
  });
  afterAll(() => c?.stop());

  it('ANDs the rule after the client filter, never widened; equal bound values share a group, others do not', async () => {
    const query = 'subscription($w: ListingEventWhere) { listingUpdated(where: $w) { event_id listing { seller_info { seller_id } } } }';
    const p7 = collect(c.connect({ token: await token({ partner_id: '7' }) }), query);
    const p7too = collect(c.connect({ token: await token({ partner_id: 7, other: 'x' }) }), query);
    const p3 = collect(c.connect({ token: await token({ partner_id: '3' }) }), query);
    // Asks for seller 3's events with a token for seller 7: gets none (the rule is ANDed, not replaced).
    const widen = collect(c.connect({ token: await token({ partner_id: '7' }) }), query, { w: { or: [{ listing: { seller_info: { seller_id: { eq: '3' } } } }, { listing_id: { exists: true } }] } });
    const missing = collect(c.connect({ token: await token({}) }), query);
    await waitFor(() => missing.errors.length === 1, { message: 'the token without the claim refused' });
    expect(JSON.stringify(missing.errors[0])).toContain('limited by the filter rule listing.seller_info.seller_id=partner_id (GATEWAY_JWT_FILTER_RULES), but your token has no \\"partner_id\\" claim');
    await waitFor(() => c.gateway.stats().groups === 3 && c.gateway.stats().subscriptions === 4, { message: 'p7 and p7too share; p3 and widen apart' });

    const before = offset;
    await publishEvent(c, 'lst-1', { seller: '3' });
    await publishEvent(c, 'lst-2', { seller: '7' });
    await publishEvent(c, 'lst-3', { seller: '9' });
    await publishEvent(c, 'lst-4', { seller: '3' });
    await publishEvent(c, 'lst-5', { seller: '7' });
    const e = (i: number) => `e-${before + i}`;
    await waitFor(() => [p7, p7too, widen].every((s) => ids(s.results).includes(e(4))) && ids(p3.results).includes(e(3)), { message: 'deliveries' });
    expect(ids(p7.results).sort()).toEqual([e(1), e(4)].sort());
    expect(ids(p7too.results).sort()).toEqual(ids(p7.results).sort());
    expect(ids(widen.results).sort()).toEqual(ids(p7.results).sort());
    expect(ids(p3.results).sort()).toEqual([e(0), e(3)].sort());
    for (const s of [p7, p7too, p3, widen]) s.dispose();
    await waitFor(() => c.gateway.stats().groups === 0, { message: 'groups released' });
  });

  it('pins the shard of a rule on the routing key, and applies a field rule only to its field', async () => {
    const channelsBefore = c.gateway.stats().confirmedChannels;
    const bids = collect(c.connect({ token: await token({ listing: 'lst-42', partner_id: '1' }) }), 'subscription { bidPlaced { bid_id listing_id } }');
    await waitFor(() => c.gateway.stats().groups === 1 && c.gateway.stats().confirmedChannels === channelsBefore + 1, { message: 'one channel for the bound key' });
    await c.publishBid('lst-41', 'u');
    await c.publishBid('lst-42', 'u');
    await waitFor(() => bids.results.length === 1, { message: 'the bound listing bid' });
    expect(bids.results[0]?.data).toMatchObject({ bidPlaced: { listing_id: 'lst-42' } });
    // A token without `listing` may still use listingUpdated (the rule is bidPlaced's), not bidPlaced.
    const refused = collect(c.connect({ token: await token({ partner_id: '1' }) }), 'subscription { bidPlaced { bid_id } }');
    await waitFor(() => refused.errors.length === 1, { message: 'refused' });
    expect(JSON.stringify(refused.errors[0])).toContain('bidPlaced:listing_id=listing');
    bids.dispose();
  });
});
