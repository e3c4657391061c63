import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { findRepoRoot } from './findRepoRoot.js';
import { freePort } from './freePort.js';
import { findCoordinator } from './internal/findCoordinator.js';
import { isAlive, onProcessExit, runScript } from './internal/processes.js';
import { waitFor } from './waitFor.js';

/** Options of {@link startKafkaCluster}. */
export interface KafkaClusterOptions {
  /**
   * How many nodes, each a broker and a controller voter. Topics get replication factor
   * min(nodeCount, 3) and min.insync.replicas one less (3 and 2 by default). @default 3
   */
  nodeCount?: number;
  /** Deadline for every node to answer and list all brokers. @default 120_000 (2 minutes: three JVMs on 2 cores) */
  startTimeoutMs?: number;
}

/** One node of a {@link KafkaCluster}. */
export interface KafkaClusterNode {
  /** Its node.id (1..nodeCount), what metadata calls a broker and a partition leader. */
  readonly id: number;
  /** Client (PLAINTEXT) port, kept across restarts. */
  readonly port: number;
  /** KRaft controller port, kept across restarts. */
  readonly controllerPort: number;
  /** Its JVM's pid (also its process group id); a new one after a restart, a dead one after a kill. */
  readonly pid: number;
}

/** A running Kafka cluster (KRaft) on this machine. Stop it in afterAll. */
export interface KafkaCluster {
  /** Bootstrap servers of every node, e.g. `['127.0.0.1:41234', '127.0.0.1:41236', '127.0.0.1:41238']`. */
  readonly brokers: string[];
  readonly nodes: readonly KafkaClusterNode[];
  /** Wall time of `infra/kafka/start-cluster.sh`: formats, JVM starts, quorum, all brokers registered. */
  readonly startupMs: number;
  readonly dataDir: string;
  /**
   * SIGKILLs one node's JVM (a crash: no clean shutdown, no leader hand-over) and resolves once it
   * is gone and every other node's metadata no longer lists it, which takes the controller's
   * broker session timeout (3 s) to notice. Its partitions have new leaders by then.
   */
  killBroker(id: number, options?: { timeoutMs?: number }): Promise<void>;
  /**
   * Starts a killed node again on its ports and data dir. Resolves once every node lists it and it
   * is back in the ISR of every partition it replicates (it has caught up).
   */
  restartBroker(id: number, options?: { timeoutMs?: number }): Promise<void>;
  /** The node id leading `topic`'s `partition` now, as the live nodes' metadata says (-1: none). */
  leaderOf(topic: string, partition: number): Promise<number>;
  /**
   * The node id coordinating consumer group `groupId` now (its heartbeats, joins and offset
   * commits), asked of a live node; waits while none is elected. A fault test that kills a
   * partition leader can pick the one that coordinates the group too: the harder failover.
   */
  coordinatorOf(groupId: string, options?: { timeoutMs?: number }): Promise<number>;
  /** SIGKILLs every node (throwaway data), waits until they are gone, deletes the data dir. Idempotent. */
  stop(): Promise<void>;
}

const FETCH_TIMEOUT_MS = 10 * 60_000; // 10 minutes: a cold Maven fetch on a slow mirror
const FAULT_TIMEOUT_MS = 90_000; // 90 seconds: kill or restart one node until the others agree (a restart took 15-25 s here)
// Free ports are checked, not reserved; when we chose them and lost the race, choose again.
const PORT_ATTEMPTS = 3;
// Not `kafka-`: startKafka prunes `kafka-*` dirs without a top-level pid file, which a cluster's is.
const DIR_PREFIX = 'cluster-kafka-';

/**
 * Starts a cluster of real Apache Kafka nodes from `infra/kafka/` (start-cluster.sh: combined
 * broker+controller each, a static quorum of all of them) on free ports, for tests that need
 * replication or fault tests that kill a partition leader mid-stream. Like {@link startKafka}, the
 * scripts hold the config; the JVMs never outlive the test process (exit handler and watchdog).
 */
