/**
 * Renders that finish later (a custom resolver, a look-up) delivered in event order, and bounded.
 *
 * Order. A group whose render of an event returns a promise gets a FIFO of slots here, one per
 * event in arrival order (the broker hands each partition over in offset order); every later payload
 * of that group, even a synchronous one, takes a slot behind it, and slots leave the FIFO for the
 * flush (flush.ts `queuePayload`) only from its head, once settled. So a group's events reach its
 * subscribers in the order they came whatever each render takes; when the FIFO empties, the group
 * is back on the synchronous path. A group with no promise in flight costs one `Map.size` read.
 *
 * Bound. Renders in flight are counted per hub; at `maxInFlight` the slice stops taking messages
 * from the inbound queue ({@link rendersAtBound}, inbound.ts), which then fills and pauses the
 * broker past `GATEWAY_INBOUND_MAX_BYTES`: the gateway stops reading Redis instead of growing
 * memory (lossless, the bounded loop of decision 0013). One message's fan-out is never cut at the
 * bound, so the count may pass it by at most that message's groups. A settle that brings the count
 * back under the bound schedules a slice. The back-fill, which reads history rather than the inbound
 * queue, waits for the same bound ({@link untilBelowBound}).
 *
 * A rejected render (not a GraphQL error: those are in the payload, with the event's position) is
 * logged and that group skips the event, as a synchronous throw does.
 */
import type { Logger } from '@wirestream/telemetry';
import type { Envelope } from '@wirestream/wire';
import { queuePayload, type Flusher } from './flush.js';
import { subscriberCount, type Group } from './groups.js';
import { scheduleUnlessInSlice, type Scheduler } from './scheduler.js';
import type { HubStats } from './stats.js';
import { tripQueued, type Trip } from './trip-tracing.js';

/** One event's payload for one group, waiting for its turn. */
interface Slot<C> {
  readonly envelope: Envelope;
  readonly trip: Trip<C> | undefined;
  /** The payload once settled; undefined while in flight, or when the render failed. */
  json: string | undefined;
  settled: boolean;
}

/** Payload FIFOs of groups with a render in flight, and the count in flight: this module is their one writer. */
export interface AsyncRenders<C> {
  readonly flusher: Flusher<C>;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly stats: HubStats;
  /** Renders in flight above which no new message is taken (`GATEWAY_MAX_RENDERS_IN_FLIGHT`). */
  readonly maxInFlight: number;
  readonly queues: Map<Group<C>, Slot<C>[]>;
  inFlight: number;
  /** Who waits for the count to drop under the bound (the back-fill, backfill.ts): woken by the settle that does it. */
  readonly belowBound: (() => void)[];
}

export type AsyncRendersDeps<C> = Pick<AsyncRenders<C>, 'flusher' | 'scheduler' | 'logger' | 'stats' | 'maxInFlight'>;

export function createAsyncRenders<C>(deps: AsyncRendersDeps<C>): AsyncRenders<C> {
  return { ...deps, queues: new Map(), inFlight: 0, belowBound: [] };
}

/** Whether a synchronous payload of this group must wait behind a render in flight. */
export function waitsInOrder<C>(renders: AsyncRenders<C>, group: Group<C>): boolean {
  return renders.queues.size !== 0 && renders.queues.has(group);
}

/** Whether the renders in flight reached the bound: take no new message until one settles. */
export function rendersAtBound<C>(renders: AsyncRenders<C>): boolean {
  return renders.inFlight >= renders.maxInFlight;
}

/**
 * Resolves once the renders in flight are under the bound (at once when they are): a reader that
 * is not the inbound queue (the back-fill's history pages) waits here instead of growing them.
 */
export function untilBelowBound<C>(renders: AsyncRenders<C>): Promise<void> {
  if (!rendersAtBound(renders)) return Promise.resolve();
  return new Promise((resolve) => renders.belowBound.push(resolve));
}

/** Renders in flight and groups waiting on one, for `/stats`. */
export function asyncRenderStats<C>(renders: AsyncRenders<C>): { readonly inFlight: number; readonly groups: number } {
  return { inFlight: renders.inFlight, groups: renders.queues.size };
}

/** Takes a slot at the back of the group's FIFO for this event's payload (a promise, or a string behind one). */
export function queueInOrder<C>(renders: AsyncRenders<C>, group: Group<C>, result: string | Promise<string>, envelope: Envelope, trip: Trip<C> | undefined): void {
  let queue = renders.queues.get(group);
  if (queue === undefined) renders.queues.set(group, (queue = []));
  if (typeof result === 'string') {
    queue.push({ envelope, trip, json: result, settled: true });
    return;
  }
  const slot: Slot<C> = { envelope, trip, json: undefined, settled: false };
  queue.push(slot);
  renders.inFlight++;
  renders.stats.asyncRenders++;
  if (renders.inFlight > renders.stats.peakRendersInFlight) renders.stats.peakRendersInFlight = renders.inFlight;
  result.then(
    (json) => settle(renders, group, slot, json),
    (err: unknown) => {
      renders.logger.error({ err }, 'subscription execution failed; that group skips this event');
      settle(renders, group, slot, undefined);
    },
  );
}

function settle<C>(renders: AsyncRenders<C>, group: Group<C>, slot: Slot<C>, json: string | undefined): void {
  const wasAtBound = rendersAtBound(renders);
  renders.inFlight--;
  slot.json = json;
  slot.settled = true;
  releaseSettled(renders, group);
  if (wasAtBound && !rendersAtBound(renders)) {
    scheduleUnlessInSlice(renders.scheduler);
    for (const wake of renders.belowBound.splice(0)) wake();
  }
}

/** Hands the settled head of the group's FIFO to the flush, in order; the FIFO goes when empty. */
function releaseSettled<C>(renders: AsyncRenders<C>, group: Group<C>): void {
  const queue = renders.queues.get(group);
  if (queue === undefined) return;
  let taken = 0;
  for (; taken < queue.length; taken++) {
    const slot = queue[taken] as Slot<C>;
    if (!slot.settled) break;
    // A group whose last subscriber left meanwhile has nobody to write to.
    if (slot.json === undefined || subscriberCount(group) === 0) continue;
    if (slot.trip !== undefined) tripQueued(slot.trip, group);
    queuePayload(renders.flusher, group, slot.json, slot.envelope);
  }
  if (taken === queue.length) renders.queues.delete(group);
  else if (taken > 0) queue.splice(0, taken);
}
