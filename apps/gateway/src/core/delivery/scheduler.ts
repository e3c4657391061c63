/**
 * When the hub runs: one slice at a time, each on its own event-loop turn (`setImmediate`). The
 * steps of an event (inbound.ts, fanout.ts, flush.ts) ask for a slice here; the slice itself is
 * inbound.ts's `runSlice`, bound in by the hub once. A leaf: it knows no step.
 */
export interface Scheduler {
  /** A slice is queued for the next turn. */
  scheduled: boolean;
  /** A slice is running: payloads rendered now are flushed at its end, not on a turn of their own. */
  inSlice: boolean;
  /** The slice, bound to its hub once (hub.ts), so scheduling one allocates nothing. */
  run: () => void;
}

export function createScheduler(): Scheduler {
  return { scheduled: false, inSlice: false, run: () => undefined };
}

export function scheduleSlice(scheduler: Scheduler): void {
  if (scheduler.scheduled) return;
  scheduler.scheduled = true;
  setImmediate(scheduler.run);
}

/** Outside a slice (a back-fill, an async result), a payload asks for one; inside, the slice's end flushes it. */
export function scheduleUnlessInSlice(scheduler: Scheduler): void {
  if (!scheduler.inSlice) scheduleSlice(scheduler);
}

/** The queued slice starts: the next ask queues another. */
export function sliceStarted(scheduler: Scheduler): void {
  scheduler.scheduled = false;
}

/** Rendering inside a slice begins (payloads wait for the slice's end) or ends. */
export function setInSlice(scheduler: Scheduler, inSlice: boolean): void {
  scheduler.inSlice = inSlice;
}
