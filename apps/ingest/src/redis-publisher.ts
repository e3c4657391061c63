import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import {
  encodeEnvelopeBatch,
  HISTORY_ALREADY_STORED,
  historyBatchArgs,
  historyBatchMinId,
  historyEntryId,
  historyEpochCommand,
  RAISE_PARTITION_COUNT_SCRIPT,
  SNAPSHOT_APPLY_SCRIPT,
  SNAPSHOT_TOP_SUFFIX,
  type EncodedBatchPart,
  type EnvelopeBatchFrame,
  type RedisLayout,
} from '@wirestream/wire';
import type { Chunk } from './chunk-builder.js';
import { publishHead, PUBLISH_TAIL, sendEncoded, sendEncodedBytes } from './encoded-command.js';
import type { IngestMetrics } from './metrics.js';
import { definePublishIfStored, PUBLISH_IF_STORED, type PublishIfStoredPipeline } from './publish-if-stored.js';
import type { IngestRedis } from './redis-client.js';

export interface RedisPublisherOptions {
  /** The publishing connection (see IngestDeps.redis for how it must be built). */
  readonly redis: IngestRedis;
  /** Key and channel names; its mode must match `redis` (a `Cluster` for `cluster`). */
  readonly layout: RedisLayout;
  /** Shards per topic (the schema's `@topic(shards:)`): in cluster mode a chunk's publish declares every wire channel of its partition. */
  readonly shards: ReadonlyMap<string, number>;
  /** `@topic(snapshot: true)` topics: each chunk also updates the partition's snapshot (snapshot.ts in @wirestream/wire). */
  readonly snapshotTopics?: ReadonlySet<string>;
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
  /** Offsets kept per partition stream (one entry per chunk, holding its events); 0 writes no history (and no epoch). */
  readonly historyLength: number;
  /** A pipeline not answered within this is treated as Redis being down. */
  readonly redisTimeoutMs: number;
  /** Replicas a chunk's XADDs must reach (WAIT) before its publishes; 0 sends no WAIT. */
  readonly waitReplicas: number;
  /** WAIT's own timeout; fewer replicas by then is counted and logged, and the chunk still published. */
  readonly waitTimeoutMs: number;
}

/** Envelopes → Redis: the chunk's pipeline (history, then live) and the history epoch. Plain functions (no `this`). */
export interface RedisPublisher {
  /**
   * One pipeline per chunk, on one connection (standalone) or one node (cluster: a chunk is one
   * partition, so one hash tag and one slot). The chunk goes out in the batch forms (decision
   * 0012): one history entry holding its events, one message per key shard with events. The
   * history XADD goes before the publishes, so a gateway that saw a live event always finds it in
   * history too:
   * - standalone: [SADD partition] [XADD batch entry] [PUBLISH part…]; without a snapshot these are
   *   not an ioredis pipeline but the same commands in the same order on the one connection, each
   *   encoded once by us (encoded-command.ts, decision 0029);
   * - with WAIT (INGEST_REDIS_WAIT_REPLICAS): [SADD] [XADD] [WAIT n t] [PUBLISH…], so the history
   *   reached n replicas before any gateway can see the events;
   * - cluster: [XADD] [WAIT n t]? [EVALSHA publish-if-stored]: one script call SPUBLISHes the
   *   chunk on its wire channels only if the stream already holds its last entry, and a migrating
   *   slot refuses it whole (publish-if-stored.ts); without history, plain SPUBLISHes. The
   *   partitions set and the partition count live in other slots and are written once per
   *   partition and process.
   * - a snapshot topic: [EVALSHA snapshot-apply] right before the publishes (after the XADDs and the
   *   WAIT), in every mode: the snapshot never runs ahead of the stream, and the partitions set is
   *   written even without history (readers find the partitions from it).
   * Throws unless Redis acknowledged every command (a refused script included: the chunk is redone).
   */
  readonly publishChunk: (topic: string, partition: number, chunk: Chunk) => Promise<void>;
  /**
   * Cluster mode: raises each topic's partition count in Redis (what gateways SSUBSCRIBE by) to
   * Kafka's, at start. A failure is logged; the first chunk of each partition raises it again.
   */
  readonly raisePartitionCounts: (counts: ReadonlyMap<string, number>) => Promise<void>;
  /** Loads or creates the history epoch now (if Redis is connected) and after every reconnect. */
  readonly start: () => Promise<void>;
  /** Stops following reconnects. */
  readonly stop: () => void;
}

