import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findRepoRoot } from './findRepoRoot.js';
import { freePort } from './freePort.js';
import { isAlive, killWhenGone, onProcessExit } from './internal/processes.js';
import { CLUSTER_SLOTS, keySlot } from './keySlot.js';
import { waitFor } from './waitFor.js';

/** The machine's shared Redis (started before every session); tests must never touch it. */
const SHARED_REDIS_PORT = 6379;
const HOST = '127.0.0.1';
/** Lines of a node's log quoted in an error. */
const LOG_TAIL_LINES = 25;
/** Keys moved per MIGRATE while resharding a slot. */
const MIGRATE_BATCH = 100;
/** A single redis-cli command (not `--cluster create`) must finish within this. */
const CLI_TIMEOUT_MS = 10_000; // 10 seconds: generous, a loaded 2-core machine stalls processes

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** Primaries; `redis-cli --cluster create` needs at least 3. @default 3 */
  primaries?: number;
  /** Replicas of each primary; a primary without one cannot fail over. @default 1 */
  replicasPerPrimary?: number;
  /**
   * `cluster-node-timeout`: how long a node may not answer before it is suspected failed. A
   * failover takes about this plus one to two seconds (election delay 500-1000 ms, then votes).
   * @default 1_000 (1 second; Redis's own default is 15 s)
   */
  nodeTimeoutMs?: number;
  /** Deadline for all nodes to start and the cluster to be `ok` everywhere. @default 60_000 (60 seconds) */
  startTimeoutMs?: number;
  /** Deadline for {@link RedisCluster.killPrimary}, {@link RedisCluster.migrateSlot} and {@link RedisCluster.restartNode} to settle. @default 30_000 (30 seconds) */
  faultTimeoutMs?: number;
  /** The redis-server binary. @default 'redis-server' (Debian's package, on PATH) */
  redisServerPath?: string;
  /** The redis-cli binary (Debian's redis-tools, installed with redis-server). @default 'redis-cli' */
  redisCliPath?: string;
}

export type ClusterNodeRole = 'primary' | 'replica';

/** One node of the cluster as the cluster itself last described it (`CLUSTER NODES`). */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
  /** The 40-character node id. */
  readonly id: string;
  readonly role: ClusterNodeRole;
  /** The id of the primary a replica follows; undefined for a primary. */
  readonly primaryId: string | undefined;
  /** The redis-server's pid; undefined once killed. */
  readonly pid: number | undefined;
  /** The slot ranges a primary serves, `[start, end]` inclusive; empty for a replica. */
  readonly slots: readonly (readonly [number, number])[];
}

/** What {@link RedisCluster.killPrimary} did. */
export interface Failover {
  /** The primary that was SIGKILLed, as it was before. */
  readonly killed: ClusterNode;
  /** Its replica that took over its slots, now a primary. */
  readonly promoted: ClusterNode;
  /** From SIGKILL until every live node said `cluster_state:ok` with the new owner. */
  readonly failoverMs: number;
}

/** What {@link RedisCluster.migrateSlot} did. */
export interface SlotMigration {
  readonly slot: number;
  readonly from: ClusterNode;
  readonly to: ClusterNode;
  readonly keysMoved: number;
  /** From SETSLOT IMPORTING until every live node named the new owner. */
  readonly migrationMs: number;
}

/** A real Redis Cluster of child processes on 127.0.0.1. Stop it in afterAll. */
export interface RedisCluster {
  /** Every node, live ones first by port, as of the last start or fault; killed nodes have no pid. */
  readonly nodes: readonly ClusterNode[];
  /** For `new Cluster(startupNodes)`: every node at start (any one is enough for discovery). */
  readonly startupNodes: readonly { host: string; port: number }[];
  /** The cluster's folder under `<repo>/.wirestream/testkit/` (one `node-<port>` folder per node), removed by stop(). */
  readonly dir: string;
  /** How long start took, nodes spawned to cluster `ok` everywhere. */
  readonly startupMs: number;
  /** The hash slot of a key or sharded channel (local CRC16, same as `CLUSTER KEYSLOT`). */
  slotOf(key: string): number;
  /** The primary that owns a key's slot (or a slot number), asked from the cluster now. */
  ownerOf(keyOrSlot: string | number): Promise<ClusterNode>;
  /**
   * SIGKILLs a primary (by port, or the owner of `{ key }`'s slot), then waits until one of its
   * replicas is promoted and every live node says `cluster_state:ok` again.
   */
  killPrimary(target: number | { key: string }): Promise<Failover>;
  /**
   * Moves one slot and its keys to the primary on `toPort`, the way a resharding does: SETSLOT
   * IMPORTING on the target, MIGRATING on the source, MIGRATE keys in batches, SETSLOT NODE on
   * every primary; resolves once every live node names the new owner.
   */
  migrateSlot(slot: number, toPort: number): Promise<SlotMigration>;
  /**
   * Starts a killed node again on its port with its nodes.conf (its data is gone: no persistence).
   * It rejoins as a replica of whoever took its slots; resolves once it is synced and the
   * cluster is `ok` everywhere.
   */
  restartNode(port: number): Promise<ClusterNode>;
  /** SIGKILLs every node and removes their folders. Idempotent. */
  stop(): Promise<void>;
}

