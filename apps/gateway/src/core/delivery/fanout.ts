/**
 * The trip of one event through the hub, one named step per function, each calling the next:
 *
 *   onBrokerMessage (inbound.ts: queued) → runSlice (inbound.ts: a time slice of queued messages)
 *     → fanOutMessage (here: decode once, drop a re-published position)
 *     → renderGroup → renderPayload per group (render.ts: filter, execute once, serialize once;
 *       renderTraced in trip-tracing.ts when the event is traced); a fan-out that outlasts the
 *       slice goes on in the next one (continueFanout)
 *     → queuePayload (a promise, or a payload behind one, through queueInOrder in async-renders.ts) → (flush.ts, when due) startFlush → continueFlush, in slices too
 *     → computeGroupDeltas once per group write while it has delta subscribers (delta.ts)
 *     → writeSubscriber: ConnectionWriter.sendFrames (or holdForCatchup while it catches up, catchup.ts)
 *
 * This module owns the fan-out in progress (a message split between slices).
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from '@wirestream/telemetry';
import { decodeEnvelope, type Envelope, type EnvelopeRoute } from '@wirestream/wire';
import { scanEnvelope } from '../operations/byte-projector.js';
import { queueInOrder, waitsInOrder, type AsyncRenders } from './async-renders.js';
import { currentEpoch, type Epoch } from './epoch.js';
import { queuePayload, type Flusher } from './flush.js';
import { channelState, groupsForEvent, isOneGroup, mayMatchRoute, type Group, type Registry } from './groups.js';
import type { GatewayMetrics } from '../metrics.js';
import { acceptPosition, acceptPositionAt, positionExtensions, type DeliveredMarks } from './positions.js';
import { renderPayload, type Renderer } from './render.js';
import type { HubStats } from './stats.js';
import { renderTraced, startTrip, tripQueued, tripRendered, type Trip, type Tracing } from './trip-tracing.js';

/** How many groups render between two looks at the clock (a look costs ~30 ns, a render microseconds). */
const GROUPS_PER_CLOCK_CHECK = 16;

/** The rest of one message's fan-out, taken up by the next slice before anything new. */
export interface FanoutInProgress<C> {
  readonly envelope: Envelope;
  readonly extensions: Record<string, unknown>;
  /** The groups still to render, as they were when the message came (a group that joined later is live after it). */
  readonly groups: readonly Group<C>[];
  next: number;
  /** Its spans, when the event is traced. */
  readonly trip: Trip<C> | undefined;
}

/** The fan-out step: what it reads, the steps it calls, and the one split message it owns. */
export interface Fanout<C> {
  readonly logger: Logger;
  readonly metrics: GatewayMetrics | undefined;
  readonly stats: HubStats;
  readonly registry: Registry<C>;
  /** Highest position delivered per topic and partition (positions.ts); only this step records them. */
  readonly delivered: DeliveredMarks;
  readonly epoch: Epoch;
  readonly renderer: Renderer;
  readonly tracing: Tracing<C> | undefined;
  readonly flusher: Flusher<C>;
  /** Payloads of groups with a render in flight, kept in event order (async-renders.ts). */
  readonly asyncRenders: AsyncRenders<C>;
  /** A message whose fan-out did not fit its slice: its remaining groups render first in the next one. */
  inProgress: FanoutInProgress<C> | undefined;
}

export type FanoutDeps<C> = Omit<Fanout<C>, 'delivered' | 'inProgress'>;

export function createFanout<C>(deps: FanoutDeps<C>): Fanout<C> {
  return { ...deps, delivered: new Map(), inProgress: undefined };
}

/**
 * Parses the envelope once, drops a position already delivered, renders it for every group on the
 * channel. A message fanning out to more groups than fit before `deadline` (a thousand distinct
 * operations: tens of milliseconds) is split: the groups left are kept in `fanout.inProgress` and
 * rendered first by the next slice ({@link continueFanout}), so one message cannot hold the loop.
 * Without a deadline (a back-fill, which paces itself per message) it renders every group.
 */