/** Names of one topic in Redis, made once (not per event), and what this process wrote of it. */
interface TopicKeys {
  readonly topic: string;
  readonly partitionsKey: string;
  readonly partitionCountKey: string;
  /** Logical channel per shard (history's `c` field; also the wire channel in standalone), filled on first use. */
  readonly channels: string[];
  readonly partitions: PartitionKeys[];
  /** The schema's shard count, and per shard the KEYS index of its wire channel in publish-if-stored's call (cluster with history). */
  readonly shards: number;
  readonly keyIndexArgs: readonly string[];
  /** `@topic(snapshot: true)`. */
  readonly snapshot: boolean;
  /** The encoded path's frame for the parts (framePublishes), made on first use. */
  publishFrame: EnvelopeBatchFrame | undefined;
  /** Cluster: Kafka's partition count at start (0 until known). */
  kafkaCount: number;
  /** Cluster: the count Redis answered to our last raise, valid while `raisedIn` is the current generation. */
  raisedCount: number;
  raisedIn: number;
}

interface PartitionKeys {
  readonly streamKey: string;
  /** Channel published on per shard (`<cp>:{<topic>:<p>}:<shard>` in cluster), filled on first use. */
  readonly wireChannels: string[];
  /** Cluster with history: publish-if-stored's KEYS, [stream, wire channel of shard 0, 1, …], made on first use. */
  publishKeys: string[] | undefined;
  /** Snapshot topics: snapshot-apply's KEYS, [hash, top, stream (with history)], made on first use. */
  snapshotKeys: string[] | undefined;
  /** Cluster: the generation in which this partition was added to the partitions set (-1: never). */
  registeredIn: number;
}

const WAIT_SHORT_LOG_INTERVAL_MS = 10_000; // 10 seconds: one line per interval, however many chunks fell short
/** Redis's redirection replies: the slot lives elsewhere now (MOVED) or for this command (ASK). */
const REDIRECTION = /^(?:MOVED|ASK) /;

/** One publisher's settings, resolved once, and what it remembers between chunks. */
interface PublisherState {
  readonly redis: IngestRedis;
  readonly layout: RedisLayout;
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
  readonly redisTimeoutMs: number;
  readonly history: boolean;
  readonly historyLength: number;
  readonly cluster: boolean;
  /** Cluster with history: a chunk's publishes are one publish-if-stored call (publish-if-stored.ts). */
  readonly publishIfStored: boolean;
  readonly shards: ReadonlyMap<string, number>;
  readonly snapshotTopics: ReadonlySet<string>;
  /**
   * Standalone: a chunk's commands are encoded by us and sent without a pipeline (publishEncoded);
   * snapshot topics still use the pipeline.
   */
  readonly encoded: boolean;
  /** A WAIT goes between the XADDs and the publishes (history on, waitReplicas > 0). */
  readonly wait: boolean;
  readonly waitReplicas: number;
  readonly waitTimeoutMs: number;
  /** Cluster: makes ioredis re-read the slots (after a redirection it did not follow itself). */
  readonly refreshSlots: (() => void) | undefined;
  readonly topics: Map<string, TopicKeys>;
  /**
   * Cluster: bumped when a node connection is lost or the client reconnects. What was written
   * once per partition (partitions set, partition count) may have been lost with an unreplicated
   * primary, so it is written again (one command each) in the new generation.
   */
  generation: number;
  /** Short WAITs since the last log line, and when that was. */
  shortWaits: number;
  shortWaitLoggedAt: number;
}

