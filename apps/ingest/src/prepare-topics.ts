import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import type { Logger } from '@wirestream/telemetry';

export interface PrepareTopicsOptions {
  readonly kafka: Kafka;
  /** The schema's source topics. */
  readonly topics: readonly string[];
  readonly dlqSuffix: string;
  readonly logger: Logger;
  /** True once stop() was called: waiting for topics is given up. */
  readonly isStopped: () => boolean;
}

const TOPIC_POLL_INTERVAL_MS = 500; // how often to look for source topics that do not exist yet
const TOPIC_WAIT_LOG_INTERVAL_MS = 10_000; // 10 seconds: how often to log that ingest is still waiting

/**
 * Source topics belong to their producers: ingest waits for them instead of creating them
 * (auto-creation would pick the broker's default partition count behind the owner's back).
 * Dead-letter topics are ingest's own, so it creates those.
 */
export async function prepareTopics({ kafka, topics, dlqSuffix, logger, isStopped }: PrepareTopicsOptions): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    let lastLogged = 0;
    for (;;) {
      const existing = new Set(await admin.listTopics());
      const waitingFor = topics.filter((t) => !existing.has(t));
      if (waitingFor.length === 0) {
        const missing = topics.map((t) => t + dlqSuffix).filter((t) => !existing.has(t));
        if (missing.length > 0) {
          await admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic })) });
          logger.info({ topics: missing }, 'created dead-letter topics');
        }
        return;
      }
      if (isStopped()) throw new Error('ingest stopped while waiting for its topics');
      if (Date.now() - lastLogged >= TOPIC_WAIT_LOG_INTERVAL_MS) {
        logger.warn({ topics: waitingFor }, 'waiting for Kafka topics to exist (create them, or start the producer)');
        lastLogged = Date.now();
      }
      await sleep(TOPIC_POLL_INTERVAL_MS);
    }
  } finally {
    await admin.disconnect();
  }
}
