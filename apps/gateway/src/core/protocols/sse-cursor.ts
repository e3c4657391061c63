/**
 * The cursor an SSE event carries in its `id:` line, and that a client sends back in `Last-Event-ID`:
 * the position of the whole subscription, not of one event — the history epoch and, for every
 * partition, the last offset delivered to this subscriber. One event's own position is not enough
 * on a multi-partition topic: resuming from it would replay (or skip) the other partitions.
 *
 *   w1.<epoch>.<partition>:<offset>,<partition>:<offset>,…      e.g.  w1.5f0c…e2.0:41,1:17,2:8
 *
 * `w1` versions the format; partitions are ascending and unique. Plain ASCII without spaces, so it
 * is safe in an `id:` line and in a header, and a client may treat it as opaque. The decoded form is
 * a {@link ResumeRequest}: resuming with a cursor is resuming with `extensions.resume`.
 */
import type { ResumeRequest } from '../recovery/resume-request.js';

const VERSION = 'w1';
/** Longer cursors are refused before parsing (4,096 partitions of 20-digit offsets fit). */
export const MAX_CURSOR_CHARS = 100_000;
const MAX_PARTITIONS = 4_096;
const EPOCH = /^[A-Za-z0-9_-]{1,128}$/;
const PAIR = /^(0|[1-9][0-9]{0,3}):(0|[1-9][0-9]{0,18})$/;

/** Per-subscriber cursor state: the epoch and the last offset per partition (index = partition). */
export interface CursorState {
  epoch: string | undefined;
  offsets: (string | undefined)[];
  /** `w1.<epoch>.`, built once per epoch (a cursor is encoded per event). */
  prefix: string;
}

export function cursorFrom(resume: ResumeRequest | undefined): CursorState {
  const offsets: (string | undefined)[] = [];
  if (resume) for (const [p, o] of resume.positions) offsets[p] = o;
  return { epoch: resume?.epoch, offsets, prefix: resume ? `${VERSION}.${resume.epoch}.` : '' };
}

/**
 * Records one delivered position. Positions of another epoch than the cursor's replace it whole: the
 * old history is gone, so its offsets mean nothing in the new one.
 */
export function advanceCursor(cursor: CursorState, epoch: string, partition: number, offset: string): void {
  if (cursor.epoch !== epoch) {
    cursor.epoch = epoch;
    cursor.offsets = [];
    cursor.prefix = `${VERSION}.${epoch}.`;
  }
  cursor.offsets[partition] = offset;
}

/**
 * Sets the cursor to a subscription's starting point (start.ts: the epoch and, per partition, the
 * offset it is live after), so that a stream that has received nothing yet, or nothing on some
 * partition, resumes from exactly where it became live.
 */
export function startCursor(cursor: CursorState, start: { readonly epoch?: string; readonly positions: Readonly<Record<string, string>> }): void {
  if (start.epoch === undefined) return; // no history: nothing to resume from
  cursor.epoch = start.epoch;
  cursor.prefix = `${VERSION}.${start.epoch}.`;
  cursor.offsets = [];
  for (const [p, o] of Object.entries(start.positions)) cursor.offsets[Number(p)] = o;
}

/** The cursor as text; undefined while it has no epoch (a gateway without history cannot resume). */
export function encodeCursor(cursor: CursorState): string | undefined {
  if (cursor.epoch === undefined) return undefined;
  let list = '';
  const { offsets } = cursor;
  for (let p = 0; p < offsets.length; p++) {
    const o = offsets[p];
    if (o !== undefined) list += (list === '' ? '' : ',') + p + ':' + o;
  }
  return cursor.prefix + list;
}

/**
 * Parses a cursor from a client (external input, strictly): the resume request it stands for, or an
 * error message saying what is wrong with it.
 */
export function decodeCursor(text: string): ResumeRequest | string {
  if (text.length > MAX_CURSOR_CHARS) return `is longer than ${MAX_CURSOR_CHARS} characters`;
  const [version, epoch, list, ...rest] = text.split('.');
  if (version !== VERSION || epoch === undefined || list === undefined || rest.length > 0) {
    return `must be an event id this gateway sent (${VERSION}.<epoch>.<partition>:<offset>,…)`;
  }
  if (!EPOCH.test(epoch)) return 'has an invalid epoch (1 to 128 of A-Z a-z 0-9 _ -)';
  const positions = new Map<number, string>();
  if (list === '') return { epoch, positions };
  const pairs = list.split(',');
  if (pairs.length > MAX_PARTITIONS) return `has more than ${MAX_PARTITIONS} partitions`;
  let last = -1;
  for (const pair of pairs) {
    const match = PAIR.exec(pair);
    if (!match) return `has an invalid position "${pair.slice(0, 40)}" (expected <partition>:<offset>)`;
    const p = Number(match[1]);
    if (p >= MAX_PARTITIONS) return `has partition ${p}: partitions above ${MAX_PARTITIONS - 1} are not supported`;
    if (p <= last) return 'must list its partitions in ascending order, each once';
    last = p;
    positions.set(p, match[2] as string);
  }
  return { epoch, positions };
}
