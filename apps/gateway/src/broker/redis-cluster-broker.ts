/**
 * The broker on Redis Cluster sharded pub/sub (`SSUBSCRIBE`), one subscriber connection per primary.
 *
 * The hub subscribes logical channels (`<prefix>:<topic>:<shard>`, as on standalone Redis); here each
 * one becomes the wire channel of that shard on every partition of the topic,
 * `<prefix>:{<topic>:<p>}:<shard>` (`RedisLayout`, decision 0005): a partition's channels share one
 * slot with its history stream, so they all arrive over one node's connection, in offset order.
 * Incoming messages are handed to the hub under their logical channel.
 *
 * Why our own subscriber set and not ioredis's `shardedSubscribers` (read in ioredis 5.9.2): the hub
 * must know when a channel stopped receiving, to back-fill it from history, and ioredis does not say
 * so. It re-subscribes after a failover with errors swallowed, takes the `sunsubscribe` Redis pushes
 * when a slot leaves a node for an unexpected reply, and leaves an `SSUBSCRIBE` answered with MOVED
 * unsettled. Here every one of those is a *recovery*: the broker tells the hub `lost` (live messages
 * queue, decision 0009), refreshes the slot map from the cluster, moves each channel to its slot's
 * primary, and tells the hub `ready` once every wanted channel is confirmed there, so the hub
 * back-fills the gap from history (which moved with the slot, or was replicated to the promoted
 * replica). Topology (the slot map) and the partition counts come from an ordinary ioredis `Cluster`.
 */
import calculateSlot from 'cluster-key-slot';
import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import { createEnvelopeBatchAssembler, parseChannelName, type EnvelopeBatchAssembler, type RedisLayout } from '@wirestream/wire';
import type { Logger } from '@wirestream/telemetry';
import type { Broker, BrokerListener } from './broker.js';
import { setReading } from './redis-broker.js';

export interface RedisClusterBrokerOptions {
  /** Ordinary (non-subscriber) cluster client: slot map and partition counts. */
  readonly cluster: Cluster;
  readonly layout: RedisLayout;
  /** Options of each per-primary subscriber connection (credentials, TLS); host and port are the node's. */
  readonly nodeOptions?: RedisOptions;
  readonly logger: Logger;
  /** How often the partition counts of subscribed topics are re-read (a topic that gained partitions). */
  readonly partitionsPollMs: number;
  /** Called on each recovery (a node lost, a slot moved); the gateway counts them as reconnects. */
  readonly onReconnecting?: () => void;
}

/** One wire channel wanted by some logical channel. */
interface Wire {
  readonly logical: string;
  /** Node whose connection confirmed the SSUBSCRIBE; undefined while it is not (being) subscribed. */
  node: string | undefined;
}

/** The subscriber connection of one primary. */
interface NodeConnection {
  readonly key: string;
  readonly redis: Redis;
  readonly wires: Set<string>;
  /** Commands waiting for an answer: ioredis leaves an SSUBSCRIBE refused with MOVED unsettled, so a 'moved' fails them here. */
  readonly waiting: Set<(err: Error) => void>;
}

interface ClusterBrokerState extends RedisClusterBrokerOptions {
  listener: BrokerListener | undefined;
  /** Re-assembles ingest's batch parts (a chunk's parts share its partition's slot, so one node connection) into envelopes in offset order. */
  assembler: EnvelopeBatchAssembler | undefined;
  /** Logical channels the hub subscribed, taken apart once. */
  readonly logical: Map<string, { topic: string; shard: number }>;
  /** Known partition count per topic of a subscribed channel (0 until ingest wrote one). */
  readonly partitionCounts: Map<string, number>;
  readonly wires: Map<string, Wire>;
  readonly nodes: Map<string, NodeConnection>;
  /** A recovery is needed or running: the hub was told `lost` and waits for `ready`. */
  recovering: boolean;
  /** The hub has been told `ready` at least once (a first connect is not a loss). */
  everReady: boolean;
  /** A reconcile pass is running; `again` asks it for one more. */
  reconciling: boolean;
  again: boolean;
  stopped: boolean;
  /** The hub asked to stop receiving (its inbound queue is full): every subscriber socket is left unread. */
  paused: boolean;
  pollTimer: NodeJS.Timeout | undefined;
  /** When a failed SSUBSCRIBE was last logged (a failover retries every 250 ms: log every few seconds). */
  lastFailureLogAt: number;
  failuresSinceLog: number;
}