export function createRedisPublisher(options: RedisPublisherOptions): RedisPublisher {
  const { redis, layout, historyLength, waitReplicas } = options;
  const cluster = layout.mode === 'cluster';
  const publishIfStored = cluster && historyLength > 0;
  if (publishIfStored) definePublishIfStored(redis);
  const snapshotTopics = options.snapshotTopics ?? new Set<string>();
  if (snapshotTopics.size > 0) redis.defineCommand(SNAPSHOT_APPLY, { lua: SNAPSHOT_APPLY_SCRIPT });
  const state: PublisherState = {
    redis,
    layout,
    logger: options.logger,
    metrics: options.metrics,
    redisTimeoutMs: options.redisTimeoutMs,
    history: historyLength > 0,
    historyLength,
    cluster,
    publishIfStored,
    shards: options.shards,
    snapshotTopics,
    encoded: !cluster && !redis.isCluster,
    wait: historyLength > 0 && waitReplicas > 0,
    waitReplicas,
    waitTimeoutMs: options.waitTimeoutMs,
    // isCluster, not instanceof: an embedder's ioredis may be another copy of the package.
    refreshSlots: redis.isCluster ? () => (redis as Cluster).refreshSlotsCache() : undefined,
    topics: new Map(),
    generation: 0,
    shortWaits: 0,
    shortWaitLoggedAt: -Infinity,
  };
  const onRedisReady = (): void => {
    state.generation++;
    void ensureEpoch(state);
  };
  const onNodeLost = (): void => {
    state.generation++;
  };

  return {
    publishChunk: (topic, partition, chunk) => publishChunk(state, topic, partition, chunk),
    raisePartitionCounts: (counts) => raisePartitionCounts(state, counts),
    start: async () => {
      redis.on('ready', onRedisReady);
      if (state.cluster) redis.on('-node', onNodeLost);
      if (redis.status === 'ready') await ensureEpoch(state);
    },
    stop: () => {
      redis.off('ready', onRedisReady);
      redis.off('-node', onNodeLost);
    },
  };
}

async function publishChunk(state: PublisherState, topic: string, partition: number, chunk: Chunk): Promise<void> {
  const { redis, cluster, redisTimeoutMs, metrics } = state;
  const keys = topicKeys(state, topic);
  const p = partitionKeys(state, keys, partition);
  if (cluster && needsRegistration(state, keys, p, partition)) await registerPartition(state, keys, p, partition);
  // The chunk's parts, one per key shard with events (their envelopes copied once, here),
  // published and stored in history as they are.
  const encoded = state.encoded && !keys.snapshot;
  const frame = encoded ? (keys.publishFrame ?? framePublishes(state, keys)) : undefined;
  const parts = encodeEnvelopeBatch(partition, chunk.offsets, chunk.shards, chunk.bodies, frame, { on: chunk.routedOn, keys: chunk.routes });
  if (encoded) {
    await publishEncoded(state as PublisherState & { readonly redis: Redis }, topic, partition, keys, p, chunk, parts);
    return;
  }
  const pipeline = redis.pipeline();
  const waitIndex = queueSplit(state, pipeline, keys, p, partition, chunk, parts);
  const started = performance.now();
  const results = await answeredWithin(redis, redisTimeoutMs, pipeline.exec(), `the pipeline for ${topic}[${partition}]`);
  metrics?.redisPublishSeconds.observe((performance.now() - started) / 1_000);
  if (!results) throw new Error(`Redis discarded the pipeline for ${topic}[${partition}]`);
  checkReplies(state, topic, partition, results, waitIndex);
  // publish-if-stored, the last command, answers how many messages (parts) it published.
  const messages = parts.length;
  const published = state.publishIfStored ? results[results.length - 1]?.[1] : messages;
  if (published !== messages) {
    throw new Error(`Redis published ${String(published)} of the ${messages} messages of the chunk for ${topic}[${partition}]; redoing it`);
  }
}

/**
 * Standalone (no snapshot): the chunk's commands in the same order as
 * queueSplit's pipeline, [SADD] [XADD batch] [WAIT]? [PUBLISH part…], each encoded once by us and
 * written on the one connection as it is (encoded-command.ts: no copy of the parts in ioredis), and
 * every reply awaited before the commit, as with the pipeline.
 */
