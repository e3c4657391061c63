import { channelName } from './channels.js';
import { historyEpochKey, historyPartitionsKey, historyStreamKey } from './history.js';

/**
 * Where events live in Redis, per deployment mode (the cross-app contract; decision 0005).
 *
 * - `standalone` (the default): channels `<cp>:<topic>:<shard>`, streams `<hp>:<topic>:<partition>`.
 *   One connection carries every channel, so a gateway sees each partition's events in offset
 *   order, which its deduplication and every client's resume position rely on.
 * - `cluster` (Redis Cluster, sharded pub/sub): everything of one Kafka partition shares the hash
 *   tag `{<topic>:<partition>}`, so its stream and all its channels live in one slot: ingest writes
 *   a chunk (one partition) as one pipeline to one node, XADD before SPUBLISH as in standalone, and
 *   a gateway receives the partition over one node's connection, still in offset order. The wire
 *   channel is `<cp>:{<topic>:<partition>}:<shard>`; a gateway subscribes the key shard of every
 *   partition (it cannot know a key's partition: that is the producer's partitioner), so it learns
 *   the partition count from `<cp>:<topic>:partition-count`, which ingest keeps.
 *
 * A `@topic(snapshot: true)` topic also has, per partition, a snapshot hash and its top offset
 * (`<hp>:<topic>:<partition>:snapshot[-top]`, cluster `<hp>:{<topic>:<partition>}:snapshot[-top]`):
 * the partition's slot, so they are written in the chunk's pipeline (snapshot.ts).
 *
 * In both modes the hub and the history entries name the **logical** channel `<cp>:<topic>:<shard>`:
 * the cluster layout is the brokers' business, the event path and resume do not change.
 */
export const REDIS_MODES = ['standalone', 'cluster'] as const;
export type RedisMode = (typeof REDIS_MODES)[number];

export interface RedisLayout {
  readonly mode: RedisMode;
  readonly channelPrefix: string;
  readonly historyPrefix: string;
  /** The logical channel of a key shard: what the hub subscribes and history entries record. */
  channel(topic: string, shard: number): string;
  /** The channel a partition's event of that shard is published on (and subscribed to) in Redis. */
  wireChannel(topic: string, partition: number, shard: number): string;
  /** History stream of one partition. */
  streamKey(topic: string, partition: number): string;
  /** Set of the partitions of a topic that have history. */
  partitionsKey(topic: string): string;
  /** The history epoch's key (one per deployment). */
  epochKey(): string;
  /**
   * `@topic(snapshot: true)`: hash of the latest envelope per key of one partition, beside its
   * stream (same hash tag in cluster); its top offset is at this key + `-top` (snapshot.ts).
   */
  snapshotKey(topic: string, partition: number): string;
  /** Cluster mode: string key with the topic's Kafka partition count, raised by ingest (never lowered). */
  partitionCountKey(topic: string): string;
}

/** Snapshot hash of one partition in the standalone layout (RedisLayout.snapshotKey; snapshot.ts). */
export function snapshotHashKey(prefix: string, topic: string, partition: number): string {
  return `${prefix}:${topic}:${partition}:snapshot`;
}

/** Hash tag shared by everything of one partition in cluster mode. Topic names cannot contain `{`, `}` or `:`. */
export function partitionHashTag(topic: string, partition: number): string {
  return `{${topic}:${partition}}`;
}

export function createRedisLayout(mode: RedisMode, channelPrefix: string, historyPrefix: string): RedisLayout {
  const channel = (topic: string, shard: number): string => channelName(channelPrefix, topic, shard);
  const common = {
    mode,
    channelPrefix,
    historyPrefix,
    channel,
    partitionsKey: (topic: string) => historyPartitionsKey(historyPrefix, topic),
    epochKey: () => historyEpochKey(historyPrefix),
    partitionCountKey: (topic: string) => `${channelPrefix}:${topic}:partition-count`,
  };
  if (mode === 'standalone') {
    return {
      ...common,
      wireChannel: (topic, _partition, shard) => channel(topic, shard),
      streamKey: (topic, partition) => historyStreamKey(historyPrefix, topic, partition),
      snapshotKey: (topic, partition) => snapshotHashKey(historyPrefix, topic, partition),
    };
  }
  return {
    ...common,
    wireChannel: (topic, partition, shard) => `${channelPrefix}:${partitionHashTag(topic, partition)}:${shard}`,
    streamKey: (topic, partition) => `${historyPrefix}:${partitionHashTag(topic, partition)}`,
    snapshotKey: (topic, partition) => `${historyPrefix}:${partitionHashTag(topic, partition)}:snapshot`,
  };
}

/** A logical channel `<prefix>:<topic>:<shard>` taken apart; undefined when it is not one. */
export function parseChannelName(prefix: string, channel: string): { topic: string; shard: number } | undefined {
  if (!channel.startsWith(`${prefix}:`)) return undefined;
  const rest = channel.slice(prefix.length + 1);
  const colon = rest.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const topic = rest.slice(0, colon);
  const shard = Number(rest.slice(colon + 1));
  if (!Number.isInteger(shard) || shard < 0 || topic.includes(':')) return undefined;
  return { topic, shard };
}

/**
 * Raises a topic's partition count (KEYS[1]) to ARGV[1] unless it is already that high; answers the
 * count now stored. A script, so that two ingest replicas with different metadata views cannot lower it.
 */
export const RAISE_PARTITION_COUNT_SCRIPT = `local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if wanted > current then redis.call('SET', KEYS[1], ARGV[1]) return wanted end
return current`;

/** The error code the script answers with when the stream does not hold the chunk yet: it published nothing. */
export const NOT_STORED_YET = 'NOTSTORED';

/**
 * Redis Cluster: a chunk's SPUBLISHes, sent only once its partition's stream holds the chunk.
 *
 * KEYS[1] is the partition's stream, KEYS[2..] its wire channels (shard s at KEYS[s + 2]); all share
 * the partition's hash tag, so one slot. ARGV[1] is the stream entry id of the chunk's last event,
 * then per event the KEYS index of its channel and its envelope. Answers the number published.
 *
 * Why the channels are keys: a node checks a script's keys as it checks any command's, before it
 * runs. While the slot migrates it looks each one up, and a channel is never a key, so the script is
 * refused whole: TRYAGAIN on the source while the stream is still there (some keys present, some
 * not), ASK once the stream moved, TRYAGAIN on the target even when ASKed (several keys, not all
 * present); MOVED after the hand-over (Redis 7.0.15, cluster.c getNodeByQuery; tested in
 * cluster.test.ts). A plain SPUBLISH is not looked up (sharded channels stay with the source until
 * the hand-over), so in a pipeline it went out while the XADDs before it were answered ASK: live
 * before history. The XREVRANGE covers what the key check cannot see: XADDs refused for another
 * reason (OOM, MISCONF) or a NOSCRIPT retry that ioredis sends outside the pipeline. Comparing ids is
 * Redis's (the range bound): offsets are int64, beyond a Lua number's exact range.
 */
export const PUBLISH_IF_STORED_SCRIPT = `if #redis.call('XREVRANGE', KEYS[1], '+', ARGV[1], 'COUNT', 1) == 0 then
  return redis.error_reply('${NOT_STORED_YET} ' .. KEYS[1] .. ' holds no entry at or above ' .. ARGV[1] .. ' yet: nothing published')
end
for i = 2, #ARGV, 2 do
  redis.call('SPUBLISH', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
end
return (#ARGV - 1) / 2`;
