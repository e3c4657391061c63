import { NOT_STORED_YET, type RedisLayout } from './redis-layout.js';

/**
 * Snapshots: the latest envelope per key of a `@topic(snapshot: true)` topic (decision 0023).
 *
 * Per Kafka partition, next to its history stream and with the same hash tag in cluster mode (so
 * one slot, written in the chunk's pipeline):
 * - a hash `<hp>:<topic>:<partition>:snapshot` (cluster `<hp>:{<topic>:<partition>}:snapshot`):
 *   field = the event's routing key (the `@topic(key:)` payload field's value, else the Kafka key),
 *   value = `<offset> <envelope>` (the offset first, so a reader has the position without parsing);
 * - a string `…:snapshot-top`: the highest offset of the partition the hash reflects.
 *
 * Ingest applies a chunk with {@link SNAPSHOT_APPLY_SCRIPT}: only events above `snapshot-top` are
 * applied, so a redelivery (at least once: a chunk redone after a crash or a rebalance) never moves
 * an entry back, and a key deleted by a tombstone is not brought back by an older put redone after it.
 * With history on, the script first checks that the stream already holds the chunk (as
 * publish-if-stored does), so a snapshot never runs ahead of the stream; it runs after the XADDs and
 * before the publishes of the chunk, in the same pipeline.
 *
 * A Kafka tombstone (null value) on a snapshot topic removes its key from the hash and is published
 * as a **deleted event**: an ordinary v1 envelope with `"deleted":true` and the payload
 * `{"<key field>": "<key>"}` (`{}` when the topic has no key field), so that key filters still match
 * it; see {@link encodeDeletedEnvelope}. The key of a tombstone is its Kafka key: a snapshot topic's
 * producers must key their messages by the routing key's value (as a compacted topic's are).
 *
 * The partitions of a topic with a snapshot are in `<hp>:<topic>:partitions` (the history's set).
 */

/** Suffix of the string key holding the highest offset a partition's snapshot reflects. */
export const SNAPSHOT_TOP_SUFFIX = '-top';

/**
 * Applies a chunk (one partition, offsets rising) to its snapshot. KEYS[1] the hash, KEYS[2] the
 * top, KEYS[3] (only with history) the partition's stream. ARGV[1] the stream entry id of the
 * chunk's last event ('' without history), then per event: offset, key, envelope ('' = delete).
 * Answers the number of events applied (those above the top). Offsets are compared as decimal
 * strings (length, then text): int64 is beyond a Lua number's exact range.
 */
export const SNAPSHOT_APPLY_SCRIPT = `if KEYS[3] and #redis.call('XREVRANGE', KEYS[3], '+', ARGV[1], 'COUNT', 1) == 0 then
  return redis.error_reply('${NOT_STORED_YET} ' .. KEYS[3] .. ' holds no entry at or above ' .. ARGV[1] .. ' yet: snapshot not written')
end
local top = redis.call('GET', KEYS[2])
local last = nil
local applied = 0
for i = 2, #ARGV, 3 do
  local offset = ARGV[i]
  if (not top) or #offset > #top or (#offset == #top and offset > top) then
    if ARGV[i + 2] == '' then
      redis.call('HDEL', KEYS[1], ARGV[i + 1])
    else
      redis.call('HSET', KEYS[1], ARGV[i + 1], offset .. ' ' .. ARGV[i + 2])
    end
    last = offset
    applied = applied + 1
  end
end
if last then redis.call('SET', KEYS[2], last) end
return applied`;

/**
 * Reads one partition's snapshot atomically with its top. KEYS[1] the hash, KEYS[2] the top.
 * ARGV[1] 'keys' then the keys (answers {top, value or nil per key}: one HGET each, as `unpack` of
 * thousands of keys would overflow Lua's C stack), or 'all' then the cap (answers
 * {top, truncated 0|1, field, value, …}: the whole hash when it has at most cap entries, else cap of them).
 */
export const SNAPSHOT_READ_SCRIPT = `local top = redis.call('GET', KEYS[2]) or ''
if ARGV[1] == 'keys' then
  local values = {top}
  for i = 2, #ARGV do values[i] = redis.call('HGET', KEYS[1], ARGV[i]) end
  return values
end
local cap = tonumber(ARGV[2])
if redis.call('HLEN', KEYS[1]) <= cap then
  local all = redis.call('HGETALL', KEYS[1])
  table.insert(all, 1, 0)
  table.insert(all, 1, top)
  return all
end
local out = {top, 1}
local seen = {}
local n = 0
local cursor = '0'
repeat
  local page = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', 256)
  cursor = page[1]
  local fields = page[2]
  for i = 1, #fields, 2 do
    if n < cap and not seen[fields[i]] then
      seen[fields[i]] = true
      out[#out + 1] = fields[i]
      out[#out + 1] = fields[i + 1]
      n = n + 1
    end
  end
until cursor == '0' or n >= cap
return out`;

