import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '@wirestream/telemetry';
import type { IngestMetrics } from './metrics.js';

export interface LagMonitorOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly metrics: IngestMetrics;
  readonly logger: Logger;
  /** How often committed offsets are compared with the high watermarks. */
  readonly intervalMs: number;
}

/**
 * Consumer lag from the broker's view: the group's committed offsets against each partition's high
 * watermark, read every `intervalMs`. The batch processor also sets lag at each commit, but a
 * paused ingest commits nothing — this keeps `wirestream_ingest_consumer_lag` true while it waits
 * (it read 0 on every partition while the real lag grew, before).
 */
export function startLagMonitor(options: LagMonitorOptions): { stop(): Promise<void> } {
  const { kafka, groupId, topics, metrics, logger, intervalMs } = options;
  const admin = kafka.admin();
  let connected: Promise<void> | undefined;
  let failures = 0;
  const timer = setInterval(() => {
    connected ??= admin.connect();
    connected.then(() => readLag(admin, groupId, topics, metrics)).then(
      () => (failures = 0),
      (err: unknown) => {
        connected = undefined;
        if (failures++ === 0) logger.warn({ err }, 'could not read consumer lag (Describe ACLs on the group and topics?); retrying');
      },
    );
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (connected) await connected.then(() => admin.disconnect()).catch(() => undefined);
    },
  };
}

async function readLag(admin: Admin, groupId: string, topics: readonly string[], metrics: IngestMetrics): Promise<void> {
  const committed = await admin.fetchOffsets({ groupId, topics: [...topics] });
  for (const { topic, partitions } of committed) {
    const ends = await admin.fetchTopicOffsets(topic);
    for (const end of ends) {
      const mine = partitions.find((p) => p.partition === end.partition);
      // No commit yet ('-1'): everything from the earliest retained offset is still to do.
      const next = mine === undefined || BigInt(mine.offset) < 0n ? BigInt(end.low) : BigInt(mine.offset);
      const lag = BigInt(end.high) - next;
      metrics.setLag(topic, end.partition, Number(lag > 0n ? lag : 0n));
    }
  }
}
