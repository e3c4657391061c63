/**
 * Delta mode (centrifuge's fossil deltas are the model): a subscription that asks for it receives
 * each event as a fossil delta from the previous payload of its group, computed once per event for
 * the group, never per socket. The wire form lives in @wirestream/delta, shared with clients.
 */
import { DELTA_FOSSIL, encodeDeltaPayload, payloadBytes } from '@wirestream/delta';
import type { Group } from './groups.js';

/**
 * Validates `extensions.delta` of a subscribe payload (external input). Returns true for
 * `"fossil"`, false when absent, an error message otherwise.
 */
export function parseDeltaRequest(extensions: unknown): boolean | string {
  if (extensions === null || typeof extensions !== 'object') return false;
  const delta = (extensions as Record<string, unknown>)['delta'];
  if (delta === undefined || delta === null) return false;
  if (delta === DELTA_FOSSIL) return true;
  return `extensions.delta must be "${DELTA_FOSSIL}" (the only delta format), got ${JSON.stringify(delta)?.slice(0, 40) ?? typeof delta}`;
}

/** What one flush of a group sends to its delta subscribers, computed once for all of them. */
export interface GroupDeltas {
  /** For a subscriber that holds the base: every payload as a delta (or in full where that is smaller). */
  readonly withBase: readonly string[] | undefined;
  /** For one that does not: the first payload in full, the rest as deltas. */
  readonly fromFull: readonly string[];
  /** How many entries of each are deltas (for the frame counters). */
  readonly deltasWithBase: number;
  readonly deltasFromFull: number;
  /** The payload `withBase` starts from: the group's base before this flush (undefined without one). */
  readonly baseText: string | undefined;
}

/**
 * Deltas of a flush's payloads, each from the one before (the first from the group's base), and
 * the group's new base. `withBase` is undefined when the group had no base (no subscriber can
 * hold one then). Cost: one fossil delta per payload, whatever the number of subscribers.
 */
export function computeGroupDeltas<C>(group: Group<C>, payloads: readonly string[]): GroupDeltas {
  const fromFull: string[] = [payloads[0] as string];
  let deltasFromFull = 0;
  let previous = group.deltaBase;
  let first: string | undefined;
  for (let i = 0; i < payloads.length; i++) {
    const text = payloads[i] as string;
    const bytes = payloadBytes(text);
    const delta = previous === undefined ? undefined : encodeDeltaPayload(previous, bytes, text.length);
    if (i === 0) first = delta ?? text;
    else {
      fromFull.push(delta ?? text);
      if (delta !== undefined) deltasFromFull++;
    }
    previous = bytes;
  }
  const baseText = group.deltaBaseText;
  group.deltaBase = previous;
  if (payloads.length > 0) group.deltaBaseText = payloads[payloads.length - 1];
  if (baseText === undefined) return { withBase: undefined, fromFull, deltasWithBase: 0, deltasFromFull, baseText };
  const withBase = [first as string, ...fromFull.slice(1)];
  return { withBase, fromFull, deltasWithBase: deltasFromFull + (first === payloads[0] ? 0 : 1), deltasFromFull, baseText };
}

/** A group without delta subscribers keeps no base: whoever joins in delta mode starts from a full payload. */
export function forgetDeltaBase<C>(group: Group<C>): void {
  group.deltaBase = undefined;
  group.deltaBaseText = undefined;
}

/**
 * A flush's frames for a delta subscriber that does not hold the group's base but whose last payload
 * the gateway knows exactly: `base`, the last one its catch-up sent it (catchup.ts). When that is
 * the group's base (the catch-up ended with the event the group wrote last: the same string, or a
 * replayed copy of the same text), the shared `withBase`; otherwise a delta of its own to the first
 * payload, then the shared rest. Undefined when no delta is smaller: send `fromFull`.
 *
 * Cost, only for a subscriber coming out of a catch-up (once per catch-up, again only after a flush
 * whose last payload its hold skipped): one string comparison (O(1) for the same string, O(payload)
 * for a replayed copy) and, when the bases differ, one fossil delta (~26–110 µs for a demo payload,
 * decision 0011). That delta is computed for one subscriber: no other holds its base to share it.
 */
export function framesFromBase(deltas: GroupDeltas, base: string, payloads: readonly string[]): readonly string[] | undefined {
  if (deltas.withBase !== undefined && base === deltas.baseText) return deltas.withBase;
  const first = payloads[0] as string;
  const delta = encodeDeltaPayload(payloadBytes(base), payloadBytes(first), first.length);
  return delta === undefined ? undefined : [delta, ...deltas.fromFull.slice(1)];
}
