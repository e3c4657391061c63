/**
 * The bounded event loop. Broker messages are not processed where the broker hands them over (one
 * socket read can carry hundreds of envelopes, and each may fan out to a thousand operations):
 * they queue here and are processed in time slices of `sliceMs`, each ending with a yield to the
 * event loop, so probes, new sockets and pings are served between slices however large the burst.
 * Writing what the slices rendered is sliced as well (flush.ts).
 *
 * The queue is bounded in characters (≈ bytes of envelope JSON). Past `maxInboundBytes` the broker
 * is paused (the Redis socket stops being read, TCP pushes back into Redis's output buffer); it is
 * resumed once the queue is below half the bound. If Redis gives up on the paused subscriber (its
 * `client-output-buffer-limit pubsub`), that is an ordinary connection loss: what was published
 * meanwhile comes back by back-fill from history, exactly once by position. Memory therefore stays
 * bounded by this setting whatever the publish rate. Renders that finish later (a custom resolver, a
 * look-up) are bounded the same way: at `GATEWAY_MAX_RENDERS_IN_FLIGHT` no message is taken from the
 * queue (async-renders.ts), so the queue fills and the broker pauses.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from '@wirestream/telemetry';
import type { Broker } from '../../broker/broker.js';
import type { EnvelopeRoute } from '@wirestream/wire';
import { rendersAtBound, type AsyncRenders } from './async-renders.js';
import { continueFanout, fanOutOne, fanoutInProgress, type Fanout } from './fanout.js';
import { continueFlush, flushDue, flushPending, startFlush, type Flusher } from './flush.js';
import type { GatewayMetrics } from '../metrics.js';
import { scheduleSlice, setInSlice, sliceStarted, type Scheduler } from './scheduler.js';
import type { HubStats } from './stats.js';

/** FIFO of broker messages: parallel arrays and a read index (no per-message tuple, no `shift`). */
export interface InboundQueue {
  readonly channels: string[];
  readonly texts: string[];
  /** The routing key a batch part gave with the envelope (decision 0039), if any. */
  readonly routes: (EnvelopeRoute | undefined)[];
  /** Index of the next message to process. */
  head: number;
  /** Characters of the queued texts. */
  chars: number;
}

/** How the hub paces itself; `GATEWAY_SLICE_MS`, `GATEWAY_FLUSH_DELAY_MS`, `GATEWAY_INBOUND_MAX_BYTES`. */
export interface FlowLimits {
  /** Processing budget of one slice before the hub yields to the event loop. */
  readonly sliceMs: number;
  /** Longest a rendered payload waits for its flush while messages are still queued (flush.ts). */
  readonly flushDelayMs: number;
  /** Queued envelope characters above which the broker is paused. */
  readonly maxInboundBytes: number;
}

/** Broker messages not processed yet, and whether the broker is paused or the queue held: this module is their one writer. */
export interface Inbound {
  readonly broker: Broker;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics | undefined;
  readonly stats: HubStats;
  readonly flow: FlowLimits;
  readonly scheduler: Scheduler;
  /** In arrival order. */
  readonly queue: InboundQueue;
  /** While re-reading history after a broker reconnect, the queue is held: live messages wait, then follow in order. */
  held: boolean;
  /** The held queue overflowed and was dropped since the hold began: the back-fill makes one more pass ({@link takeDropped}). */
  dropped: boolean;
  /** The broker is paused because the queue passed `flow.maxInboundBytes`. */
  paused: boolean;
}

export type InboundDeps = Pick<Inbound, 'broker' | 'logger' | 'metrics' | 'stats' | 'flow' | 'scheduler'>;

export function createInbound(deps: InboundDeps): Inbound {
  return { ...deps, queue: { channels: [], texts: [], routes: [], head: 0, chars: 0 }, held: false, dropped: false, paused: false };
}

export function queuedMessages(inbound: Inbound): number {
  return inbound.queue.texts.length - inbound.queue.head;
}

/** What the inbound queue reports in `/stats`. */
export function inboundStats(inbound: Inbound): { readonly messages: number; readonly chars: number; readonly paused: boolean } {
  return { messages: queuedMessages(inbound), chars: inbound.queue.chars, paused: inbound.paused };
}

/**
 * A message from the broker: queued, and a slice scheduled unless a back-fill holds the queue.
 * Past the bound the broker is paused, except while held: a paused connection could not finish its
 * reconnect, so then the queue is dropped instead and the back-fill asked for one more pass (what
 * was dropped is in history, written before its publish).
 */
export function onBrokerMessage(inbound: Inbound, channel: string, text: string, route?: EnvelopeRoute): void {
  const { queue } = inbound;
  queue.channels.push(channel);
  queue.texts.push(text);
  queue.routes.push(route);
  queue.chars += text.length;
  if (queue.chars > inbound.flow.maxInboundBytes) {
    if (inbound.held) {
      discardInbound(inbound);
      inbound.dropped = true;
    } else if (!inbound.paused) pauseBroker(inbound);
  }
  if (!inbound.held) scheduleSlice(inbound.scheduler);
}

/**
 * The broker was lost and history will be back-filled: hold what arrives until the back-fill is
 * done ({@link releaseInbound}). What is queued now is dropped, since the back-fill starts at the
 * delivered marks and re-reads all of it from history (its copies here would only be duplicates),
 * and reading resumes so the connection can come back. (A split fan-out is finished first by the
 * caller, backfill.ts: its position is already marked delivered.)
 */
