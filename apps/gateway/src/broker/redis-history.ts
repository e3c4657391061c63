import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { createRedisLayout, envelopeTimestamp, firstOffsetOfHistoryEntry, historyEntryId, historyEpochCommand, offsetOfHistoryId, parseHistoryEntries, type HistoryEntry, type RedisLayout } from '@wirestream/wire';
import type { HistoryReader, TimeSeek } from './broker.js';

/** Events per XRANGE round trip: large enough to amortize it, small enough to yield between pages. */
const PAGE = 500;
/**
 * Entries asked for by a read's first XRANGE. An entry is one event or one ingest chunk (batch form,
 * up to INGEST_PUBLISH_CHUNK events), so the page is sized in entries from what the last one held.
 */
const FIRST_PAGE_ENTRIES = 4;

/**
 * The history reader on Redis Streams, over an ordinary (non-subscriber) connection: a `Redis`, or a
 * `Cluster` with the cluster layout (each partition's stream on its own slot, so reads go one
 * command per stream, never one pipeline across slots). A bare prefix means the standalone layout.
 */
export function createRedisHistory(redis: Redis | Cluster, layoutOrPrefix: RedisLayout | string): HistoryReader {
  const layout = typeof layoutOrPrefix === 'string' ? createRedisLayout('standalone', '', layoutOrPrefix) : layoutOrPrefix;
  const prefix = layout.historyPrefix;
  return {
    async loadEpoch() {
      // SET … NX GET: returns the epoch someone else created, or null when ours won.
      const candidate = randomUUID();
      const existing = (await redis.call(...historyEpochCommand(prefix, candidate))) as string | null;
      return existing ?? candidate;
    },

    async partitions(topic) {
      const members = await redis.smembers(layout.partitionsKey(topic));
      return members.map(Number).filter((p) => Number.isInteger(p) && p >= 0).sort((a, b) => a - b);
    },

    async tops(topic, partitions) {
      // One command per stream (sent back to back, answered in one round trip per node).
      const newest = await Promise.all(
        partitions.map((p) => redis.xrevrange(layout.streamKey(topic, p), '+', '-', 'COUNT', 1).then((entries) => entries[0], () => undefined)),
      );
      const tops = new Map<number, string>();
      newest.forEach((entry, i) => {
        if (entry) tops.set(partitions[i] as number, offsetOfHistoryId(entry[0]));
      });
      return tops;
    },

    async lostAfter(topic, partition, afterOffset) {
      const info = await streamInfo(redis, layout.streamKey(topic, partition));
      if (!info) return true;
      const after = BigInt(afterOffset);
      // XDEL leaves its mark here (Redis ≥ 7.0); trimming does not.
      if (info.maxDeleted > after) return true;
      if (!info.trimmed) return false; // nothing was ever trimmed
      // Trimmed entries all precede the oldest retained event; everything trimmed when none is left.
      const oldest = info.first ? BigInt(firstOffsetOfHistoryEntry(info.first[0], info.first[1])) : info.lastGenerated + 1n;
      return oldest > after + 1n;
    },

    entryFrom: (topic, partition, sinceMs) => entryFrom(redis, layout.streamKey(topic, partition), sinceMs),

    async *read(topic, partition, afterOffset) {
      const key = layout.streamKey(topic, partition);
      let start = afterOffset === undefined ? '-' : `(${historyEntryId(afterOffset)}`;
      // Events at or below this are skipped: the first batch entry after a position may hold some,
      // and a chunk redone with other boundaries stores some twice. Offsets come out strictly rising.
      let after = afterOffset;
      let count = FIRST_PAGE_ENTRIES;
      for (;;) {
        const page = (await redis.xrange(key, start, '+', 'COUNT', count)) as [string, string[]][];
        if (page.length === 0) return;
        const entries: HistoryEntry[] = [];
        for (const [id, fields] of page) {
          for (const entry of parseHistoryEntries(id, fields, after)) {
            entries.push(entry);
            after = entry.offset;
          }
        }
        yield entries;
        if (page.length < count) return;
        start = `(${(page[page.length - 1] as [string, string[]])[0]}`;
        // Events per entry as this page held them (an entry is one event, or one chunk).
        const eventsPerEntry = Math.max(1, entries.length / page.length);
        count = Math.max(1, Math.min(PAGE, Math.round(PAGE / eventsPerEntry)));
      }
    },
  };
}