/** A redis-server process of the cluster (the process side; the cluster side is a ClusterNode). */
interface NodeProcess {
  port: number;
  busPort: number;
  dir: string;
  child: ChildProcess | undefined;
  exited: Promise<void>;
  /** The last ~8 KB of its stdout/stderr (its log: logfile is stdout). */
  log: string;
  removeExitHook: () => void;
}

interface ClusterState {
  readonly dir: string;
  readonly nodeTimeoutMs: number;
  readonly faultTimeoutMs: number;
  readonly redisServerPath: string;
  readonly redisCliPath: string;
  readonly processes: NodeProcess[];
  nodes: ClusterNode[];
  stopped: boolean;
  removeExitHook: () => void;
}

/**
 * Starts a Redis Cluster on free ports: `primaries` primaries with `replicasPerPrimary` replicas
 * each, `redis-server --cluster-enabled yes` children of this process (not daemonized), no
 * persistence, loopback only, each node in its own folder under `<repo>/.wirestream/testkit/`.
 * Resolves once every node says `cluster_state:ok`, all 16384 slots are served and every replica
 * is in sync, so a {@link RedisCluster.killPrimary} right away can fail over.
 *
 * @example
 * const redis = await startRedisCluster();
 * const client = new Cluster([...redis.startupNodes], { shardedSubscribers: true });
 * afterAll(() => redis.stop());
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const {
    primaries = 3,
    replicasPerPrimary = 1,
    nodeTimeoutMs = 1_000, // 1 second
    startTimeoutMs = 60_000, // 60 seconds
    faultTimeoutMs = 30_000, // 30 seconds
    redisServerPath = 'redis-server',
    redisCliPath = 'redis-cli',
  } = options;
  if (!Number.isInteger(primaries) || primaries < 3) {
    throw new RangeError(`startRedisCluster: primaries must be an integer >= 3 (redis-cli --cluster create needs 3), got ${primaries}`);
  }
  if (!Number.isInteger(replicasPerPrimary) || replicasPerPrimary < 0) {
    throw new RangeError(`startRedisCluster: replicasPerPrimary must be an integer >= 0, got ${replicasPerPrimary}`);
  }
  if (!Number.isInteger(nodeTimeoutMs) || nodeTimeoutMs < 100) {
    throw new RangeError(`startRedisCluster: nodeTimeoutMs must be an integer >= 100, got ${nodeTimeoutMs}`);
  }

  const parent = join(findRepoRoot(), '.wirestream', 'testkit');
  mkdirSync(parent, { recursive: true });
  pruneStaleClusterDirs(parent);
  const state: ClusterState = {
    dir: mkdtempSync(join(parent, 'redis-cluster-')),
    nodeTimeoutMs,
    faultTimeoutMs,
    redisServerPath,
    redisCliPath,
    processes: [],
    nodes: [],
    stopped: false,
    removeExitHook: () => {},
  };
  // The nodes' own exit hooks SIGKILL them; this one takes their folders too (rmSync: exit hooks are synchronous).
  state.removeExitHook = onProcessExit(() => rmSync(state.dir, { recursive: true, force: true }));
  const started = performance.now();
  try {
    const count = primaries * (1 + replicasPerPrimary);
    for (let i = 0; i < count; i += 1) state.processes.push(await spawnNodeOnFreePorts(state, startTimeoutMs));
    await createCluster(state, replicasPerPrimary, startTimeoutMs);
    await waitHealthy(state, startTimeoutMs, 'the new cluster', count);
  } catch (error) {
    await stopCluster(state);
    throw new Error(`startRedisCluster: ${errorMessage(error)}`, { cause: error });
  }
  const startupMs = Math.round(performance.now() - started);
  return createHandle(state, startupMs);
}

function createHandle(state: ClusterState, startupMs: number): RedisCluster {
  const startupNodes = state.processes.map(({ port }) => ({ host: HOST, port }));
  return {
    get nodes() {
      return state.nodes;
    },
    startupNodes,
    dir: state.dir,
    startupMs,
    slotOf: (key) => keySlot(key),
    ownerOf: (keyOrSlot) => ownerOf(state, typeof keyOrSlot === 'number' ? keyOrSlot : keySlot(keyOrSlot)),
    killPrimary: (target) => killPrimary(state, target),
    migrateSlot: (slot, toPort) => migrateSlot(state, slot, toPort),
    restartNode: (port) => restartNode(state, port),
    stop: () => stopCluster(state),
  };
}

// ---------------------------------------------------------------------------------------------
// Processes

/** Spawns one node on free ports, choosing again (3 times) when another process took one first. */
async function spawnNodeOnFreePorts(state: ClusterState, timeoutMs: number): Promise<NodeProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freeClusterPort(state);
    // The bus port defaults to port + 10000, which can land in the kernel's ephemeral range; pick it too.
    let busPort = await freeClusterPort(state);
    while (busPort === port) busPort = await freeClusterPort(state);
    const dir = join(state.dir, `node-${port}`);
    mkdirSync(dir, { recursive: true });
    const node: NodeProcess = { port, busPort, dir, child: undefined, exited: Promise.resolve(), log: '', removeExitHook: () => {} };
    try {
      await spawnNode(state, node, timeoutMs);
      return node;
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= 3 || !/already in use/i.test(errorMessage(error))) throw error;
    }
  }
}