async function publishEncoded(
  state: PublisherState & { readonly redis: Redis },
  topic: string,
  partition: number,
  keys: TopicKeys,
  p: PartitionKeys,
  chunk: Chunk,
  parts: readonly EncodedBatchPart[],
): Promise<void> {
  const { redis, history, wait, metrics } = state;
  const replies: Promise<[Error | null, unknown]>[] = [];
  let waitIndex = -1;
  if (history) {
    replies.push(settle(redis.sadd(keys.partitionsKey, partition)));
    const last = chunk.offsets[chunk.offsets.length - 1] as string;
    const named = parts.map(({ shard, bytes }) => ({ channel: keys.channels[shard] ?? nameChannel(state, keys, shard), bytes }));
    replies.push(settle(sendEncoded(redis, 'xadd', historyBatchArgs(p.streamKey, last, named, historyBatchMinId(last, state.historyLength)))));
    if (wait) {
      waitIndex = replies.length;
      replies.push(settle(redis.call('wait', state.waitReplicas, state.waitTimeoutMs)));
    }
  }
  // Each part was written inside its PUBLISH command (framePublishes).
  for (const { framed } of parts) replies.push(settle(sendEncodedBytes(redis, 'publish', framed as Buffer)));
  const started = performance.now();
  const results = await answeredWithin(redis, state.redisTimeoutMs, Promise.all(replies), `the pipeline for ${topic}[${partition}]`);
  metrics?.redisPublishSeconds.observe((performance.now() - started) / 1_000);
  checkReplies(state, topic, partition, results, waitIndex);
}

/** encodeEnvelopeBatch's frame that makes each part of the topic its own PUBLISH command (encoded-command.ts). */
function framePublishes(state: PublisherState, keys: TopicKeys): EnvelopeBatchFrame {
  const frame: EnvelopeBatchFrame = { head: (shard, length) => publishHead(keys.channels[shard] ?? nameChannel(state, keys, shard), length), tail: PUBLISH_TAIL };
  keys.publishFrame = frame;
  return frame;
}

/** A reply as a pipeline gives it: [error, null] or [null, reply]. */
function settle(reply: Promise<unknown>): Promise<[Error | null, unknown]> {
  return reply.then(
    (value): [Error | null, unknown] => [null, value],
    (err: unknown): [Error | null, unknown] => [err instanceof Error ? err : new Error(String(err)), null],
  );
}

/** Throws unless every command of the chunk was acknowledged (an XADD refused as already stored counts as acknowledged). */
function checkReplies(state: PublisherState, topic: string, partition: number, results: readonly [Error | null, unknown][], waitIndex: number): void {
  const { waitReplicas, refreshSlots } = state;
  for (let i = 0; i < results.length; i++) {
    const [err, reply] = results[i] as [Error | null, unknown];
    if (err === null) {
      if (i === waitIndex && (reply as number) < waitReplicas) onShortWait(state, topic, partition, reply as number);
      continue;
    }
    // An XADD at or below the stream's top: the whole chunk is already in
    // history (a re-publish after a crash or a rebalance). Its publish still went out; the gateway
    // drops the duplicate position. A redone chunk that ends past the top is stored again whole:
    // readers skip the offsets they already passed (parseHistoryEntries).
    if (err.message.includes(HISTORY_ALREADY_STORED)) continue;
    // ioredis follows a redirection itself only when every command of the pipeline got the same
    // one; with a WAIT in it (any node answers that) it did not even update its slots: make it, or
    // the redo goes to the same node again. TRYAGAIN (publish-if-stored while the slot migrates)
    // and NOTSTORED need none: the chunk is redone after the backoff.
    if (refreshSlots !== undefined && REDIRECTION.test(err.message)) refreshSlots();
    throw new Error(`Redis rejected a command for ${topic}[${partition}]: ${err.message}`, { cause: err });
  }
}

