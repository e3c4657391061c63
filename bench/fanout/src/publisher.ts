/**
 * Publishes envelopes straight into Redis, as ingest would (bypassing Kafka and ingest, so the
 * server is what is measured): real demo events, snake_cased by our transform, wrapped by
 * the kit's envelope writer, on the channel `channelName(prefix, topic, shardOf(key, shards))`.
 *
 * The producer's timestamp: `occurred_at` is rewritten at publish time to the shared µs wall
 * clock (ISO 8601 with 6 fraction digits; see @wirestream/loadgen's clock), and the envelope
 * `ts` (the Kafka timestamp) is the same instant in ms. Clients read `occurred_at` because it is
 * what a subscription can select; the schema does not expose `ts`.
 */
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type { SubscriptionRoute } from '@wirestream/schema';
import { channelName, encodeEnvelopeBatch, encodeEnvelopeTrace, ROUTED_ON_KAFKA_KEY } from '@wirestream/wire';
import { createEnvelopeWriter, paceStream, prepareCorpus, type CorpusEvent, type EventCorpus as KitCorpus, type StreamOptions } from '@wirestream/bench-kit';
import { isoWithMicros } from '@wirestream/loadgen';

/** Kafka partitions of the simulated topic (positions look like real ones). */
const PARTITIONS = 6;

interface PreparedEvent extends CorpusEvent {
  /** The channel of its key shard. */
  readonly channel: string;
}

/** The kit's corpus (bench-kit `prepareCorpus`, as the cluster bench's), each event with its channel. */
export interface EventCorpus extends KitCorpus {
  readonly events: readonly PreparedEvent[];
  /** Where ingest reads the routing key its batch parts give (decision 0039): the route's key field, or the Kafka key. */
  readonly routedOn: string;
}

/**
 * Prepares `count` listing events (seed 42, `listings` distinct ids), untimed. `keyOf(i)`: event i's
 * listing id (the unicast scenario spreads events evenly over its keys); default: the generator's pick.
 */
export function prepareEvents(count: number, route: SubscriptionRoute, prefix: string, listings: number, keyOf?: (i: number) => string): EventCorpus {
  const corpus = prepareCorpus({ count, listings, partitions: PARTITIONS, shards: route.shards, keyOf });
  const channels = Array.from({ length: route.shards }, (_, shard) => channelName(prefix, route.topic, shard));
  return { ...corpus, events: corpus.events.map((e) => ({ ...e, channel: channels[e.shard] as string })), routedOn: route.keyField ?? ROUTED_ON_KAFKA_KEY };
}

/** The stream; at rate 0 every event back-to-back, in one pipeline. */
export interface PublishOptions extends StreamOptions<EventCorpus> {
  readonly redis: Redis;
  /**
   * Share of events (0…1, spread evenly) whose envelope carries a sampled W3C traceparent, each its
   * own trace, as ingest writes the events it traced (decision 0020). @default 0
   */
  readonly tracedShare?: number;
  /**
   * Ingest's batch form (decision 0012): events gathered per Kafka partition into chunks of this
   * many, each chunk published as one part per key shard (`encodeEnvelopeBatch`). A chunk goes out
   * when it is full (and every partial chunk after the last event). @default 0: one PUBLISH per event
   */
  readonly batch?: number;
}

/** Publishes and resolves after Redis acknowledged the last PUBLISH, with the shared-clock time of the first publish. */
export async function publishEvents(options: PublishOptions): Promise<{ firstPublishUs: number; lastPublishUs: number }> {
  const { redis, corpus, topic, clock, offsetBase, count, ratePerSecond, tracedShare = 0, batch = 0 } = options;
  const writeEnvelope = createEnvelopeWriter(topic);
  const traced = (i: number): boolean => tracedShare > 0 && Math.floor((i + 1) * tracedShare) > Math.floor(i * tracedShare);
  const envelopeOf = (i: number): string => {
    const event = corpus.events[i] as PreparedEvent;
    const nowUs = clock.nowUs();
    const payload = event.before + isoWithMicros(nowUs) + event.after;
    const trace = traced(i) ? encodeEnvelopeTrace(`00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`) : undefined;
    return writeEnvelope(event.partition, String(offsetBase + i), event.key, Math.floor(nowUs / 1_000), payload, trace);
  };
  const chunks = batch > 0 ? createChunker(redis, corpus, offsetBase, batch, envelopeOf) : undefined;
  const publishOne = (i: number): Promise<number> => {
    if (chunks !== undefined) return chunks.add(i);
    return redis.publish((corpus.events[i] as PreparedEvent).channel, envelopeOf(i));
  };
  // Back-to-back: every PUBLISH is written without waiting for replies (one pipeline; Redis answers in order, so the last reply is the last).
  return paceStream({
    count,
    ratePerSecond: Math.max(0, ratePerSecond),
    nowUs: () => clock.nowUs(),
    send(from, to) {
      let last: Promise<number> = Promise.resolve(0);
      for (let i = from; i < to; i++) last = publishOne(i);
      if (to === count && chunks !== undefined) last = chunks.flushAll();
      return last;
    },
  });
}

/**
 * Ingest's batch form for the bench: events gathered per partition, a full chunk published at once as
 * one part per shard on that shard's channel (the channel of any of its events: they share the shard).
 */
function createChunker(redis: Redis, corpus: EventCorpus, offsetBase: number, size: number, envelopeOf: (i: number) => string) {
  const open = new Map<number, number[]>();
  const publishChunk = (partition: number, indexes: readonly number[]): Promise<number> => {
    const channels = new Map<number, string>();
    const shards = indexes.map((i) => {
      const event = corpus.events[i] as PreparedEvent;
      channels.set(event.shard, event.channel);
      return event.shard;
    });
    const parts = encodeEnvelopeBatch(
      partition,
      indexes.map((i) => String(offsetBase + i)),
      shards,
      indexes.map((i) => Buffer.from(envelopeOf(i))),
      undefined,
      // As ingest writes them: the listing id is the key field's value (the generator's string ids).
      { on: corpus.routedOn, keys: indexes.map((i) => (corpus.events[i] as PreparedEvent).key) },
    );
    let last: Promise<number> = Promise.resolve(0);
    for (const part of parts) last = redis.publish(channels.get(part.shard) as string, part.bytes);
    return last;
  };
  return {
    add(i: number): Promise<number> {
      const { partition } = corpus.events[i] as PreparedEvent;
      let chunk = open.get(partition);
      if (chunk === undefined) open.set(partition, (chunk = []));
      chunk.push(i);
      if (chunk.length < size) return Promise.resolve(0);
      open.delete(partition);
      return publishChunk(partition, chunk);
    },
    flushAll(): Promise<number> {
      let last: Promise<number> = Promise.resolve(0);
      for (const [partition, chunk] of open) last = publishChunk(partition, chunk);
      open.clear();
      return last;
    },
  };
}
