/**
 * The starting point of a subscription (opt-in with `extensions.start`): the epoch and, per
 * partition, the offset it is live after, told to the client before any event. A client that keeps
 * it resumes exactly even for partitions it never received an event on, and when it received nothing.
 *
 * How it stays exact: the subscriber holds its live payloads from the moment it joins its group
 * (like a resume's catch-up); once its channels are confirmed, history's newest offset per partition
 * is read. Ingest writes history before it publishes, so an event above those offsets was written
 * after the read, hence published after the SUBSCRIBE was confirmed: it arrives live. Held or later
 * live payloads at or below them are dropped. The client gets exactly the events after its start.
 */
import { releaseCatchup } from '../delivery/catchup.js';
import { currentEpoch, knownEpoch } from '../delivery/epoch.js';
import { channelsConfirmed, isSubscribed, type Subscriber } from '../delivery/groups.js';
import type { CatchupContext } from './replay.js';

/** The data-less first `next` of a subscription that asked for its start. */
export interface StartSignal {
  /** Absent when the gateway keeps no history (then nothing can be resumed). */
  readonly epoch?: string;
  /** Partition → the offset the subscription is live after; a partition absent had no history yet. */
  readonly positions: Record<string, string>;
}

/** Fixes and sends the subscriber's start, then releases the live payloads it held meanwhile. */
export async function announceStart<C>(state: CatchupContext<C>, subscriber: Subscriber<C>): Promise<void> {
  const { group } = subscriber;
  const alive = (): boolean => isSubscribed(subscriber);
  await channelsConfirmed(state.registry, group);
  if (!alive()) return;
  const positions = await readStart(state, group.op.route.topic);
  if (!alive()) return;
  sendStart(state, subscriber, positions);
  releaseCatchup(state.writer, subscriber, positions, currentEpoch(state.epoch));
}

/** Sends the data-less start frame: `positions` are, per partition, the offset the subscription is live after. */
export function sendStart<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, positions: ReadonlyMap<number, string>): void {
  const epoch = currentEpoch(state.epoch);
  const signal: StartSignal = { ...(epoch !== undefined && state.history ? { epoch } : {}), positions: Object.fromEntries(positions) };
  state.writer.sendFrames(subscriber.conn, subscriber.head, [JSON.stringify({ extensions: { start: signal } })], {
    epoch: signal.epoch,
    partitions: [],
    offsets: [],
    start: signal,
  });
}

/** History's newest offset per partition of the topic now (empty without history). */
async function readStart<C>(state: CatchupContext<C>, topic: string): Promise<Map<number, string>> {
  const { history } = state;
  if (!history) return new Map();
  await knownEpoch(state.epoch);
  return history.tops(topic, await history.partitions(topic));
}

/**
 * A subscriber held while its subscribe is decided (a plugin's async onSubscribe): where it is live
 * after, as a resume request (epoch and history's newest offset per partition once its channels were
 * confirmed, as for a start), so that another operation decided meanwhile resumes from there with
 * nothing lost; undefined without history (or when it could not be read), or when it left.
 */
export async function holdPositions<C>(state: CatchupContext<C>, subscriber: Subscriber<C>): Promise<{ readonly epoch: string; readonly positions: ReadonlyMap<number, string> } | undefined> {
  if (!state.history) return undefined;
  const { group } = subscriber;
  await channelsConfirmed(state.registry, group);
  if (!isSubscribed(subscriber)) return undefined;
  const positions = await readStart(state, group.op.route.topic);
  const epoch = currentEpoch(state.epoch);
  return epoch === undefined ? undefined : { epoch, positions };
}

/** The topic's positions now (epoch and history's newest offset per partition), to resume from later; undefined without history. */
export async function positionsNow<C>(state: CatchupContext<C>, topic: string): Promise<{ readonly epoch: string; readonly positions: ReadonlyMap<number, string> } | undefined> {
  if (!state.history) return undefined;
  const positions = await readStart(state, topic);
  const epoch = currentEpoch(state.epoch);
  return epoch === undefined ? undefined : { epoch, positions };
}