/**
 * The chunk's history as one batch entry (id: its last offset; per key shard the logical channel
 * and the part, the same bytes as its publish), trimmed to about the newest `historyLength`
 * offsets: one command of a few arguments instead of one per event (ioredis encodes every argument
 * on its own: bench/ingest's profile put ioredis at 42 % of the CPU with an XADD per event).
 */
function queueHistoryBatch(state: PublisherState, pipeline: ChainableCommander, keys: TopicKeys, p: PartitionKeys, chunk: Chunk, parts: readonly EncodedBatchPart[]): void {
  const last = chunk.offsets[chunk.offsets.length - 1] as string;
  const named = parts.map(({ shard, bytes }) => ({ channel: keys.channels[shard] ?? nameChannel(state, keys, shard), bytes }));
  pipeline.call('xadd', historyBatchArgs(p.streamKey, last, named, historyBatchMinId(last, state.historyLength)));
}

/**
 * The chunk's batch XADD, then the WAIT, then the publishes: one publish-if-stored call in cluster
 * mode with history, else a PUBLISH (standalone) or SPUBLISH on the wire channel (cluster) per part;
 * history records the logical channel. Returns the WAIT's index in the replies, or -1.
 */
function queueSplit(
  state: PublisherState,
  pipeline: ChainableCommander,
  keys: TopicKeys,
  p: PartitionKeys,
  partition: number,
  chunk: Chunk,
  parts: readonly EncodedBatchPart[],
): number {
  const { history, cluster, wait } = state;
  let queued = 0;
  if ((history || keys.snapshot) && !cluster) {
    pipeline.sadd(keys.partitionsKey, partition);
    queued++;
  }
  if (history) {
    queueHistoryBatch(state, pipeline, keys, p, chunk, parts);
    queued++;
  }
  if (wait) pipeline.wait(state.waitReplicas, state.waitTimeoutMs);
  if (keys.snapshot) queueSnapshot(state, pipeline as SnapshotPipeline, keys, p, partition, chunk);
  if (state.publishIfStored) {
    queuePublishIfStored(state, pipeline as PublishIfStoredPipeline, keys, p, partition, chunk, parts);
    return wait ? queued : -1;
  }
  for (const { shard, bytes } of parts) {
    if (cluster) pipeline.spublish(p.wireChannels[shard] ?? nameWireChannel(state, keys, p, partition, shard), bytes);
    else pipeline.publish(keys.channels[shard] ?? nameChannel(state, keys, shard), bytes);
  }
  return wait ? queued : -1;
}

/**
 * The chunk's publishes as one publish-if-stored call: KEYS made once per partition, and per part
 * two slots of one array (its channel's KEYS index, a string made once per shard, and the part)
 * instead of a command, a promise and a reply each.
 */
function queuePublishIfStored(
  state: PublisherState,
  pipeline: PublishIfStoredPipeline,
  keys: TopicKeys,
  p: PartitionKeys,
  partition: number,
  chunk: Chunk,
  parts: readonly EncodedBatchPart[],
): void {
  const { offsets } = chunk;
  const publishKeys = p.publishKeys ?? namePublishKeys(state, keys, p, partition);
  const { keyIndexArgs } = keys;
  const argv: (string | Buffer)[] = [historyEntryId(offsets[offsets.length - 1] as string)];
  for (const { shard, bytes } of parts) argv.push(keyIndexArgs[shard] as string, bytes);
  pipeline[PUBLISH_IF_STORED](publishKeys.length, publishKeys, argv);
}

/** The method `defineCommand` gives snapshot-apply (SNAPSHOT_APPLY_SCRIPT in @wirestream/wire). */
const SNAPSHOT_APPLY = 'wirestreamSnapshotApply';
type SnapshotPipeline = ChainableCommander &
  Readonly<Record<typeof SNAPSHOT_APPLY, (numberOfKeys: number, keys: readonly string[], argv: readonly (string | Buffer)[]) => ChainableCommander>>;

/**
 * The chunk's snapshot update as one snapshot-apply call: per event its offset, key and envelope
 * ('' for a tombstone's delete); an event without a key is left out. With history the script
 * checks the stream holds the chunk's last entry first. Deliberately imperative: runs per event.
 */
