/**
 * Replay from a time (`extensions.since`, SSE's `?since=`): per partition, history from the first
 * event whose Kafka timestamp is at or after the time (`HistoryReader.entryFrom`), then live, with no
 * gap and no duplicate — the seam a resume uses (replay.ts). First comes the recovery signal:
 * `recovered: true`, or `recovered: false` with the partitions history no longer reaches back on and
 * the `oldest` time it holds on all of them (the stream then starts at their oldest retained event).
 * With `extensions.start`, the start follows it: per partition the offset the replay starts after,
 * so that resuming from it (or from later positions) is exact.
 */
import { currentEpoch, knownEpoch } from '../delivery/epoch.js';
import { channelsConfirmed, isSubscribed, type Subscriber } from '../delivery/groups.js';
import { releaseCatchup } from '../delivery/catchup.js';
import { replayThenRelease, signalRecovery, type CatchupContext, type Recovery } from './replay.js';
import type { SinceRequest } from './since-request.js';
import { sendStart } from './start.js';

/** Replays history from `since`, then releases the live payloads the subscriber held back meanwhile. */
export async function replayFromTime<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, since: SinceRequest, start: boolean): Promise<void> {
  const { group } = subscriber;
  const { topic } = group.op.route;
  const { history } = state;
  const alive = (): boolean => isSubscribed(subscriber);
  await channelsConfirmed(state.registry, group);
  if (!history) {
    signalSince(state, subscriber, { recovered: false, reason: 'this gateway keeps no history' });
    if (start) sendStart(state, subscriber, new Map());
    return releaseCatchup(state.writer, subscriber, new Map(), currentEpoch(state.epoch));
  }
  await knownEpoch(state.epoch);
  if (!alive()) return;
  const partitions = await history.partitions(topic);
  const seeks = await Promise.all(partitions.map((p) => history.entryFrom(topic, p, since.ms)));
  if (!alive()) return;
  const after = new Map<number, string>();
  const lost: number[] = [];
  let oldestMs = -Infinity;
  seeks.forEach((seek, i) => {
    const p = partitions[i] as number;
    if (seek.after !== undefined) after.set(p, seek.after);
    if (seek.lost) {
      lost.push(p);
      oldestMs = Math.max(oldestMs, seek.oldestMs ?? -Infinity);
    }
  });
  if (lost.length === 0) signalSince(state, subscriber, { recovered: true });
  else {
    const oldest = Number.isFinite(oldestMs) ? { oldest: new Date(oldestMs).toISOString() } : {};
    signalSince(state, subscriber, { recovered: false, reason: `history does not reach back to ${since.text} (retention): it starts at the oldest event it holds`, partitions: lost, ...oldest });
  }
  if (start) sendStart(state, subscriber, after);
  await replayThenRelease(state, subscriber, partitions, after);
}

function signalSince<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, recovery: Recovery): void {
  state.stats.replaysByTime++;
  if (!recovery.recovered) state.stats.replaysByTimeNotRecovered++;
  state.metrics?.replaysByTime.inc({ recovered: String(recovery.recovered) });
  signalRecovery(state, subscriber, recovery);
}
