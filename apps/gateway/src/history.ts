import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  HISTORY_FIELD_CHANNEL,
  HISTORY_FIELD_ENVELOPE,
  historyEntryId,
  historyEpochKey,
  historyPartitionsKey,
  historyStreamKey,
  offsetOfHistoryId,
} from '@wirestream/schema';

/** One stored event: the channel it was published on and the envelope text, as PUBLISH carried them. */
export interface HistoryEntry {
  readonly offset: string;
  readonly channel: string;
  readonly envelope: string;
}

/**
 * Reads what ingest writes (see packages/schema/src/history.ts): one Redis Stream per Kafka
 * partition with offset-derived ids, the set of partitions, and the epoch. Uses an ordinary
 * (non-subscriber) connection.
 */
export interface HistoryReader {
  /** The epoch, creating it if Redis has none (a fresh or emptied Redis starts a new life). */
  loadEpoch(): Promise<string>;
  /** Partitions of `topic` that have history. */
  partitions(topic: string): Promise<number[]>;
  /** Offset of the newest stored entry per partition (partitions without a stream are absent). */
  tops(topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  /**
   * Whether history may have lost an entry after `afterOffset` (trimmed by MAXLEN, or deleted).
   * Conservative: Redis does not record the id of the last trimmed entry, only what remains, so a
   * hole in the offsets just before the oldest retained entry (e.g. a dead-lettered message) counts
   * as a possible loss. A partition with positions but no stream counts as lost too.
   */
  lostAfter(topic: string, partition: number, afterOffset: string): Promise<boolean>;
  /** Entries after `afterOffset` (from the oldest retained when undefined), oldest first, in pages. */
  read(topic: string, partition: number, afterOffset: string | undefined): AsyncGenerator<HistoryEntry[]>;
}

/** Entries per XRANGE round trip: large enough to amortize it, small enough to yield between pages. */
const PAGE = 500;

export function createHistoryReader(redis: Redis, prefix: string): HistoryReader {
  return {
    async loadEpoch() {
      // SET … NX GET: returns the epoch someone else created, or null when ours won.
      const candidate = randomUUID();
      const existing = (await redis.call('SET', historyEpochKey(prefix), candidate, 'NX', 'GET')) as string | null;
      return existing ?? candidate;
    },

    async partitions(topic) {
      const members = await redis.smembers(historyPartitionsKey(prefix, topic));
      return members.map(Number).filter((p) => Number.isInteger(p) && p >= 0).sort((a, b) => a - b);
    },

    async tops(topic, partitions) {
      const pipeline = redis.pipeline();
      for (const p of partitions) pipeline.xrevrange(historyStreamKey(prefix, topic, p), '+', '-', 'COUNT', 1);
      const results = (await pipeline.exec()) ?? [];
      const tops = new Map<number, string>();
      results.forEach(([err, value], i) => {
        const newest = (value as [string, string[]][] | undefined)?.[0];
        if (!err && newest) tops.set(partitions[i] as number, offsetOfHistoryId(newest[0]));
      });
      return tops;
    },

    async lostAfter(topic, partition, afterOffset) {
      let info: unknown[];
      try {
        info = (await redis.call('XINFO', 'STREAM', historyStreamKey(prefix, topic, partition))) as unknown[];
      } catch (err) {
        if (String(err).includes('no such key')) return true;
        throw err;
      }
      const field = (name: string): unknown => {
        const at = info.indexOf(name);
        return at >= 0 ? info[at + 1] : undefined;
      };
      const after = BigInt(afterOffset);
      const offsetOf = (id: unknown): bigint => BigInt(offsetOfHistoryId(String(id ?? '0-0')));
      // XDEL leaves its mark here (Redis ≥ 7.0); trimming does not.
      if (offsetOf(field('max-deleted-entry-id')) > after) return true;
      const length = Number(field('length') ?? 0);
      const added = Number(field('entries-added') ?? length);
      if (added <= length) return false; // nothing was ever trimmed
      const first = field('first-entry') as [string, string[]] | null | undefined;
      // Trimmed entries all precede the oldest retained one; everything trimmed when none is left.
      const oldest = first ? offsetOf(first[0]) : offsetOf(field('last-generated-id')) + 1n;
      return oldest > after + 1n;
    },

    async *read(topic, partition, afterOffset) {
      const key = historyStreamKey(prefix, topic, partition);
      let start = afterOffset === undefined ? '-' : `(${historyEntryId(afterOffset)}`;
      for (;;) {
        const page = (await redis.xrange(key, start, '+', 'COUNT', PAGE)) as [string, string[]][];
        if (page.length === 0) return;
        const entries: HistoryEntry[] = [];
        for (const [id, fields] of page) {
          const entry = toEntry(id, fields);
          if (entry) entries.push(entry);
        }
        yield entries;
        if (page.length < PAGE) return;
        start = `(${(page[page.length - 1] as [string, string[]])[0]}`;
      }
    },
  };
}

function toEntry(id: string, fields: string[]): HistoryEntry | undefined {
  let channel: string | undefined;
  let envelope: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === HISTORY_FIELD_CHANNEL) channel = fields[i + 1];
    else if (fields[i] === HISTORY_FIELD_ENVELOPE) envelope = fields[i + 1];
  }
  return channel === undefined || envelope === undefined ? undefined : { offset: offsetOfHistoryId(id), channel, envelope };
}

/** What a client sends to resume: the epoch it saw and, per partition, the last offset it received. */
export interface ResumeRequest {
  readonly epoch: string;
  readonly positions: ReadonlyMap<number, string>;
}

const MAX_RESUME_PARTITIONS = 4_096;
const OFFSET = /^(0|[1-9][0-9]{0,18})$/;

/**
 * Validates `extensions.resume` of a subscribe payload (external input):
 * `{ "epoch": "<epoch>", "positions": { "<partition>": "<offset>", … } }`.
 * Returns undefined when absent, an error message when malformed.
 */
export function parseResumeRequest(extensions: unknown): ResumeRequest | undefined | string {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const resume = (extensions as Record<string, unknown>)['resume'];
  if (resume === undefined || resume === null) return undefined;
  if (typeof resume !== 'object') return 'extensions.resume must be an object { epoch, positions }';
  const { epoch, positions } = resume as Record<string, unknown>;
  if (typeof epoch !== 'string' || epoch.length === 0 || epoch.length > 128) return 'extensions.resume.epoch must be the epoch string from extensions.position';
  if (positions === null || typeof positions !== 'object' || Array.isArray(positions)) {
    return 'extensions.resume.positions must be an object { "<partition>": "<last offset received>" }';
  }
  const entries = Object.entries(positions as Record<string, unknown>);
  if (entries.length > MAX_RESUME_PARTITIONS) return `extensions.resume.positions has more than ${MAX_RESUME_PARTITIONS} partitions`;
  const parsed = new Map<number, string>();
  for (const [partition, offset] of entries) {
    const p = Number(partition);
    if (!Number.isInteger(p) || p < 0 || String(p) !== partition) return `extensions.resume.positions: "${partition.slice(0, 20)}" is not a partition number`;
    if (typeof offset !== 'string' || !OFFSET.test(offset)) return `extensions.resume.positions["${partition}"] must be an offset as a decimal string`;
    parsed.set(p, offset);
  }
  return { epoch, positions: parsed };
}
