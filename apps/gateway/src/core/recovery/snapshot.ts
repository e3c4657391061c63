/**
 * Snapshot, then stream (decision 0024): a subscription that asked (`extensions.snapshot: true`)
 * receives the current value of each key first, then the live stream, with no gap and no duplicate.
 *
 * The seam is start.ts's: the subscriber holds its live payloads from the moment it joins its group;
 * once its channels are confirmed, the snapshot is read (one atomic script per partition, with the
 * partition's top: the highest offset the snapshot reflects). Ingest writes a chunk's snapshot before
 * it publishes the chunk, so an event above a top was applied after the read, hence published after
 * the SUBSCRIBE was confirmed: it arrives live. Held or later live payloads at or below the tops are
 * reflected in the snapshot (or overwritten, or deleted) and are dropped.
 *
 * The trip of one snapshot: sendSnapshot → readSeam (the port, snapshot tops, the epoch)
 *   → sortedEntries → sendEntries (renderEntry per entry, chunked with resume.ts's replay chunks)
 *   → signalSnapshotEnd (the data-less end frame, with the start when asked) → releaseCatchup.
 */
import { decodeEnvelope, type Envelope, type Snapshot, type SnapshotEntry } from '@wirestream/wire';
import { releaseCatchup } from '../delivery/catchup.js';
import { currentEpoch, knownEpoch } from '../delivery/epoch.js';
import { channelsConfirmed, isSubscribed, type Subscriber } from '../delivery/groups.js';
import { offsetAfter, positionExtensions } from '../delivery/positions.js';
import { renderPayload } from '../delivery/render.js';
import { createReplayChunks, type CatchupContext } from './replay.js';
import type { SnapshotAsk } from './snapshot-request.js';
import type { StartSignal } from './start.js';

/**
 * The data-less `next` that ends a snapshot: `{"extensions":{"snapshot":<this>}}` (plus `"start"`,
 * the same epoch and positions, when the subscription asked for its start).
 */
export interface SnapshotSignal {
  /** Entries sent (those the subscription's filters let through). */
  readonly keys: number;
  /** A whole-topic snapshot stopped at GATEWAY_SNAPSHOT_MAX_KEYS: the topic has more keys. */
  readonly truncated: boolean;
  /** The history epoch (absent without history): the positions resume in it. */
  readonly epoch?: string;
  /** Partition → the offset the subscription is live after (the snapshot's top); a partition absent had no snapshot yet. */
  readonly positions: Record<string, string>;
}

/** Reads and sends the subscriber's snapshot, then releases the live payloads it held meanwhile. */
export async function sendSnapshot<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, ask: SnapshotAsk, start: boolean): Promise<void> {
  const alive = (): boolean => isSubscribed(subscriber);
  await channelsConfirmed(state.registry, subscriber.group);
  if (!alive()) return;
  const { snapshot, tops } = await readSeam(state, subscriber.group.op.route.topic, ask);
  if (!alive()) return;
  state.stats.snapshots++;
  const sent = await sendEntries(state, subscriber, sortedEntries(snapshot.entries), alive);
  if (sent === undefined) return;
  signalSnapshotEnd(state, subscriber, { keys: sent, truncated: snapshot.truncated, ...epochOf(state), positions: Object.fromEntries(tops) }, start);
  releaseCatchup(state.writer, subscriber, tops, currentEpoch(state.epoch));
}

/** The snapshot and its seam: per partition the top the read saw (partitions without one are absent). */
async function readSeam<C>(state: CatchupContext<C>, topic: string, ask: SnapshotAsk): Promise<{ snapshot: Snapshot; tops: Map<number, string> }> {
  const { snapshots, history } = state;
  if (!snapshots) throw new Error('a snapshot was asked of a hub without a snapshot reader (the session should have refused it)');
  if (history) await knownEpoch(state.epoch);
  const snapshot = await snapshots.read(topic, ask.keys, ask.cap);
  const tops = new Map<number, string>();
  for (const [partition, top] of snapshot.positions) if (top !== undefined) tops.set(partition, top);
  return { snapshot, tops };
}

/** By partition, then offset: per partition the entries' positions rise, as a replay's do, and stay at or below the top. */
function sortedEntries(entries: readonly SnapshotEntry[]): SnapshotEntry[] {
  return [...entries].sort((a, b) => a.partition - b.partition || (a.offset === b.offset ? 0 : offsetAfter(a.offset, b.offset) ? 1 : -1));
}

/**
 * Renders each entry through the group's operation and sends it in replay chunks (waiting for
 * room, so 10,000 entries never trip the slow-consumer limit). Returns the entries sent, or
 * undefined if the subscriber left or stalled.
 */
async function sendEntries<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, entries: readonly SnapshotEntry[], alive: () => boolean): Promise<number | undefined> {
  // No cursor: an SSE stream's id moves only at the end frame, so a stream cut mid-snapshot asks for it again.
  const chunks = createReplayChunks(state, subscriber, alive, { cursor: false, onSent: (n) => (state.stats.snapshotEntries += n) });
  let sent = 0;
  for (const entry of entries) {
    const json = await renderEntry(state, subscriber, entry);
    if (json === undefined) continue;
    sent++;
    if (chunks.add(json, entry.partition, entry.offset) && !(await chunks.flush())) return undefined;
    if (!alive()) return undefined;
  }
  return (await chunks.flush()) ? sent : undefined;
}

/**
 * One entry as its live event would be rendered for the group (filters, selection, tenant binding),
 * with its position and `"snapshot":true` in `extensions`; undefined when the filter rejects it.
 */
async function renderEntry<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, entry: SnapshotEntry): Promise<string | undefined> {
  let envelope: Envelope;
  try {
    envelope = decodeEnvelope(entry.envelope);
  } catch {
    state.stats.badEnvelopes++;
    return undefined; // it was not delivered live either
  }
  if (envelope.deleted === true) return undefined;
  const extensions = { ...positionExtensions(envelope, currentEpoch(state.epoch)), snapshot: true };
  return renderPayload(state.renderer, subscriber.group, envelope, extensions);
}

/** The end frame: data-less, with the seam; it also carries the start (the same positions) when asked. */
function signalSnapshotEnd<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, signal: SnapshotSignal, start: boolean): void {
  const startSignal: StartSignal = { ...(signal.epoch === undefined ? {} : { epoch: signal.epoch }), positions: signal.positions };
  const frame = JSON.stringify({ extensions: start ? { snapshot: signal, start: startSignal } : { snapshot: signal } });
  // `start` for a transport with a cursor (SSE): the stream's first id is the seam.
  state.writer.sendFrames(subscriber.conn, subscriber.head, [frame], { epoch: signal.epoch, partitions: [], offsets: [], start: startSignal });
}

/** The epoch of positions, when the gateway keeps history. */
function epochOf<C>(state: CatchupContext<C>): { epoch?: string } {
  const epoch = currentEpoch(state.epoch);
  return epoch !== undefined && state.history ? { epoch } : {};
}
