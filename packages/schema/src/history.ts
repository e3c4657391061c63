/**
 * Redis history layout (the cross-app contract for resume and back-fill).
 *
 * Ingest appends every published envelope to a Redis Stream per Kafka partition, in the same
 * pipeline as (and before) its PUBLISH, so a gateway that sees a live event can always find it
 * in history too. Entry ids are derived from the Kafka offset (`<offset>-1`), which makes
 * "everything after offset o" one `XRANGE key (<o>-1 +` and makes a re-publish after an ingest
 * crash a rejected XADD (the stream's top is already at or past it) instead of a duplicate.
 *
 * Two entry forms, which every reader must understand (decision 0010):
 * - **event** (one entry per event): `c <channel> e <envelope>`, id `<offset>-1`; trimmed `MAXLEN ~ n`.
 * - **batch** (one entry per ingest chunk, the default): `o <offset> c <channel> e <envelope>` per
 *   event, in offset order, id `<last offset>-1`. "After o" is still `XRANGE key (<o>-1 +`: the
 *   first entry returned may hold events at or below o, which the reader skips. A chunk redone with
 *   other boundaries (a new owner after a crash) can store an offset in two entries; the reader
 *   keeps offsets strictly increasing. Trimmed `MINID ~ <last - n + 1>`: about the newest n offsets.
 *
 * Streams are trimmed by length. Redis does not record the id of the last trimmed entry
 * (`max-deleted-entry-id` moves only on XDEL), so a gap that history no longer covers is detected
 * from what remains: `entries-added` above `length` means something was trimmed, and everything
 * trimmed precedes the oldest event of `first-entry` (see the gateway's `lostAfter`).
 *
 * The epoch names one life of the history: if Redis loses its data, the epoch key goes with it and
 * a new random epoch is created, so positions from before the loss are recognisably stale.
 */

/** @default 'wsh' */
export const DEFAULT_HISTORY_PREFIX = 'wsh';

/** Field holding the Redis channel the envelope was published on (so a back-fill can route it). */
export const HISTORY_FIELD_CHANNEL = 'c';
/** Field holding the envelope bytes, identical to the PUBLISH payload. */
export const HISTORY_FIELD_ENVELOPE = 'e';
/** Batch entries only: field holding an event's Kafka offset, first of its three fields (so the first field of a batch entry). */
export const HISTORY_FIELD_OFFSET = 'o';

