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
  const hadBase = group.deltaBase !== undefined;
  group.deltaBase = previous;
  if (!hadBase) return { withBase: undefined, fromFull, deltasWithBase: 0, deltasFromFull };
  const withBase = [first as string, ...fromFull.slice(1)];
  return { withBase, fromFull, deltasWithBase: deltasFromFull + (first === payloads[0] ? 0 : 1), deltasFromFull };
}
