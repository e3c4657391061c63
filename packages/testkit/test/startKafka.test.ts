// startKafka, and the compatibility of kafkajs 2.2.4 (unmaintained since 2023) with the broker
// version in infra/kafka/pom.xml. Kafka 4.0 removed old protocol versions (KIP-896) and kafkajs
// negotiates min(its newest, the broker's newest) without looking at the broker's oldest, so a
// gap shows up only against a real broker. See docs/decisions/0002-kafka-broker.md.
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { Kafka, logLevel, Partitioners, type EachBatchPayload, type IHeaders } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { fetchApiVersions } from '../src/internal/apiVersions.js';
import { isAlive } from '../src/internal/processes.js';
import { createTopics, startKafka, type KafkaBroker, uniqueName, waitFor } from '../src/index.js';

const require = createRequire(import.meta.url);
// kafkajs internals: each request's implemented versions, and the API keys. No exports map, so
// deep requires work; this is test-only code that documents what kafkajs can speak.
const { requests } = require('kafkajs/src/protocol/requests/index.js') as {
  requests: Record<string, { versions: string[] }>;
};
const apiKeys = require('kafkajs/src/protocol/requests/apiKeys.js') as Record<string, number>;

let broker: KafkaBroker;
let kafka: Kafka;
// kafkajs logs go here and are printed only for a failed test. On a fresh broker the first group
// join always logs a "[Consumer] Crash ... coordinator is loading" at ERROR level: the broker is
// creating __consumer_offsets, kafkajs treats it as retriable and restarts the consumer 300 ms later.
const kafkaLogs: string[] = [];

beforeAll(async () => {
  broker = await startKafka();
  kafka = new Kafka({
    clientId: 'testkit-compat',
    brokers: broker.brokers,
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, log }) => {
      kafkaLogs.push(`${namespace} ${log.message} ${JSON.stringify({ ...log, message: undefined })}`);
    },
    retry: { retries: 3 },
  });
});

afterAll(async () => {
  await broker?.stop();
});

describe('startKafka', () => {
  it('fails fast, naming the port, when a given port is taken', async () => {
    // The running broker's own port is as taken as it gets.
    await expect(startKafka({ port: broker.port, startTimeoutMs: 10_000 })).rejects.toThrow(
      new RegExp(`127\\.0\\.0\\.1:${broker.port} is already in use`),
    );
  });

  it('starts a broker that answers on its port', async () => {
    expect(broker.brokers).toEqual([`127.0.0.1:${broker.port}`]);
    expect(isAlive(broker.pid)).toBe(true);
    expect(broker.startupMs).toBeGreaterThan(0);
    const versions = await fetchApiVersions('127.0.0.1', broker.port);
    expect(versions.get(18)).toMatchObject({ minVersion: 0 }); // ApiVersions v0 stays forever
  });
});

