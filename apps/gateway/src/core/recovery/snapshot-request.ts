/**
 * Asking for a snapshot (decision 0024): `extensions.snapshot: true` on a subscription of a
 * `@topic(snapshot: true)` topic. Validated at the edge, before the subscription joins the hub:
 * a malformed value, a topic without a snapshot, a gateway that cannot read snapshots and too many
 * keys are GraphQL errors naming what to change.
 */
import type { CompiledSubscription } from '../operations/operations.js';

/** What the hub reads for a subscription that asked for its snapshot. */
export interface SnapshotAsk {
  /** The routing-key values to read (the key argument, or the keys a `where` pins), or every key of the topic. */
  readonly keys: readonly string[] | 'all';
  /** At most this many entries (a whole-topic read is truncated there): GATEWAY_SNAPSHOT_MAX_KEYS. */
  readonly cap: number;
}

export interface SnapshotLimits {
  /** GATEWAY_SNAPSHOT_MAX_KEYS: entries of a whole-topic snapshot, and keys one subscription may name. */
  readonly maxKeys: number;
  /** The gateway has a snapshot reader (a Redis command connection). */
  readonly available: boolean;
}

/**
 * Validates `extensions.snapshot` of a subscribe payload (external input): `true` asks for the
 * current values first. Returns false when absent (or false or null), an error message otherwise.
 */
export function parseSnapshotRequest(extensions: unknown): boolean | string {
  if (extensions === null || typeof extensions !== 'object') return false;
  const snapshot = (extensions as Record<string, unknown>)['snapshot'];
  if (snapshot === undefined || snapshot === null || snapshot === false) return false;
  if (snapshot === true) return true;
  return `extensions.snapshot must be true (to receive the current value of each key first) or absent, got ${JSON.stringify(snapshot)?.slice(0, 40) ?? typeof snapshot}`;
}

/**
 * The snapshot a subscription asked for: undefined when it did not, an error message when it cannot
 * have one (malformed, a topic without `@topic(snapshot: true)`, no reader, too many keys).
 */
export function resolveSnapshotAsk(extensions: unknown, operation: CompiledSubscription, limits: SnapshotLimits): SnapshotAsk | undefined | string {
  const asked = parseSnapshotRequest(extensions);
  if (asked !== true) return asked === false ? undefined : asked;
  const { fieldName, topic, snapshot } = operation.route;
  if (snapshot !== true) {
    return `extensions.snapshot: ${fieldName} reads topic "${topic}", which keeps no snapshot; declare the field with @topic(snapshot: true) (and restart ingest) to serve its current values.`;
  }
  if (!limits.available) return 'extensions.snapshot: this gateway reads no snapshots (GATEWAY_HISTORY=false leaves it no Redis command connection); subscribe without it.';
  const keys = operation.snapshotKeys ?? 'all';
  if (keys !== 'all' && keys.length > limits.maxKeys) {
    return `extensions.snapshot: the subscription names ${keys.length} keys, over the limit of ${limits.maxKeys} (GATEWAY_SNAPSHOT_MAX_KEYS); ask for fewer keys.`;
  }
  return { keys, cap: limits.maxKeys };
}
