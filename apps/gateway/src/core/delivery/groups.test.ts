// The channel index (decision 0039): a group is filed under the keys it pins as it opens and taken
// out as it closes; an event finds the groups of its key and those that pin none.
import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import type { Envelope } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import type { Broker } from '../../broker/broker.js';
import { createOperationCompiler, type CompiledSubscription } from '../operations/operations.js';
import { channelState, createRegistry, groupsForEvent, isOneGroup, isSubscribed, joinGroup, leaveGroup, subscriberCount, subscribersOf, type ChannelState, type Group } from './groups.js';

const schema = loadWirestreamSchema(auctionSchemaPath);
const compiler = createOperationCompiler(schema);
const JOIN = { frameType: 'next', delta: false, catchup: false } as const;
/** The registry only asks the broker to (un)subscribe channels. */
const broker: Broker = { attach: () => undefined, subscribe: () => Promise.resolve(), unsubscribe: () => Promise.resolve(), pause: () => undefined, resume: () => undefined, isReady: () => true, status: () => 'ready' };

function op(query: string, variables?: Record<string, unknown>): CompiledSubscription {
  const result = compiler.compile({ query, ...(variables ? { variables } : {}) });
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`does not compile: ${JSON.stringify(result)}`);
  return result.operation;
}

/** The groups found, as a list (a key's lone group is returned as itself). */
const listed = (state: ChannelState<string>, envelope: Envelope): Group<string>[] => {
  const found = groupsForEvent(state, envelope);
  return isOneGroup(found) ? [found] : [...found];
};
const event = (listingId: unknown, key: string | null = null): Envelope => ({ v: 1, topic: 'listing-events', partition: 0, offset: '1', key, ts: 0, payload: { listing_id: listingId } });

describe('the channel index', () => {
  const byArg = op('subscription { listingUpdated(listing_id: "lst-a") { listing_id } }');
  const byWhere = op('subscription($w: ListingEventWhere) { listingUpdated(where: $w) { listing_id } }', { w: { listing_id: { in: ['lst-a', 'lst-b'] } } });
  const all = op('subscription { listingUpdated { listing_id } }');

  it('files a group under the keys it pins, finds it by an event key, and forgets it with its last subscriber', () => {
    const registry = createRegistry<string>(broker, undefined, createLogger({ name: 'groups-test', destination: createMemorySink() }), undefined);
    const [channel] = byArg.channels;
    expect(byArg.pin).toEqual({ on: 'listing_id', keys: ['lst-a'] });
    expect(byWhere.pin).toEqual({ on: 'listing_id', keys: ['lst-a', 'lst-b'] });
    expect(all.pin).toBeUndefined();
    const a = joinGroup(registry, 'c1', '1', byArg, JOIN);
    const b = joinGroup(registry, 'c2', '1', byWhere, JOIN);
    const c = joinGroup(registry, 'c3', '1', all, JOIN);
    const state = channelState(registry, channel as string);
    if (state === undefined) throw new Error('no channel state');
    const found = (listingId: unknown): Group<string>[] => listed(state, event(listingId));
    expect(found('lst-a')).toEqual([a.group, b.group, c.group]);
    expect(found('lst-b')).toEqual([b.group, c.group]);
    expect(found('lst-z')).toEqual([c.group]);
    // Not text nor a number: every group is tested, as without the index.
    expect(found(null)).toHaveLength(3);
    expect(found(['lst-a'])).toHaveLength(3);
    leaveGroup(registry, b);
    expect(found('lst-b')).toEqual([c.group]);
    expect(state.pinned.get('listing_id')?.has('lst-b')).toBe(false);
    leaveGroup(registry, a);
    expect(state.pinned.size).toBe(0);
    expect(found('lst-a')).toEqual([c.group]);
    leaveGroup(registry, c);
    expect(channelState(registry, channel as string)).toBeUndefined();
  });

  it('reads a `_key` pin from the Kafka key, and a null Kafka key finds none of those groups', () => {
    const byKafkaKey = op('subscription($w: ListingEventWhere) { listingUpdated(where: $w) { listing_id } }', { w: { _key: { eq: 'k1' } } });
    expect(byKafkaKey.pin).toEqual({ on: '@key', keys: ['k1'] });
    const registry = createRegistry<string>(broker, undefined, createLogger({ name: 'groups-test', destination: createMemorySink() }), undefined);
    const s = joinGroup(registry, 'c1', '1', byKafkaKey, JOIN);
    const state = channelState(registry, byKafkaKey.channels[0] as string);
    if (state === undefined) throw new Error('no channel state');
    expect(listed(state, event('lst-a', 'k1'))).toEqual([s.group]);
    expect(listed(state, event('k1', 'k2'))).toEqual([]);
    expect(listed(state, event('k1', null))).toEqual([]);
  });

  it('files the lone group of a key as itself, two as a collection, and one again when the other closes', () => {
    const registry = createRegistry<string>(broker, undefined, createLogger({ name: 'groups-test', destination: createMemorySink() }), undefined);
    const other = op('subscription { listingUpdated(listing_id: "lst-a") { event_type } }');
    const a = joinGroup(registry, 'c1', '1', byArg, JOIN);
    const state = channelState(registry, byArg.channels[0] as string);
    if (state === undefined) throw new Error('no channel state');
    expect(groupsForEvent(state, event('lst-a'))).toBe(a.group);
    const b = joinGroup(registry, 'c2', '1', other, JOIN);
    expect(listed(state, event('lst-a'))).toEqual([a.group, b.group]);
    leaveGroup(registry, a);
    expect(groupsForEvent(state, event('lst-a'))).toBe(b.group);
    expect(listed(state, event('lst-b'))).toEqual([]);
  });
});

describe('the subscribers of a group', () => {
  it('are counted and listed in the order they joined, through one, three, one and none', () => {
    const registry = createRegistry<string>(broker, undefined, createLogger({ name: 'groups-test', destination: createMemorySink() }), undefined);
    const operation = op('subscription { listingUpdated(listing_id: "lst-a") { listing_id } }');
    const first = joinGroup(registry, 'c1', '1', operation, JOIN);
    const { group } = first;
    expect([subscriberCount(group), subscribersOf(group)]).toEqual([1, [first]]);
    const second = joinGroup(registry, 'c2', '1', operation, JOIN);
    const third = joinGroup(registry, 'c3', '1', operation, JOIN);
    expect(second.group).toBe(group);
    expect([subscriberCount(group), subscribersOf(group)]).toEqual([3, [first, second, third]]);
    leaveGroup(registry, first);
    leaveGroup(registry, first); // idempotent
    expect([isSubscribed(first), isSubscribed(second), isSubscribed(third)]).toEqual([false, true, true]);
    expect([subscriberCount(group), subscribersOf(group), registry.subscribers]).toEqual([2, [second, third], 2]);
    leaveGroup(registry, third);
    expect([subscriberCount(group), subscribersOf(group), isSubscribed(second), isSubscribed(third)]).toEqual([1, [second], true, false]);
    const fourth = joinGroup(registry, 'c4', '1', operation, JOIN);
    expect(subscribersOf(group)).toEqual([second, fourth]);
    leaveGroup(registry, second);
    leaveGroup(registry, fourth);
    expect([subscriberCount(group), subscribersOf(group), registry.groups.size, registry.subscribers]).toEqual([0, [], 0, 0]);
  });
});
