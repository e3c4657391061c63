import { describe, expect, it } from 'vitest';
import { createAuctionEventGenerator, DEMO_TOPICS } from './index.js';
import type { DemoEvent } from './index.js';

const take = (n: number, seed?: number): DemoEvent[] => {
  const gen = createAuctionEventGenerator(seed === undefined ? {} : { seed });
  return Array.from({ length: n }, () => gen.next());
};

describe('createAuctionEventGenerator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    expect(JSON.stringify(take(200, 7))).toBe(JSON.stringify(take(200, 7)));
    expect(JSON.stringify(take(50, 7))).not.toBe(JSON.stringify(take(50, 8)));
  });

  it('mixes about 70 % listing events and 30 % bid events on the demo topics', () => {
    const events = take(5_000);
    const listing = events.filter((e) => e.topic === 'listing-events').length / events.length;
    expect(listing).toBeGreaterThan(0.65);
    expect(listing).toBeLessThan(0.75);
    for (const e of events) expect(DEMO_TOPICS).toContain(e.topic);
  });

  it('keys every event by listing id and keeps the documented camelCase shape', () => {
    const gen = createAuctionEventGenerator({ seed: 1, listings: 3 });
    const listing = gen.listingEvent('lst-000001');
    expect(listing.key).toBe('lst-000001');
    expect(Object.keys(listing.value)).toEqual(['eventId', 'eventType', 'listingId', 'occurredAt', 'listing']);
    const body = listing.value['listing'] as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'listingId', 'title', 'description', 'status', 'categoryPath', 'primaryPropertyId', 'imageURLs',
      'sellerInfo', 'reservePrice', 'currentPrice', 'recentBids',
    ]);
    const seller = body['sellerInfo'] as Record<string, unknown>;
    expect(Object.keys(seller)).toEqual(['sellerId', 'displayName', 'rating', 'isVerified', 'address']);
    expect(Object.keys(seller['address'] as object)).toEqual(['streetLine1', 'address2Line', 'city', 'postalCode', 'countryCode']);
    const bids = body['recentBids'] as Record<string, unknown>[];
    expect(bids).toHaveLength(10);
    expect(Object.keys(bids[0]!)).toEqual(['bidId', 'bidderId', 'amount', 'placedAt', 'isAutoBid']);

    const bid = gen.bidEvent('lst-000001');
    expect(bid.topic).toBe('bid-events');
    expect(Object.keys(bid.value)).toEqual([
      'eventId', 'eventType', 'listingId', 'bidId', 'bidderId', 'amount', 'placedAt', 'isAutoBid', 'previousHighBid',
    ]);
    expect(bid.value['eventType']).toBe('BidPlaced');
  });

  it('makes prices of one listing go up and timestamps move forward', () => {
    const gen = createAuctionEventGenerator({ seed: 3 });
    let lastCents = 0;
    let lastAt = '';
    for (let i = 0; i < 30; i++) {
      const { value } = gen.bidEvent('lst-000007');
      const cents = (value['amount'] as { amountCents: number }).amountCents;
      const at = value['placedAt'] as string;
      expect(cents).toBeGreaterThan(lastCents);
      expect(at > lastAt).toBe(true);
      lastCents = cents;
      lastAt = at;
    }
  });

  it('produces realistic payload sizes (listing ≈ 2 KB, bid ≈ 0.4 KB)', () => {
    const gen = createAuctionEventGenerator();
    const listing = JSON.stringify(gen.listingEvent().value).length;
    const bid = JSON.stringify(gen.bidEvent().value).length;
    expect(listing).toBeGreaterThan(1_000);
    expect(listing).toBeLessThan(3_000);
    expect(bid).toBeGreaterThan(200);
    expect(bid).toBeLessThan(800);
  });

  it('uses the wall clock when realTime is set', () => {
    const before = Date.now();
    const { value } = createAuctionEventGenerator({ realTime: true }).listingEvent();
    expect(Date.parse(value['occurredAt'] as string)).toBeGreaterThanOrEqual(before);
  });

  it('rejects an impossible listing count with the rule', () => {
    expect(() => createAuctionEventGenerator({ listings: 0 })).toThrow(/listings must be an integer in 1\.\.999999/);
  });
});
