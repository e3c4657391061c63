import type { ChainableCommander } from 'ioredis';
import type { IngestRedis } from './redis-client.js';

/**
 * The method `defineCommand` gives the script on the client and on its pipelines (EVALSHA, and EVAL
 * on a node connection that has not run it yet or answered NOSCRIPT: ioredis does that per socket).
 */
export const PUBLISH_IF_STORED = 'wirestreamPublishIfStored';

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

/** A pipeline of a client that {@link definePublishIfStored} was called on. */
export type PublishIfStoredPipeline = ChainableCommander &
  Readonly<
    Record<
      typeof PUBLISH_IF_STORED,
      /** `keys` and `argv` are spliced into the command as they are (ioredis flattens one level): no copy per event. */
      (numberOfKeys: number, keys: readonly string[], argv: readonly (string | Buffer)[]) => ChainableCommander
    >
  >;

/**
 * Defines the script on `redis` (before its first pipeline: a pipeline copies the client's scripts
 * when it is made). Defining it again replaces it with the same script.
 */
export function definePublishIfStored(redis: IngestRedis): void {
  redis.defineCommand(PUBLISH_IF_STORED, { lua: PUBLISH_IF_STORED_SCRIPT });
}
