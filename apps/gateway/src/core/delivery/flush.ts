/**
 * Writing what slices rendered: the only O(subscribers) step of an event, so it is bounded too.
 *
 * When to flush. Payloads of every group accumulate across slices and are written together: at once
 * when the inbound queue is empty (the gateway is caught up: no added latency); while messages are
 * queued, once the oldest has waited {@link FLUSH_COST_RATIO} times as long as the last flush took
 * (so writing takes at most about a third of a busy gateway's time), at most `flushDelayMs`, or as
 * soon as a group holds `FLUSH_GROUP_BYTES`. A flush costs one corked write (one syscall) per socket
 * whatever it carries: under a burst onto 10,000 sockets that is most of the CPU, and a flush per
 * slice (the first bounded loop) halved the deliveries. The byte bound keeps one flush well inside a
 * socket's backpressure.
 *
 * How. A flush takes the dirty groups and writes them group by group, subscriber by subscriber,
 * checking the slice's clock every {@link CLOCK_EVERY} writes; when the slice is spent it stops and
 * the next slice continues where it stopped, before processing anything new. A group's payloads
 * are taken (and its subscribers listed) when its turn comes, so each subscriber still gets every
 * payload of its group once and in order; one that left meanwhile is skipped.
 */
import { performance } from 'node:perf_hooks';
import type { Envelope } from '@wirestream/wire';
import { holdForCatchup, takeCatchupBase } from './catchup.js';
import type { ConnectionWriter, FramePositions } from '../connection-writer.js';
import { conflateFrames } from './conflation.js';
import { computeGroupDeltas, forgetDeltaBase, framesFromBase, type GroupDeltas } from './delta.js';
import { currentEpoch, type Epoch } from './epoch.js';
import { isSubscribed, subscribersOf, type Group, type PendingPayloads, type Subscriber } from './groups.js';
import type { GatewayMetrics } from '../metrics.js';
import { scheduleUnlessInSlice, type Scheduler } from './scheduler.js';
import type { HubStats } from './stats.js';
import { endTrips, takeTrips, type Trip, type Tracing } from './trip-tracing.js';

/** Pending payload characters of one group that start a flush even while messages are queued. */
export const FLUSH_GROUP_BYTES = 65_536;
/** Writes between two looks at the clock (a look costs more than a corked write of a few frames). */
const CLOCK_EVERY = 64;
/** While messages are queued, payloads wait this many times the last flush's duration before the next. */
export const FLUSH_COST_RATIO = 2;

/** What waits to be written and what is being written: this module is its one writer. */
export interface Flusher<C> {
  readonly writer: ConnectionWriter<C>;
  readonly metrics: GatewayMetrics | undefined;
  readonly stats: HubStats;
  readonly epoch: Epoch;
  readonly scheduler: Scheduler;
  readonly tracing: Tracing<C> | undefined;
  /** Longest a rendered payload waits for its flush while messages are still queued (`GATEWAY_FLUSH_DELAY_MS`). */
  readonly flushDelayMs: number;
  /** Groups with payloads waiting for a flush. */
  dirty: Group<C>[];
  /** When the oldest of them got its first payload (performance.now()). */
  pendingSince: number;
  /** The most pending characters any of them holds. */
  pendingLargest: number;
  /** A flush being written across slices. */
  flushing: Flush<C> | undefined;
  /** How long the last flush took (ms, start to last write): paces the next one under load. */
  lastFlushMs: number;
}

export type FlusherDeps<C> = Pick<Flusher<C>, 'writer' | 'metrics' | 'stats' | 'epoch' | 'scheduler' | 'tracing' | 'flushDelayMs'>;

export function createFlusher<C>(deps: FlusherDeps<C>): Flusher<C> {
  return { ...deps, dirty: [], pendingSince: 0, pendingLargest: 0, flushing: undefined, lastFlushMs: 0 };
}

/** Queues a group's payload for a flush (this module decides when); outside a slice (a back-fill, an async result) a slice is scheduled. */
export function queuePayload<C>(flusher: Flusher<C>, group: Group<C>, json: string, envelope: Envelope): void {
  let pending = group.pending;
  if (pending === undefined) {
    if (flusher.dirty.length === 0) flusher.pendingSince = performance.now();
    flusher.dirty.push(group);
    // Arrays of one, not the sixteen slots a first push reserves: one payload per flush is unicast's
    // common case (a group gets an event now and then), and these die with the flush.
    pending = group.pending = { payloads: [json], timestamps: [envelope.ts], partitions: [envelope.partition], offsets: [envelope.offset], keys: [envelope.key], chars: json.length };
  } else {
    pending.payloads.push(json);
    pending.timestamps.push(envelope.ts);
    pending.partitions.push(envelope.partition);
    pending.offsets.push(envelope.offset);
    pending.keys.push(envelope.key);
    pending.chars += json.length;
  }
  if (pending.chars > flusher.pendingLargest) flusher.pendingLargest = pending.chars;
  scheduleUnlessInSlice(flusher.scheduler);
}