/** Longest wait for one SSUBSCRIBE / SUNSUBSCRIBE answer before the node counts as failing. */
const COMMAND_TIMEOUT_MS = 5_000; // 5 seconds
/** Failed SSUBSCRIBEs are logged at most this often (with the count since the last line). */
const FAILURE_LOG_INTERVAL_MS = 5_000; // 5 seconds
/** Pause between reconcile passes that could not place every channel (a failover in progress). */
const RETRY_DELAY_MS = 250;

export function createRedisClusterBroker(options: RedisClusterBrokerOptions): Broker & { stop(): void } {
  const state: ClusterBrokerState = {
    ...options,
    listener: undefined,
    assembler: undefined,
    logical: new Map(),
    partitionCounts: new Map(),
    wires: new Map(),
    nodes: new Map(),
    recovering: false,
    everReady: false,
    reconciling: false,
    again: false,
    stopped: false,
    paused: false,
    pollTimer: undefined,
    lastFailureLogAt: 0,
    failuresSinceLog: 0,
  };
  return {
    attach(listener) {
      if (state.listener) throw new Error('a Redis Cluster broker has one listener: attach() was called twice');
      state.listener = listener;
      state.assembler = createEnvelopeBatchAssembler({
        emit: (channel, text, route) => listener.message(channel, text, route),
        // A wire the hub wants (subscribed, or being placed): its part of a chunk is awaited.
        listens: (wire) => state.wires.has(wire),
        // Its SSUBSCRIBE answered on the node connection that also carries its parts.
        confirmed: (wire) => state.wires.get(wire)?.node !== undefined,
        onMalformed: (channel, text) => listener.message(channel, text),
      });
      const onClusterReady = (): void => {
        if (!state.everReady && !state.reconciling) void reconcile(state);
      };
      state.cluster.on('ready', onClusterReady);
      if (state.cluster.status === 'ready') onClusterReady();
      state.pollTimer = setInterval(() => void pollPartitionCounts(state), state.partitionsPollMs);
      state.pollTimer.unref();
    },
    subscribe: (channel) => subscribeLogical(state, channel),
    unsubscribe: (channel) => unsubscribeLogical(state, channel),
    pause: () => setClusterReading(state, false),
    resume: () => setClusterReading(state, true),
    isReady: () => state.cluster.status === 'ready' && state.everReady && !state.recovering,
    status: () => describe(state),
    stop: () => stopBroker(state),
  };
}

// ---- the hub's side: logical channels ----

async function subscribeLogical(state: ClusterBrokerState, channel: string): Promise<void> {
  const parsed = parseChannelName(state.layout.channelPrefix, channel);
  if (!parsed) throw new Error(`not a channel of prefix ${state.layout.channelPrefix}: ${channel}`);
  state.logical.set(channel, parsed);
  if (!state.partitionCounts.has(parsed.topic)) state.partitionCounts.set(parsed.topic, await readPartitionCount(state, parsed.topic));
  const added = addWires(state, channel, parsed.topic, parsed.shard, 0, state.partitionCounts.get(parsed.topic) ?? 0);
  await placeWires(state, added);
}

async function unsubscribeLogical(state: ClusterBrokerState, channel: string): Promise<void> {
  if (!state.logical.delete(channel)) return;
  const leaving: Promise<unknown>[] = [];
  for (const [wire, entry] of state.wires) {
    if (entry.logical !== channel) continue;
    state.wires.delete(wire);
    const node = entry.node === undefined ? undefined : state.nodes.get(entry.node);
    if (node?.wires.delete(wire)) leaving.push(answered(node, node.redis.sunsubscribe(wire), 'SUNSUBSCRIBE').catch(() => undefined));
  }
  await Promise.all(leaving);
}

