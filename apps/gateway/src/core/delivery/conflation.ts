/**
 * Latest-value conflation (`extensions.conflate: true`, issue #36): a subscriber whose connection has
 * no room keeps, instead of every event, the newest of each key not sent yet, and is written from
 * that queue as its connection takes frames. Memory per subscriber is then bounded by keys, not
 * events, and a slow dashboard is slowed down, not closed; past `maxKeys` distinct keys waiting, the
 * slow-consumer close applies as to anyone.
 *
 * The queue holds the group's shared payload strings (no copy per subscriber). A newer event of a
 * key takes its key's place and moves to the back of its partition: the queue then stays in offset
 * order per partition (events arrive in it), so what a client gets has rising positions per
 * partition, and resuming from the last one is exact for the latest value of every key (what was
 * skipped was superseded by what it got). A frame that superseded others carries
 * `extensions.conflated`: how many events of its key it replaced.
 *
 * A rate cap (`extensions.maxRate: N`) is the same queue, always used: at most one frame every 1/N s
 * (a poll may send what its 10 ms owed), so at most N frames in any second, give or take one;
 * between frames the newest value of each key wins.
 *
 * This module writes every {@link ConflationState} and the {@link Conflator}; the flush hands
 * payloads in ({@link conflateFrames}).
 */
import { performance } from 'node:perf_hooks';
import type { ConnectionWriter, FramePositions } from '../connection-writer.js';
import { currentEpoch, type Epoch } from './epoch.js';
import type { GatewayMetrics } from '../metrics.js';
import { hasOne, type OneOrSet } from './one-or-set.js';
import type { HubStats } from './stats.js';

/** How often waiting queues look for room in their connections (and rate-capped ones for their turn). */
const POLL_MS = 10;
/** The slowest rate cap: a frame a minute. */
const MIN_RATE = 1 / 60;
/** `'"conflated":'`: spliced into a payload's extensions (the last member of every payload). */
const CONFLATED_FIELD = ',"conflated":';

/** One key's newest payload not sent yet, and how many older ones of it it replaced. */
interface Slot {
  payload: string;
  offset: string;
  replaced: number;
}

/** A conflating subscriber's queue: per partition, per key, in offset order. Written only here. */
export interface ConflationState<C> {
  /** The hub's conflation, which writes it (so the flush and a catch-up's release both can hand frames in). */
  readonly conflator: Conflator<C>;
  readonly partitions: Map<number, Map<string, Slot>>;
  /** Distinct keys waiting (slots). */
  size: number;
  /** Closed for more than the bound: nothing more is queued. */
  closed: boolean;
  /** A rate cap's time between frames (ms); 0 without one. */
  readonly intervalMs: number;
  /** performance.now() before which a rate-capped queue sends nothing more. */
  nextAtMs: number;
}

/** What conflation needs of a subscriber (groups.ts's Subscriber is one). */
export interface Conflating<C> {
  readonly conn: C;
  readonly head: string;
  readonly group: { readonly members: OneOrSet<object> | undefined };
  /** Set when the subscription asked for conflation. */
  readonly conflation: ConflationState<C> | undefined;
}