export function fanOutMessage<C>(fanout: Fanout<C>, channel: string, text: string, deadline = Infinity, route?: EnvelopeRoute): void {
  const state = channelState(fanout.registry, channel);
  if (!state) return;
  fanout.stats.eventsIn++;
  fanout.metrics?.eventsIn.inc();
  // Unicast (decision 0039): an event whose routing key no group here pins is dropped before its
  // payload is parsed; its position is still marked, as if it had been rendered for no group.
  if (route !== undefined && !mayMatchRoute(state, route)) {
    if (acceptPositionAt(fanout.delivered, state.topic, route.partition, route.offset)) {
      fanout.stats.unwanted++;
      fanout.metrics?.eventsUnwanted.inc();
    } else fanout.stats.duplicates++;
    return;
  }
  let envelope: Envelope;
  try {
    // While no group here reads payloads as objects, the payload stays text until a group needs it (decision 0043).
    const { bytes } = fanout.renderer;
    envelope = (bytes !== undefined && state.objectReaders === 0 ? scanEnvelope(bytes, text) : undefined) ?? decodeEnvelope(text);
  } catch (err) {
    fanout.stats.badEnvelopes++;
    fanout.logger.warn({ err, channel }, 'dropped a malformed envelope from Redis');
    return;
  }
  if (!acceptPosition(fanout.delivered, envelope)) {
    fanout.stats.duplicates++;
    return;
  }
  // The groups pinned to the event's key and those that pin none: not every group of the channel (decision 0039).
  const groups = groupsForEvent(state, envelope, route);
  const one = isOneGroup(groups);
  const count = one ? 1 : 'size' in groups ? groups.size : groups.length;
  const extensions = positionExtensions(envelope, currentEpoch(fanout.epoch));
  const { tracing } = fanout;
  // Only an event that carries a trace looks further (a property read per event otherwise).
  const trip = envelope.tp === undefined || tracing === undefined ? undefined : startTrip<C>(tracing, envelope, count);
  // Unicast: the key's one group, found as itself (no collection to walk, nothing to split).
  if (one) renderGroup(fanout, groups, envelope, extensions, trip);
  else if (!renderGroups(fanout, groups, count, envelope, extensions, deadline, trip)) return;
  if (trip !== undefined && tracing !== undefined) tripRendered(tracing, trip);
}

/** Renders the groups until `deadline`; false when the rest were left for the next slice (fanout.inProgress). */
function renderGroups<C>(
  fanout: Fanout<C>,
  groups: ReadonlySet<Group<C>> | readonly Group<C>[],
  count: number,
  envelope: Envelope,
  extensions: Record<string, unknown>,
  deadline: number,
  trip: Trip<C> | undefined,
): boolean {
  let rendered = 0;
  for (const group of groups) {
    renderGroup(fanout, group, envelope, extensions, trip);
    rendered++;
    if (rendered % GROUPS_PER_CLOCK_CHECK === 0 && rendered < count && performance.now() >= deadline) {
      fanout.inProgress = { envelope, extensions, groups: [...groups].slice(rendered), next: 0, trip };
      return false;
    }
  }
  return true;
}

/** No single message can stop the hub: a throw is logged and the next message goes on. */
export function fanOutOne<C>(fanout: Fanout<C>, channel: string, text: string, deadline = Infinity, route?: EnvelopeRoute): void {
  try {
    fanOutMessage(fanout, channel, text, deadline, route);
  } catch (err) {
    fanout.stats.badEnvelopes++;
    fanout.logger.error({ err, channel }, 'processing a Redis message failed; it was skipped');
  }
}

/** Whether a split message's fan-out waits for the next slice. */
export function fanoutInProgress<C>(fanout: Fanout<C>): boolean {
  return fanout.inProgress !== undefined;
}

/**
 * Renders the rest of a split message's fan-out until `deadline`; true once it is done (then the
 * slice goes on with the queue). A throw in one group's render is logged, and the rest go on.
 */
export function continueFanout<C>(fanout: Fanout<C>, deadline: number): boolean {
  const split = fanout.inProgress;
  if (split === undefined) return true;
  const { groups, envelope, extensions, trip } = split;
  while (split.next < groups.length) {
    const group = groups[split.next++] as Group<C>;
    try {
      renderGroup(fanout, group, envelope, extensions, trip);
    } catch (err) {
      fanout.logger.error({ err }, 'rendering a payload failed; that group skips this event');
    }
    if (split.next % GROUPS_PER_CLOCK_CHECK === 0 && performance.now() >= deadline) break;
  }
  if (split.next < groups.length) return false;
  fanout.inProgress = undefined;
  if (trip !== undefined && fanout.tracing !== undefined) tripRendered(fanout.tracing, trip);
  return true;
}

function renderGroup<C>(fanout: Fanout<C>, group: Group<C>, envelope: Envelope, extensions: Record<string, unknown>, trip: Trip<C> | undefined): void {
  const { tracing } = fanout;
  const result =
    trip === undefined || tracing === undefined
      ? renderPayload(fanout.renderer, group, envelope, extensions)
      : renderTraced(tracing, trip, group, fanout.renderer, envelope, extensions);
  if (result === undefined) return;
  // A promise (custom resolver, look-up), or a payload behind one of its group's, keeps its place in line.
  if (typeof result === 'string' && !waitsInOrder(fanout.asyncRenders, group)) queueRendered(fanout, group, result, envelope, trip);
  else queueInOrder(fanout.asyncRenders, group, result, envelope, trip);
}

function queueRendered<C>(fanout: Fanout<C>, group: Group<C>, json: string, envelope: Envelope, trip: Trip<C> | undefined): void {
  if (trip !== undefined) tripQueued(trip, group);
  queuePayload(fanout.flusher, group, json, envelope);
}
