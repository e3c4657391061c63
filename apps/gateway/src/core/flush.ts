/**
 * Writing what slices rendered: the only O(subscribers) step of an event, so it is bounded too.
 *
 * When to flush. Payloads of every group accumulate across slices and are written together: at once
 * when the inbound queue is empty (the gateway is caught up: no added latency), else when the
 * oldest one has waited `flushDelayMs` or a group holds `FLUSH_GROUP_BYTES`. Under a burst that is
 * what keeps one corked write (one syscall) per socket carrying many events instead of one, which is
 * most of a busy gateway's CPU; the byte bound keeps one flush well inside a socket's backpressure.
 *
 * How. A flush takes the dirty groups and writes them group by group, subscriber by subscriber,
 * checking the slice's clock every {@link CLOCK_EVERY} writes; when the slice is spent it stops and
 * the next slice continues where it stopped, before processing anything new. A group's payloads
 * are taken (and its subscribers listed) when its turn comes, so each subscriber still gets every
 * payload of its group once and in order; one that left meanwhile is skipped.
 */
import { performance } from 'node:perf_hooks';
import type { Group, HubState, Subscriber } from './hub-state.js';
import { holdForCatchup } from './recovery.js';

/** Pending payload characters of one group that start a flush even while messages are queued. */
export const FLUSH_GROUP_BYTES = 65_536;
/** Writes between two looks at the clock (a look costs more than a corked write of a few frames). */
const CLOCK_EVERY = 64;

/** One group being written: its payloads of this flush and the subscribers they go to. */
export interface GroupWrite<C> {
  readonly group: Group<C>;
  readonly payloads: readonly string[];
  readonly timestamps: readonly number[];
  readonly partitions: readonly number[];
  readonly offsets: readonly string[];
  readonly subscribers: readonly Subscriber<C>[];
  /** Index of the next subscriber to write. */
  next: number;
}

/** A flush in progress: the groups it took, the one being written. */
export interface Flush<C> {
  readonly groups: readonly Group<C>[];
  /** Index of the next group to start. */
  nextGroup: number;
  current: GroupWrite<C> | undefined;
}

/** Whether what is pending should be written now (see the module comment). */
export function flushDue<C>(state: HubState<C>, queueEmpty: boolean): boolean {
  if (state.dirty.length === 0) return false;
  return queueEmpty || state.pendingLargest >= FLUSH_GROUP_BYTES || performance.now() - state.pendingSince >= state.flow.flushDelayMs;
}

/** Takes every dirty group into a new flush (there is none in progress). */
export function startFlush<C>(state: HubState<C>): void {
  state.flushing = { groups: state.dirty, nextGroup: 0, current: undefined };
  state.dirty = [];
  state.pendingLargest = 0;
}

/** Writes until the flush is done (true) or the slice's deadline passed (false: continue next slice). */
export function continueFlush<C>(state: HubState<C>, deadline: number): boolean {
  const flush = state.flushing;
  if (!flush) return true;
  let writes = 0;
  for (;;) {
    let job = flush.current;
    if (!job) {
      const group = flush.groups[flush.nextGroup++];
      if (!group) break;
      job = flush.current = takeGroup(group);
    }
    // Deliberately imperative: this loop runs per subscriber per flush.
    const { subscribers, group } = job;
    while (job.next < subscribers.length) {
      const subscriber = subscribers[job.next++] as Subscriber<C>;
      if (group.subscribers.has(subscriber)) writeSubscriber(state, job, subscriber);
      if (++writes % CLOCK_EVERY === 0 && performance.now() >= deadline) return false;
    }
    countDeliveries(state, job);
    flush.current = undefined;
  }
  state.flushing = undefined;
  return true;
}

/** A group's turn: its pending payloads leave it (new ones start a later flush) with today's subscribers. */
function takeGroup<C>(group: Group<C>): GroupWrite<C> {
  const job: GroupWrite<C> = {
    group,
    payloads: group.pending,
    timestamps: group.pendingTs,
    partitions: group.pendingPartition,
    offsets: group.pendingOffset,
    subscribers: [...group.subscribers],
    next: 0,
  };
  group.pending = [];
  group.pendingTs = [];
  group.pendingPartition = [];
  group.pendingOffset = [];
  group.pendingChars = 0;
  return job;
}

/** One subscriber's frames of this flush (held back instead while it replays history). */
function writeSubscriber<C>(state: HubState<C>, job: GroupWrite<C>, subscriber: Subscriber<C>): void {
  if (subscriber.catchup === undefined) state.writer.sendFrames(subscriber.conn, subscriber.head, job.payloads);
  else holdForCatchup(state.writer, subscriber, subscriber.catchup, job.payloads, job.partitions, job.offsets);
}

/** Stats and metrics of one group write: per group and payload, never per subscriber (cost O(groups)). */
function countDeliveries<C>(state: HubState<C>, job: GroupWrite<C>): void {
  const { group, payloads, timestamps } = job;
  const receivers = job.subscribers.length;
  const frames = receivers * payloads.length;
  state.stats.framesOut += frames;
  const { metrics } = state;
  if (!metrics) return;
  const now = Date.now();
  let bytes = group.headBytes * payloads.length;
  for (let i = 0; i < payloads.length; i++) {
    bytes += (Buffer.byteLength(payloads[i] as string) + 1) * receivers;
    metrics.eventToWireSeconds.observe(Math.max(0, now - (timestamps[i] as number)) / 1_000);
  }
  metrics.framesOut.inc(frames);
  metrics.bytesOut.inc(bytes);
}
