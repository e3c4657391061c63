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

  it('narrows channels to one shard when the key argument is given', () => {
    expect(subscriptionChannels('ws', route, {})).toEqual(topicChannels('ws', 'listing-events', 4));
    expect(subscriptionChannels('ws', route, { listing_id: 'lst-1' })).toEqual([channelName('ws', 'listing-events', shardOf('lst-1', 4))]);
    expect(subscriptionChannels('ws', { ...route, keyField: undefined }, { listing_id: 'lst-1' })).toHaveLength(4);
  });
});
