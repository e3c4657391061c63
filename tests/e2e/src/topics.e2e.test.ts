// Your own topics at start (issue 13), with the built ingest against a real broker: a source topic
// that does not exist is named (and waited for), or created with INGEST_CREATE_TOPICS and the
// partitions asked for; a dead-letter name Kafka would refuse and a replication factor the cluster
// cannot hold each end in one line naming the setting, exit 78.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLevel } from 'kafkajs';
import { createTopics, findRepoRoot, startApp, startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

const EXIT_CONFIG = 78;

// Each test starts its own ingest (some that must refuse to start): the stack is Kafka and Redis.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ name: 'topics', kafkaLogLevel: logLevel.NOTHING });
});

afterAll(() => stack?.stop());

/** A schema file binding one field to `topic`. */
function schemaFor(topic: string): string {
  return stack.writeFile(`${topic}.graphql`, `type Changed { id: ID! }\ntype Subscription { changed(id: ID): Changed @topic(name: "${topic}", key: "id") }\n`);
}

function ingestEnv(topic: string, extra: Record<string, string> = {}): Record<string, string> {
  return { KAFKA_BROKERS: stack.brokers.join(','), REDIS_URL: stack.redis.url, SCHEMA_PATH: schemaFor(topic), KAFKA_GROUP_ID: uniqueName('topics'), INGEST_HTTP_PORT: '0', ...extra };
}

/** Runs the built ingest until it exits (or kills it after `timeoutMs`). */
function runToExit(env: Record<string, string>, timeoutMs = 60_000): Promise<{ status: number | null; stderr: string }> {
  const main = join(findRepoRoot(), 'apps', 'ingest', 'dist', 'main.js');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

describe('source topics at start', () => {
  it('names a topic that does not exist and waits for it; consumes once it is created', async () => {
    const topic = uniqueName('absent-events');
    const ingest = startApp('ingest', ingestEnv(topic));
    try {
      const warning = await ingest.waitForLog((l) => l['level'] === 'warn' && Array.isArray(l['topics']), 'the missing-topic warning', 30_000);
      expect(warning['msg']).toBe(`Kafka topic "${topic}" does not exist: ingest waits for it; create it (or start the producer), or set INGEST_CREATE_TOPICS=true`);
      expect(ingest.lines.some((l) => l['msg'] === 'joined consumer group')).toBe(false);
      await createTopics(stack.admin, [{ topic, numPartitions: 1 }]);
      await ingest.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined after the topic was created', 60_000);
    } finally {
      expect(await ingest.stop()).toBe(0);
    }
  });

  it('creates a missing source topic with INGEST_CREATE_TOPICS and INGEST_TOPIC_PARTITIONS', async () => {
    const topic = uniqueName('created-events');
    const ingest = startApp('ingest', ingestEnv(topic, { INGEST_CREATE_TOPICS: 'true', INGEST_TOPIC_PARTITIONS: '3' }));
    try {
      await ingest.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group', 60_000);
      const created = ingest.lines.find((l) => l['msg'] === 'created source topics (INGEST_CREATE_TOPICS)');
      expect(created?.['topics']).toEqual([topic]);
      const { topics } = await stack.admin.fetchTopicMetadata({ topics: [topic, `${topic}.dlq`] });
      expect(topics.find((t) => t.name === topic)?.partitions).toHaveLength(3);
      expect(topics.find((t) => t.name === `${topic}.dlq`)).toBeDefined();
    } finally {
      expect(await ingest.stop()).toBe(0);
    }
  });

  it('refuses a replication factor the cluster cannot hold, naming INGEST_TOPIC_REPLICATION (exit 78)', async () => {
    const topic = uniqueName('replicated-events');
    const run = await runToExit(ingestEnv(topic, { INGEST_CREATE_TOPICS: 'true', INGEST_TOPIC_REPLICATION: '3' }));
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    expect(run.stderr).toContain('INGEST_TOPIC_REPLICATION');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    await waitFor(async () => !(await stack.admin.listTopics()).includes(topic), { timeoutMs: 5_000, message: 'no topic created' });
  });

  it('refuses a dead-letter name longer than Kafka allows, naming INGEST_DLQ_SUFFIX (exit 78)', async () => {
    const topic = `long-${'x'.repeat(241)}`; // 246 characters: legal alone, 250 with ".dlq"
    const run = await runToExit(ingestEnv(topic));
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    expect(run.stderr).toMatch(/^ingest cannot start: the dead-letter topic of "long-x+" would be longer than Kafka's 249 characters \(topic \+ dlqSuffix \(INGEST_DLQ_SUFFIX\) "\.dlq"\): shorten the suffix or the topic name\n$/);
  });
});
