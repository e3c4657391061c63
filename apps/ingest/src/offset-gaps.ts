import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '@wirestream/telemetry';
import type { IngestMetrics } from './metrics.js';

/**
 * Records lost to Kafka retention are never silent (issue #33). When the next offset of a partition
 * is no longer in the log (retention or DeleteRecords moved the log start past it while ingest was
 * stopped, paused or behind), the broker answers the fetch with OFFSET_OUT_OF_RANGE; kafkajs 2.2.4
 * then commits the group's default offset (earliest with `fromBeginning`, else latest), fetches from
 * there and logs only "Offset out of range, resetting to default offset", without the offsets it
 * skipped. This watch knows the offset ingest expects next on each partition it owns and compares
 * it with the offset each batch was fetched from: ingest never seeks, so a fetch offset past the
 * expected one is such a reset, and the offsets in between were never read. They are counted in
 * `wirestream_ingest_offsets_lost_total{topic,partition}` and logged as an error with the range.
 *
 * The fetch offset, not the batch's first record: on a compacted topic or past transaction markers
 * the first record may lie beyond the fetch offset without anything being lost.
 *
 * Where the expected offset comes from, in order of trust:
 * - this process's own commits (after Redis acknowledged a chunk), and the batches of only
 *   transaction markers that kafkajs resolves by itself (its START_BATCH_PROCESS event);
 * - the group's committed offsets, read before the consumer first fetches (start) and again at
 *   every join for the partitions assigned (another replica may have moved them). The read at a
 *   join races with kafkajs's first fetch; a batch of a partition waits for it, and when kafkajs
 *   reset that partition first the read finds its default (-2) and the range is not known: the
 *   reset is then only in kafkajs's own error line.
 */
export interface OffsetGapWatch {
  /** Reads the group's committed offsets of every partition of the topics (before consumer.run). */
  readonly start: () => Promise<void>;
  /** A join (GROUP_JOIN): forgets partitions no longer assigned, re-reads the assigned ones' commits. */
  readonly joined: (assignment: Readonly<Record<string, readonly number[]>>) => void;
  /** Ingest committed `next` (the offset after the last one it processed) on a partition. */
  readonly committed: (topic: string, partition: number, next: bigint) => void;
  /** The read of committed offsets started by the last join, while it is in flight (a batch awaits it first). */
  readonly pending: () => Promise<void> | undefined;
  /** A batch of `topic`/`partition` was fetched from `fetchedOffset`: counts and logs a skipped range. */
  readonly check: (topic: string, partition: number, fetchedOffset: string) => void;
  readonly stop: () => Promise<void>;
}

export interface OffsetGapWatchOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
}

export function createOffsetGapWatch({ kafka, groupId, topics, logger, metrics }: OffsetGapWatchOptions): OffsetGapWatch {
  /** topic \0 partition → the next offset ingest expects to fetch there. */
  const expected = new Map<string, bigint>();
  /** Partitions whose expectation this process set since the last join: a late read must not overwrite them. */
  const setSinceJoin = new Set<string>();
  let admin: Admin | undefined;
  let connected: Promise<void> | undefined;
  let inFlight: Promise<void> | undefined;
  let warned = false;

  /** `only`: the partitions to take (a join's assignment); undefined takes every partition (start). */
  async function readCommitted(only: ReadonlySet<string> | undefined): Promise<void> {
    admin ??= kafka.admin();
    connected ??= admin.connect();
    try {
      await connected;
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics: [...topics] })) {
        for (const { partition, offset } of partitions) {
          const key = keyOf(topic, partition);
          if ((only !== undefined && !only.has(key)) || setSinceJoin.has(key)) continue;
          // -1: never committed; -2: kafkajs's own reset already happened (the range is then unknown).
          if (BigInt(offset) >= 0n) expected.set(key, BigInt(offset));
        }
      }
    } catch (err) {
      connected = undefined;
      // At start this is only a head start (every join reads again), and a new cluster has no
      // group coordinator yet: a failure there is not worth a warning.
      if (only === undefined) logger.debug({ err, groupId }, 'could not read the group\'s committed offsets before joining; the join reads them');
      else if (!warned) {
        logger.warn({ err, groupId }, 'could not read the group\'s committed offsets (Describe on the group?): offsets lost to retention are counted only after the first commit');
        warned = true;
      }
    }
  }

  return {
    start: () => readCommitted(undefined),
    joined(assignment) {
      const assigned = new Set<string>();
      for (const [topic, partitions] of Object.entries(assignment)) {
        for (const partition of partitions) {
          assigned.add(keyOf(topic, partition));
          // Bound (and shown at 0) from the first join: an alert on its increase needs the series.
          metrics?.offsetsLost(topic, partition).inc(0);
        }
      }
      for (const key of expected.keys()) if (!assigned.has(key)) expected.delete(key);
      setSinceJoin.clear();
      const read = readCommitted(assigned).finally(() => {
        if (inFlight === read) inFlight = undefined;
      });
      inFlight = read;
    },
    committed(topic, partition, next) {
      const key = keyOf(topic, partition);
      expected.set(key, next);
      setSinceJoin.add(key);
    },
    pending: () => inFlight,
    check(topic, partition, fetchedOffset) {
      const key = keyOf(topic, partition);
      const from = expected.get(key);
      const fetched = BigInt(fetchedOffset);
      expected.set(key, fetched);
      setSinceJoin.add(key);
      if (from === undefined || fetched === from) return;
      if (fetched < from) {
        // A reset backwards (the expected offset was past the log end, e.g. after an unclean leader
        // election): offsets are read again, nothing is skipped.
        logger.warn({ topic, partition, from: String(fetched), to: String(from - 1n), groupId }, `Kafka moved ${topic}/${partition} back to offset ${fetched} (OFFSET_OUT_OF_RANGE: offset ${from} was past the log end); offsets ${fetched}..${from - 1n} are read again`);
        return;
      }
      const lost = fetched - from;
      metrics?.offsetsLost(topic, partition).inc(Number(lost));
      logger.error(
        { topic, partition, from: String(from), to: String(fetched - 1n), lost: Number(lost), groupId },
        `offsets ${from}..${fetched - 1n} of ${topic}/${partition} (${lost}) were deleted by retention before ingest read them (OFFSET_OUT_OF_RANGE; consumption resumed at ${fetched}): these records never reached Redis (docs/operations.md "Records lost to retention")`,
      );
    },
    async stop() {
      await inFlight;
      if (connected) await connected.then(() => admin?.disconnect()).catch(() => undefined);
    },
  };
}

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
