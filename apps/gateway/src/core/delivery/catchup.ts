/**
 * A subscriber that is catching up (a resume's replay, its start, its snapshot) holds its live
 * payloads here until it knows what it already has; then the held payloads past that are sent, and
 * later live ones are checked the same way until every partition moved on (centrifuge's
 * `PubSubSync`: the one place where live and history meet, by position). The live flush hands
 * payloads in ({@link holdForCatchup}); resume.ts, start.ts and snapshot.ts end the hold
 * ({@link releaseCatchup}). This module writes `catchup`; nothing else does, besides its creation.
 *
 * Delta mode: a catch-up's frames are full payloads (a replay renders per subscriber, held payloads
 * come from several flushes), but it knows the last one it sent, the client's delta base. It keeps
 * that (`catchupBase`) so that the subscriber's next frames are deltas from it (flush.ts), not
 * full payloads again; this module writes it too.
 */
import type { ConnectionWriter, FramePositions } from '../connection-writer.js';
import { conflateFrames, type Conflating } from './conflation.js';
import { offsetAfter } from './positions.js';

export interface Catchup {
  readonly held: HeldPayload[];
  /**
   * Set when the replay is done: per partition, the last offset the client already has. A live
   * event can be replayed from history before its PUBLISH arrives, so live payloads are checked
   * against it until each partition has moved past it; then the subscriber is plainly live.
   */
  covered: Map<number, string> | undefined;
}

/** A live payload held back while its subscriber catches up. */
export interface HeldPayload {
  readonly partition: number;
  readonly offset: string;
  readonly payload: string;
  /** Its routing key, for a conflating subscriber's queue. */
  readonly key: string | null;
}

/** What a hold needs of a subscriber: where its frames go, and its hold. */
export interface CatchingUp<C> {
  readonly conn: C;
  /** `{"id":<id>,"type":"next","payload":` */
  readonly head: string;
  /** Set while it catches up; undefined once it is plainly live. */
  catchup: Catchup | undefined;
  /** A conflating or rate-capped subscriber: what it is released goes through its queue (conflation.ts). */
  readonly conflation?: Conflating<C>['conflation'];
  readonly group?: Conflating<C>['group'];
  /** Asked for delta payloads (delta.ts): its catch-up then keeps {@link catchupBase}. */
  readonly delta?: boolean;
  /**
   * Delta mode: the last payload its catch-up sent it (replayed or held), which a client reading
   * deltas holds as its base; undefined when unknown or when none was sent (a full payload comes
   * first then). The first write after the catch-up takes it ({@link takeCatchupBase}).
   */
  catchupBase: string | undefined;
}

/**
 * A flush's payloads as frames for a subscriber whose last payload is `base` (flush.ts builds it
 * from the group's deltas), or undefined: send them in full.
 */
export type DeltasFrom = (base: string) => readonly string[] | undefined;

/** A new hold: live payloads wait from now on. */
export function createCatchup(): Catchup {
  return { held: [], covered: undefined };
}

/**
 * Ends a subscriber's hold: `covered` is, per partition, the last offset the client has (or is
 * not to get); held and later live payloads at or below it are dropped, the rest sent in order.
 * `base`: the last full payload the caller sent it (a replay's last event), the base of a client
 * reading deltas; omitted when it sent none, or sent a frame such a client takes as its base
 * without the gateway tracking it (a start, a snapshot's end): a full payload then comes first.
 */
export function releaseCatchup<C>(writer: ConnectionWriter<C>, subscriber: CatchingUp<C>, covered: Map<number, string>, epoch: string | undefined, base?: string): void {
  const { catchup } = subscriber;
  if (!catchup) return;
  catchup.covered = covered;
  if (keepsBase(subscriber)) subscriber.catchupBase = base;
  sendUncovered(writer, subscriber, catchup, epoch, undefined);
}