/** What a group that somehow became dirty without payloads writes: nothing. */
const NONE_PENDING: PendingPayloads = Object.freeze({ payloads: [], timestamps: [], partitions: [], offsets: [], keys: [], chars: 0 });

/** Whether a flush is being written or payloads wait for one. */
export function flushPending<C>(flusher: Flusher<C>): boolean {
  return flusher.flushing !== undefined || flusher.dirty.length > 0;
}

/** One group being written: its payloads of this flush and the subscribers they go to. */
export interface GroupWrite<C> {
  readonly group: Group<C>;
  readonly payloads: readonly string[];
  readonly timestamps: readonly number[];
  readonly partitions: readonly number[];
  readonly offsets: readonly string[];
  /** Routing keys and characters of the payloads, for conflating subscribers. */
  readonly keys: readonly (string | null)[];
  readonly chars: number;
  /** The same positions (and the epoch) as handed to the writer: one object per group write. */
  readonly positions: FramePositions;
  readonly subscribers: readonly Subscriber<C>[];
  /** Index of the next subscriber to write. */
  next: number;
  /** The payloads as deltas, computed once for the group (only while it has delta subscribers). */
  readonly deltas: GroupDeltas | undefined;
  /** Delta subscribers written from their base, and those sent the full payloads first. */
  withBase: number;
  fromFull: number;
  /**
   * Delta subscribers out of a catch-up sent a first delta of their own (delta.ts `framesFromBase`):
   * how many, their delta frames and their payload bytes (rare: counted as they are written).
   */
  ownBase: number;
  ownBaseDeltas: number;
  ownBaseBytes: number;
}

/** A flush in progress: the groups it took, the one being written. */
export interface Flush<C> {
  readonly groups: readonly Group<C>[];
  /** Index of the next group to start. */
  nextGroup: number;
  current: GroupWrite<C> | undefined;
  /** performance.now() at its start: nothing else runs until it is written, so its span is its cost. */
  readonly startedAt: number;
  /** Traced events whose payloads it writes (trip-tracing.ts); undefined when none is. */
  readonly trips: Trip<C>[] | undefined;
}

/** Whether what is pending should be written now (see the module comment). */
export function flushDue<C>(flusher: Flusher<C>, queueEmpty: boolean): boolean {
  if (flusher.dirty.length === 0) return false;
  if (queueEmpty || flusher.pendingLargest >= FLUSH_GROUP_BYTES) return true;
  const wait = Math.min(flusher.flushDelayMs, flusher.lastFlushMs * FLUSH_COST_RATIO);
  return performance.now() - flusher.pendingSince >= wait;
}

/** Takes every dirty group into a new flush (there is none in progress). */
export function startFlush<C>(flusher: Flusher<C>): void {
  const trips = takeTrips(flusher.tracing);
  flusher.flushing = { groups: flusher.dirty, nextGroup: 0, current: undefined, startedAt: performance.now(), trips };
  flusher.dirty = [];
  flusher.pendingLargest = 0;
}

/** Writes until the flush is done (true) or the slice's deadline passed (false: continue next slice). */
export function continueFlush<C>(flusher: Flusher<C>, deadline: number): boolean {
  const flush = flusher.flushing;
  if (!flush) return true;
  let writes = 0;
  for (;;) {
    let job = flush.current;
    if (!job) {
      const group = flush.groups[flush.nextGroup++];
      if (!group) break;
      job = flush.current = takeGroup(group, currentEpoch(flusher.epoch));
    }
    // Deliberately imperative: this loop runs per subscriber per flush.
    const { subscribers } = job;
    while (job.next < subscribers.length) {
      const subscriber = subscribers[job.next++] as Subscriber<C>;
      if (isSubscribed(subscriber)) writeSubscriber(flusher.writer, job, subscriber);
      if (++writes % CLOCK_EVERY === 0 && performance.now() >= deadline) return false;
    }
    countDeliveries(flusher, job);
    flush.current = undefined;
  }
  flusher.flushing = undefined;
  flusher.lastFlushMs = performance.now() - flush.startedAt;
  if (flush.trips !== undefined && flusher.tracing !== undefined) endTrips(flusher.tracing.tracer, flush.trips, flush.startedAt);
  return true;
}

