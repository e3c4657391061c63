import { channelName, shardOf, topicChannels } from '@wirestream/wire';
import type { SubscriptionRoute } from './topic-bindings.js';

/**
 * How a subscription's arguments select events (the contract both the gateway and the benchmark
 * baselines follow): each argument filters on the payload field of the same name, and an
 * argument on the route's key field narrows the Redis channels to the one shard carrying that key.
 */

/** One `(payload field, expected value)` pair; an event matches when every pair matches. */
export type FilterClause = readonly [field: string, value: string];

/** The filter of a subscription with these (effective) arguments: one clause per argument given. */
export function filterClauses(route: SubscriptionRoute, args: Readonly<Record<string, unknown>>): FilterClause[] {
  const filter: FilterClause[] = [];
  for (const name of route.filterArgs) {
    const value = args[name];
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- arguments are GraphQL-validated scalars (IDs, strings, numbers)
    if (value !== undefined && value !== null) filter.push([name, String(value)]);
  }
  // An array grown by push keeps room for ~16 more elements (~130 bytes); a gateway keeps one filter
  // per distinct operation (ten thousand for a unicast topic), so it gets a copy of the exact size.
  return filter.length === 0 ? filter : filter.slice();
}

/**
 * `JSON.isRawJSON` (Node 21+; not in TypeScript's lib yet): decodeEnvelope keeps an integer beyond
 * 2^53 − 1 as a raw JSON value, which `String` cannot convert (it has no prototype): its digits are its text.
 */
const RAW = JSON as unknown as { isRawJSON(value: unknown): boolean };

/** Whether a payload passes every clause (values compared as text: IDs arrive as strings or numbers). */
export function matchesFilter(filter: readonly FilterClause[], payload: Readonly<Record<string, unknown>>): boolean {
  // Deliberately imperative: runs per event and per distinct operation.
  for (let i = 0; i < filter.length; i++) {
    const [field, expected] = filter[i] as FilterClause;
    const actual = payload[field];
    if (actual === undefined || actual === null) return false;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- values compared as text: IDs arrive as strings or numbers, and an object's "[object Object]" equals no ID
    if ((typeof actual === 'object' && RAW.isRawJSON(actual) ? (actual as { rawJSON: string }).rawJSON : String(actual)) !== expected) return false;
  }
  return true;
}

/** Redis channels that carry every event a subscription with these arguments can match. */
export function subscriptionChannels(prefix: string, route: SubscriptionRoute, args: Readonly<Record<string, unknown>>): string[] {
  const keyValue = route.keyField === undefined ? undefined : args[route.keyField];
  if (keyValue === undefined || keyValue === null) return topicChannels(prefix, route.topic, route.shards);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the key argument is a GraphQL-validated ID: a string or a number
  return [channelName(prefix, route.topic, shardOf(String(keyValue), route.shards))];
}

/** The channels of the shards carrying these key values (sorted, each once): a `where` that pins the key. */
export function keyChannels(prefix: string, route: SubscriptionRoute, keys: readonly string[]): string[] {
  const shards = new Set(keys.map((key) => shardOf(key, route.shards)));
  return [...shards].sort((a, b) => a - b).map((shard) => channelName(prefix, route.topic, shard));
}