/** Adds the wire channels of partitions [from, to) of a logical channel; returns the new ones. */
function addWires(state: ClusterBrokerState, logical: string, topic: string, shard: number, from: number, to: number): string[] {
  const added: string[] = [];
  for (let p = from; p < to; p++) {
    const wire = state.layout.wireChannel(topic, p, shard);
    if (state.wires.has(wire)) continue;
    state.wires.set(wire, { logical, node: undefined });
    added.push(wire);
  }
  return added;
}

/**
 * SSUBSCRIBEs new wires on their slots' primaries. One that cannot be placed now (a node down, the
 * slot map stale) starts a recovery: whatever it misses until then comes back by back-fill.
 */
async function placeWires(state: ClusterBrokerState, wires: readonly string[]): Promise<void> {
  if (wires.length === 0) return;
  if (state.recovering || state.reconciling) {
    state.again = true;
    return;
  }
  const failed = await subscribeOnOwners(state, wires);
  if (failed > 0) startRecovery(state, `${failed} channel(s) could not be subscribed on their slot's primary`);
}

// ---- recovery: lost → refresh the slot map → move channels → ready ----

/** Tells the hub `lost` (once) and reconciles until every wanted channel is confirmed on its owner. */
function startRecovery(state: ClusterBrokerState, reason: string): void {
  if (state.stopped) return;
  if (!state.recovering && state.everReady) {
    state.recovering = true;
    state.logger.warn({ reason }, 'Redis Cluster subscriptions interrupted: live events wait for a back-fill from history');
    state.onReconnecting?.();
    // A chunk whose parts were cut off is re-read whole by the back-fill (from the last delivered position).
    state.assembler?.discard();
    state.listener?.lost();
  }
  void reconcile(state);
}

/** One reconcile loop at a time; passes repeat (with a pause) until nothing is left to place. */
async function reconcile(state: ClusterBrokerState): Promise<void> {
  if (state.reconciling) {
    state.again = true;
    return;
  }
  state.reconciling = true;
  try {
    for (let attempt = 0; !state.stopped; attempt++) {
      state.again = false;
      if (attempt > 0) await sleep(RETRY_DELAY_MS);
      await refreshSlots(state).catch((err: unknown) => state.logger.warn({ err }, 'could not refresh the Redis Cluster slot map'));
      const misplaced = [...state.wires].filter(([wire, entry]) => entry.node === undefined || entry.node !== ownerOf(state, wire)).map(([wire]) => wire);
      const failed = await subscribeOnOwners(state, misplaced);
      if (failed === 0 && !state.again && state.cluster.status === 'ready') break;
    }
  } finally {
    state.reconciling = false;
  }
  if (state.stopped) return;
  const wasRecovering = state.recovering || !state.everReady;
  state.recovering = false;
  state.everReady = true;
  if (wasRecovering) {
    state.logger.info({ channels: state.wires.size, nodes: state.nodes.size }, 'Redis Cluster subscriptions in place');
    state.listener?.ready();
  }
}

/**
 * SSUBSCRIBEs each wire on its slot's primary (leaving a previous owner); answers how many failed.
 * One SSUBSCRIBE per slot: Redis refuses channels of several slots in one (CROSSSLOT), and a
 * partition's channels share a slot, so that is one command per partition.
 */
async function subscribeOnOwners(state: ClusterBrokerState, wires: readonly string[]): Promise<number> {
  const bySlot = new Map<number, { owner: string; wires: string[] }>();
  let failed = 0;
  for (const wire of wires) {
    const slot = calculateSlot(wire);
    const owner = state.cluster.slots[slot]?.[0];
    if (owner === undefined) failed++;
    else {
      const group = bySlot.get(slot);
      if (group) group.wires.push(wire);
      else bySlot.set(slot, { owner, wires: [wire] });
    }
  }
  const results = await Promise.all([...bySlot.values()].map((group) => subscribeGroup(state, group.owner, group.wires)));
  return failed + results.reduce((sum, n) => sum + n, 0);
}

