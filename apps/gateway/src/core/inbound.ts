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
 * bounded by this setting whatever the publish rate.
 */
import { performance } from 'node:perf_hooks';
// eslint-disable-next-line import-x/no-cycle -- the one runtime circle the cycle rule found; removed by the hub's split (issue 31)
import { continueFanout, processMessage } from './delivery.js';
import { continueFlush, flushDue, startFlush } from './flush.js';
import type { HubState } from './hub-state.js';

/** FIFO of broker messages: two parallel arrays and a read index (no per-message tuple, no `shift`). */
export interface InboundQueue {
  readonly channels: string[];
  readonly texts: string[];
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

export function createInboundQueue(): InboundQueue {
  return { channels: [], texts: [], head: 0, chars: 0 };
}

export function queuedMessages(queue: InboundQueue): number {
  return queue.texts.length - queue.head;
}

/**
 * A message from the broker: queued, and a slice scheduled unless a back-fill holds the queue.
 * Past the bound the broker is paused, except while held: a paused connection could not finish its
 * reconnect, so then the queue is dropped instead and the back-fill asked for one more pass (what
 * was dropped is in history, written before its publish).
 */
export function onBrokerMessage<C>(state: HubState<C>, channel: string, text: string): void {
  const queue = state.inbound;
  queue.channels.push(channel);
  queue.texts.push(text);
  queue.chars += text.length;
  if (queue.chars > state.flow.maxInboundBytes) {
    if (state.held) {
      discardInbound(state);
      state.backfillAgain = true;
    } else if (!state.paused) pauseBroker(state);
  }
  if (!state.held) scheduleSlice(state);
}

/**
 * The broker was lost and history will be back-filled: hold what arrives until the back-fill is
 * done ({@link releaseInbound}). What is queued now is dropped, since the back-fill starts at the
 * delivered marks and re-reads all of it from history (its copies here would only be duplicates),
 * and reading resumes so the connection can come back.
 */
export function holdInbound<C>(state: HubState<C>): void {
  // A split fan-out finishes first: its position is already marked delivered, so the back-fill would not bring it again.
  continueFanout(state, Infinity);
  state.held = true;
  discardInbound(state);
  if (state.paused) resumeBroker(state);
}

function discardInbound<C>(state: HubState<C>): void {
  const queue = state.inbound;
  queue.channels.length = 0;
  queue.texts.length = 0;
  queue.head = 0;
  queue.chars = 0;
}

export function releaseInbound<C>(state: HubState<C>): void {
  state.held = false;
  if (queuedMessages(state.inbound) > 0) scheduleSlice(state);
}

export function scheduleSlice<C>(state: HubState<C>): void {
  if (state.sliceScheduled) return;
  state.sliceScheduled = true;
  setImmediate(state.runSlice);
}

/**
 * One slice: finish a flush in progress first (nothing new is processed until what was rendered is
 * written), then the rest of a split fan-out, then queued messages until the budget is spent, then
 * start a flush if one is due (flush.ts) and write within what is left; another slice follows on
 * the next turn while work remains. A message whose fan-out outlasts the budget is split between
 * groups (delivery.ts), never within one, and finishes before the next message starts: each
 * group's payloads stay in event order.
 */
export function runSlice<C>(state: HubState<C>): void {
  state.sliceScheduled = false;
  const deadline = performance.now() + state.flow.sliceMs;
  if (!continueFlush(state, deadline)) {
    scheduleSlice(state);
    return;
  }
  const queue = state.inbound;
  if (!state.held && fanoutDone(state, deadline)) processUntil(state, queue, deadline);
  const caughtUp = state.held || (state.fanout === undefined && queue.head === queue.texts.length);
  if (flushDue(state, caughtUp)) {
    startFlush(state);
    continueFlush(state, deadline);
  }
  if (state.flushing !== undefined || state.dirty.length > 0 || !caughtUp) scheduleSlice(state);
}

/** The rest of a split fan-out, within the slice: true when none is left. */
function fanoutDone<C>(state: HubState<C>, deadline: number): boolean {
  if (state.fanout === undefined) return true;
  state.inSlice = true;
  try {
    return continueFanout(state, deadline);
  } finally {
    state.inSlice = false;
  }
}

function processUntil<C>(state: HubState<C>, queue: InboundQueue, deadline: number): void {
  state.inSlice = true;
  try {
    while (queue.head < queue.texts.length) {
      const i = queue.head++;
      const channel = queue.channels[i] as string;
      const text = queue.texts[i] as string;
      queue.texts[i] = ''; // let the envelope go now, not at the next compaction
      queue.chars -= text.length;
      processOne(state, channel, text, deadline);
      if (state.fanout !== undefined || performance.now() >= deadline) break;
    }
  } finally {
    state.inSlice = false;
  }
  compact(queue);
  if (state.paused && queue.chars <= state.flow.maxInboundBytes / 2) resumeBroker(state);
}

/** No single message can stop the hub: a throw is logged and the next message goes on. */
export function processOne<C>(state: HubState<C>, channel: string, text: string, deadline = Infinity): void {
  try {
    processMessage(state, channel, text, deadline);
  } catch (err) {
    state.stats.badEnvelopes++;
    state.logger.error({ err, channel }, 'processing a Redis message failed; it was skipped');
  }
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

function pauseBroker<C>(state: HubState<C>): void {
  state.paused = true;
  state.stats.pauses++;
  state.metrics?.redisPaused.inc();
  state.broker.pause();
  state.logger.warn(
    { queuedMessages: queuedMessages(state.inbound), queuedChars: state.inbound.chars },
    'inbound queue passed GATEWAY_INBOUND_MAX_BYTES: reading from Redis paused until it is half empty',
  );
}

function resumeBroker<C>(state: HubState<C>): void {
  state.paused = false;
  state.broker.resume();
}

/** Drops processed entries: all at once when the queue is empty, else when they are most of it. */
function compact(queue: InboundQueue): void {
  const { head } = queue;
  if (head === 0) return;
  if (head === queue.texts.length) {
    queue.channels.length = 0;
    queue.texts.length = 0;
    queue.head = 0;
  } else if (head >= 4_096 && head * 2 >= queue.texts.length) {
    queue.channels.splice(0, head);
    queue.texts.splice(0, head);
    queue.head = 0;
  }
}
