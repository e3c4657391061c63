import { describe, expect, it } from 'vitest';
import { channelName, shardOf, topicChannels } from '@wirestream/wire';
import { filterClauses, matchesFilter, subscriptionChannels, type SubscriptionRoute } from './index.js';

const route: SubscriptionRoute = { fieldName: 'listingUpdated', topic: 'listing-events', keyField: 'listing_id', shards: 4, filterArgs: ['listing_id', 'event_type'], format: 'JSON', keyFormat: 'STRING' };

describe('routing contract', () => {
  it('builds one clause per argument given, values as text', () => {
    expect(filterClauses(route, { listing_id: 7, event_type: null })).toEqual([['listing_id', '7']]);
    expect(filterClauses(route, {})).toEqual([]);
  });

  it('matches a payload only when every clause holds', () => {
    const filter = filterClauses(route, { listing_id: 'a', event_type: 'BidPlaced' });
    expect(matchesFilter(filter, { listing_id: 'a', event_type: 'BidPlaced' })).toBe(true);
    expect(matchesFilter(filter, { listing_id: 'a', event_type: 'ListingUpdated' })).toBe(false);
    expect(matchesFilter(filter, { listing_id: 'a' })).toBe(false);
    expect(matchesFilter(filterClauses(route, { listing_id: 7 }), { listing_id: 7 })).toBe(true);
    expect(matchesFilter([], {})).toBe(true);
  });

  it('compares a 64-bit integer kept as its digits by its digits (String cannot convert a raw JSON value)', () => {
    const long = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON('9223372036854775807');
    expect(matchesFilter([['listing_id', '9223372036854775807']], { listing_id: long })).toBe(true);
    expect(matchesFilter([['listing_id', 'a']], { listing_id: long })).toBe(false);
  });

  it('narrows channels to one shard when the key argument is given', () => {
    expect(subscriptionChannels('ws', route, {})).toEqual(topicChannels('ws', 'listing-events', 4));
    expect(subscriptionChannels('ws', route, { listing_id: 'lst-1' })).toEqual([channelName('ws', 'listing-events', shardOf('lst-1', 4))]);
    expect(subscriptionChannels('ws', { ...route, keyField: undefined }, { listing_id: 'lst-1' })).toHaveLength(4);
  });
});
