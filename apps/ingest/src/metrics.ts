import { Counter, Gauge, Histogram, type Registry } from '@wirestream/telemetry';

/** Ingest's Prometheus series, with every per-topic child bound once at start-up. */
export interface IngestMetrics {
  /** Per topic: consumed, published and dead-lettered counters; call `inc(n)` once per chunk. */
  forTopic(topic: string): {
    readonly consumed: Counter.Internal;
    readonly published: Counter.Internal;
    readonly deadLettered: Counter.Internal;
  };
  /** Sets a partition's lag (high watermark − next offset to process). */
  setLag(topic: string, partition: number, lag: number): void;
  /** A partition's count of offsets deleted by retention before ingest read them (offset-gaps.ts); bound once per partition. */
  offsetsLost(topic: string, partition: number): Counter.Internal;
  readonly redisPublishSeconds: Histogram;
  /** Times consumption was paused because Redis (or the dead-letter topic) could not take a chunk. */
  readonly pauses: Counter;
  /** 1 while consumption is paused, else 0. */
  readonly paused: Gauge;
  /** Re-runs of a message whose processing threw (before it is dead-lettered). */
  readonly processingRetries: Counter;
  /** Chunks whose WAIT (INGEST_REDIS_WAIT_REPLICAS) answered fewer replicas than asked; they were published anyway. */
  readonly redisWaitShort: Counter;
}

export function createIngestMetrics(registry: Registry, topics: readonly string[]): IngestMetrics {
  const registers = [registry];
  const consumed = new Counter({ name: 'wirestream_ingest_consumed_total', help: 'Kafka messages consumed.', labelNames: ['topic'], registers });
  const published = new Counter({ name: 'wirestream_ingest_published_total', help: 'Envelopes published to Redis and acknowledged.', labelNames: ['topic'], registers });
  const deadLettered = new Counter({ name: 'wirestream_ingest_dead_lettered_total', help: 'Messages sent to <topic>.dlq.', labelNames: ['topic'], registers });
  const offsetsLost = new Counter({
    name: 'wirestream_ingest_offsets_lost_total',
    help: 'Offsets skipped because Kafka had deleted them (retention, DeleteRecords) before ingest read them (OFFSET_OUT_OF_RANGE, reset to the default offset). Never read, never published: see docs/operations.md.',
    labelNames: ['topic', 'partition'],
    registers,
  });
  const lag = new Gauge({ name: 'wirestream_ingest_consumer_lag', help: 'Messages between the last processed offset and the high watermark.', labelNames: ['topic', 'partition'], registers });
  const redisPublishSeconds = new Histogram({
    name: 'wirestream_ingest_redis_publish_seconds',
    help: 'Time for one Redis pipeline (one chunk of envelopes) to be acknowledged.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });

  const pauses = new Counter({ name: 'wirestream_ingest_pauses_total', help: 'Times consumption paused because a chunk could not be delivered (Redis or dead-letter topic unavailable).', registers });
  const paused = new Gauge({ name: 'wirestream_ingest_paused', help: '1 while consumption is paused waiting for Redis or the dead-letter topic.', registers });
  const processingRetries = new Counter({ name: 'wirestream_ingest_processing_retries_total', help: 'Re-runs of messages whose processing threw unexpectedly.', registers });
  const redisWaitShort = new Counter({
    name: 'wirestream_ingest_redis_wait_short_total',
    help: 'Chunks whose history reached fewer replicas than INGEST_REDIS_WAIT_REPLICAS within INGEST_REDIS_WAIT_TIMEOUT_MS (published anyway; a primary crash now could lose them from history).',
    registers,
  });

  // Bound once: the hot path never builds label objects.
  const byTopic = new Map(
    topics.map((topic) => [
      topic,
      { consumed: consumed.labels(topic), published: published.labels(topic), deadLettered: deadLettered.labels(topic) },
    ]),
  );
  const lagChildren = new Map<string, Gauge.Internal<string>>();
  const lostChildren = new Map<string, Counter.Internal>();

  return {
    forTopic(topic) {
      let children = byTopic.get(topic);
      if (!children) {
        children = { consumed: consumed.labels(topic), published: published.labels(topic), deadLettered: deadLettered.labels(topic) };
        byTopic.set(topic, children);
      }
      return children;
    },
    setLag(topic, partition, value) {
      const key = `${topic}\u0000${partition}`;
      let child = lagChildren.get(key);
      if (!child) {
        child = lag.labels(topic, String(partition));
        lagChildren.set(key, child);
      }
      child.set(value);
    },
    offsetsLost(topic, partition) {
      const key = `${topic}\u0000${partition}`;
      let child = lostChildren.get(key);
      if (!child) {
        child = offsetsLost.labels(topic, String(partition));
        lostChildren.set(key, child);
      }
      return child;
    },
    redisPublishSeconds,
    pauses,
    paused,
    processingRetries,
    redisWaitShort,
  };
}