/** How ingest writes history: one stream entry per event, or one per chunk (see the module comment). */
export const HISTORY_FORMATS = ['batch', 'event'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** Redis error text for an XADD whose id is not above the stream's top: the entry is already stored. */
export const HISTORY_ALREADY_STORED = 'equal or smaller than the target stream top item';

/** Stream of one Kafka partition. Topic names cannot contain ':', so keys never collide. */
export function historyStreamKey(prefix: string, topic: string, partition: number): string {
  return `${prefix}:${topic}:${partition}`;
}

/** Set of the partition numbers of `topic` that have a history stream. */
export function historyPartitionsKey(prefix: string, topic: string): string {
  return `${prefix}:${topic}:partitions`;
}

/** String key holding the current epoch. Created with `SET key <random> NX GET` by whoever comes first. */
export function historyEpochKey(prefix: string): string {
  return `${prefix}:epoch`;
}

/** Stream entry id of a Kafka offset (`0-0` is not a valid id, hence sequence 1). */
export function historyEntryId(offset: string): string {
  return `${offset}-1`;
}

/** Kafka offset of a stream entry id written by {@link historyEntryId}. */
export function offsetOfHistoryId(id: string): string {
  const dash = id.indexOf('-');
  return dash < 0 ? id : id.slice(0, dash);
}

/** One stored event: its Kafka offset, the channel it was published on and the envelope text, as PUBLISH carried them. */
export interface HistoryEntry {
  readonly offset: string;
  readonly channel: string;
  readonly envelope: string;
}

/**
 * Arguments of the `XADD` (after the command name) that stores one event, as ingest writes it:
 * `<stream> [MAXLEN ~ <maxLen>] <offset>-1 c <channel> e <envelope>`. Written once here so that
 * ingest, tests and benchmarks cannot disagree on the layout.
 */
export function historyAppendArgs(
  prefix: string,
  topic: string,
  partition: number,
  offset: string,
  channel: string,
  envelope: string | Buffer,
  maxLen?: string,
): (string | Buffer)[] {
  return historyEntryArgs(historyStreamKey(prefix, topic, partition), offset, channel, envelope, maxLen);
}

/** {@link historyAppendArgs} for a stream key of any layout (`RedisLayout.streamKey`: standalone or cluster). */
export function historyEntryArgs(key: string, offset: string, channel: string, envelope: string | Buffer, maxLen?: string): (string | Buffer)[] {
  const id = historyEntryId(offset);
  return maxLen === undefined
    ? [key, id, HISTORY_FIELD_CHANNEL, channel, HISTORY_FIELD_ENVELOPE, envelope]
    : [key, 'MAXLEN', '~', maxLen, id, HISTORY_FIELD_CHANNEL, channel, HISTORY_FIELD_ENVELOPE, envelope];
}

/**
 * Arguments of the `XADD` that stores a chunk as one batch entry:
 * `<stream> [MINID ~ <minId>] <last offset>-1 (o <offset> c <channel> e <envelope>)…`, events in
 * offset order, `channels[i]` and `envelopes[i]` belonging to `offsets[i]`. `minId` from
 * {@link historyBatchMinId}. Deliberately imperative: one call per chunk, a loop per event.
 */
export function historyBatchArgs(
  key: string,
  offsets: readonly string[],
  channels: readonly string[],
  envelopes: readonly (string | Buffer)[],
  minId?: string,
): (string | Buffer)[] {
  const last = offsets[offsets.length - 1];
  if (last === undefined) throw new RangeError('historyBatchArgs needs at least one event');
  const args: (string | Buffer)[] = minId === undefined ? [key, historyEntryId(last)] : [key, 'MINID', '~', minId, historyEntryId(last)];
  for (let i = 0; i < offsets.length; i++) {
    args.push(HISTORY_FIELD_OFFSET, offsets[i] as string, HISTORY_FIELD_CHANNEL, channels[i] as string, HISTORY_FIELD_ENVELOPE, envelopes[i] as string | Buffer);
  }
  return args;
}

/**
 * MINID of a batch XADD that keeps about the newest `length` offsets of a partition whose newest is
 * `lastOffset` (an entry goes once its last offset is below `lastOffset - length + 1`); undefined
 * while nothing can be trimmed yet.
 */
export function historyBatchMinId(lastOffset: string, length: number): string | undefined {
  const min = BigInt(lastOffset) - BigInt(length) + 1n;
  return min > 0n ? `${min}-0` : undefined;
}

/** `a > b` for Kafka offsets as decimal strings without leading zeros (no BigInt). */
function offsetAbove(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

/**
 * Reads one `XRANGE` entry in either form ({@link historyAppendArgs}, {@link historyBatchArgs}):
 * its events with an offset above `after` (all when undefined), oldest first. Events missing a
 * field are left out (a malformed entry was never delivered live either).
 */
export function parseHistoryEntries(id: string, fields: readonly string[], after?: string): HistoryEntry[] {
  if (fields[0] !== HISTORY_FIELD_OFFSET) {
    const entry = parseHistoryEntry(id, fields);
    return entry === undefined || (after !== undefined && !offsetAbove(entry.offset, after)) ? [] : [entry];
  }
  const entries: HistoryEntry[] = [];
  // Deliberately imperative: runs per replayed event. Fields come in triples o, c, e.
  for (let i = 0; i + 5 < fields.length; i += 6) {
    const offset = fields[i + 1] as string;
    if (fields[i] !== HISTORY_FIELD_OFFSET || fields[i + 2] !== HISTORY_FIELD_CHANNEL || fields[i + 4] !== HISTORY_FIELD_ENVELOPE) continue;
    if (after !== undefined && !offsetAbove(offset, after)) continue;
    entries.push({ offset, channel: fields[i + 3] as string, envelope: fields[i + 5] as string });
  }
  return entries;
}

/** The oldest offset an entry of either form holds (a batch entry's id is its newest). */
export function firstOffsetOfHistoryEntry(id: string, fields: readonly string[]): string {
  return fields[0] === HISTORY_FIELD_OFFSET && fields[1] !== undefined ? fields[1] : offsetOfHistoryId(id);
}

/** Reads one `XRANGE` entry written by {@link historyAppendArgs}; undefined when a field is missing. Prefer {@link parseHistoryEntries}, which reads both forms. */
export function parseHistoryEntry(id: string, fields: readonly string[]): HistoryEntry | undefined {
  let channel: string | undefined;
  let envelope: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === HISTORY_FIELD_CHANNEL) channel = fields[i + 1];
    else if (fields[i] === HISTORY_FIELD_ENVELOPE) envelope = fields[i + 1];
  }
  return channel === undefined || envelope === undefined ? undefined : { offset: offsetOfHistoryId(id), channel, envelope };
}

/**
 * The command that loads the epoch, creating it as `candidate` when Redis has none:
 * `SET <prefix>:epoch <candidate> NX GET` answers the existing epoch, or null when ours was stored
 * (Redis ≥ 7.0). Both apps create it this way, whoever comes first.
 */
export function historyEpochCommand(prefix: string, candidate: string): [command: 'SET', ...args: string[]] {
  return ['SET', historyEpochKey(prefix), candidate, 'NX', 'GET'];
}
