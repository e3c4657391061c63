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
  /** Cluster mode: string key with the topic's Kafka partition count, raised by ingest (never lowered). */
  partitionCountKey(topic: string): string;
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
    };
  }
  return {
    ...common,
    wireChannel: (topic, partition, shard) => `${channelPrefix}:${partitionHashTag(topic, partition)}:${shard}`,
    streamKey: (topic, partition) => `${historyPrefix}:${partitionHashTag(topic, partition)}`,
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
