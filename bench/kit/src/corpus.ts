/**
 * The event stream the publishing benches send (fan-out and cluster alike): real demo listing
 * events, snake_cased by our transform (what ingest puts in an envelope), each with its Kafka
 * partition (Kafka's default partitioner) and key shard (the schema's `@topic(shards:)`).
 * Prepared once, untimed.
 */
import { shardOf } from '@wirestream/wire';
import { countByKey, prepareListingEvents, type ListingEvent } from './listing-events.js';

/** A listing event (its payload split around `occurred_at`, which the publisher sets to the publish instant), where it goes. */
export interface CorpusEvent extends ListingEvent {
  readonly partition: number;
  readonly shard: number;
}

export interface EventCorpus {
  readonly events: readonly CorpusEvent[];
  readonly partitions: number;
  /** Mean envelope size in bytes (payload + ~110 B of envelope around it). */
  readonly meanEnvelopeBytes: number;
  /** Events per key among the first `upTo`, in the order of `keys` (the loss count of filtered subscriptions). */
  countByKey(keys: readonly string[], upTo: number): number[];
  /** Events per partition among the first `upTo`. */
  countByPartition(upTo: number): number[];
  /** Event `i`'s payload as the gateway parses it (`occurred_at` is a fixed instant, not the publish time). */
  payloadOf(i: number): Record<string, unknown>;
}

export interface CorpusOptions {
  readonly count: number;
  /** Distinct listing ids (`lst-000000` …): the keys filtered subscriptions choose from. */
  readonly listings: number;
  readonly partitions: number;
  /** Key shards of the topic (the route's `shards`). */
  readonly shards: number;
  /** @default 42 */
  readonly seed?: number;
  /** Event i's listing id (the unicast scenario spreads events evenly over its keys); default: the generator's pick. */
  readonly keyOf?: ((i: number) => string) | undefined;
}

export function prepareCorpus({ count, listings, partitions, shards, seed = 42, keyOf }: CorpusOptions): EventCorpus {
  const prepared = prepareListingEvents({ count, listings, seed, keyOf });
  const events = prepared.events.map((e): CorpusEvent => ({ ...e, partition: kafkaPartition(e.key, partitions), shard: shardOf(e.key, shards) }));
  return {
    events,
    partitions,
    meanEnvelopeBytes: prepared.meanEnvelopeBytes,
    countByKey: (keys, upTo) => countByKey(events, keys, upTo),
    countByPartition(upTo) {
      const counts = new Array<number>(partitions).fill(0);
      for (const event of events.slice(0, upTo)) counts[event.partition] = (counts[event.partition] ?? 0) + 1;
      return counts;
    },
    payloadOf(i) {
      const event = events[i];
      if (event === undefined) throw new RangeError(`event ${i} is beyond the corpus of ${events.length}`);
      return JSON.parse(event.before + '2025-01-01T00:00:00.000000Z' + event.after) as Record<string, unknown>;
    },
  };
}

/**
 * The partition Kafka's default partitioner picks for a keyed record: `toPositive(murmur2(utf8(key)))
 * % partitions` (Java's `Utils.murmur2`, which kafkajs's DefaultPartitioner and ingest's producer
 * use too). The FNV shard of the same key would not do: both are FNV-1a modulo an even number, so
 * partition and shard parity would always agree and half the partition × shard channels stay empty.
 */
export function kafkaPartition(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % partitions;
}

function murmur2(data: Uint8Array): number {
  const m = 0x5bd1e995;
  const length = data.length;
  let h = 0x9747b28c ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = (data[i] ?? 0) | ((data[i + 1] ?? 0) << 8) | ((data[i + 2] ?? 0) << 16) | ((data[i + 3] ?? 0) << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = length % 4;
  if (rest === 3) h ^= (data[whole + 2] ?? 0) << 16;
  if (rest >= 2) h ^= (data[whole + 1] ?? 0) << 8;
  if (rest >= 1) h = Math.imul(h ^ (data[whole] ?? 0), m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}
