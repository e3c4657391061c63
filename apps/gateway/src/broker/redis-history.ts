import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { createRedisLayout, firstOffsetOfHistoryEntry, historyEntryId, historyEpochCommand, offsetOfHistoryId, parseHistoryEntries, type HistoryEntry, type RedisLayout } from '@wirestream/schema';
import type { HistoryReader } from './broker.js';

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
      let info: unknown[];
      try {
        info = (await redis.call('XINFO', 'STREAM', layout.streamKey(topic, partition))) as unknown[];
      } catch (err) {
        if (String(err).includes('no such key')) return true;
        throw err;
      }
      const field = (name: string): unknown => {
        const at = info.indexOf(name);
        return at >= 0 ? info[at + 1] : undefined;
      };
      const after = BigInt(afterOffset);
      const offsetOf = (id: unknown): bigint => BigInt(offsetOfHistoryId(typeof id === 'string' ? id : '0-0'));
      // XDEL leaves its mark here (Redis ≥ 7.0); trimming does not.
      if (offsetOf(field('max-deleted-entry-id')) > after) return true;
      const length = Number(field('length') ?? 0);
      const added = Number(field('entries-added') ?? length);
      if (added <= length) return false; // nothing was ever trimmed
      const first = field('first-entry') as [string, string[]] | null | undefined;
      // Trimmed entries all precede the oldest retained event; everything trimmed when none is left.
      const oldest = first ? BigInt(firstOffsetOfHistoryEntry(first[0], first[1])) : offsetOf(field('last-generated-id')) + 1n;
      return oldest > after + 1n;
    },

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