function queueSnapshot(state: PublisherState, pipeline: SnapshotPipeline, keys: TopicKeys, p: PartitionKeys, partition: number, chunk: Chunk): void {
  const { offsets, bodies } = chunk;
  let snapshotKeys = p.snapshotKeys;
  if (snapshotKeys === undefined) {
    const hash = state.layout.snapshotKey(keys.topic, partition);
    snapshotKeys = state.history ? [hash, hash + SNAPSHOT_TOP_SUFFIX, p.streamKey] : [hash, hash + SNAPSHOT_TOP_SUFFIX];
    p.snapshotKeys = snapshotKeys;
  }
  const argv: (string | Buffer)[] = [state.history ? historyEntryId(offsets[offsets.length - 1] as string) : ''];
  for (let i = 0; i < offsets.length; i++) {
    const key = chunk.keys[i];
    if (key === undefined) continue;
    argv.push(offsets[i] as string, key, chunk.deletes[i] === true ? '' : (bodies[i] as Buffer));
  }
  pipeline[SNAPSHOT_APPLY](snapshotKeys.length, snapshotKeys, argv);
}

function topicKeys(state: PublisherState, topic: string): TopicKeys {
  let keys = state.topics.get(topic);
  if (keys === undefined) {
    const { layout } = state;
    const shards = state.shards.get(topic);
    if (shards === undefined) throw new Error(`no shard count for topic ${topic}: createRedisPublisher's shards must list every topic of the schema`);
    keys = {
      topic,
      partitionsKey: layout.partitionsKey(topic),
      partitionCountKey: layout.partitionCountKey(topic),
      channels: [],
      partitions: [],
      shards,
      keyIndexArgs: Array.from({ length: shards }, (_, shard) => String(shard + 2)),
      snapshot: state.snapshotTopics.has(topic),
      publishFrame: undefined,
      kafkaCount: 0,
      raisedCount: 0,
      raisedIn: -1,
    };
    state.topics.set(topic, keys);
  }
  return keys;
}

function partitionKeys(state: PublisherState, keys: TopicKeys, partition: number): PartitionKeys {
  let p = keys.partitions[partition];
  if (p === undefined) {
    p = { streamKey: state.layout.streamKey(keys.topic, partition), wireChannels: [], publishKeys: undefined, snapshotKeys: undefined, registeredIn: -1 };
    keys.partitions[partition] = p;
  }
  return p;
}

function nameChannel(state: PublisherState, keys: TopicKeys, shard: number): string {
  const channel = state.layout.channel(keys.topic, shard);
  keys.channels[shard] = channel;
  return channel;
}

function nameWireChannel(state: PublisherState, keys: TopicKeys, p: PartitionKeys, partition: number, shard: number): string {
  const channel = state.layout.wireChannel(keys.topic, partition, shard);
  p.wireChannels[shard] = channel;
  return channel;
}

/** publish-if-stored's KEYS for a partition: its stream, then the wire channel of every shard of the topic. */
function namePublishKeys(state: PublisherState, keys: TopicKeys, p: PartitionKeys, partition: number): string[] {
  const publishKeys = [p.streamKey];
  for (let shard = 0; shard < keys.shards; shard++) publishKeys.push(p.wireChannels[shard] ?? nameWireChannel(state, keys, p, partition, shard));
  p.publishKeys = publishKeys;
  return publishKeys;
}

/** Cluster: the partition count does not cover `partition`, or the partitions set lacks it, in this generation. */
function needsRegistration(state: PublisherState, keys: TopicKeys, p: PartitionKeys, partition: number): boolean {
  const { generation } = state;
  return keys.raisedIn !== generation || partition >= keys.raisedCount || ((state.history || keys.snapshot) && p.registeredIn !== generation);
}