export async function startKafkaCluster(options: KafkaClusterOptions = {}): Promise<KafkaCluster> {
  const {
    nodeCount = 3,
    startTimeoutMs = 120_000, // 2 minutes
  } = options;
  if (!Number.isInteger(nodeCount) || nodeCount < 1) {
    throw new RangeError(`startKafkaCluster: nodeCount must be a whole number >= 1, got ${nodeCount}`);
  }
  const root = findRepoRoot();
  const kafkaDir = join(root, 'infra', 'kafka');
  await runScript(join(kafkaDir, 'fetch.sh'), [], { timeoutMs: FETCH_TIMEOUT_MS });
  const parent = join(root, '.wirestream', 'testkit');
  mkdirSync(parent, { recursive: true });
  pruneStaleClusterDirs(parent);

  for (let attempt = 1; ; attempt += 1) {
    const ports = await distinctFreePorts(2 * nodeCount);
    const clientPorts = ports.slice(0, nodeCount);
    const controllerPorts = ports.slice(nodeCount);
    const dataDir = mkdtempSync(join(parent, `${DIR_PREFIX}${clientPorts[0]}-`));
    const started = performance.now();
    try {
      await runScript(
        join(kafkaDir, 'start-cluster.sh'),
        [
          '--ports', clientPorts.join(','),
          '--controller-ports', controllerPorts.join(','),
          '--data-dir', dataDir,
          '--timeout', String(Math.ceil(startTimeoutMs / 1000)),
          '--watch-pid', String(process.pid),
        ],
        // The script enforces the readiness deadline itself; this margin covers formatting storage.
        { timeoutMs: startTimeoutMs + 60_000 },
      );
    } catch (error) {
      // start-cluster.sh stops its nodes on failure, but not if it was itself killed.
      await runScript(join(kafkaDir, 'stop-cluster.sh'), ['--data-dir', dataDir, '--kill'], { timeoutMs: 20_000 }).catch(
        () => undefined,
      );
      rmSync(dataDir, { recursive: true, force: true });
      const message = error instanceof Error ? error.message : String(error);
      if (attempt < PORT_ATTEMPTS && /already in use/i.test(message)) continue;
      throw new Error(`startKafkaCluster: ${message}`, { cause: error });
    }
    const startupMs = Math.round(performance.now() - started);
    const nodes = clientPorts.map((port, i) => ({ id: i + 1, port, controllerPort: controllerPorts[i] ?? 0, pid: readPid(dataDir, i + 1) }));
    return createHandle({ kafkaDir, dataDir, nodes, startupMs });
  }
}

interface NodeState {
  id: number;
  port: number;
  controllerPort: number;
  pid: number;
}

