import type { Cluster, Redis } from 'ioredis';
import { createRedisLayout, readSnapshot, type RedisLayout, type SnapshotRedis } from '@wirestream/wire';
import type { SnapshotReader } from './broker.js';

/**
 * The snapshot reader on Redis (decision 0023's layout), over an ordinary (non-subscriber)
 * connection: `readSnapshot` of @wirestream/wire, one atomic script call per partition (in a
 * cluster each goes to its partition's slot, the slot of its channels). A bare prefix means the
 * standalone layout.
 */
export function createRedisSnapshots(redis: Redis | Cluster, layoutOrPrefix: RedisLayout | string): SnapshotReader {
  const layout = typeof layoutOrPrefix === 'string' ? createRedisLayout('standalone', '', layoutOrPrefix) : layoutOrPrefix;
  const commands = redis as unknown as SnapshotRedis;
  return { read: (topic, keys, cap) => readSnapshot(commands, layout, topic, keys, cap) };
}