/** The hub's conflation: the queues waiting for room and the one timer that looks for it. */
export interface Conflator<C> {
  readonly writer: ConnectionWriter<C>;
  readonly stats: HubStats;
  readonly metrics: GatewayMetrics | undefined;
  readonly epoch: Epoch;
  /** GATEWAY_CONFLATE_MAX_KEYS: distinct keys a subscriber may have waiting before it is closed as slow. */
  readonly maxKeys: number;
  readonly waiting: Set<Conflating<C>>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export type ConflatorDeps<C> = Pick<Conflator<C>, 'writer' | 'stats' | 'metrics' | 'epoch' | 'maxKeys'>;

export function createConflator<C>(deps: ConflatorDeps<C>): Conflator<C> {
  return { ...deps, waiting: new Set(), timer: undefined };
}

/** A new subscriber's (empty) queue; with `maxRate` (frames per second), a rate-capped one. */
export function createConflationState<C>(conflator: Conflator<C>, maxRate?: number): ConflationState<C> {
  return { conflator, partitions: new Map(), size: 0, closed: false, intervalMs: maxRate === undefined ? 0 : 1_000 / maxRate, nextAtMs: 0 };
}

/**
 * Validates `extensions.maxRate` of a subscribe payload (external input): frames per second, a
 * positive number (a fraction is a frame every few seconds). Returns undefined when absent, an error
 * message naming the field when malformed. The server's ceiling applies after (hub.ts).
 */
export function parseMaxRateRequest(extensions: unknown): number | undefined | string {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const maxRate = (extensions as Record<string, unknown>)['maxRate'];
  if (maxRate === undefined || maxRate === null) return undefined;
  if (typeof maxRate === 'number' && Number.isFinite(maxRate) && maxRate >= MIN_RATE) return maxRate;
  return `extensions.maxRate must be a number of frames per second of at least ${MIN_RATE}, got ${JSON.stringify(maxRate)?.slice(0, 40) ?? typeof maxRate}`;
}

/**
 * Validates `extensions.conflate` of a subscribe payload (external input): `true` asks for
 * latest-value conflation. Returns undefined when absent (the topic's default applies), a boolean,
 * or an error message naming the field.
 */
export function parseConflateRequest(extensions: unknown): boolean | undefined | string {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const conflate = (extensions as Record<string, unknown>)['conflate'];
  if (conflate === undefined || conflate === null) return undefined;
  if (typeof conflate === 'boolean') return conflate;
  return `extensions.conflate must be true (the latest value of each key when the connection lags) or false, got ${JSON.stringify(conflate)?.slice(0, 40) ?? typeof conflate}`;
}

/** One group write's frames for a subscriber, as the flush hands them over (parallel arrays). */
export interface ConflateFrames {
  readonly payloads: readonly string[];
  readonly keys: readonly (string | null)[];
  readonly positions: FramePositions;
  /** Characters of the payloads. */
  readonly chars: number;
}

/**
 * A conflating subscriber's frames of one flush: written as they are while nothing waits and the
 * connection has room for them; else queued (newest per key) and written as room comes.
 */
export function conflateFrames<C>(subscriber: Conflating<C>, frames: ConflateFrames): void {
  const state = subscriber.conflation as ConflationState<C>;
  const { conflator } = state;
  if (state.closed) return;
  const { writer } = conflator;
  // With room (at most the transport's high-water mark waiting) a write of up to two replay chunks
  // stays under the slow-consumer limit (four high-water marks; a chunk is at most one).
  if (state.size === 0 && state.intervalMs === 0 && frames.chars <= 2 * writer.replayChunkBytes && writer.hasRoom(subscriber.conn)) {
    writer.sendFrames(subscriber.conn, subscriber.head, frames.payloads, frames.positions);
    return;
  }
  const { payloads, keys, positions } = frames;
  let replaced = 0;
  // Deliberately imperative: per event for a lagging conflating subscriber.
  for (let i = 0; i < payloads.length; i++) {
    replaced += enqueue(state, positions.partitions[i] as number, keys[i] ?? null, positions.offsets[i] as string, payloads[i] as string);
  }
  if (replaced > 0 && state.intervalMs > 0) {
    conflator.stats.rateCapped += replaced;
    conflator.metrics?.rateCappedEvents.inc(replaced);
  } else if (replaced > 0) {
    conflator.stats.conflated += replaced;
    conflator.metrics?.conflatedEvents.inc(replaced);
  }
  if (state.size > conflator.maxKeys) return closeSlow(conflator, subscriber, state);
  drain(conflator, subscriber);
}

/** Puts one payload in its key's slot (moved to the back of its partition); 1 when it replaced one. */
function enqueue<C>(state: ConflationState<C>, partition: number, key: string | null, offset: string, payload: string): number {
  let slots = state.partitions.get(partition);
  if (!slots) state.partitions.set(partition, (slots = new Map<string, Slot>()));
  // An event without a key supersedes nothing: its own slot.
  const name = key ?? `\u0000${offset}`;
  const slot = slots.get(name);
  if (slot === undefined) {
    slots.set(name, { payload, offset, replaced: 0 });
    state.size++;
    return 0;
  }
  slots.delete(name);
  slot.payload = payload;
  slot.offset = offset;
  slot.replaced++;
  slots.set(name, slot);
  return 1;
}

/** Past the bound: the slow-consumer policy of everyone (close, resume from the last position). */
function closeSlow<C>(conflator: Conflator<C>, subscriber: Conflating<C>, state: ConflationState<C>): void {
  state.closed = true;
  forget(conflator, subscriber, state);
  conflator.metrics?.slowConsumers.inc();
  conflator.writer.close(subscriber.conn, 1013, `slow consumer: more than ${conflator.maxKeys} keys waiting (GATEWAY_CONFLATE_MAX_KEYS): reconnect and resume`);
}

function forget<C>(conflator: Conflator<C>, subscriber: Conflating<C>, state: ConflationState<C>): void {
  state.partitions.clear();
  state.size = 0;
  conflator.waiting.delete(subscriber);
}

/**
 * Writes the queue, a chunk of about the writer's replay chunk at a time, while the connection has
 * room; what is left waits for the timer. Partition by partition, in offset order within each.
 */
function drain<C>(conflator: Conflator<C>, subscriber: Conflating<C>): void {
  const state = subscriber.conflation as ConflationState<C>;
  const { writer } = conflator;
  let allowed = allowance(state);
  while (state.size > 0 && allowed > 0 && writer.hasRoom(subscriber.conn)) {
    const payloads: string[] = [];
    const partitions: number[] = [];
    const offsets: string[] = [];
    let chars = 0;
    for (const [partition, slots] of state.partitions) {
      for (const [name, slot] of slots) {
        payloads.push(slot.replaced === 0 ? slot.payload : withConflated(slot.payload, slot.replaced));
        partitions.push(partition);
        offsets.push(slot.offset);
        chars += slot.payload.length + subscriber.head.length;
        slots.delete(name);
        state.size--;
        if (chars >= writer.replayChunkBytes || payloads.length >= allowed) break;
      }
      if (chars >= writer.replayChunkBytes || payloads.length >= allowed) break;
    }
    allowed -= payloads.length;
    spend(state, payloads.length);
    writer.sendFrames(subscriber.conn, subscriber.head, payloads, { epoch: currentEpoch(conflator.epoch), partitions, offsets });
  }
  if (state.size === 0) conflator.waiting.delete(subscriber);
  else {
    conflator.waiting.add(subscriber);
    conflator.timer ??= setTimeout(() => poll(conflator), POLL_MS);
  }
}

/** Frames a queue may send now: any number without a rate cap; with one, what is owed since its last frame. */
function allowance<C>(state: ConflationState<C>): number {
  if (state.intervalMs === 0) return Infinity;
  const now = performance.now();
  if (now < state.nextAtMs) return 0;
  // What the poll's own period owed, no more: an idle queue does not save up a burst.
  const base = Math.max(state.nextAtMs, now - POLL_MS);
  return 1 + Math.floor((now - base) / state.intervalMs);
}

/** A rate-capped queue sent `frames`: its next frame is due that many intervals later. */
function spend<C>(state: ConflationState<C>, frames: number): void {
  if (state.intervalMs === 0) return;
  const now = performance.now();
  state.nextAtMs = Math.max(state.nextAtMs, now - POLL_MS) + frames * state.intervalMs;
}

/** The timer: every waiting queue whose connection has room now is written; stops when none waits. */
function poll<C>(conflator: Conflator<C>): void {
  conflator.timer = undefined;
  for (const subscriber of [...conflator.waiting]) {
    const state = subscriber.conflation as ConflationState<C>;
    if (!hasOne(subscriber.group.members, subscriber)) forget(conflator, subscriber, state);
    else drain(conflator, subscriber);
  }
}

/**
 * The payload with `"conflated":n` as the last member of its extensions: every payload ends with its
 * extensions object and then its own brace (`…"position":{…}}}`), so it goes before the last two.
 */
export function withConflated(payload: string, replaced: number): string {
  return payload.slice(0, -2) + CONFLATED_FIELD + replaced + '}}';
}