export function holdInbound(inbound: Inbound): void {
  inbound.held = true;
  discardInbound(inbound);
  if (inbound.paused) resumeBroker(inbound);
}

/** Whether the held queue was dropped since the last ask (then the back-fill makes one more pass). */
export function takeDropped(inbound: Inbound): boolean {
  const { dropped } = inbound;
  inbound.dropped = false;
  return dropped;
}

function discardInbound(inbound: Inbound): void {
  const { queue } = inbound;
  queue.channels.length = 0;
  queue.texts.length = 0;
  queue.routes.length = 0;
  queue.head = 0;
  queue.chars = 0;
}

export function releaseInbound(inbound: Inbound): void {
  inbound.held = false;
  if (queuedMessages(inbound) > 0) scheduleSlice(inbound.scheduler);
}

/** The steps a slice drives, in the event's order. */
export interface Slice<C> {
  readonly inbound: Inbound;
  readonly fanout: Fanout<C>;
  readonly flusher: Flusher<C>;
  /** At its bound of renders in flight, no new message is taken (the queue fills, the broker pauses). */
  readonly asyncRenders: AsyncRenders<C>;
}

/**
 * One slice: finish a flush in progress first (nothing new is processed until what was rendered is
 * written), then the rest of a split fan-out, then queued messages until the budget is spent, then
 * start a flush if one is due (flush.ts) and write within what is left; another slice follows on
 * the next turn while work remains. A message whose fan-out outlasts the budget is split between
 * groups (fanout.ts), never within one, and finishes before the next message starts: each
 * group's payloads stay in event order.
 */
export function runSlice<C>(slice: Slice<C>): void {
  const { inbound, fanout, flusher, asyncRenders } = slice;
  const { scheduler } = inbound;
  sliceStarted(scheduler);
  const deadline = performance.now() + inbound.flow.sliceMs;
  if (!continueFlush(flusher, deadline)) {
    scheduleSlice(scheduler);
    return;
  }
  const { queue } = inbound;
  if (!inbound.held && fanoutDone(fanout, scheduler, deadline)) processUntil(inbound, fanout, asyncRenders, deadline);
  const caughtUp = inbound.held || (!fanoutInProgress(fanout) && queue.head === queue.texts.length);
  if (flushDue(flusher, caughtUp)) {
    startFlush(flusher);
    continueFlush(flusher, deadline);
  }
  // At the render bound, the settle that frees a place schedules the next slice (async-renders.ts).
  if (flushPending(flusher) || (!caughtUp && !rendersAtBound(asyncRenders))) scheduleSlice(scheduler);
}

/** The rest of a split fan-out, within the slice: true when none is left. */
function fanoutDone<C>(fanout: Fanout<C>, scheduler: Scheduler, deadline: number): boolean {
  if (!fanoutInProgress(fanout)) return true;
  setInSlice(scheduler, true);
  try {
    return continueFanout(fanout, deadline);
  } finally {
    setInSlice(scheduler, false);
  }
}

function processUntil<C>(inbound: Inbound, fanout: Fanout<C>, asyncRenders: AsyncRenders<C>, deadline: number): void {
  const { queue, scheduler } = inbound;
  setInSlice(scheduler, true);
  try {
    while (queue.head < queue.texts.length && !rendersAtBound(asyncRenders)) {
      const i = queue.head++;
      const channel = queue.channels[i] as string;
      const text = queue.texts[i] as string;
      const route = queue.routes[i];
      queue.texts[i] = ''; // let the envelope go now, not at the next compaction
      queue.routes[i] = undefined;
      queue.chars -= text.length;
      fanOutOne(fanout, channel, text, deadline, route);
      if (fanoutInProgress(fanout) || performance.now() >= deadline) break;
    }
  } finally {
    setInSlice(scheduler, false);
  }
  compact(queue);
  if (inbound.paused && queue.chars <= inbound.flow.maxInboundBytes / 2) resumeBroker(inbound);
}

/** A time budget for loops outside the queue (back-fill): true once the current slice is spent. */
export function sliceClock(sliceMs: number): { spent(): boolean; restart(): void } {
  let deadline = performance.now() + sliceMs;
  return {
    spent: () => performance.now() >= deadline,
    restart: () => {
      deadline = performance.now() + sliceMs;
    },
  };
}

/** Resolves on the next event-loop turn (after I/O), for loops that process in slices. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function pauseBroker(inbound: Inbound): void {
  inbound.paused = true;
  inbound.stats.pauses++;
  inbound.metrics?.redisPaused.inc();
  inbound.broker.pause();
  inbound.logger.warn(
    { queuedMessages: queuedMessages(inbound), queuedChars: inbound.queue.chars },
    'inbound queue passed GATEWAY_INBOUND_MAX_BYTES: reading from Redis paused until it is half empty',
  );
}

function resumeBroker(inbound: Inbound): void {
  inbound.paused = false;
  inbound.broker.resume();
}

/** Drops processed entries: all at once when the queue is empty, else when they are most of it. */
function compact(queue: InboundQueue): void {
  const { head } = queue;
  if (head === 0) return;
  if (head === queue.texts.length) {
    queue.channels.length = 0;
    queue.texts.length = 0;
    queue.routes.length = 0;
    queue.head = 0;
  } else if (head >= 4_096 && head * 2 >= queue.texts.length) {
    queue.channels.splice(0, head);
    queue.texts.splice(0, head);
    queue.routes.splice(0, head);
    queue.head = 0;
  }
}