/** One key's current value: the envelope ingest published for it, with its position. */
export interface SnapshotEntry {
  readonly key: string;
  readonly partition: number;
  readonly offset: string;
  /** The envelope text, byte for byte what was published live. */
  readonly envelope: string;
}

/** What {@link readSnapshot} read. */
export interface Snapshot {
  /** One entry per key that has a value, at most `cap`, ordered by partition then as Redis answered. */
  readonly entries: readonly SnapshotEntry[];
  /**
   * Per partition read, the highest offset its snapshot reflected at the read (undefined: nothing
   * written yet). Live events of that partition at or below it are already in the entries (or were
   * overwritten or deleted before the read): the seam for the stream that follows.
   */
  readonly positions: ReadonlyMap<number, string | undefined>;
  /** `all` only: the topic has more keys than `cap`; the entries are `cap` of them. */
  readonly truncated: boolean;
}

/** The two commands the reader sends; an ioredis `Redis` or `Cluster` has both. */
export interface SnapshotRedis {
  smembers(key: string): Promise<string[]>;
  eval(script: string, numberOfKeys: number, ...args: string[]): Promise<unknown>;
}

/**
 * Reads the current values of `topic`: of the given keys (at most `cap` of them, else a RangeError),
 * or of every key (`'all'`, at most `cap` entries; `truncated` says there were more). One atomic
 * script call per partition that has a snapshot (a key's partition is the producer's choice, so every
 * partition is asked). A key found in two partitions (the topic's partitions were added to, and the
 * producer's partitioner moved it) is answered once, from the envelope with the later timestamp.
 */
export async function readSnapshot(redis: SnapshotRedis, layout: RedisLayout, topic: string, keys: readonly string[] | 'all', cap: number): Promise<Snapshot> {
  if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`readSnapshot: cap must be a positive integer, got ${String(cap)}`);
  if (keys !== 'all' && keys.length > cap) throw new RangeError(`readSnapshot: ${keys.length} keys asked for, over the cap of ${cap}`);
  const partitions = (await redis.smembers(layout.partitionsKey(topic))).map(Number).filter((p) => Number.isInteger(p) && p >= 0).sort((a, b) => a - b);
  const positions = new Map<number, string | undefined>();
  const byKey = new Map<string, SnapshotEntry>();
  let truncated = false;
  if (keys !== 'all' && keys.length === 0) return { entries: [], positions, truncated };
  for (const partition of partitions) {
    const remaining = cap - byKey.size;
    const hash = layout.snapshotKey(topic, partition);
    const args = keys === 'all' ? ['all', String(remaining)] : ['keys', ...keys];
    const reply = (await redis.eval(SNAPSHOT_READ_SCRIPT, 2, hash, hash + SNAPSHOT_TOP_SUFFIX, ...args)) as (string | number | null)[];
    const top = reply[0];
    positions.set(partition, typeof top === 'string' && top !== '' ? top : undefined);
    if (keys === 'all') {
      if (reply[1] === 1) truncated = true;
      for (let i = 2; i + 1 < reply.length; i += 2) keep(byKey, entryOf(String(reply[i]), partition, reply[i + 1]));
    } else {
      for (let i = 0; i < keys.length; i++) keep(byKey, entryOf(keys[i] as string, partition, reply[i + 1]));
    }
    if (keys === 'all' && byKey.size >= cap) {
      // Partitions not read: more keys may be there.
      if (partition !== partitions[partitions.length - 1]) truncated = true;
      break;
    }
  }
  return { entries: [...byKey.values()], positions, truncated };
}

function entryOf(key: string, partition: number, value: string | number | null | undefined): SnapshotEntry | undefined {
  if (typeof value !== 'string') return undefined;
  const space = value.indexOf(' ');
  if (space <= 0) return undefined;
  return { key, partition, offset: value.slice(0, space), envelope: value.slice(space + 1) };
}

function keep(byKey: Map<string, SnapshotEntry>, entry: SnapshotEntry | undefined): void {
  if (entry === undefined) return;
  const other = byKey.get(entry.key);
  if (other === undefined || timestampOf(entry.envelope) > timestampOf(other.envelope)) byKey.set(entry.key, entry);
}

/** The envelope's `ts` (only on the rare key found in two partitions). */
function timestampOf(envelope: string): number {
  const match = /"ts":(\d+)/.exec(envelope);
  return match === null ? 0 : Number(match[1]);
}
