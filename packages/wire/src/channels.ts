/**
 * Redis channel layout. An event of `topic` whose routing key hashes to shard `s` is published
 * on `<prefix>:<topic>:<s>`. A client filtering on the key needs one channel; an unfiltered one
 * needs all shards of the topic. Channels without a hash tag spread over Redis Cluster slots,
 * which is what sharded pub/sub (SPUBLISH/SSUBSCRIBE) wants.
 */

/** @default 'ws' */
export const DEFAULT_CHANNEL_PREFIX = 'ws';

/**
 * FNV-1a over UTF-16 code units: cheap, stable across processes and versions, good enough spread
 * for entity ids. Both apps must agree on it, so it is part of the contract: do not change it.
 */
export function shardOf(key: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** Channel of one shard of a topic. */
export function channelName(prefix: string, topic: string, shard: number): string {
  return `${prefix}:${topic}:${shard}`;
}

/** Every channel of a topic, in shard order (what an unfiltered subscription listens to). */
export function topicChannels(prefix: string, topic: string, shards: number): string[] {
  const channels: string[] = new Array<string>(shards);
  for (let s = 0; s < shards; s++) channels[s] = channelName(prefix, topic, s);
  return channels;
}
