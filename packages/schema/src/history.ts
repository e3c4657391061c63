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
