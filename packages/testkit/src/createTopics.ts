import type { Admin, ITopicConfig } from 'kafkajs';
import { waitFor } from './waitFor.js';

/**
 * Creates topics and waits until every partition has a leader. kafkajs's own
 * `createTopics({ waitForLeaders: true })` retries only LEADER_NOT_AVAILABLE; a busy broker (a
 * test run starting several projects at once) first answers the metadata request with
 * UNKNOWN_TOPIC_OR_PARTITION, which fails the call although the topic is being created.
 */
export async function createTopics(admin: Admin, topics: ITopicConfig[], { timeoutMs = 30_000 } = {}): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics });
  const names = topics.map((t) => t.topic);
  await waitFor(
    async () => {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: names });
      return names.every((name) => {
        const partitions = metadata.find((m) => m.name === name)?.partitions ?? [];
        const expected = topics.find((t) => t.topic === name)?.numPartitions;
        return partitions.length > 0 && (expected === undefined || partitions.length === expected) && partitions.every((p) => p.leader >= 0);
      });
    },
    { timeoutMs, intervalMs: 100, message: `leaders for every partition of ${names.join(', ')}` },
  );
}
