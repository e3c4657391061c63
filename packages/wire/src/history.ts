import { parseEnvelopeBatchPart, type EnvelopeBatchPart } from './envelope-batch.js';

/**
 * Redis history layout (the cross-app contract for resume and back-fill).
 *
 * Ingest appends every published envelope to a Redis Stream per Kafka partition, in the same
 * pipeline as (and before) its PUBLISH, so a gateway that sees a live event can always find it
 * in history too. Entry ids are derived from the Kafka offset (`<offset>-1`), which makes
 * "everything after offset o" one `XRANGE key (<o>-1 +` and makes a re-publish after an ingest
 * crash a rejected XADD (the stream's top is already at or past it) instead of a duplicate.
 *
 * Two entry forms, which every reader must understand (decision 0012):
 * - **event** (one entry per event): `c <channel> e <envelope>`, id `<offset>-1`; trimmed `MAXLEN ~ n`.
 *   Ingest no longer writes it (only ingests before the batch form did), but a stream may still
 *   hold such entries from one until they are trimmed, so gateways keep reading it.
 * - **batch** (one entry per ingest chunk, what ingest writes): `c <channel> p <part>` per key shard with
 *   events, the part exactly as the live batch form publishes it (envelope-batch.ts: a head listing
 *   each envelope's index in the chunk and offset, then the envelopes), id `<last offset>-1`. So one
 *   XADD of a few arguments per chunk, sharing the bytes of its publishes. "After o" is still
 *   `XRANGE key (<o>-1 +`: the first entry returned may hold events at or below o, which the reader
 *   skips. A chunk redone with other boundaries (a new owner after a crash) can store an offset in two
 *   entries; the reader keeps offsets strictly increasing. Trimmed `MINID ~ <last - n + 1>`: about
 *   the newest n offsets.
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
/** Batch entries only: field holding one part (a key shard's events of the chunk), after its `c`. */
export const HISTORY_FIELD_PART = 'p';

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
 * `<stream> [MINID ~ <minId>] <last offset>-1 (c <channel> p <part>)…`, one pair per part of
 * {@link encodeEnvelopeBatch} with the (logical) channel of its shard. `minId` from {@link historyBatchMinId}.
 */
export function historyBatchArgs(key: string, lastOffset: string, parts: readonly { channel: string; bytes: string | Buffer }[], minId?: string): (string | Buffer)[] {
  if (parts.length === 0) throw new RangeError('historyBatchArgs needs at least one part');
  const args: (string | Buffer)[] = minId === undefined ? [key, historyEntryId(lastOffset)] : [key, 'MINID', '~', minId, historyEntryId(lastOffset)];
  for (const { channel, bytes } of parts) args.push(HISTORY_FIELD_CHANNEL, channel, HISTORY_FIELD_PART, bytes);
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

function isBatchEntry(fields: readonly string[]): boolean {
  return fields[0] === HISTORY_FIELD_CHANNEL && fields[2] === HISTORY_FIELD_PART;
}

/** A batch entry's parts, parsed; a malformed part is left out (it was never delivered live either). */
function partsOf(fields: readonly string[]): { channel: string; part: EnvelopeBatchPart }[] {
  const parts: { channel: string; part: EnvelopeBatchPart }[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    if (fields[i] !== HISTORY_FIELD_CHANNEL || fields[i + 2] !== HISTORY_FIELD_PART) continue;
    try {
      parts.push({ channel: fields[i + 1] as string, part: parseEnvelopeBatchPart(fields[i + 3] as string) });
    } catch {
      // skipped
    }
  }
  return parts;
}

/**
 * Reads one `XRANGE` entry in either form ({@link historyAppendArgs}, {@link historyBatchArgs}):
 * its events with an offset above `after` (all when undefined), in offset order.
 */
export function parseHistoryEntries(id: string, fields: readonly string[], after?: string): HistoryEntry[] {
  if (!isBatchEntry(fields)) {
    const entry = parseHistoryEntry(id, fields);
    return entry === undefined || (after !== undefined && !offsetAbove(entry.offset, after)) ? [] : [entry];
  }
  const parts = partsOf(fields);
  const count = parts[0]?.part.count ?? 0;
  const slots: (HistoryEntry | undefined)[] = new Array<HistoryEntry | undefined>(count);
  // Deliberately imperative: runs per replayed event. The parts' indexes put the chunk back in offset order.
  for (const { channel, part } of parts) {
    const { indexes, offsets, envelopes } = part;
    for (let j = 0; j < indexes.length; j++) {
      const offset = offsets[j] as string;
      if (after !== undefined && !offsetAbove(offset, after)) continue;
      const index = indexes[j] as number;
      if (index < count) slots[index] = { offset, channel, envelope: envelopes[j] as string };
    }
  }
  const entries: HistoryEntry[] = [];
  for (const entry of slots) if (entry !== undefined) entries.push(entry);
  return entries;
}

/** The oldest offset an entry of either form holds (a batch entry's id is its newest). */
export function firstOffsetOfHistoryEntry(id: string, fields: readonly string[]): string {
  if (!isBatchEntry(fields)) return offsetOfHistoryId(id);
  for (const { part } of partsOf(fields)) if (part.indexes[0] === 0 && part.offsets[0] !== undefined) return part.offsets[0];
  return offsetOfHistoryId(id);
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
