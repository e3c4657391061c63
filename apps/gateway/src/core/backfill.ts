/**
 * Back-fill after a broker reconnect: pub/sub dropped whatever was published while the connection
 * was away; history has it. The hub re-reads it through the same path as live messages (duplicates
 * fall out by position), while live messages that arrive meanwhile wait in the inbound queue
 * (held, inbound.ts). It runs in the same time slices as live processing.
 */
import type { HubState } from './hub-state.js';
import { holdInbound, nextTurn, processOne, releaseInbound, sliceClock } from './inbound.js';
import { laterOffset } from './positions.js';

/** The connection dropped: from now on live messages queue until the back-fill behind them is done. */
export function onBrokerLost<C>(state: HubState<C>): void {
  if (state.history) {
    state.backfillPending = true;
    holdInbound(state);
  }
}

/** Connected again (or for the first time): reload the epoch, back-fill what was missed, then release the queue. */
export async function onBrokerReady<C>(state: HubState<C>): Promise<void> {
  const { history, logger } = state;
  if (history) {
    const previous = state.epoch;
    state.epoch = await history.loadEpoch();
    if (previous !== undefined && previous !== state.epoch) logger.warn({ previous, epoch: state.epoch }, 'history epoch changed: Redis lost its history');
  }
  if (!state.backfillPending) return;
  state.backfillPending = false;
  const started = Date.now();
  const backfilledBefore = state.stats.backfilled;
  try {
    do {
      state.backfillAgain = false;
      await backfillTopics(state);
    } while (state.backfillAgain && !state.backfillPending);
  } catch (err) {
    logger.error({ err }, 'back-fill from history failed: events published while Redis was unreachable may be missing');
  }
  const queued = state.inbound.texts.length - state.inbound.head;
  // Lost again while back-filling: the next `ready` back-fills again and releases the queue then.
  if (!state.backfillPending) releaseInbound(state);
  logger.info({ backfilled: state.stats.backfilled - backfilledBefore, queued, ms: Date.now() - started }, 'back-filled from history after Redis reconnect');
}

/**
 * For every topic someone listens to, every partition from the later of the last delivered offset
 * and the topic's floor (what history held when the topic gained its first group).
 */
async function backfillTopics<C>(state: HubState<C>): Promise<void> {
  const { history } = state;
  if (!history) return;
  const slice = sliceClock(state.flow.sliceMs);
  for (const [topic, topicState] of [...state.topics]) {
    const floor = await topicState.floor;
    const marks = state.delivered.get(topic) ?? [];
    for (const p of await history.partitions(topic)) {
      const after = laterOffset(marks[p], floor.get(p));
      for await (const page of history.read(topic, p, after)) {
        for (const entry of page) {
          state.stats.backfilled++;
          processOne(state, entry.channel, entry.envelope);
          if (slice.spent()) {
            await nextTurn(); // the slice scheduled by processOne's payloads writes them first
            slice.restart();
          }
        }
      }
    }
  }
}
