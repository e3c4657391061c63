/**
 * The trip of one event through the hub, one named step per function:
 *
 *   onBrokerMessage (inbound.ts: queued) → runSlice (inbound.ts: a time slice of queued messages)
 *     → processMessage (decode once, drop a re-published position)
 *     → renderPayload per group (render.ts: filter, execute once, serialize once)
 *     → enqueuePayload → (flush.ts, when due) startFlush → continueFlush, in slices too
 *     → computeGroupDeltas once per group write while it has delta subscribers (delta.ts)
 *     → writeSubscriber: ConnectionWriter.sendFrames (or holdForCatchup while it replays)
 */
import { performance } from 'node:perf_hooks';
import { decodeEnvelope, type Envelope } from '@wirestream/schema';
import type { Group, HubState } from './hub-state.js';
import { scheduleSlice } from './inbound.js';
import { acceptPosition, positionExtensions } from './positions.js';
import { renderPayload } from './render.js';

/** Parses the envelope once, drops a position already delivered, renders it for every group on the channel. */
export function processMessage<C>(state: HubState<C>, channel: string, text: string): void {
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
  for (const group of channelState.groups) {
    const result = renderPayload(state.schema, state.stats, group, envelope, extensions);
    if (result === undefined) continue;
    if (typeof result === 'string') enqueuePayload(state, group, result, envelope);
    else {
      result.then(
        (json) => enqueuePayload(state, group, json, envelope),
        (err: unknown) => state.logger.error({ err }, 'subscription execution failed'),
      );
    }
  }
}

/** Queues a group's payload for a flush (flush.ts decides when); outside a slice (a back-fill, an async result) a slice is scheduled. */
function enqueuePayload<C>(state: HubState<C>, group: Group<C>, json: string, envelope: Envelope): void {
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