/** The base its catch-up left a delta subscriber ({@link CatchingUp.catchupBase}), forgotten once taken. */
export function takeCatchupBase<C>(subscriber: CatchingUp<C>): string | undefined {
  const base = subscriber.catchupBase;
  if (base !== undefined) subscriber.catchupBase = undefined;
  return base;
}

/** A delta subscriber whose frames are its own (not a conflating one's: those are always full). */
function keepsBase<C>(subscriber: CatchingUp<C>): boolean {
  return subscriber.delta === true && subscriber.conflation === undefined;
}

/** Forgets held live payloads a replay already sent (they would be filtered out later anyway). */
export function dropCovered<C>(subscriber: CatchingUp<C>, sent: ReadonlyMap<number, string>): void {
  const held = subscriber.catchup?.held;
  if (!held || held.length === 0) return;
  let kept = 0;
  for (const item of held) {
    const have = sent.get(item.partition);
    if (have === undefined || offsetAfter(item.offset, have)) held[kept++] = item;
  }
  held.length = kept;
}

/**
 * Live payloads of one flush for a subscriber that is catching up: held, then sent past what it has.
 * `deltasFrom`: the flush's frames for a delta subscriber from a base, used when its replay is done
 * and every payload of the flush passes (then the client's base is known and nothing is skipped).
 */
export function holdForCatchup<C>(
  writer: ConnectionWriter<C>,
  subscriber: CatchingUp<C>,
  catchup: Catchup,
  payloads: readonly string[],
  positions: FramePositions,
  keys: readonly (string | null)[] = [],
  deltasFrom?: DeltasFrom,
): void {
  const { partitions, offsets } = positions;
  // Once the replay is done, each flush's payloads are sent at once: nothing of another flush is held.
  const onlyThisFlush = catchup.held.length === 0;
  for (let i = 0; i < payloads.length; i++) {
    catchup.held.push({ partition: partitions[i] as number, offset: offsets[i] as string, payload: payloads[i] as string, key: keys[i] ?? null });
  }
  if (catchup.covered) sendUncovered(writer, subscriber, catchup, positions.epoch, onlyThisFlush ? deltasFrom : undefined);
}

/**
 * Sends the held payloads the client does not have yet, in order; plain live delivery once every
 * partition moved on. `deltasFrom` (the held payloads are one flush's) turns them into deltas
 * from the subscriber's base when none is skipped.
 */
function sendUncovered<C>(writer: ConnectionWriter<C>, subscriber: CatchingUp<C>, catchup: Catchup, epoch: string | undefined, deltasFrom: DeltasFrom | undefined): void {
  const covered = catchup.covered as Map<number, string>;
  const payloads: string[] = [];
  const partitions: number[] = [];
  const offsets: string[] = [];
  const keys: (string | null)[] = [];
  let chars = 0;
  for (const item of catchup.held) {
    const have = covered.get(item.partition);
    if (have !== undefined && !offsetAfter(item.offset, have)) continue;
    // Per partition, offsets only grow: past the covered one, nothing more to check there.
    covered.delete(item.partition);
    payloads.push(item.payload);
    partitions.push(item.partition);
    offsets.push(item.offset);
    keys.push(item.key);
    chars += item.payload.length;
  }
  const whole = payloads.length === catchup.held.length;
  catchup.held.length = 0;
  if (covered.size === 0) subscriber.catchup = undefined;
  if (payloads.length === 0) return;
  const { conflation, group } = subscriber;
  if (conflation !== undefined && group !== undefined) {
    conflateFrames({ conn: subscriber.conn, head: subscriber.head, conflation, group }, { payloads, keys, positions: { epoch, partitions, offsets }, chars });
    return;
  }
  const base = subscriber.catchupBase;
  const frames = (whole && base !== undefined ? deltasFrom?.(base) : undefined) ?? payloads;
  writer.sendFrames(subscriber.conn, subscriber.head, frames, { epoch, partitions, offsets });
  if (keepsBase(subscriber)) subscriber.catchupBase = payloads[payloads.length - 1];
}