describe('kafkajs 2.2.4 against this broker', () => {
  beforeAll(() => {
    kafkaLogs.length = 0;
  });
  // Registered per test below, as onTestFailed must be called inside the running test.
  const printLogsOnFailure = (): void => onTestFailed(() => console.error(kafkaLogs.join('\n')));

  it('negotiates a version the broker accepts for every API kafkajs implements', async () => {
    printLogsOnFailure();
    const brokerVersions = await fetchApiVersions('127.0.0.1', broker.port);
    const unusable: string[] = [];
    for (const [name, { versions }] of Object.entries(requests)) {
      if (versions.length === 0) continue; // not implemented by kafkajs
      const apiKey = apiKeys[name];
      const range = apiKey === undefined ? undefined : brokerVersions.get(apiKey);
      const negotiated = Math.min(Math.max(...versions.map(Number)), range?.maxVersion ?? -1);
      if (range === undefined || negotiated < range.minVersion) {
        unusable.push(`${name}: kafkajs ${versions.join(',')}, broker ${range ? `${range.minVersion}-${range.maxVersion}` : 'none'}`);
      }
    }
    expect(unusable).toEqual([]);
  });

  it('creates a topic, produces, consumes in a group with explicit commits, resumes, reads offsets and deletes it', async () => {
    printLogsOnFailure();
    const topic = uniqueName('compat');
    const groupId = uniqueName('compat-group');
    const admin = kafka.admin();
    // DefaultPartitioner (murmur2, Java-compatible) also silences kafkajs's v2 partitioner warning.
    // Idempotent: a fresh broker may answer one partition of the first Produce with NOT_LEADER while it
    // writes the others; kafkajs then resends the whole request, and without sequence numbers the
    // partitions already written got k0/k1 twice (seen once in a busy run).
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
    await Promise.all([admin.connect(), producer.connect()]);
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true })).toBe(true);
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(metadata.topics[0]?.partitions).toHaveLength(3);

      const send = async (from: number, to: number): Promise<void> => {
        const result = await producer.send({
          topic,
          acks: -1,
          messages: Array.from({ length: to - from }, (_, i) => ({
            key: `k${from + i}`,
            value: JSON.stringify({ n: from + i }),
            headers: { 'trace-id': `t${from + i}`, source: Buffer.from('testkit') },
          })),
        });
        expect(result.every((r) => r.errorCode === 0)).toBe(true);
      };
      await send(0, 6);

      type Received = { key: string; partition: number; offset: string; headers: IHeaders };
      const consumeUntil = async (count: number): Promise<Received[]> => {
        const received: Received[] = [];
        const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, retry: { retries: 3 } });
        await consumer.connect();
        try {
          await consumer.subscribe({ topics: [topic], fromBeginning: true });
          await consumer.run({
            autoCommit: false,
            // kafkajs hands eachBatch closures, not methods: destructuring them is its documented use.
            // eslint-disable-next-line @typescript-eslint/unbound-method -- see above
            eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary }: EachBatchPayload) => {
              for (const message of batch.messages) {
                // At-least-once: a consumer that restarts before its commit landed (the group
                // coordinator still loading, on a busy machine) is handed the batch again.
                if (received.some((r) => r.partition === batch.partition && r.offset === message.offset)) continue;
                received.push({
                  key: message.key?.toString() ?? '',
                  partition: batch.partition,
                  offset: message.offset,
                  headers: message.headers ?? {},
                });
                resolveOffset(message.offset);
              }
              await heartbeat();
              // autoCommit is off: commitOffsetsIfNecessary is a no-op, so commit explicitly.
              await commitOffsetsIfNecessary();
              await consumer.commitOffsets([
                { topic, partition: batch.partition, offset: (BigInt(batch.lastOffset()) + 1n).toString() },
              ]);
            },
          });
          await waitFor(() => received.length >= count, {
            timeoutMs: 20_000,
            message: `${count} messages on ${topic} (have ${received.length})`,
          });
        } finally {
          await consumer.disconnect();
        }
        return received;
      };

      const first = await consumeUntil(6);
      expect(first.map((m) => m.key).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5']);
      const k3 = first.find((m) => m.key === 'k3');
      expect(k3?.headers['trace-id']?.toString()).toBe('t3');
      expect(k3?.headers['source']?.toString()).toBe('testkit');

      // What the group committed equals the end of each partition.
      const ends = await admin.fetchTopicOffsets(topic);
      expect(ends.reduce((sum, p) => sum + Number(p.high), 0)).toBe(6);
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const committedByPartition = new Map(committed?.partitions.map((p) => [p.partition, p.offset]));
      for (const end of ends) expect(committedByPartition.get(end.partition)).toBe(end.high);

      // A second consumer in the same group resumes from the committed offsets: new messages only.
      await send(6, 9);
      const second = await consumeUntil(3);
      expect(second.map((m) => m.key).sort()).toEqual(['k6', 'k7', 'k8']);

      const [after] = await admin.fetchOffsets({ groupId, topics: [topic] });
      expect(after?.partitions.reduce((sum, p) => sum + Number(p.offset), 0)).toBe(9);

      await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
      await waitFor(async () => !(await admin.listTopics()).includes(topic), {
        timeoutMs: 10_000,
        message: `${topic} to disappear from listTopics`,
      });
    } finally {
      await Promise.all([producer.disconnect(), admin.disconnect()]);
    }
  });
});

describe('createTopics', () => {
  it('returns once every partition of every topic has a leader', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const names = [uniqueName('topics-a'), uniqueName('topics-b')];
      await createTopics(admin, names.map((topic) => ({ topic, numPartitions: 4 })));
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      expect(topics.map((t) => [t.partitions.length, t.partitions.every((p) => p.leader >= 0)])).toEqual([[4, true], [4, true]]);
    } finally {
      await admin.disconnect();
    }
  });
});

describe('KafkaBroker.restart', () => {
  it('comes back on the same port with its topics, messages and committed offsets (also after SIGKILL)', { timeout: 120_000 }, async () => {
    const topic = uniqueName('restart');
    const groupId = uniqueName('restart-group');
    const admin = kafka.admin();
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await Promise.all([admin.connect(), producer.connect()]);
    // testkit's createTopics, not waitForLeaders: a busy broker first answers UNKNOWN_TOPIC_OR_PARTITION (seen here with a second JVM running).
    await createTopics(admin, [{ topic, numPartitions: 1 }]);
    await producer.send({ topic, acks: -1, messages: [{ value: 'before' }] });
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] });
    await Promise.all([producer.disconnect(), admin.disconnect()]);

    for (const kill of [false, true]) {
      const { pid, port } = broker;
      await broker.restart({ kill });
      expect(broker.port).toBe(port);
      expect(broker.pid).not.toBe(pid);
      expect(isAlive(pid)).toBe(false);
      expect(isAlive(broker.pid)).toBe(true);
    }

    const again = kafka.admin();
    await again.connect();
    try {
      // The broker answers before it has loaded every partition: wait for the log end to show.
      await waitFor(async () => (await again.fetchTopicOffsets(topic))[0]?.high === '1', { timeoutMs: 30_000, message: 'the topic after the restarts' });
      // …and for the group coordinator, which loads its offsets after that (NOT_COORDINATOR until then).
      let committed: Awaited<ReturnType<typeof again.fetchOffsets>>[number] | undefined;
      await waitFor(async () => ([committed] = await again.fetchOffsets({ groupId, topics: [topic] })).length > 0, { timeoutMs: 30_000, message: 'the group coordinator after the restarts' });
      expect(committed?.partitions).toEqual([{ partition: 0, offset: '1', metadata: null }]);
    } finally {
      await again.disconnect();
    }
  });
});

describe('KafkaBroker.stop', () => {
  it('ends the JVM and frees the port', async () => {
    const { pid, port } = broker;
    await broker.stop();
    expect(isAlive(pid)).toBe(false);
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    expect(accepted).toBe(false);
    await broker.stop(); // idempotent
  });
});
