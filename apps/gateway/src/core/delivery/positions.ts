import type { Envelope } from '@wirestream/wire';

/** `a > b` for int64 offsets as decimal strings without leading zeros, with no BigInt allocation. */
export function offsetAfter(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** The later of two offsets, either of which may be absent. */
export function laterOffset(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return offsetAfter(a, b) ? a : b;
}

/**
 * Highest offset delivered, per topic, indexed by partition. Ingest publishes each partition in
 * offset order and is at-least-once, so anything at or below the mark is a re-publish: dropping it
 * turns at-least-once upstream into no duplicates downstream. Bounded by the partition count.
 */
export type DeliveredMarks = Map<string, string[]>;

/** Records the envelope's position and returns true, or returns false for a position already delivered. */
export function acceptPosition(delivered: DeliveredMarks, envelope: Envelope): boolean {
  return acceptPositionAt(delivered, envelope.topic, envelope.partition, envelope.offset);
}

/** {@link acceptPosition} of a position read without the envelope (a batch part's head gives it). */
export function acceptPositionAt(delivered: DeliveredMarks, topic: string, partition: number, offset: string): boolean {
  let marks = delivered.get(topic);
  if (!marks) delivered.set(topic, (marks = []));
  const mark = marks[partition];
  if (mark !== undefined && !offsetAfter(offset, mark)) return false;
  marks[partition] = offset;
  return true;
}

/** `extensions.position` of a delivery: the event's Kafka position and the history epoch, when known. */
export function positionExtensions(envelope: Envelope, epoch: string | undefined): Record<string, unknown> {
  const position: Record<string, unknown> = { topic: envelope.topic, partition: envelope.partition, offset: envelope.offset };
  if (epoch !== undefined) position['epoch'] = epoch;
  return { position };
}

/** The delivered marks of a topic, by partition (empty when nothing was delivered yet). */
export function marksOf(delivered: DeliveredMarks, topic: string): readonly (string | undefined)[] {
  return delivered.get(topic) ?? [];
}
