import type { EachBatchPayload, KafkaMessage, Message } from 'kafkajs';
import { encodeDeletedEnvelope, ROUTED_ON_KAFKA_KEY, routingKeyText, shardOf } from '@wirestream/wire';
import { toError, type Logger } from '@wirestream/telemetry';
import { backoffMs } from './backoff.js';
import { createDeadLetter, type DeadLetterReason } from './dead-letter.js';
import type { EventConverter } from './event-converter.js';
import type { FlowControl } from './flow-control.js';
import type { IngestMetrics } from './metrics.js';
import type { SchemaGate } from './schema-gate.js';
import type { TopicRoute } from './topic-routes.js';

/**
 * One chunk's work, built in offset order: envelopes to publish (each with its key shard and
 * offset) and messages to dead-letter. The shard, not a channel name: which Redis channel and
 * stream carry it is the publisher's business (its RedisLayout), and it names them once, not per event.
 */
export interface Chunk {
  readonly shards: number[];
  readonly bodies: Buffer[];
  readonly offsets: string[];
  /**
   * Snapshot topics only (`@topic(snapshot: true)`), per event: the key its snapshot entry has (the
   * routing key; undefined for an event with neither a key field value nor a Kafka key: not kept),
   * and whether it deletes it (a tombstone). Empty on other topics.
   */
  readonly keys: (string | undefined)[];
  readonly deletes: boolean[];
  /**
   * Per event, its routing key as gateways compare it (`routingKeyText`): the key field's value on a
   * topic with one, else the Kafka key; null where that cannot be said exactly. Batch parts carry
   * them, so a gateway drops an event none of its subscriptions pins without parsing it (decision 0039).
   */
  readonly routes: (string | null)[];
  /** Where `routes` were read: the topic's key field, or ROUTED_ON_KAFKA_KEY. */
  readonly routedOn: string;
  readonly deadLetters: Message[];
}

export interface ChunkBuilderOptions {
  /** JSON topics' converter; a wire-format topic has its own (its route's `wire.convert`). */
  readonly convert: EventConverter;
  /** Reloads a message's schemas before its retry. */
  readonly schemaGate: SchemaGate;
  /** Re-runs of a message whose processing throws before it is dead-lettered. */
  readonly maxRetries: number;
  readonly retryBackoffMs: number;
  /** Waits between poison retries (heartbeating, giving up on stop or rebalance). */
  readonly flow: FlowControl;
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
}

/** Kafka messages → a {@link Chunk}: the per-message half of the trip. Plain functions (no `this`). */
export interface ChunkBuilder {
  /**
   * Converts messages [start, end) of the batch, in offset order. Undefined when the batch must
   * be given up while a poison message waits for its retry (stop, rebalance). `traces[i - start]`
   * is message i's envelope trace fragment, if it carries one (chunk-tracing.ts).
   */
  readonly buildChunk: (payload: EachBatchPayload, route: TopicRoute, start: number, end: number, traces?: readonly (string | undefined)[]) => Promise<Chunk | undefined>;
}

/** The batch was given up while a message waited for a retry. */
const ABANDONED = Symbol('abandoned');

