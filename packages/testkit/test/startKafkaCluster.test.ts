// startKafkaCluster against three real brokers, one cluster for the file: replication, and a
// partition leader SIGKILLed mid-stream while a kafkajs producer (acks -1) and a consumer group run.
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel, Partitioners, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { isAlive } from '../src/internal/processes.js';
import { createTopics, startKafkaCluster, type KafkaCluster, uniqueName, waitFor } from '../src/index.js';

let cluster: KafkaCluster;
let kafka: Kafka;
// kafkajs logs, printed only for a failed test: a leader loss makes it log every retry.
const kafkaLogs: string[] = [];
const printLogsOnFailure = (): void => onTestFailed(() => console.error(kafkaLogs.join('\n')));

beforeAll(async () => {
  cluster = await startKafkaCluster();
  console.info(`kafka cluster of ${cluster.nodes.length} started in ${cluster.startupMs} ms`);
  kafka = new Kafka({
    clientId: 'testkit-cluster',
    brokers: cluster.brokers,
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, log }) => {
      kafkaLogs.push(`${new Date().toISOString()} ${namespace} ${log.message} ${JSON.stringify({ ...log, message: undefined })}`);
    },
    // A leader loss takes the controller's broker session timeout (3 s) plus an election to heal:
    // the default retries (5, ~10 s in all) are tight on a loaded machine.
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 3_000 },
  });
}, 180_000); // 3 minutes: three JVMs on 2 shared cores

afterAll(async () => {
  await cluster?.stop();
});

/** Waits until every partition of `topic` has all `replicas` replicas in sync. */
async function waitForFullIsr(admin: Admin, topic: string, replicas: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = topics[0]?.partitions ?? [];
      return partitions.length > 0 && partitions.every((p) => p.replicas.length === replicas && p.isr.length === replicas);
    },
    { timeoutMs, intervalMs: 200, message: `${replicas} in-sync replicas for every partition of ${topic}` },
  );
}

