import type { EachBatchPayload, KafkaMessage, Message, Producer } from 'kafkajs';
import { otelContext, type Context, type Logger } from '@wirestream/telemetry';
import { backoffMs } from './backoff.js';
import type { Chunk, ChunkBuilder } from './chunk-builder.js';
import type { ChunkTrace, ChunkTracer } from './chunk-tracing.js';
import { deadLetterBytes, truncateDeadLetter } from './dead-letter.js';
import type { FlowControl, PauseKind } from './flow-control.js';
import type { IngestState } from './ingest-state.js';
import { hasKafkaErrorType } from './kafka-errors.js';
import type { IngestMetrics } from './metrics.js';
import type { OffsetGapWatch } from './offset-gaps.js';
import type { RedisPublisher } from './redis-publisher.js';
import type { SchemaGate } from './schema-gate.js';
import type { TopicRoute } from './topic-routes.js';

export interface BatchProcessorOptions {
  readonly state: IngestState;
  readonly routes: ReadonlyMap<string, TopicRoute>;
  readonly chunks: ChunkBuilder;
  /** Loads the schemas a wire-format chunk needs, or pauses its partition. */
  readonly schemaGate: SchemaGate;
  readonly publisher: RedisPublisher;
  readonly flow: FlowControl;
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
  /** Messages per Redis pipeline, and so per offset commit. */
  readonly publishChunkSize: number;
  /** Dead letters of topic `t` go to `t + dlqSuffix`. */
  readonly dlqSuffix: string;
  /** First pause before redelivering a chunk; doubles up to 2 s. */
  readonly retryBackoffMs: number;
  /** Spans per chunk (decision 0020); undefined when tracing is off: then no tracing code runs. */
  readonly tracer: ChunkTracer | undefined;
  /** Sees each batch's fetch offset and each commit: offsets skipped by a retention reset are counted and logged. */
  readonly gaps: OffsetGapWatch;
}

/** kafkajs's eachBatch: a batch in chunks, each delivered (dead letters, then Redis) before its commit. Plain functions (no `this`). */
export interface BatchProcessor {
  readonly handleBatch: (payload: EachBatchPayload) => Promise<void>;
}

