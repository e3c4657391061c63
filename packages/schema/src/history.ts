/**
 * Redis history layout (the cross-app contract for resume and back-fill).
 *
 * Ingest appends every published envelope to a Redis Stream per Kafka partition, in the same
 * pipeline as (and before) its PUBLISH, so a gateway that sees a live event can always find it
 * in history too. Entry ids are derived from the Kafka offset (`<offset>-1`), which makes
 * "everything after offset o" one `XRANGE key (<o>-1 +` and makes a re-publish after an ingest
 * crash a rejected XADD (the stream's top is already at or past it) instead of a duplicate.
 * Streams are trimmed with `MAXLEN ~ n`. Redis does not record the id of the last trimmed entry
 * (`max-deleted-entry-id` moves only on XDEL), so a gap that history no longer covers is detected
 * from what remains: `entries-added` above `length` means something was trimmed, and everything
 * trimmed precedes `first-entry` (see the gateway's `lostAfter`).
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

/** Reads one `XRANGE` entry written by {@link historyAppendArgs}; undefined when a field is missing. */
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