describe('startKafkaCluster', () => {
  it('starts three brokers that each list all three', async () => {
    expect(cluster.nodes.map((n) => n.id)).toEqual([1, 2, 3]);
    expect(cluster.nodes.every((n) => isAlive(n.pid))).toBe(true);
    expect(cluster.brokers).toEqual(cluster.nodes.map((n) => `127.0.0.1:${n.port}`));
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { brokers } = await admin.describeCluster();
      expect(brokers.map((b) => b.nodeId).sort()).toEqual([1, 2, 3]);
    } finally {
      await admin.disconnect();
    }
  });

  it('creates topics with replication factor 3, every replica in sync', async () => {
    const topic = uniqueName('cluster-rf');
    const admin = kafka.admin();
    await admin.connect();
    try {
      await createTopics(admin, [{ topic, numPartitions: 3 }]); // RF from the broker default: 3
      await waitForFullIsr(admin, topic, 3);
    } finally {
      await admin.disconnect();
    }
  });

  it("names a group's coordinator: the leader of the group's partition of __consumer_offsets", async () => {
    const groupId = uniqueName('cluster-coordinator');
    // Kafka's rule: Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions (5 in infra/kafka/start.sh).
    let hash = 0;
    for (let i = 0; i < groupId.length; i++) hash = (Math.imul(hash, 31) + groupId.charCodeAt(i)) | 0; // Java's String.hashCode
    const partition = (hash === -2147483648 ? 0 : Math.abs(hash)) % 5; // Utils.abs, not the partitioner's & 0x7fffffff
    // The offsets topic is created on the first FindCoordinator, so ask before reading its leader.
    const coordinator = await cluster.coordinatorOf(groupId);
    const leader = await waitFor(() => cluster.leaderOf('__consumer_offsets', partition).then((id) => (id > 0 ? id : undefined)), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: `a leader for __consumer_offsets/${partition}`,
    });
    expect(coordinator).toBe(leader);
  });

  it('keeps producing (acks -1) and consuming in a group, losing nothing, when a partition leader is SIGKILLed; the broker comes back', { timeout: 240_000 }, async () => {
    printLogsOnFailure();
    const topic = uniqueName('cluster-failover');
    const groupId = uniqueName('cluster-failover-group');
    const admin = kafka.admin();
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    // Two stalls of kafkajs's consumer after a leader crash, each bounded here:
    // - it retries the fetch on the dead broker's address (ECONNREFUSED) without refreshing metadata
    //   until its retry budget is spent, then crashes, restarts and finds the new leader: so a small budget;
    // - the restarted consumer joins as a new member; when the dead broker was the group coordinator
    //   its LeaveGroup was lost, and the new coordinator waits for the old member's session to
    //   expire before the rebalance completes: so a short session (kafkajs default 30 s; broker min 6 s).
    const consumer = kafka.consumer({
      groupId,
      maxWaitTimeInMs: 100,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 1_000 },
    });
    await Promise.all([admin.connect(), producer.connect(), consumer.connect()]);

    // One partition, so the killed leader leads everything this test writes.
    await createTopics(admin, [{ topic, numPartitions: 1 }]);
    await waitForFullIsr(admin, topic, 3);
    const received = new Set<string>();
    let deliveries = 0;
    // Each broker learns of a new topic from the metadata log on its own: the one the consumer
    // asks may not know it yet (UNKNOWN_TOPIC_OR_PARTITION, which subscribe does not retry).
    await waitFor(async () => {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      return true;
    }, { timeoutMs: 30_000, intervalMs: 200, message: `the consumer to subscribe to ${topic}` });
    await consumer.run({
      eachMessage: ({ message }) => {
        deliveries += 1;
        received.add(message.value?.toString() ?? '');
        return Promise.resolve();
      },
    });

    // The stream: one message per send, back to back; a send that fails after kafkajs's retries is
    // sent again (at least once), so only acknowledged values must arrive.
    const ackedAt: number[] = []; // performance.now() of each acknowledged value, by value
    const sendErrors: string[] = [];
    let streaming = true;
    const stream = (async () => {
      while (streaming) {
        const value = String(ackedAt.length);
        try {
          await producer.send({ topic, acks: -1, messages: [{ value }] });
          ackedAt.push(performance.now());
        } catch (error) {
          sendErrors.push(error instanceof Error ? error.message : String(error));
        }
      }
    })();
    const allAckedReceived = (): boolean => ackedAt.every((_, value) => received.has(String(value)));

    try {
      await waitFor(() => received.size >= 20, { timeoutMs: 60_000, message: `the group to receive 20 messages (has ${received.size})` });

      const leader = await cluster.leaderOf(topic, 0);
      expect(leader).toBeGreaterThan(0);
      const killedAt = performance.now();
      const ackedBeforeKill = ackedAt.length;
      await cluster.killBroker(leader);
      const killMs = performance.now() - killedAt;
      const newLeader = await waitFor(
        async () => {
          const id = await cluster.leaderOf(topic, 0);
          return id > 0 && id !== leader ? id : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200, message: `a leader other than ${leader} for ${topic}/0` },
      );
      const leaderMovedMs = performance.now() - killedAt;

      // Producing continues: 50 more acknowledged writes, all of them consumed.
      await waitFor(() => ackedAt.length >= ackedBeforeKill + 50, { timeoutMs: 60_000, message: `50 acks after the kill (have ${ackedAt.length - ackedBeforeKill})` });
      const firstAckAfterKill = ackedAt.find((at) => at > killedAt) ?? Number.NaN;
      await waitFor(allAckedReceived, { timeoutMs: 60_000, message: 'every acknowledged message to be consumed' });
      const caughtUpMs = performance.now() - killedAt;

      const restartAt = performance.now();
      await cluster.restartBroker(leader);
      const restartMs = performance.now() - restartAt;
      await waitForFullIsr(admin, topic, 3);
      const { brokers } = await admin.describeCluster();
      expect(brokers.map((b) => b.nodeId).sort()).toEqual([1, 2, 3]);

      streaming = false;
      await stream;
      await waitFor(allAckedReceived, { timeoutMs: 60_000, message: 'every acknowledged message to be consumed after the restart' });
      expect(newLeader).not.toBe(leader);
      console.info(
        `leader ${leader} SIGKILLed: gone from the others' metadata in ${Math.round(killMs)} ms, ` +
          `leader ${newLeader} elected after ${Math.round(leaderMovedMs)} ms, first ack after ${Math.round(firstAckAfterKill - killedAt)} ms, ` +
          `all acked consumed after ${Math.round(caughtUpMs)} ms; restart (back in every ISR) ${Math.round(restartMs)} ms; ` +
          `${ackedAt.length} acked, ${received.size} distinct received, ${deliveries - received.size} redelivered, ${sendErrors.length} sends failed after retries`,
      );
      expect(received.size).toBeGreaterThanOrEqual(ackedAt.length);
    } finally {
      streaming = false;
      await stream;
      await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
    }
  });
});