function createHandle(props: { kafkaDir: string; dataDir: string; nodes: NodeState[]; startupMs: number }): KafkaCluster {
  const { kafkaDir, dataDir, nodes, startupMs } = props;
  // Negative pid: each node leads its own process group (setsid in start.sh). Reads the current pids.
  const removeExitHook = onProcessExit(() => {
    for (const node of nodes) {
      try {
        process.kill(-node.pid, 'SIGKILL');
      } catch {
        // already gone (a killed node)
      }
    }
  });
  const nodeById = (id: number, caller: string): NodeState => {
    const node = nodes.find((n) => n.id === id);
    if (node === undefined) throw new RangeError(`${caller}: no node ${id}; the cluster's node ids are ${nodes.map((n) => n.id).join(', ')}`);
    return node;
  };
  const liveNodes = (): NodeState[] => nodes.filter((n) => isAlive(n.pid));
  let stopping: Promise<void> | undefined;
  const assertRunning = (caller: string): void => {
    if (stopping !== undefined) throw new Error(`${caller} after stop()`);
  };

  return {
    brokers: nodes.map((n) => `127.0.0.1:${n.port}`),
    // Views, so `pid` follows restarts.
    nodes: nodes.map((node) => ({
      id: node.id,
      port: node.port,
      controllerPort: node.controllerPort,
      get pid() {
        return node.pid;
      },
    })),
    startupMs,
    dataDir,

    async killBroker(id, { timeoutMs = FAULT_TIMEOUT_MS } = {}) {
      assertRunning('killBroker');
      const node = nodeById(id, 'killBroker');
      const deadline = Date.now() + timeoutMs;
      try {
        process.kill(-node.pid, 'SIGKILL');
      } catch {
        // already gone: still wait for the others to agree
      }
      await waitFor(() => !isAlive(node.pid), { timeoutMs: remaining(deadline), message: `node ${id} (pid ${node.pid}) to exit after SIGKILL` });
      const others = liveNodes();
      await waitFor(
        async () => {
          const lists = await Promise.all(others.map((other) => brokerIdsOf(other.port)));
          return lists.every((ids) => !ids.includes(id));
        },
        { timeoutMs: remaining(deadline), intervalMs: 200, message: `nodes ${others.map((o) => o.id).join(', ')} to drop node ${id} from their metadata` },
      );
    },

    async restartBroker(id, { timeoutMs = FAULT_TIMEOUT_MS } = {}) {
      assertRunning('restartBroker');
      const node = nodeById(id, 'restartBroker');
      if (isAlive(node.pid)) throw new Error(`restartBroker: node ${id} still runs (pid ${node.pid}); killBroker(${id}) first`);
      const deadline = Date.now() + timeoutMs;
      await runScript(
        join(kafkaDir, 'start-cluster.sh'),
        ['--data-dir', dataDir, '--node', String(id), '--timeout', String(Math.ceil(timeoutMs / 1000)), '--watch-pid', String(process.pid)],
        { timeoutMs: timeoutMs + 30_000 },
      );
      node.pid = readPid(dataDir, id);
      // start-cluster.sh waited until this node lists every broker; now wait until the others list
      // it too and it has caught up on every partition it replicates.
      await withAdmin(nodes, async (admin) => {
        await waitFor(
          async () => {
            const { topics } = await admin.fetchTopicMetadata();
            return topics.every(({ partitions }) => partitions.every((p) => !p.replicas.includes(id) || p.isr.includes(id)));
          },
          { timeoutMs: remaining(deadline), intervalMs: 200, message: `node ${id} back in the ISR of every partition it replicates` },
        );
      });
    },

    async leaderOf(topic, partition) {
      assertRunning('leaderOf');
      return withAdmin(liveNodes(), async (admin) => {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        const found = topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionId === partition);
        if (found === undefined) throw new Error(`leaderOf: ${topic} has no partition ${partition}`);
        return found.leader;
      });
    },

    async coordinatorOf(groupId, { timeoutMs = FAULT_TIMEOUT_MS } = {}) {
      assertRunning('coordinatorOf');
      return waitFor(
        async () => {
          const asked = liveNodes()[0];
          if (asked === undefined) throw new Error('no node of the cluster is running');
          return findCoordinator('127.0.0.1', asked.port, groupId);
        },
        { timeoutMs, intervalMs: 200, message: `a coordinator for group ${groupId}` },
      );
    },

    stop() {
      stopping ??= (async () => {
        // Throwaway data needs no clean shutdown.
        await runScript(join(kafkaDir, 'stop-cluster.sh'), ['--data-dir', dataDir, '--kill'], { timeoutMs: 30_000 });
        removeExitHook();
        rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** At least 1 ms, so waitFor accepts it and fails at once when the deadline has passed. */
function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

function readPid(dataDir: string, id: number): number {
  return Number(readFileSync(join(dataDir, `node-${id}`, 'kafka.pid'), 'utf8').trim());
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * Runs `fn` with a kafkajs admin bootstrapped from `nodes` only (a killed node would cost each
 * call a connection timeout). Quiet and without retries: callers poll with waitFor.
 */
async function withAdmin<T>(nodes: readonly { port: number }[], fn: (admin: Admin) => Promise<T>): Promise<T> {
  if (nodes.length === 0) throw new Error('startKafkaCluster: no node of the cluster is running');
  const kafka = new Kafka({
    clientId: 'testkit-cluster',
    brokers: nodes.map((n) => `127.0.0.1:${n.port}`),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 5_000,
    retry: { retries: 1 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

/** The broker ids the node on `port` lists in its metadata: the live (registered, unfenced) ones. */
async function brokerIdsOf(port: number): Promise<number[]> {
  return withAdmin([{ port }], async (admin) => (await admin.describeCluster()).brokers.map((b) => b.nodeId));
}

/**
 * Deletes cluster dirs whose nodes are all gone without a stop() (a SIGKILLed test run: the
 * watchdogs kill the JVMs but nobody deletes the folder). A dir with no live node is left alone
 * for a minute, as a concurrent start may still be formatting it.
 */
function pruneStaleClusterDirs(parent: string): void {
  const graceMs = 60_000; // 1 minute
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(parent, name);
    try {
      const anyAlive = readdirSync(dir)
        .filter((entry) => entry.startsWith('node-'))
        .some((entry) => {
          try {
            const pid = Number(readFileSync(join(dir, entry, 'kafka.pid'), 'utf8').trim());
            return pid > 0 && isAlive(pid);
          } catch {
            return false; // no pid file: never started, or stopped
          }
        });
      if (!anyAlive && Date.now() - statSync(dir).mtimeMs > graceMs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // raced with another pruner
    }
  }
}
