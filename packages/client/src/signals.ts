/**
 * The contract's extensions, validated (external input): `start`, `recovery`, `position`,
 * `snapshot` (the end of a snapshot) and `deleted`.
 * Each parser returns the value, `undefined` when absent, or a {@link Malformed} naming the field,
 * what was expected and what arrived.
 */

/** The data-less first `next` of a subscription that asked with `extensions.start: true`. */
export interface Start {
  /** Absent when the gateway keeps no history: nothing can be resumed. */
  readonly epoch?: string;
  /** Partition → the offset the subscription is live after; a partition absent had no history yet. */
  readonly positions: Readonly<Record<string, string>>;
}

/** The data-less first `next` of a resumed subscription. */
export interface Recovery {
  /** False when history no longer covers the gap: events were missed, and this says so. */
  readonly recovered: boolean;
  /** The gateway's epoch now (absent when it keeps no history). */
  readonly epoch?: string;
  /** Why not recovered: retention, `epoch changed…`, a gateway without history. */
  readonly reason?: string;
  /** The partitions with a gap (retention), when known. */
  readonly partitions?: readonly number[];
  /**
   * A replay from a time (`since`) that history does not reach: the earliest time (RFC 3339) from
   * which it holds every partition named; the events start at their oldest retained ones.
   */
  readonly oldest?: string;
}

/** The data-less `next` that ends a snapshot (`extensions.snapshot: true` asked): what was sent, and the seam. */
export interface SnapshotEnd {
  /** Entries sent. */
  readonly keys: number;
  /** The topic has more keys than the gateway's GATEWAY_SNAPSHOT_MAX_KEYS: not every key was sent. */
  readonly truncated: boolean;
  readonly epoch?: string;
  /** Partition → the offset the subscription is live after. */
  readonly positions: Readonly<Record<string, string>>;
}

/** A deleted key (a Kafka tombstone on a snapshot topic): data-less, with its position. */
export interface Deleted {
  readonly key: string | null;
  readonly position: Position;
}

/** `extensions.position` of every event. */
export interface Position {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset, a decimal string (int64). */
  readonly offset: string;
  readonly epoch?: string;
}

export interface Malformed {
  readonly malformed: string;
}

const OFFSET = /^(0|[1-9][0-9]{0,18})$/;
const PARTITION = /^(0|[1-9][0-9]{0,9})$/;
const MAX_EPOCH_LENGTH = 128;

export function isMalformed(value: unknown): value is Malformed {
  return typeof value === 'object' && value !== null && 'malformed' in value;
}

/** `a > b` for offsets as decimal strings without leading zeros (int64 does not fit a number). */
export function offsetAfter(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? typeof value;
  return text.length <= 40 ? text : `${text.slice(0, 39)}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function epochProblem(field: string, epoch: unknown): Malformed | undefined {
  if (epoch === undefined) return undefined;
  if (typeof epoch === 'string' && epoch !== '' && epoch.length <= MAX_EPOCH_LENGTH) return undefined;
  return { malformed: `${field} must be a non-empty string of at most ${MAX_EPOCH_LENGTH} characters, got ${preview(epoch)}` };
}

export function parseStart(value: unknown): Start | Malformed | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) return { malformed: `extensions.start must be an object { epoch, positions }, got ${preview(value)}` };
  const { epoch, positions } = value;
  const bad = epochProblem('extensions.start.epoch', epoch);
  if (bad) return bad;
  if (!isRecord(positions)) return { malformed: `extensions.start.positions must be an object { "<partition>": "<offset>" }, got ${preview(positions)}` };
  for (const [partition, offset] of Object.entries(positions)) {
    if (!PARTITION.test(partition)) return { malformed: `extensions.start.positions: "${partition.slice(0, 20)}" is not a partition number` };
    if (typeof offset !== 'string' || !OFFSET.test(offset)) {
      return { malformed: `extensions.start.positions["${partition}"] must be an offset as a decimal string, got ${preview(offset)}` };
    }
  }
  return { ...(epoch === undefined ? {} : { epoch: epoch as string }), positions: { ...(positions as Record<string, string>) } };
}

export function parseRecovery(value: unknown): Recovery | Malformed | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) return { malformed: `extensions.recovery must be an object { recovered, epoch, reason?, partitions? }, got ${preview(value)}` };
  const { recovered, epoch, reason, partitions, oldest } = value;
  if (typeof recovered !== 'boolean') return { malformed: `extensions.recovery.recovered must be a boolean, got ${preview(recovered)}` };
  const bad = epochProblem('extensions.recovery.epoch', epoch);
  if (bad) return bad;
  if (reason !== undefined && typeof reason !== 'string') return { malformed: `extensions.recovery.reason must be a string, got ${preview(reason)}` };
  if (partitions !== undefined && !(Array.isArray(partitions) && partitions.every((p) => Number.isInteger(p) && (p as number) >= 0))) {
    return { malformed: `extensions.recovery.partitions must be an array of partition numbers, got ${preview(partitions)}` };
  }
  if (oldest !== undefined && typeof oldest !== 'string') return { malformed: `extensions.recovery.oldest must be a time string, got ${preview(oldest)}` };
  return {
    recovered,
    ...(epoch === undefined ? {} : { epoch: epoch as string }),
    ...(reason === undefined ? {} : { reason }),
    ...(partitions === undefined ? {} : { partitions: [...(partitions as number[])] }),
    ...(oldest === undefined ? {} : { oldest }),
  };
}

export function parsePosition(value: unknown): Position | Malformed | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) return { malformed: `extensions.position must be an object { topic, partition, offset, epoch }, got ${preview(value)}` };
  const { topic, partition, offset, epoch } = value;
  if (typeof topic !== 'string') return { malformed: `extensions.position.topic must be a string, got ${preview(topic)}` };
  if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0) {
    return { malformed: `extensions.position.partition must be a partition number, got ${preview(partition)}` };
  }
  if (typeof offset !== 'string' || !OFFSET.test(offset)) return { malformed: `extensions.position.offset must be an offset as a decimal string, got ${preview(offset)}` };
  const bad = epochProblem('extensions.position.epoch', epoch);
  if (bad) return bad;
  return epoch === undefined ? { topic, partition, offset } : { topic, partition, offset, epoch: epoch as string };
}

export function parseSnapshotEnd(value: unknown): SnapshotEnd | Malformed | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) return { malformed: `extensions.snapshot must be an object { keys, truncated, epoch?, positions }, got ${preview(value)}` };
  const { keys, truncated } = value;
  if (typeof keys !== 'number' || !Number.isInteger(keys) || keys < 0) return { malformed: `extensions.snapshot.keys must be a count, got ${preview(keys)}` };
  if (typeof truncated !== 'boolean') return { malformed: `extensions.snapshot.truncated must be a boolean, got ${preview(truncated)}` };
  // The seam has the start's shape: parsed as one, with its field names.
  const seam = parseStart(value);
  if (isMalformed(seam)) return { malformed: seam.malformed.replace('extensions.start', 'extensions.snapshot') };
  return { keys, truncated, ...(seam as Start) };
}

export function parseDeleted(value: unknown): { readonly key: string | null } | Malformed | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value) || !(value['key'] === null || typeof value['key'] === 'string')) {
    return { malformed: `extensions.deleted must be an object { key: string | null }, got ${preview(value)}` };
  }
  return { key: value['key'] };
}
