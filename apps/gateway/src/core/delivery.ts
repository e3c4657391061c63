/**
 * The trip of one event through the hub, one named step per function:
 *
 *   onBrokerMessage (inbound.ts: queued) → runSlice (inbound.ts: a time slice of queued messages)
 *     → processMessage (decode once, drop a re-published position)
 *     → renderPayload per group (render.ts: filter, execute once, serialize once)
 *     → enqueuePayload → flushPending (once per slice) → writeGroup
 *     → computeGroupDeltas once per group flush while it has delta subscribers (delta.ts)
 *     → ConnectionWriter.sendFrames per subscriber (or holdForCatchup while it replays)
 */
import { decodeEnvelope, type Envelope } from '@wirestream/schema';
import { computeGroupDeltas, type GroupDeltas } from './delta.js';
import type { Group, HubState } from './hub-state.js';
import { acceptPosition, positionExtensions } from './positions.js';
import { holdForCatchup } from './recovery.js';
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

/*
 * Frames are written once per slice (inbound.ts), not once per event: a slice processes every
 * message that arrived since the last one (up to its time budget), and writing all of them to a
 * socket in one corked write turns N syscalls per socket into one. Ordering holds: a group's
 * payloads are queued in event order and written in that order.
 */

/** Queues a group's payload for the slice's flush (or, for a late async result, the next turn's). */
function enqueuePayload<C>(state: HubState<C>, group: Group<C>, json: string, envelope: Envelope): void {
  if (group.pending.length === 0) state.dirty.push(group);
  group.pending.push(json);
  group.pendingTs.push(envelope.ts);
  group.pendingPartition.push(envelope.partition);
  group.pendingOffset.push(envelope.offset);
  if (!state.inSlice && !state.flushScheduled) {
    state.flushScheduled = true;
    setImmediate(state.flush);
  }
}

/** Writes what every dirty group queued this turn. */
export function flushPending<C>(state: HubState<C>): void {
  state.flushScheduled = false;
  const groups = state.dirty;
  state.dirty = [];
  for (const group of groups) writeGroup(state, group);
}

/** One group's queued payloads to each of its subscribers: the only O(subscribers) step of an event. */
function writeGroup<C>(state: HubState<C>, group: Group<C>): void {
  const payloads = group.pending;
  const timestamps = group.pendingTs;
  const partitions = group.pendingPartition;
  const offsets = group.pendingOffset;
  group.pending = [];
  group.pendingTs = [];
  group.pendingPartition = [];
  group.pendingOffset = [];
  const { writer } = state;
  // Once per flush for the group, not per socket; and only while some subscriber wants deltas.
  const deltas = group.deltaSubscribers > 0 ? computeGroupDeltas(group, payloads) : undefined;
  if (deltas === undefined) group.deltaBase = undefined;
  let withBase = 0;
  let fromFull = 0;
  // Deliberately imperative: this loop runs per subscriber per flush.
  for (const subscriber of group.subscribers) {
    if (subscriber.catchup !== undefined) {
      // Held and replayed payloads are full; the first live one after the catch-up is full too.
      subscriber.hasBase = false;
      holdForCatchup(writer, subscriber, subscriber.catchup, payloads, partitions, offsets);
    } else if (deltas === undefined || !subscriber.delta) {
      writer.sendFrames(subscriber.conn, subscriber.head, payloads);
    } else if (subscriber.hasBase && deltas.withBase !== undefined) {
      writer.sendFrames(subscriber.conn, subscriber.head, deltas.withBase);
      withBase++;
    } else {
      writer.sendFrames(subscriber.conn, subscriber.head, deltas.fromFull);
      subscriber.hasBase = true;
      fromFull++;
    }
  }
  const deltaFrames = deltas === undefined ? 0 : withBase * deltas.deltasWithBase + fromFull * deltas.deltasFromFull;
  countDeliveries(state, group, payloads, timestamps, deltas, withBase, fromFull, deltaFrames);
}

/**
 * Stats and metrics of one group flush: per group and payload, never per subscriber (cost O(groups));
 * delta subscribers are counted by the write loop, two integers.
 */
function countDeliveries<C>(
  state: HubState<C>,
  group: Group<C>,
  payloads: readonly string[],
  timestamps: readonly number[],
  deltas: GroupDeltas | undefined,
  withBase: number,
  fromFull: number,
  deltaFrames: number,
): void {
  const frames = group.subscribers.size * payloads.length;
  state.stats.framesOut += frames;
  state.stats.deltaFramesOut += deltaFrames;
  const { metrics } = state;
  if (!metrics) return;
  const now = Date.now();
  const fullReceivers = group.subscribers.size - withBase - fromFull;
  let bytes = group.headBytes * payloads.length;
  for (let i = 0; i < payloads.length; i++) {
    bytes += (Buffer.byteLength(payloads[i] as string) + 1) * fullReceivers;
    metrics.eventToWireSeconds.observe(Math.max(0, now - (timestamps[i] as number)) / 1_000);
  }
  if (deltas !== undefined) bytes += sentBytes(deltas.withBase) * withBase + sentBytes(deltas.fromFull) * fromFull;
  metrics.framesOut.inc(frames);
  metrics.bytesOut.inc(bytes);
  if (deltaFrames > 0) metrics.deltaFramesOut.inc(deltaFrames);
}

/** Payload bytes of one flush's frames (plus each frame's closing brace). */
function sentBytes(payloads: readonly string[] | undefined): number {
  if (payloads === undefined) return 0;
  let bytes = 0;
  for (const p of payloads) bytes += Buffer.byteLength(p) + 1;
  return bytes;
}