/** A stream entry as XRANGE and XINFO answer it. */
type RawEntry = [id: string, fields: string[]];

/** What `XINFO STREAM` says of a stream that matters to readers. */
interface StreamInfo {
  /** Entries were trimmed (`entries-added` above `length`). */
  readonly trimmed: boolean;
  /** Offset of `max-deleted-entry-id` (XDEL leaves its mark there; trimming does not). */
  readonly maxDeleted: bigint;
  readonly lastGenerated: bigint;
  readonly first: RawEntry | undefined;
  readonly last: RawEntry | undefined;
}

/** `XINFO STREAM` of one stream; undefined when it does not exist. */
async function streamInfo(redis: Redis | Cluster, key: string): Promise<StreamInfo | undefined> {
  let info: unknown[];
  try {
    info = (await redis.call('XINFO', 'STREAM', key)) as unknown[];
  } catch (err) {
    if (String(err).includes('no such key')) return undefined;
    throw err;
  }
  const field = (name: string): unknown => {
    const at = info.indexOf(name);
    return at >= 0 ? info[at + 1] : undefined;
  };
  const offsetOf = (id: unknown): bigint => BigInt(offsetOfHistoryId(typeof id === 'string' ? id : '0-0'));
  const length = Number(field('length') ?? 0);
  const added = Number(field('entries-added') ?? length);
  return {
    trimmed: added > length,
    maxDeleted: offsetOf(field('max-deleted-entry-id')),
    lastGenerated: offsetOf(field('last-generated-id')),
    first: (field('first-entry') as RawEntry | null | undefined) ?? undefined,
    last: (field('last-entry') as RawEntry | null | undefined) ?? undefined,
  };
}

/** Kafka timestamp of an event (NaN, which compares as older than any time, when unreadable). */
const timestampOf = (entry: HistoryEntry): number => envelopeTimestamp(entry.envelope);

/** The newest event timestamp an entry of either form holds (its last event's). */
function newestTimestamp(events: readonly HistoryEntry[]): number {
  const last = events[events.length - 1];
  return last ? timestampOf(last) : Number.NaN;
}

/**
 * {@link HistoryReader.entryFrom} on one stream: XINFO gives the oldest and newest entries; between
 * them a binary search over offsets, one `XRANGE <mid>-0 + COUNT 1` per step (about 20 steps for a
 * million offsets), finds the first entry holding an event at or after the time. An entry is one
 * event or one ingest chunk; within it, the first event at or after the time.
 */
async function entryFrom(redis: Redis | Cluster, key: string, sinceMs: number): Promise<TimeSeek> {
  const info = await streamInfo(redis, key);
  const first = info?.first ? parseHistoryEntries(info.first[0], info.first[1]) : [];
  const last = info?.last ? parseHistoryEntries(info.last[0], info.last[1]) : [];
  const oldest = first[0];
  const newest = last[last.length - 1];
  if (!info?.first || !info.last || !oldest || !newest) return { after: undefined, lost: false, oldestMs: undefined };
  const oldestMs = timestampOf(oldest);
  if (oldestMs >= sinceMs) return { after: undefined, lost: info.trimmed, oldestMs };
  if (!(timestampOf(newest) >= sinceMs)) return { after: newest.offset, lost: false, oldestMs };
  let found = last;
  if (newestTimestamp(first) >= sinceMs) found = first;
  else {
    let lo = BigInt(offsetOfHistoryId(info.first[0])) + 1n;
    let hi = BigInt(offsetOfHistoryId(info.last[0]));
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      const entry = ((await redis.xrange(key, `${mid}-0`, '+', 'COUNT', 1)) as RawEntry[])[0];
      if (!entry) break;
      const events = parseHistoryEntries(entry[0], entry[1]);
      if (newestTimestamp(events) >= sinceMs) {
        hi = mid;
        found = events;
      } else lo = BigInt(offsetOfHistoryId(entry[0])) + 1n;
    }
  }
  const at = found.find((event) => timestampOf(event) >= sinceMs) ?? newest;
  const before = BigInt(at.offset) - 1n;
  return { after: before >= 0n ? String(before) : undefined, lost: false, oldestMs };
}