export function createChunkBuilder({ convert: convertJson, schemaGate, maxRetries, retryBackoffMs, flow, logger, metrics }: ChunkBuilderOptions): ChunkBuilder {
  /**
   * Converts one message and appends it to the chunk (last, so a throw leaves the chunk as it
   * was). Returns the dead-letter reason of a message that cannot be published.
   */
  function processMessage(partition: number, route: TopicRoute, message: KafkaMessage, chunk: Chunk, trace: string | undefined): DeadLetterReason | undefined {
    let key: string | null = null;
    if (message.key !== null) {
      const decodeKey = route.wire?.decodeKey;
      if (decodeKey === undefined) key = message.key.toString();
      else {
        const decoded = decodeKey(message.key);
        if (!decoded.ok) return decoded.reason.reason;
        key = decoded.key;
      }
    }
    const head = route.encodeHead(partition, message.offset, key, Number(message.timestamp), trace, message.headers);
    if (route.snapshot && message.value === null) return tombstone(route, message, key, head, chunk);
    const convert = route.wire?.convert ?? convertJson;
    const result = convert(message.value, head, route.readField);
    if (!result.ok) return result.reason;
    // The payload's key field routes; a payload without it falls back to the Kafka key (shardOf: 0 for one shard).
    chunk.shards.push(shardOf(result.routeValue ?? key ?? '', route.shards));
    chunk.bodies.push(result.bytes);
    chunk.offsets.push(message.offset);
    chunk.routes.push(route.keyField === undefined ? key : routingKeyText(result.routeValue));
    if (route.snapshot) {
      chunk.keys.push(result.routeValue ?? key ?? undefined);
      chunk.deletes.push(false);
    }
    return undefined;
  }

  /** A snapshot topic's tombstone: its key leaves the snapshot, and subscribers get a deleted event (snapshot.ts in @wirestream/wire). */
  function tombstone(route: TopicRoute, message: KafkaMessage, key: string | null, head: string, chunk: Chunk): DeadLetterReason | undefined {
    if (key === null) return { code: 'EMPTY_VALUE', message: 'a tombstone without a key: nothing to delete from the snapshot' };
    chunk.shards.push(shardOf(key, route.shards));
    chunk.bodies.push(Buffer.from(encodeDeletedEnvelope(head, route.keyField, key)));
    chunk.offsets.push(message.offset);
    chunk.routes.push(key);
    chunk.keys.push(key);
    chunk.deletes.push(true);
    return undefined;
  }

  /**
   * A message whose processing threw (a bug or a resource failure, not bad input: the converter
   * reports those as reasons) is re-run `maxRetries` times with backoff, then dead-lettered.
   */
  async function retryPoison(
    payload: EachBatchPayload,
    route: TopicRoute,
    message: KafkaMessage,
    chunk: Chunk,
    firstError: unknown,
    trace: string | undefined,
  ): Promise<DeadLetterReason | undefined | typeof ABANDONED> {
    const { topic, partition } = payload.batch;
    let error = firstError;
    for (let attempt = 1; attempt <= maxRetries; attempt++) {
      logger.warn({ topic, partition, offset: message.offset, attempt, err: error }, 'processing a message threw; retrying');
      metrics?.processingRetries.inc();
      if (!(await flow.waitAlive(payload, backoffMs(attempt - 1, retryBackoffMs)))) return ABANDONED;
      try {
        if (route.wire !== undefined) await schemaGate.reload(route.wire, message);
        return processMessage(partition, route, message, chunk, trace);
      } catch (err) {
        error = err;
      }
    }
    return { code: 'PROCESSING_FAILED', message: `processing threw ${maxRetries + 1} times; last error: ${toError(error).message}` };
  }

  async function buildChunk(payload: EachBatchPayload, route: TopicRoute, start: number, end: number, traces?: readonly (string | undefined)[]): Promise<Chunk | undefined> {
    const { topic, partition, messages } = payload.batch;
    const chunk: Chunk = { shards: [], bodies: [], offsets: [], keys: [], deletes: [], routes: [], routedOn: route.keyField ?? ROUTED_ON_KAFKA_KEY, deadLetters: [] };
    // Deliberately imperative: this loop runs once per event; the await is only on the rare throw path.
    for (let i = start; i < end; i++) {
      const message = messages[i] as KafkaMessage;
      let reason: DeadLetterReason | undefined;
      const trace = traces === undefined ? undefined : traces[i - start];
      try {
        reason = processMessage(partition, route, message, chunk, trace);
      } catch (err) {
        const retried = await retryPoison(payload, route, message, chunk, err, trace);
        if (retried === ABANDONED) return undefined;
        reason = retried;
      }
      if (reason !== undefined) {
        chunk.deadLetters.push(createDeadLetter(topic, partition, message, reason));
        logger.warn({ topic, partition, offset: message.offset, reason: reason.code, detail: reason.message }, 'message dead-lettered');
      }
    }
    return chunk;
  }

  return { buildChunk };
}