async function freeClusterPort(state: ClusterState): Promise<number> {
  for (;;) {
    const port = await freePort();
    const taken = state.processes.some((p) => p.port === port || p.busPort === port);
    if (port !== SHARED_REDIS_PORT && !taken) return port;
  }
}

/** Spawns redis-server for `node` (first start or restart) and waits until it answers as itself. */
async function spawnNode(state: ClusterState, node: NodeProcess, timeoutMs: number): Promise<void> {
  const { port, busPort, dir } = node;
  // --save '' and --appendonly no: nothing but nodes.conf touches disk. cluster-replica-validity-factor
  // 0: a replica may always take over, however long its link was down (a stalled test machine).
  // cluster-allow-replica-migration no: replicas stay where redis-cli put them.
  // repl-diskless-sync-delay 0: a replica's full sync starts at once, not after Redis's default 5 s
  // wait for more replicas to join (it made every start and restartNode 5 s slower).
  const args = [
    '--port', String(port), '--bind', HOST, '--daemonize', 'no', '--dir', dir, '--logfile', '',
    '--save', '', '--appendonly', 'no',
    '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--cluster-port', String(busPort),
    '--cluster-node-timeout', String(state.nodeTimeoutMs), '--cluster-replica-validity-factor', '0',
    '--cluster-allow-replica-migration', 'no', '--repl-diskless-sync-delay', '0',
  ];
  const proc = spawn(state.redisServerPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  node.log = '';
  const keep = (chunk: Buffer): void => {
    node.log = (node.log + chunk.toString('utf8')).slice(-8_000);
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  let exitInfo: string | undefined;
  node.exited = new Promise((resolveExit) => {
    proc.once('exit', (code, signal) => {
      exitInfo = `exited with ${String(code ?? signal)}`;
      resolveExit();
    });
  });
  const spawnError = await once(proc, 'spawn').then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  if (spawnError !== undefined) {
    throw new Error(
      `could not run ${state.redisServerPath} (${spawnError.message}); ` +
        "install Debian's redis-server (apt-get install -y redis-server, or run infra/redis/start.sh once)",
      { cause: spawnError },
    );
  }
  node.child = proc;
  const pid = proc.pid;
  if (pid !== undefined) {
    writeFileSync(join(dir, 'redis.pid'), `${pid}\n`);
    node.removeExitHook = onProcessExit(() => process.kill(pid, 'SIGKILL'));
    killWhenGone(pid);
  }
  try {
    await waitFor(
      async () => {
        if (exitInfo !== undefined) throw new Error(`redis-server on ${HOST}:${port} ${exitInfo}`);
        // The answer must come from our process: another server on the port would answer too.
        const info = await cli(state, port, ['INFO', 'server']).catch(() => '');
        return info.includes(`process_id:${String(pid)}\n`) || info.includes(`process_id:${String(pid)}\r`);
      },
      { timeoutMs, intervalMs: 20, message: `our redis-server (pid ${String(pid)}) to answer on ${HOST}:${port}` },
    );
  } catch (error) {
    await killNode(node);
    // Redis logs "Address already in use" for a taken port or bus port.
    throw new Error(`${errorMessage(error)}\n${logTail(node)}`, { cause: error });
  }
}

async function killNode(node: NodeProcess): Promise<void> {
  const proc = node.child;
  if (proc === undefined) return;
  node.child = undefined;
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  await node.exited;
  node.removeExitHook();
  rmSync(join(node.dir, 'redis.pid'), { force: true });
}

async function stopCluster(state: ClusterState): Promise<void> {
  if (state.stopped) return;
  state.stopped = true;
  // SIGKILL: nothing is persisted, so there is nothing to shut down cleanly.
  await Promise.all(state.processes.map((node) => killNode(node)));
  rmSync(state.dir, { recursive: true, force: true });
  state.removeExitHook();
}

/** Removes cluster folders left by runs that were SIGKILLed (no exit handler ran) once all their nodes are gone. */
function pruneStaleClusterDirs(parent: string): void {
  const graceMs = 60_000; // 1 minute: a folder just created by a parallel run has no pid files yet
  for (const name of readdirSync(parent)) {
    if (!name.startsWith('redis-cluster-')) continue;
    const dir = join(parent, name);
    try {
      const pids = readdirSync(dir).flatMap((nodeDir) => {
        try {
          return [Number(readFileSync(join(dir, nodeDir, 'redis.pid'), 'utf8').trim())];
        } catch {
          return []; // never started, or killed by us
        }
      });
      if (pids.some((pid) => pid > 0 && isAlive(pid))) continue;
      if (Date.now() - statSync(dir).mtimeMs > graceMs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // raced with another pruner
    }
  }
}

function liveProcesses(state: ClusterState): NodeProcess[] {
  return state.processes.filter((p) => p.child !== undefined);
}

function processOn(state: ClusterState, port: number): NodeProcess {
  const node = state.processes.find((p) => p.port === port);
  if (node === undefined) {
    const ports = state.processes.map((p) => p.port).join(', ');
    throw new Error(`no node of this cluster listens on port ${port}; its nodes are on ${ports}`);
  }
  return node;
}

function logTail(node: NodeProcess): string {
  const lines = node.log.trimEnd().split('\n').slice(-LOG_TAIL_LINES).join('\n');
  return `last lines of the log of ${HOST}:${node.port}:\n${lines}`;
}

function logTails(nodes: readonly NodeProcess[]): string {
  return nodes.map(logTail).join('\n');
}

// ---------------------------------------------------------------------------------------------
// redis-cli

/** Runs one redis-cli command against a node; resolves to its raw stdout, rejects on an error reply. */
function cli(state: ClusterState, port: number, args: readonly string[], timeoutMs = CLI_TIMEOUT_MS): Promise<string> {
  // -e: exit non-zero on an error reply. stdout is not a TTY, so replies come raw (no quoting).
  const argv = ['-h', HOST, '-p', String(port), '-e', ...args];
  return new Promise((resolveRun, reject) => {
    execFile(state.redisCliPath, argv, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) {
        resolveRun(stdout);
        return;
      }
      const how = error.killed ? `timed out after ${timeoutMs} ms` : `failed (${String(error.code ?? error.signal)})`;
      const hint =
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? "; install Debian's redis-server (it brings redis-cli), or run infra/redis/start.sh once"
          : '';
      const output = `${stdout}${stderr}`.trim().split('\n').slice(-20).join('\n');
      reject(new Error(`redis-cli -p ${port} ${args.join(' ')} ${how}${hint}: ${output}`, { cause: error }));
    });
  });
}

async function createCluster(state: ClusterState, replicasPerPrimary: number, timeoutMs: number): Promise<void> {
  const first = state.processes[0];
  if (first === undefined) throw new Error('no nodes to create a cluster from');
  const hosts = state.processes.map(({ port }) => `${HOST}:${port}`);
  try {
    await cli(state, first.port, ['--cluster', 'create', ...hosts, '--cluster-replicas', String(replicasPerPrimary), '--cluster-yes'], timeoutMs);
  } catch (error) {
    throw new Error(`${errorMessage(error)}\n${logTails(state.processes)}`, { cause: error });
  }
}

// ---------------------------------------------------------------------------------------------
// The cluster's view

/** One line of `CLUSTER NODES`, as a node sees it. */
interface NodeView {
  id: string;
  port: number;
  flags: Set<string>;
  primaryId: string | undefined;
  /** Slots it serves, as `start-end` strings (importing/migrating markers left out). */
  slots: string[];
}

/** Parses `CLUSTER NODES`: `<id> <ip:port@cport> <flags> <master|-> <ping> <pong> <epoch> <link> <slot>...`. */
function parseClusterNodes(text: string): NodeView[] {
  const views: NodeView[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const [id, address, flags, primary] = fields;
    if (id === undefined || address === undefined || flags === undefined || primary === undefined) continue;
    const port = Number(/:(\d+)@/.exec(address)?.[1]);
    views.push({
      id,
      port,
      flags: new Set(flags.split(',')),
      primaryId: primary === '-' ? undefined : primary,
      slots: fields.slice(8).filter((s) => !s.startsWith('[')),
    });
  }
  return views;
}

/** `5461-10922` or `5461` as `[start, end]`. */
function slotRange(range: string): [number, number] {
  const [start = Number.NaN, end = start] = range.split('-').map(Number);
  return [start, end];
}

function serves(view: NodeView, slot: number): boolean {
  return view.slots.some((range) => {
    const [start, end] = slotRange(range);
    return slot >= start && slot <= end;
  });
}

async function clusterNodesOf(state: ClusterState, port: number): Promise<NodeView[]> {
  return parseClusterNodes(await cli(state, port, ['CLUSTER', 'NODES']));
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*?)\\r?$`, 'm').exec(info)?.[1];
}

/** Rebuilds `state.nodes` from one live node's `CLUSTER NODES`. */
async function refreshNodes(state: ClusterState): Promise<ClusterNode[]> {
  const live = liveProcesses(state);
  const source = live[0];
  if (source === undefined) throw new Error('no node is running');
  const views = await clusterNodesOf(state, source.port);
  const nodes = views.map((view): ClusterNode => {
    const proc = state.processes.find((p) => p.port === view.port);
    return {
      host: HOST,
      port: view.port,
      id: view.id,
      role: view.flags.has('master') ? 'primary' : 'replica',
      primaryId: view.primaryId,
      pid: proc?.child?.pid,
      slots: view.slots.map(slotRange),
    };
  });
  nodes.sort((a, b) => Number(a.pid === undefined) - Number(b.pid === undefined) || a.port - b.port);
  state.nodes = nodes;
  return nodes;
}

/**
 * What is wrong with the cluster right now, or undefined when it is healthy: every live node says
 * `cluster_state:ok` with all slots served, knows `knownNodes` nodes (when given), agrees with the
 * others on which node serves which slots, and every live replica is in sync with its primary.
 */
async function problem(state: ClusterState, knownNodes: number | undefined): Promise<string | undefined> {
  const live = liveProcesses(state);
  const layouts = new Set<string>();
  for (const node of live) {
    const info = await cli(state, node.port, ['CLUSTER', 'INFO']);
    const clusterState = infoField(info, 'cluster_state');
    const slotsOk = Number(infoField(info, 'cluster_slots_ok'));
    if (clusterState !== 'ok') return `${HOST}:${node.port} says cluster_state:${String(clusterState)}`;
    if (slotsOk !== CLUSTER_SLOTS) return `${HOST}:${node.port} says cluster_slots_ok:${slotsOk}, not ${CLUSTER_SLOTS}`;
    const known = Number(infoField(info, 'cluster_known_nodes'));
    if (knownNodes !== undefined && known !== knownNodes) return `${HOST}:${node.port} knows ${known} of ${knownNodes} nodes`;
    const views = await clusterNodesOf(state, node.port);
    const serving = views.filter((v) => v.slots.length > 0 && !v.flags.has('fail'));
    layouts.add(serving.map((v) => `${v.port}:${v.slots.join(',')}`).sort().join(' '));
    const me = views.find((v) => v.flags.has('myself'));
    if (me?.flags.has('slave') === true) {
      const replication = await cli(state, node.port, ['INFO', 'replication']);
      const link = infoField(replication, 'master_link_status');
      if (link !== 'up') return `replica ${HOST}:${node.port} has master_link_status:${String(link)}`;
      if (infoField(replication, 'master_sync_in_progress') !== '0') return `replica ${HOST}:${node.port} is still syncing`;
    }
  }
  if (layouts.size > 1) return `nodes disagree on who serves which slots: ${[...layouts].join(' | ')}`;
  return undefined;
}

async function waitHealthy(state: ClusterState, timeoutMs: number, what: string, knownNodes?: number): Promise<void> {
  let last: string | undefined = 'not checked yet';
  try {
    await waitFor(
      async () => {
        last = await problem(state, knownNodes);
        return last === undefined;
      },
      { timeoutMs, intervalMs: 50, message: `${what} to be ok on every node` },
    );
  } catch (error) {
    throw new Error(`${errorMessage(error)}; last problem: ${String(last)}\n${logTails(liveProcesses(state))}`, { cause: error });
  }
  await refreshNodes(state);
}

async function ownerOf(state: ClusterState, slot: number): Promise<ClusterNode> {
  checkSlot(slot);
  const nodes = await refreshNodes(state);
  const source = liveProcesses(state)[0];
  if (source === undefined) throw new Error('no node is running');
  const views = await clusterNodesOf(state, source.port);
  const owner = views.find((v) => v.flags.has('master') && !v.flags.has('fail') && serves(v, slot));
  const node = nodes.find((n) => n.id === owner?.id);
  if (node === undefined) throw new Error(`no live primary serves slot ${slot} (asked ${HOST}:${source.port})`);
  return node;
}

function checkSlot(slot: number): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= CLUSTER_SLOTS) {
    throw new RangeError(`slot must be an integer 0..${CLUSTER_SLOTS - 1}, got ${slot}`);
  }
  return slot;
}

// ---------------------------------------------------------------------------------------------
// Faults

async function killPrimary(state: ClusterState, target: number | { key: string }): Promise<Failover> {
  const what = typeof target === 'number' ? `port ${target}` : `the owner of key '${target.key}'`;
  try {
    const nodes = await refreshNodes(state);
    const killed = typeof target === 'number' ? nodes.find((n) => n.port === target) : await ownerOf(state, keySlot(target.key));
    if (killed?.role !== 'primary' || killed.pid === undefined) {
      throw new Error(`${what} is not a live primary; live primaries: ${livePrimaryPorts(nodes)}`);
    }
    const replicas = nodes.filter((n) => n.primaryId === killed.id && n.pid !== undefined);
    if (replicas.length === 0) throw new Error(`primary ${HOST}:${killed.port} has no live replica, so nothing could take over`);
    const proc = processOn(state, killed.port);
    const started = performance.now();
    await killNode(proc);
    const promoted = await waitForPromotion(state, killed, replicas);
    await waitHealthy(state, state.faultTimeoutMs, `the cluster after killing ${HOST}:${killed.port}`);
    const failoverMs = Math.round(performance.now() - started);
    const now = state.nodes.find((n) => n.id === promoted.id) ?? promoted;
    return { killed, promoted: now, failoverMs };
  } catch (error) {
    throw new Error(`killPrimary(${what}): ${errorMessage(error)}`, { cause: error });
  }
}

async function waitForPromotion(state: ClusterState, killed: ClusterNode, replicas: readonly ClusterNode[]): Promise<ClusterNode> {
  try {
    return await waitFor(
      async () => {
        for (const replica of replicas) {
          const me = (await clusterNodesOf(state, replica.port)).find((v) => v.flags.has('myself'));
          if (me?.flags.has('master') === true && me.slots.length > 0) return replica;
        }
        return undefined;
      },
      {
        timeoutMs: state.faultTimeoutMs,
        intervalMs: 50,
        message: `a replica of ${HOST}:${killed.port} (${replicas.map((r) => r.port).join(', ')}) to be promoted`,
      },
    );
  } catch (error) {
    const procs = replicas.map((r) => processOn(state, r.port));
    throw new Error(`${errorMessage(error)}\n${logTails(procs)}`, { cause: error });
  }
}

function livePrimaryPorts(nodes: readonly ClusterNode[]): string {
  return nodes.filter((n) => n.role === 'primary' && n.pid !== undefined).map((n) => n.port).join(', ');
}

async function migrateSlot(state: ClusterState, slot: number, toPort: number): Promise<SlotMigration> {
  try {
    checkSlot(slot);
    const nodes = await refreshNodes(state);
    const to = nodes.find((n) => n.port === toPort);
    if (to?.role !== 'primary' || to.pid === undefined) {
      throw new Error(`port ${toPort} is not a live primary; live primaries: ${livePrimaryPorts(nodes)}`);
    }
    const from = await ownerOf(state, slot);
    const started = performance.now();
    if (from.id === to.id) return { slot, from, to, keysMoved: 0, migrationMs: 0 };
    // The order matters (cluster spec, "Live reconfiguration"): importing before migrating, so a
    // client ASKed to the target is accepted; SETSLOT NODE on the target first, so the slot is
    // never without an owner that accepts it.
    await cli(state, to.port, ['CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', from.id]);
    await cli(state, from.port, ['CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', to.id]);
    const keysMoved = await migrateKeys(state, slot, from, to);
    await cli(state, to.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id]);
    await cli(state, from.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id]);
    for (const other of nodes) {
      if (other.role !== 'primary' || other.pid === undefined || other.id === from.id || other.id === to.id) continue;
      await cli(state, other.port, ['CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id]);
    }
    await waitForOwner(state, slot, to);
    await waitHealthy(state, state.faultTimeoutMs, `the cluster after moving slot ${slot}`);
    const migrationMs = Math.round(performance.now() - started);
    return { slot, from, to, keysMoved, migrationMs };
  } catch (error) {
    throw new Error(`migrateSlot(${slot}, ${toPort}): ${errorMessage(error)}`, { cause: error });
  }
}

/** MIGRATEs the slot's keys from `from` to `to` in batches; the number moved. */
async function migrateKeys(state: ClusterState, slot: number, from: ClusterNode, to: ClusterNode): Promise<number> {
  let moved = 0;
  for (;;) {
    // Keys are printed one a line (raw output): fine for the tests' printable keys.
    const out = await cli(state, from.port, ['CLUSTER', 'GETKEYSINSLOT', String(slot), String(MIGRATE_BATCH)]);
    const keys = out.split('\n').filter((k) => k !== '');
    if (keys.length === 0) return moved;
    // MIGRATE host port "" 0 timeout REPLACE KEYS k...: atomic per batch, source keys deleted.
    await cli(state, from.port, ['MIGRATE', HOST, String(to.port), '', '0', '5000', 'REPLACE', 'KEYS', ...keys]);
    moved += keys.length;
  }
}

async function waitForOwner(state: ClusterState, slot: number, to: ClusterNode): Promise<void> {
  try {
    await waitFor(
      async () => {
        for (const node of liveProcesses(state)) {
          const owner = (await clusterNodesOf(state, node.port)).find((v) => v.flags.has('master') && serves(v, slot));
          if (owner?.id !== to.id) return false;
        }
        return true;
      },
      { timeoutMs: state.faultTimeoutMs, intervalMs: 50, message: `every node to name ${HOST}:${to.port} the owner of slot ${slot}` },
    );
  } catch (error) {
    throw new Error(`${errorMessage(error)}\n${logTails(liveProcesses(state))}`, { cause: error });
  }
}

async function restartNode(state: ClusterState, port: number): Promise<ClusterNode> {
  try {
    const proc = processOn(state, port);
    if (proc.child !== undefined) throw new Error(`${HOST}:${port} is running; killPrimary it first`);
    if (state.stopped) throw new Error('the cluster is stopped');
    await spawnNode(state, proc, state.faultTimeoutMs);
    // A node restarted with its nodes.conf first claims to be the primary it was (without slots now,
    // so the cluster can look healthy already); wait until gossip has made it a replica, and synced.
    let node: ClusterNode | undefined;
    await waitFor(
      async () => {
        await waitHealthy(state, state.faultTimeoutMs, `the cluster after restarting ${HOST}:${port}`);
        node = state.nodes.find((n) => n.port === port);
        return node?.role === 'replica';
      },
      { timeoutMs: state.faultTimeoutMs, intervalMs: 100, message: `${HOST}:${port} to rejoin as a replica` },
    );
    if (node === undefined) throw new Error(`${HOST}:${port} is not in CLUSTER NODES after its restart`);
    return node;
  } catch (error) {
    throw new Error(`restartNode(${port}): ${errorMessage(error)}`, { cause: error });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
