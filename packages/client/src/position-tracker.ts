/**
 * One subscription's bookkeeping of the resume contract (docs/architecture.md, "Positions, resume
 * and the recovery signal"): the start, the last offset received per partition, the epoch they
 * belong to; what to send on the next subscribe; and, per `next` payload, what it is (a start, a
 * recovery signal, an event, a duplicate, or something malformed). Pure: no socket, no timer.
 */
import {
  isMalformed,
  offsetAfter,
  parseDeleted,
  parsePosition,
  parseRecovery,
  parseSnapshotEnd,
  parseStart,
  type Position,
  type Recovery,
  type SnapshotEnd,
  type Start,
} from './signals.js';

/** What a subscription resumes from: an epoch and, per partition, the last offset it has. */
export interface ResumeState {
  readonly epoch: string;
  readonly positions: Readonly<Record<string, string>>;
}

/** The contract's part of a subscribe payload's `extensions`. */
export type ContractExtensions = { readonly start: true } | { readonly resume: ResumeState };

export type Verdict =
  | { readonly kind: 'start'; readonly start: Start }
  | { readonly kind: 'recovery'; readonly recovery: Recovery }
  /** A snapshot ended (and, when `start` came with it, the subscription started there). */
  | { readonly kind: 'snapshot'; readonly snapshot: SnapshotEnd; readonly start?: Start }
  /** A key was deleted (data-less); like an event, it moves its partition's position. */
  | { readonly kind: 'deleted'; readonly key: string | null; readonly position: Position; readonly recovery?: Recovery }
  /** Hand it to the application; `recovery` when its epoch showed that history was lost under a live subscription. */
  | { readonly kind: 'event'; readonly recovery?: Recovery }
  /** At or below the last offset received on its partition (same epoch): drop it. */
  | { readonly kind: 'duplicate'; readonly position: Position }
  | { readonly kind: 'malformed'; readonly message: string };

export interface PositionTracker {
  /** `{ resume }` once there is something to resume from (a start or an event with an epoch), else `{ start: true }`. */
  requestExtensions(): ContractExtensions;
  /** What a resubscription would resume from now; undefined before the start, or without an epoch. */
  resumeState(): ResumeState | undefined;
  /**
   * Call before every resubscription after a reconnect. Returns a not-recovered signal when
   * the subscription was live but cannot resume (the gateway keeps no history: no epoch).
   */
  reconnecting(): Recovery | undefined;
  /** Classifies one `next` payload and records its position. */
  accept(payload: unknown): Verdict;
}

const NO_EPOCH_REASON = 'cannot resume: the gateway sent no epoch (it keeps no history), so events sent while disconnected are lost';
const LIVE_EPOCH_REASON = 'epoch changed while connected: the history the positions belonged to was lost (Redis lost its data); events in flight then may be missing';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `from`: resume from a state kept elsewhere (e.g. across a page reload) instead of asking for a start. */
export function createPositionTracker(from?: ResumeState): PositionTracker {
  let epoch: string | undefined = from?.epoch;
  const positions = new Map<string, string>(from ? Object.entries(from.positions) : []);
  /** A start, recovery or event arrived (or `from` was given): the subscription has been live. */
  let live = from !== undefined;

  function forget(newEpoch: string | undefined): void {
    epoch = newEpoch;
    positions.clear();
  }

  function resumeState(): ResumeState | undefined {
    return live && epoch !== undefined ? { epoch, positions: Object.fromEntries(positions) } : undefined;
  }

  /** The seam of a snapshot (or a start): the positions from which the subscription is live. */
  function startAt(start: Start): void {
    forget(start.epoch);
    for (const [p, offset] of Object.entries(start.positions)) positions.set(p, offset);
    live = true;
  }

  function acceptSignal(extensions: Record<string, unknown>): Verdict | undefined {
    if (extensions['snapshot'] !== undefined) {
      const snapshot = parseSnapshotEnd(extensions['snapshot']);
      if (isMalformed(snapshot)) return { kind: 'malformed', message: snapshot.malformed };
      if (snapshot) {
        startAt(snapshot);
        const start = parseStart(extensions['start']);
        return start && !isMalformed(start) ? { kind: 'snapshot', snapshot, start } : { kind: 'snapshot', snapshot };
      }
    }
    if (extensions['start'] !== undefined) {
      const start = parseStart(extensions['start']);
      if (isMalformed(start)) return { kind: 'malformed', message: start.malformed };
      if (start) {
        startAt(start);
        return { kind: 'start', start };
      }
    }
    if (extensions['recovery'] !== undefined) {
      const recovery = parseRecovery(extensions['recovery']);
      if (isMalformed(recovery)) return { kind: 'malformed', message: recovery.malformed };
      if (recovery) {
        // After `epoch changed`, the new epoch's history is replayed from its beginning: positions
        // of the old one mean nothing, and are kept again from the events that follow.
        if (recovery.epoch !== epoch) forget(recovery.epoch);
        live = true;
        return { kind: 'recovery', recovery };
      }
    }
    return undefined;
  }

  function acceptPosition(position: Position): Verdict {
    live = true;
    let recovery: Recovery | undefined;
    if (position.epoch !== undefined && position.epoch !== epoch) {
      if (epoch !== undefined) recovery = { recovered: false, epoch: position.epoch, reason: LIVE_EPOCH_REASON };
      forget(position.epoch);
    }
    const key = String(position.partition);
    const last = positions.get(key);
    if (last !== undefined && !offsetAfter(position.offset, last)) return { kind: 'duplicate', position };
    positions.set(key, position.offset);
    return recovery ? { kind: 'event', recovery } : { kind: 'event' };
  }

  return {
    requestExtensions() {
      const state = resumeState();
      return state ? { resume: state } : { start: true };
    },
    resumeState,
    reconnecting() {
      return live && epoch === undefined ? { recovered: false, reason: NO_EPOCH_REASON } : undefined;
    },
    accept(payload) {
      if (!isRecord(payload)) return { kind: 'malformed', message: `a next payload must be an object, got ${typeof payload}` };
      const { extensions } = payload;
      if (extensions === undefined) return { kind: 'event' };
      if (!isRecord(extensions)) return { kind: 'malformed', message: 'extensions of a next payload must be an object' };
      // Signals carry no data and no errors (a payload with either is a result for the application).
      const dataless = !('data' in payload) && !('errors' in payload);
      if (dataless) {
        const signal = acceptSignal(extensions);
        if (signal) return signal;
      }
      // A snapshot's entries: positions at or below the seam the end frame brings; not a resume point.
      if (extensions['snapshot'] === true) return { kind: 'event' };
      const position = parsePosition(extensions['position']);
      if (isMalformed(position)) return { kind: 'malformed', message: position.malformed };
      const verdict = position ? acceptPosition(position) : { kind: 'event' as const };
      return dataless && position && verdict.kind === 'event' ? deletedVerdict(extensions, position, verdict) : verdict;
    },
  };
}

/** A data-less event with `extensions.deleted` is a deletion (any other is handed on as an event). */
function deletedVerdict(extensions: Record<string, unknown>, position: Position, event: Verdict): Verdict {
  const deleted = parseDeleted(extensions['deleted']);
  if (deleted === undefined) return event;
  if (isMalformed(deleted)) return { kind: 'malformed', message: deleted.malformed };
  const recovery = event.kind === 'event' ? event.recovery : undefined;
  return recovery ? { kind: 'deleted', key: deleted.key, position, recovery } : { kind: 'deleted', key: deleted.key, position };
}
