/**
 * The trip of one event through the hub, one named step per function:
 *
 *   onBrokerMessage (inbound.ts: queued) → runSlice (inbound.ts: a time slice of queued messages)
 *     → processMessage (decode once, drop a re-published position)
 *     → renderGroup → renderPayload per group (render.ts: filter, execute once, serialize once);
 *       a fan-out that outlasts the slice goes on in the next one (continueFanout)
 *     → enqueuePayload → (flush.ts, when due) startFlush → continueFlush, in slices too
 *     → computeGroupDeltas once per group write while it has delta subscribers (delta.ts)
 *     → writeSubscriber: ConnectionWriter.sendFrames (or holdForCatchup while it replays)
 */
import { performance } from 'node:perf_hooks';
import { decodeEnvelope, type Envelope } from '@wirestream/schema';
import type { Group, HubState } from './hub-state.js';
// eslint-disable-next-line import-x/no-cycle -- the one runtime circle the cycle rule found; removed by the hub's split (issue 31)
import { scheduleSlice } from './inbound.js';
import { acceptPosition, positionExtensions } from './positions.js';
import { renderPayload } from './render.js';
import { startTrip, traceGroupRender, tripRendered, type Trip } from './trip-tracing.js';

/** How many groups render between two looks at the clock (a look costs ~30 ns, a render microseconds). */
const GROUPS_PER_CLOCK_CHECK = 16;

/**
 * Parses the envelope once, drops a position already delivered, renders it for every group on the
 * channel. A message fanning out to more groups than fit before `deadline` (a thousand distinct
 * operations: tens of milliseconds) is split: the groups left are kept in `state.fanout` and
 * rendered first by the next slice ({@link continueFanout}), so one message cannot hold the loop.
 * Without a deadline (a back-fill, which paces itself per message) it renders every group.
 */
export function processMessage<C>(state: HubState<C>, channel: string, text: string, deadline = Infinity): void {
  const channelState = state.channels.get(channel);
  if (!channelState) return;
  state.stats.eventsIn++;
  state.metrics?.eventsIn.inc();
  let envelope: Envelope;
  try {
    envelope = decodeEnvelope(text);
  } catch (err) {
    state.stats.badEnvelopes++;
    state.logger.warn({ err, channel }, 'dropped a malformed envelope from Redis');
    return;
  }
  if (!acceptPosition(state.delivered, envelope)) {
    state.stats.duplicates++;
    return;
  }
  const extensions = positionExtensions(envelope, state.epoch);
  const { groups } = channelState;
  // Only an event that carries a trace looks further (a property read per event otherwise).
  const trip = envelope.tp === undefined || state.tracer === undefined ? undefined : startTrip<C>(state.tracer, envelope, groups.size);
  let rendered = 0;
  for (const group of groups) {
    renderGroup(state, group, envelope, extensions, trip);
    rendered++;
    if (rendered % GROUPS_PER_CLOCK_CHECK === 0 && rendered < groups.size && performance.now() >= deadline) {
      state.fanout = { envelope, extensions, groups: [...groups].slice(rendered), next: 0, trip };
      return;
    }
  }
  if (trip !== undefined) tripRendered(state, trip);
}

/**
 * Renders the rest of a split message's fan-out until `deadline`; true once it is done (then the
 * slice goes on with the queue). A throw in one group's render is logged, and the rest go on.
 */
export function continueFanout<C>(state: HubState<C>, deadline: number): boolean {
  const fanout = state.fanout;
  if (fanout === undefined) return true;
  const { groups, envelope, extensions, trip } = fanout;
  while (fanout.next < groups.length) {
    const group = groups[fanout.next++] as Group<C>;
    try {
      renderGroup(state, group, envelope, extensions, trip);
    } catch (err) {
      state.logger.error({ err }, 'rendering a payload failed; that group skips this event');
    }
    if (fanout.next % GROUPS_PER_CLOCK_CHECK === 0 && performance.now() >= deadline) break;
  }
  if (fanout.next < groups.length) return false;
  state.fanout = undefined;
  if (trip !== undefined) tripRendered(state, trip);
  return true;
}

function renderGroup<C>(state: HubState<C>, group: Group<C>, envelope: Envelope, extensions: Record<string, unknown>, trip: Trip<C> | undefined): void {
  if (trip !== undefined && state.tracer !== undefined) traceGroupRender(state.tracer, trip, group, renderUntraced<C>, state, group, envelope, extensions, trip);
  else renderUntraced(state, group, envelope, extensions, undefined);
}

function renderUntraced<C>(state: HubState<C>, group: Group<C>, envelope: Envelope, extensions: Record<string, unknown>, trip: Trip<C> | undefined): void {
  const result = renderPayload(state.schema, state.stats, group, envelope, extensions);
  if (result === undefined) return;
  if (typeof result === 'string') enqueuePayload(state, group, result, envelope, trip);
  else {
    result.then(
      (json) => enqueuePayload(state, group, json, envelope, trip),
      (err: unknown) => state.logger.error({ err }, 'subscription execution failed'),
    );
  }
}

/** Queues a group's payload for a flush (flush.ts decides when); outside a slice (a back-fill, an async result) a slice is scheduled. */
function enqueuePayload<C>(state: HubState<C>, group: Group<C>, json: string, envelope: Envelope, trip: Trip<C> | undefined): void {
  trip?.groups.push(group);
  if (group.pending.length === 0) {
    if (state.dirty.length === 0) state.pendingSince = performance.now();
    state.dirty.push(group);
  }
  group.pending.push(json);
  group.pendingTs.push(envelope.ts);
  group.pendingPartition.push(envelope.partition);
  group.pendingOffset.push(envelope.offset);
  group.pendingChars += json.length;
  if (group.pendingChars > state.pendingLargest) state.pendingLargest = group.pendingChars;
  if (!state.inSlice) scheduleSlice(state);
}