export function createBatchProcessor(options: BatchProcessorOptions): BatchProcessor {
  const { state, routes, chunks, schemaGate, publisher, flow, logger, metrics, publishChunkSize, dlqSuffix, retryBackoffMs, tracer, gaps } = options;

  async function handleBatch(payload: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    // The committed offsets read at a join, before the first batch is compared with them.
    const read = gaps.pending();
    if (read !== undefined) await read;
    const { fetchedOffset } = payload.batch as { fetchedOffset?: unknown };
    if (typeof fetchedOffset === 'string') gaps.check(topic, partition, fetchedOffset);
    const route = routes.get(topic);
    if (!route || messages.length === 0 || !state.consumer || !state.producer) return;

    for (let start = 0; start < messages.length; start += publishChunkSize) {
      // A rebalance took the partition away: the new owner resumes from our last commit.
      if (!payload.isRunning() || payload.isStale()) return;
      const end = Math.min(messages.length, start + publishChunkSize);
      // The schema source is down or slow: the partition is paused, and this chunk is redone once it resumes.
      if (route.wire !== undefined && !(await schemaGate.ready(payload, route.wire, start, end))) return;
      const trace = tracer?.start(topic, partition, messages, start, end);
      if (!(await (trace?.context === undefined ? runChunk(payload, route, start, end, trace) : tracedChunk(trace.context, payload, route, start, end, trace)))) return;
    }
  }

  /** One chunk's trip: convert, deliver, commit. False when the batch is given up (the rest is redone by the next owner). */
  async function runChunk(payload: EachBatchPayload, route: TopicRoute, start: number, end: number, trace: ChunkTrace | undefined): Promise<boolean> {
    const { topic, partition, messages } = payload.batch;
    const series = metrics?.forTopic(topic);
    let ok = false;
    try {
      const chunk = await chunks.buildChunk(payload, route, start, end, trace?.envelopeTraces);
      if (chunk === undefined) return false;
      trace?.converted();
      state.stats.consumed += end - start;
      series?.consumed.inc(end - start);

      // Dead letters and publishes must both be acknowledged before the commit: at-least-once.
      if (!(await deliverChunk(payload, chunk))) {
        logger.warn({ topic, partition, from: messages[start]?.offset }, 'gave up an undelivered chunk uncommitted; the next owner redoes it');
        return false;
      }
      await commitChunk(payload, (messages[end - 1] as KafkaMessage).offset);
      ok = true;
      return true;
    } catch (err) {
      trace?.end(false, err);
      trace = undefined;
      throw err;
    } finally {
      trace?.end(ok);
    }
  }

  /** {@link runChunk} with the chunk's span active, so its log lines carry the trace id. */
  function tracedChunk(context: Context, payload: EachBatchPayload, route: TopicRoute, start: number, end: number, trace: ChunkTrace): Promise<boolean> {
    return otelContext.with(context, runChunk, undefined, payload, route, start, end, trace);
  }

  /**
   * Dead letters first, then the pipeline; retried until both are acknowledged (consumption
   * paused meanwhile). Returns false when the batch was given up uncommitted (stop, rebalance).
   */
  async function deliverChunk(payload: EachBatchPayload, chunk: Chunk): Promise<boolean> {
    const { topic, partition } = payload.batch;
    const series = metrics?.forTopic(topic);
    let deadLettersSent = chunk.deadLetters.length === 0;
    let published = chunk.offsets.length === 0;
    for (let attempt = 0; ; attempt++) {
      try {
        if (!deadLettersSent) {
          await sendDeadLetters(state.producer as Producer, topic + dlqSuffix, chunk.deadLetters);
          deadLettersSent = true;
          state.stats.deadLettered += chunk.deadLetters.length;
          series?.deadLettered.inc(chunk.deadLetters.length);
        }
        if (!published) {
          await publisher.publishChunk(topic, partition, chunk);
          published = true;
          state.stats.published += chunk.offsets.length;
          series?.published.inc(chunk.offsets.length);
        }
        if (attempt > 0) flow.resume();
        return true;
      } catch (err) {
        const kind: PauseKind = deadLettersSent ? 'redis unavailable' : 'dead-letter topic unavailable';
        if (attempt === 0 && !deadLettersSent && hasKafkaErrorType(err, 'TOPIC_AUTHORIZATION_FAILED')) {
          logger.error(
            { err, topic, partition, deadLetterTopic: topic + dlqSuffix },
            `Kafka denied writing to the dead-letter topic ${topic + dlqSuffix} (TOPIC_AUTHORIZATION_FAILED): grant the ingest principal Write and Describe on it; until then consumption is paused and nothing is committed`,
          );
        } else if (attempt === 0) logger.warn({ err, topic, partition }, `could not deliver a chunk (${kind}); retrying`);
        flow.pause(kind);
        if (!(await flow.waitToRedeliver(payload, backoffMs(attempt, retryBackoffMs)))) return false;
      }
    }
  }

  /**
   * A chunk's dead letters to their topic. Ones it refuses as too large (its `max.message.bytes`)
   * are sent one by one, cut to fit, so one message can never stop its partition.
   */
  async function sendDeadLetters(producer: Producer, dlq: string, letters: Message[]): Promise<void> {
    try {
      await producer.send({ topic: dlq, acks: -1, messages: letters });
      return;
    } catch (err) {
      if (!isTooLarge(err)) throw err;
    }
    for (const letter of letters) {
      let limit = state.deadLetterLimits.get(dlq) ?? KAFKA_DEFAULT_MAX_MESSAGE_BYTES;
      for (let attempt = 0; ; attempt++) {
        const fitted = truncateDeadLetter(letter, limit);
        try {
          await producer.send({ topic: dlq, acks: -1, messages: [fitted] });
          if (fitted !== letter) {
            logger.warn(
              { topic: dlq, originalBytes: deadLetterBytes(letter), sentBytes: deadLetterBytes(fitted), limit },
              `dead-letter topic ${dlq} refused a dead letter of ${deadLetterBytes(letter)} bytes (MESSAGE_TOO_LARGE: max.message.bytes ${limit}); sent it truncated, with its original size and SHA-256 in headers`,
            );
          }
          break;
        } catch (err) {
          // The broker's limit is lower than read (another setting wins): halve until it fits.
          if (!isTooLarge(err) || attempt >= MAX_TRUNCATIONS) throw err;
          limit = Math.floor(limit / 2);
        }
      }
    }
  }

  /** Commits past the chunk's last offset, once its dead letters and envelopes were acknowledged. */
  async function commitChunk(payload: EachBatchPayload, last: string): Promise<void> {
    const { topic, partition, highWatermark } = payload.batch;
    payload.resolveOffset(last);
    // Not consumer.commitOffsets(): kafkajs skips that silently once stop() began, which would lose
    // the commit of the batch that stop() waits for. With explicit offsets this commits at once.
    const next = BigInt(last) + 1n;
    await payload.commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: next.toString() }] }] });
    gaps.committed(topic, partition, next);
    state.stats.commits++;
    // highWatermark is the next offset the partition will get: lag = what is left after `last`.
    metrics?.setLag(topic, partition, Math.max(0, Number(BigInt(highWatermark) - BigInt(last) - 1n)));
    await payload.heartbeat();
  }

  return { handleBatch };
}

/** Kafka's default `max.message.bytes`, assumed for a dead-letter topic whose setting could not be read. */
const KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;
/** Halvings of the limit tried for one dead letter before giving up (then the chunk is retried). */
const MAX_TRUNCATIONS = 8;

/** The broker refused a record or batch as too large (kafkajs wraps the protocol error). */
function isTooLarge(err: unknown): boolean {
  return hasKafkaErrorType(err, 'MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE');
}
