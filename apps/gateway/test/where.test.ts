// Integration: the where argument through the gateway, a real redis-server and the official graphql-ws client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@wirestream/testkit';
import { collect, startTestGateway, type ExecutionResult, type TestGateway } from './support.js';

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