/** Moves one slot's wires onto its owner's connection; answers how many failed. */
async function subscribeGroup(state: ClusterBrokerState, owner: string, wires: readonly string[]): Promise<number> {
  for (const wire of wires) leavePreviousOwner(state, wire, owner);
  try {
    const node = connectionFor(state, owner);
    await answered(node, node.redis.ssubscribe(...wires), 'SSUBSCRIBE');
    for (const wire of wires) {
      const entry = state.wires.get(wire);
      if (!entry) continue; // unsubscribed meanwhile
      entry.node = owner;
      node.wires.add(wire);
    }
    return 0;
  } catch (err) {
    state.failuresSinceLog++;
    if (Date.now() - state.lastFailureLogAt >= FAILURE_LOG_INTERVAL_MS) {
      state.logger.warn({ err, node: owner, failures: state.failuresSinceLog }, 'SSUBSCRIBE on a Redis Cluster primary failed; retrying');
      state.lastFailureLogAt = Date.now();
      state.failuresSinceLog = 0;
    }
    return wires.length;
  }
}

/** A wire whose slot moved: stop listening to it on the old node (if that one is still up). */
function leavePreviousOwner(state: ClusterBrokerState, wire: string, owner: string): void {
  const entry = state.wires.get(wire);
  if (entry?.node === undefined || entry.node === owner) return;
  const previous = state.nodes.get(entry.node);
  entry.node = undefined;
  if (previous?.wires.delete(wire)) previous.redis.sunsubscribe(wire).catch(() => undefined);
}

/** Primary serving the wire's slot in the cluster client's slot map ("host:port"). */
function ownerOf(state: ClusterBrokerState, wire: string): string | undefined {
  return state.cluster.slots[calculateSlot(wire)]?.[0];
}

function refreshSlots(state: ClusterBrokerState): Promise<void> {
  return new Promise((resolve, reject) => state.cluster.refreshSlotsCache((err) => (err ? reject(err) : resolve())));
}

// ---- per-primary subscriber connections ----

/**
 * Pauses or resumes reading every subscriber connection. While paused, SSUBSCRIBE answers wait too:
 * a pause longer than COMMAND_TIMEOUT_MS counts the node as failing and recovers it, as a loss.
 */
function setClusterReading(state: ClusterBrokerState, reading: boolean): void {
  state.paused = !reading;
  // Parts still unread in the sockets: no incomplete chunk may go on while they wait.
  if (reading) state.assembler?.resume();
  else state.assembler?.pause();
  for (const node of state.nodes.values()) setReading(node.redis, reading);
}

function connectionFor(state: ClusterBrokerState, key: string): NodeConnection {
  const known = state.nodes.get(key);
  if (known) return known;
  const colon = key.lastIndexOf(':');
  const redis = new Redis({
    ...state.nodeOptions,
    host: key.slice(0, colon),
    port: Number(key.slice(colon + 1)),
    // This broker re-creates connections itself (after refreshing the slot map), so ioredis must
    // not reconnect behind its back to a node that may no longer own anything.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectionName: 'wirestream-gateway-ssubscriber',
  });
  const node: NodeConnection = { key, redis, wires: new Set(), waiting: new Set() };
  state.nodes.set(key, node);
  redis.on('smessage', (wire: string, text: string) => {
    const entry = state.wires.get(wire);
    if (entry) state.assembler?.message(wire, entry.logical, text);
  });
  redis.on('error', (err: Error) => onNodeError(state, node, err));
  redis.on('connect', () => setReading(redis, !state.paused));
  // ioredis answers an SSUBSCRIBE refused with MOVED by this event only (the command never settles).
  redis.on('moved', () => {
    for (const fail of node.waiting) fail(new Error(`${key} answered MOVED: the slot map is stale`));
    startRecovery(state, `a channel's slot moved away from ${key}`);
  });
  redis.on('close', () => {
    if (state.nodes.get(key) !== node) return;
    const hadWires = node.wires.size > 0;
    dropConnection(state, key);
    if (hadWires) startRecovery(state, `connection to ${key} closed`);
  });
  return node;
}