/** Cluster, once per partition and generation: the count that makes gateways subscribe it, then the partitions set. */
async function registerPartition(state: PublisherState, keys: TopicKeys, p: PartitionKeys, partition: number): Promise<void> {
  if (keys.raisedIn !== state.generation || partition >= keys.raisedCount) {
    // Kafka's count from start, or more for a topic that grew partitions since.
    await raiseCount(state, keys, Math.max(keys.kafkaCount, partition + 1));
  }
  if ((state.history || keys.snapshot) && p.registeredIn !== state.generation) {
    const registeredIn = state.generation;
    await answeredWithin(state.redis, state.redisTimeoutMs, state.redis.sadd(keys.partitionsKey, partition), `the partitions set of ${keys.topic}`);
    p.registeredIn = registeredIn;
  }
}

/** RAISE_PARTITION_COUNT_SCRIPT (never lowers): remembers the count Redis holds now, which another replica may have raised further. */
async function raiseCount(state: PublisherState, keys: TopicKeys, wanted: number): Promise<void> {
  const raisedIn = state.generation;
  const stored = await answeredWithin(
    state.redis,
    state.redisTimeoutMs,
    state.redis.call('eval', RAISE_PARTITION_COUNT_SCRIPT, 1, keys.partitionCountKey, wanted),
    `the partition count of ${keys.topic}`,
  );
  keys.raisedCount = Number(stored);
  keys.raisedIn = raisedIn;
}

async function raisePartitionCounts(state: PublisherState, counts: ReadonlyMap<string, number>): Promise<void> {
  if (!state.cluster) return;
  for (const [topic, count] of counts) {
    const keys = topicKeys(state, topic);
    keys.kafkaCount = count;
    try {
      await raiseCount(state, keys, count);
      state.logger.info({ topic, partitions: count, stored: keys.raisedCount }, 'partition count raised');
    } catch (err) {
      state.logger.warn({ err, topic, partitions: count }, 'could not raise the partition count; the first chunk of each partition raises it');
    }
  }
}

/** WAIT answered fewer replicas than asked: the chunk is published anyway (the events are in the primary), counted, logged at most once per interval. */
function onShortWait(state: PublisherState, topic: string, partition: number, replicas: number): void {
  state.metrics?.redisWaitShort.inc();
  state.shortWaits++;
  const now = Date.now();
  if (now - state.shortWaitLoggedAt < WAIT_SHORT_LOG_INTERVAL_MS) return;
  state.logger.warn(
    { topic, partition, replicas, wanted: state.waitReplicas, waitTimeoutMs: state.waitTimeoutMs, chunks: state.shortWaits },
    'history reached fewer Redis replicas than INGEST_REDIS_WAIT_REPLICAS; published anyway (a primary crash now could lose these entries)',
  );
  state.shortWaits = 0;
  state.shortWaitLoggedAt = now;
}

/** Names this life of the history; a Redis that lost its data gets a new one (SET NX GET, Redis ≥ 7). */
async function ensureEpoch(state: PublisherState): Promise<void> {
  if (!state.history) return;
  const candidate = randomUUID();
  try {
    const reply = state.redis.call(...historyEpochCommand(state.layout.historyPrefix, candidate));
    const previous = (await answeredWithin(state.redis, state.redisTimeoutMs, reply, 'the history epoch')) as string | null;
    state.logger.info({ epoch: previous ?? candidate, created: previous === null }, 'history epoch');
  } catch (err) {
    // The next 'ready' tries again; history entries written meanwhile still have their offsets.
    state.logger.warn({ err }, 'could not read or create the history epoch');
  }
}

/**
 * Rejects when Redis holds `reply` longer than `timeoutMs`. The connection is then dropped and
 * re-made: its queued commands fail instead of piling up behind a Redis that does not answer.
 * One timer per chunk, not ioredis's `commandTimeout` (a timer per command, two per event).
 */
async function answeredWithin<T>(redis: IngestRedis, timeoutMs: number, reply: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      redis.disconnect(true);
      reject(new Error(`Redis did not answer ${what} within ${timeoutMs} ms; reconnecting`));
    }, timeoutMs);
  });
  // A reply that fails after the timeout won has nobody waiting for it.
  reply.catch(() => undefined);
  try {
    return await Promise.race([reply, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