/** A group's turn: its pending payloads leave it (new ones start a later flush) with today's subscribers. */
function takeGroup<C>(group: Group<C>, epoch: string | undefined): GroupWrite<C> {
  // A dirty group has pending payloads (queuePayload made them when it became dirty).
  const { payloads, timestamps, partitions, offsets, keys, chars } = group.pending ?? NONE_PENDING;
  group.pending = undefined;
  // Once per write of the group, not per socket; and only while some subscriber wants deltas.
  const deltas = group.deltaSubscribers > 0 ? computeGroupDeltas(group, payloads) : undefined;
  if (deltas === undefined) forgetDeltaBase(group);
  const job: GroupWrite<C> = {
    group,
    payloads,
    timestamps,
    partitions,
    offsets,
    keys,
    chars,
    positions: { epoch, partitions, offsets },
    subscribers: subscribersOf(group),
    next: 0,
    deltas,
    withBase: 0,
    fromFull: 0,
    ownBase: 0,
    ownBaseDeltas: 0,
    ownBaseBytes: 0,
  };
  return job;
}

/**
 * One subscriber's frames of this flush: held back while it replays history; as deltas when it asked
 * for them and has the group's previous payload, or the last payload of its catch-up (else the full
 * payloads, which become its base).
 */
function writeSubscriber<C>(writer: ConnectionWriter<C>, job: GroupWrite<C>, subscriber: Subscriber<C>): void {
  const { deltas } = job;
  if (subscriber.catchup !== undefined) {
    // Replayed and held payloads are full; once the replay is done, a flush that passes the hold
    // whole is sent as deltas from the last of them (a closure per catching-up delta subscriber).
    subscriber.hasBase = false;
    const deltasFrom = deltas !== undefined && subscriber.delta ? (base: string) => framesAfterCatchup(job, deltas, base) : undefined;
    holdForCatchup(writer, subscriber, subscriber.catchup, job.payloads, job.positions, job.keys, deltasFrom);
  } else if (subscriber.conflation !== undefined) {
    // Conflated frames are full payloads (a delta's base would be a payload it may never get).
    subscriber.hasBase = false;
    conflateFrames(subscriber, job);
  } else if (deltas === undefined || !subscriber.delta) {
    writer.sendFrames(subscriber.conn, subscriber.head, job.payloads, job.positions);
  } else if (subscriber.hasBase && deltas.withBase !== undefined) {
    writer.sendFrames(subscriber.conn, subscriber.head, deltas.withBase, job.positions);
    job.withBase++;
  } else {
    // New, or out of a catch-up: from the base the catch-up left it when there is one.
    const base = takeCatchupBase(subscriber);
    const frames = base === undefined ? undefined : framesAfterCatchup(job, deltas, base);
    if (frames === undefined) job.fromFull++;
    writer.sendFrames(subscriber.conn, subscriber.head, frames ?? deltas.fromFull, job.positions);
    subscriber.hasBase = true;
  }
}

/** A flush's frames for a delta subscriber whose last payload is `base` (delta.ts), counted in the job; undefined: send them in full. */
function framesAfterCatchup<C>(job: GroupWrite<C>, deltas: GroupDeltas, base: string): readonly string[] | undefined {
  const frames = framesFromBase(deltas, base, job.payloads);
  if (frames === undefined) return undefined;
  if (frames === deltas.withBase) job.withBase++;
  else {
    job.ownBase++;
    job.ownBaseDeltas += 1 + deltas.deltasFromFull;
    job.ownBaseBytes += sentBytes(frames);
  }
  return frames;
}

/**
 * Stats and metrics of one group write: per group and payload, never per subscriber (cost O(groups));
 * delta subscribers were counted by the write loop, a few integers.
 */
function countDeliveries<C>(flusher: Flusher<C>, job: GroupWrite<C>): void {
  const { group, payloads, timestamps, deltas, withBase, fromFull, ownBase } = job;
  const receivers = job.subscribers.length;
  const frames = receivers * payloads.length;
  const deltaFrames = deltas === undefined ? 0 : withBase * deltas.deltasWithBase + fromFull * deltas.deltasFromFull + job.ownBaseDeltas;
  flusher.stats.framesOut += frames;
  flusher.stats.deltaFramesOut += deltaFrames;
  const { metrics } = flusher;
  if (!metrics) return;
  const now = Date.now();
  const fullReceivers = receivers - withBase - fromFull - ownBase;
  let bytes = group.headBytes * payloads.length;
  for (let i = 0; i < payloads.length; i++) {
    bytes += (Buffer.byteLength(payloads[i] as string) + 1) * fullReceivers;
    metrics.eventToWireSeconds.observe(Math.max(0, now - (timestamps[i] as number)) / 1_000);
  }
  if (deltas !== undefined) bytes += sentBytes(deltas.withBase) * withBase + sentBytes(deltas.fromFull) * fromFull + job.ownBaseBytes;
  metrics.framesOut.inc(frames);
  metrics.bytesOut.inc(bytes);
  if (deltaFrames > 0) metrics.deltaFramesOut.inc(deltaFrames);
}

/** Payload bytes of one write's frames (plus each frame's closing brace). */
function sentBytes(payloads: readonly string[] | undefined): number {
  if (payloads === undefined) return 0;
  let bytes = 0;
  for (const p of payloads) bytes += Buffer.byteLength(p) + 1;
  return bytes;
}
