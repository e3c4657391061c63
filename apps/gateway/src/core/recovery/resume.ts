/**
 * Resume: a subscriber that reconnected with its last positions is told whether history covers its
 * gap (the recovery signal), then gets what it missed from history and the live payloads it held
 * back meanwhile (replay.ts: the seam it shares with a replay by time).
 */
import { currentEpoch, knownEpoch } from '../delivery/epoch.js';
import { channelsConfirmed, isSubscribed, type Subscriber } from '../delivery/groups.js';
import { releaseCatchup } from '../delivery/catchup.js';
import { replayThenRelease, signalRecovery, type CatchupContext, type Recovery } from './replay.js';
import type { ResumeRequest } from './resume-request.js';

/**
 * Replays history to a resuming subscriber, then releases the live payloads it held back.
 * Live events were held from the moment it subscribed, and its channels were confirmed before
 * history is read, so every event is in history, in the held list, or both (then sent once).
 */
export async function catchUp<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, resume: ResumeRequest): Promise<void> {
  const { group } = subscriber;
  const { topic } = group.op.route;
  const { history } = state;
  const alive = (): boolean => isSubscribed(subscriber);
  await channelsConfirmed(state.registry, group);
  if (!history) {
    signalResume(state, subscriber, { recovered: false, reason: 'this gateway keeps no history' });
    return releaseCatchup(state.writer, subscriber, new Map(), currentEpoch(state.epoch));
  }
  const epoch = await knownEpoch(state.epoch);
  if (!alive()) return;

  // Positions of another epoch mean nothing here: such a client gets what history has, from its start.
  // A partition without a position is one the client's start did not list (it had no history then):
  // everything history holds for it is after the start.
  const sameEpoch = resume.epoch === epoch;
  const partitions = new Set([...(await history.partitions(topic)), ...resume.positions.keys()]);
  const gaps = sameEpoch ? await partitionsWithGaps(state, topic, partitions, resume) : [];
  if (!alive()) return;
  if (!sameEpoch) signalResume(state, subscriber, { recovered: false, reason: 'epoch changed: the history your positions belong to was lost' });
  else if (gaps.length > 0) signalResume(state, subscriber, { recovered: false, reason: 'history no longer covers the gap (retention)', partitions: gaps });
  else if (resume.quiet !== true) signalResume(state, subscriber, { recovered: true });
  await replayThenRelease(state, subscriber, partitions, sameEpoch ? resume.positions : new Map());
}

/** Partitions where history may have lost something after the client's position. */
async function partitionsWithGaps<C>(state: CatchupContext<C>, topic: string, partitions: Iterable<number>, resume: ResumeRequest): Promise<number[]> {
  const gaps: number[] = [];
  for (const p of partitions) {
    const after = resume.positions.get(p);
    if (after !== undefined && (await state.history?.lostAfter(topic, p, after))) gaps.push(p);
  }
  return gaps;
}

function signalResume<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, recovery: Recovery): void {
  if (!recovery.recovered) state.stats.resumesNotRecovered++;
  signalRecovery(state, subscriber, recovery);
}