/**
 * Redis pushes `sunsubscribe` when a channel's slot leaves the node (resharding, failover);
 * ioredis 5.9.2 reports that push as an error "Command queue state error … Last reply:
 * sunsubscribe,<channel>,<count>". That channel is no longer received there: recover it.
 */
function onNodeError(state: ClusterBrokerState, node: NodeConnection, err: Error): void {
  const pushed = /Last reply: sunsubscribe,([^,]+),/.exec(err.message);
  const wire = pushed?.[1];
  if (wire !== undefined) {
    const entry = state.wires.get(wire);
    if (entry?.node === node.key) entry.node = undefined;
    node.wires.delete(wire);
    startRecovery(state, `Redis moved ${wire} away from ${node.key}`);
    return;
  }
  state.logger.debug({ err, node: node.key }, 'Redis Cluster subscriber connection error');
}

/** Forgets a node's connection; its wires are no longer received anywhere. */
function dropConnection(state: ClusterBrokerState, key: string): void {
  const node = state.nodes.get(key);
  if (!node) return;
  state.nodes.delete(key);
  for (const wire of node.wires) {
    const entry = state.wires.get(wire);
    if (entry?.node === key) entry.node = undefined;
  }
  node.wires.clear();
  for (const fail of node.waiting) fail(new Error(`connection to ${key} dropped`));
  node.redis.disconnect();
}

// ---- partition counts (a topic's wires depend on them) ----

async function readPartitionCount(state: ClusterBrokerState, topic: string): Promise<number> {
  try {
    const value = await state.cluster.get(state.layout.partitionCountKey(topic));
    const count = Number(value ?? 0);
    return Number.isInteger(count) && count >= 0 ? count : 0;
  } catch (err) {
    state.logger.warn({ err, topic }, 'could not read the partition count of a topic; retrying on the next poll');
    return state.partitionCounts.get(topic) ?? 0;
  }
}

/** A topic that gained partitions (or whose count ingest wrote only now): subscribe the new ones, then back-fill. */
async function pollPartitionCounts(state: ClusterBrokerState): Promise<void> {
  if (state.stopped || state.cluster.status !== 'ready') return;
  const topics = new Set([...state.logical.values()].map((c) => c.topic));
  for (const topic of state.partitionCounts.keys()) if (!topics.has(topic)) state.partitionCounts.delete(topic);
  let added = 0;
  for (const topic of topics) {
    const before = state.partitionCounts.get(topic) ?? 0;
    const now = await readPartitionCount(state, topic);
    if (now <= before) continue;
    state.partitionCounts.set(topic, now);
    for (const [channel, parsed] of state.logical) {
      if (parsed.topic === topic) added += addWires(state, channel, topic, parsed.shard, before, now).length;
    }
    state.logger.info({ topic, partitions: now, before }, 'topic partitions known to the gateway grew');
  }
  // New partitions may already have events: a recovery subscribes them and back-fills from history.
  if (added > 0) startRecovery(state, `${added} channel(s) of new partitions`);
}

// ---- misc ----

function describe(state: ClusterBrokerState): string {
  const waiting = [...state.wires.values()].filter((w) => w.node === undefined).length;
  if (state.cluster.status !== 'ready') return `redis cluster ${state.cluster.status}`;
  if (!state.everReady) return 'redis cluster connecting subscribers';
  return waiting > 0 || state.recovering ? `redis cluster recovering (${waiting} of ${state.wires.size} channels not subscribed)` : 'redis cluster ready';
}

function stopBroker(state: ClusterBrokerState): void {
  state.stopped = true;
  clearInterval(state.pollTimer);
  for (const key of [...state.nodes.keys()]) dropConnection(state, key);
}

/** A node's answer to a command, failing on MOVED, on a timeout, or when the connection goes. */
function answered<T>(node: NodeConnection, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let fail: ((err: Error) => void) | undefined;
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
    node.waiting.add(reject);
    timer = setTimeout(() => reject(new Error(`${what} not answered by ${node.key} within ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
  });
  return Promise.race([promise, failed]).finally(() => {
    clearTimeout(timer);
    if (fail) node.waiting.delete(fail);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
