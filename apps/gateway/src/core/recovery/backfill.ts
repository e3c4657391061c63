/**
 * Back-fill after a broker reconnect: pub/sub dropped whatever was published while the connection
 * was away; history has it. The hub re-reads it through the same path as live messages (duplicates
 * fall out by position), while live messages that arrive meanwhile wait in the inbound queue
 * (held, inbound.ts). It runs in the same time slices as live processing, and within the same
 * bound of renders in flight (GATEWAY_MAX_RENDERS_IN_FLIGHT, async-renders.ts): at the bound it
 * waits for one to settle before the next entry, so a back-fill through slow look-ups does not grow
 * memory with every event history holds.
 */
import type { Logger } from '@wirestream/telemetry';
import type { HistoryReader } from '../../broker/broker.js';
import { rendersAtBound, untilBelowBound, type AsyncRenders } from '../delivery/async-renders.js';
import { reloadEpoch, type Epoch } from '../delivery/epoch.js';
import { continueFanout, fanOutOne, type Fanout } from '../delivery/fanout.js';
import { listenedTopics, type Registry } from '../delivery/groups.js';
import { holdInbound, nextTurn, queuedMessages, releaseInbound, sliceClock, takeDropped, type Inbound } from '../delivery/inbound.js';
import { laterOffset, marksOf } from '../delivery/positions.js';
import type { HubStats } from '../delivery/stats.js';

/** A back-fill: what it reads and feeds, and whether the next `ready` owes one (its own state). */
export interface Backfill<C> {
  readonly history: HistoryReader | undefined;
  readonly logger: Logger;
  readonly stats: HubStats;
  readonly epoch: Epoch;
  readonly registry: Registry<C>;
  readonly inbound: Inbound;
  readonly fanout: Fanout<C>;
  /** Renders in flight: the back-fill waits at their bound as the live path does. */
  readonly asyncRenders: AsyncRenders<C>;
  /** The broker was lost with history on: the next `ready` back-fills. */
  pending: boolean;
}

export type BackfillDeps<C> = Omit<Backfill<C>, 'pending'>;

export function createBackfill<C>(deps: BackfillDeps<C>): Backfill<C> {
  return { ...deps, pending: false };
}

/** The connection dropped: from now on live messages queue until the back-fill behind them is done. */
export function onBrokerLost<C>(backfill: Backfill<C>): void {
  if (backfill.history) {
    backfill.pending = true;
    // A split fan-out finishes first: its position is already marked delivered, so the back-fill would not bring it again.
    continueFanout(backfill.fanout, Infinity);
    holdInbound(backfill.inbound);
  }
}

/** Connected again (or for the first time): reload the epoch, back-fill what was missed, then release the queue. */
export async function onBrokerReady<C>(backfill: Backfill<C>): Promise<void> {
  const { logger, inbound, stats } = backfill;
  await reloadEpoch(backfill.epoch);
  if (!backfill.pending) return;
  backfill.pending = false;
  const started = Date.now();
  const backfilledBefore = stats.backfilled;
  try {
    let again: boolean;
    do {
      takeDropped(inbound);
      await backfillTopics(backfill);
      // The held queue overflowed and was dropped meanwhile: one more pass brings it from history.
      again = takeDropped(inbound);
    } while (again && !backfill.pending);
  } catch (err) {
    logger.error({ err }, 'back-fill from history failed: events published while Redis was unreachable may be missing');
  }
  const queued = queuedMessages(inbound);
  // Lost again while back-filling: the next `ready` back-fills again and releases the queue then.
  if (!backfill.pending) releaseInbound(inbound);
  logger.info({ backfilled: stats.backfilled - backfilledBefore, queued, ms: Date.now() - started }, 'back-filled from history after Redis reconnect');
}

/**
 * For every topic someone listens to, every partition from the later of the last delivered offset
 * and the topic's floor (what history held when the topic gained its first group).
 */
async function backfillTopics<C>(backfill: Backfill<C>): Promise<void> {
  const { history, fanout } = backfill;
  if (!history) return;
  const slice = sliceClock(backfill.inbound.flow.sliceMs);
  for (const [topic, topicState] of listenedTopics(backfill.registry)) {
    const floor = await topicState.floor;
    const marks = marksOf(fanout.delivered, topic);
    for (const p of await history.partitions(topic)) {
      const after = laterOffset(marks[p], floor.get(p));
      for await (const page of history.read(topic, p, after)) {
        for (const entry of page) {
          // At the bound, wait for a render to settle (its settle writes what it can first).
          if (rendersAtBound(backfill.asyncRenders)) {
            await untilBelowBound(backfill.asyncRenders);
            slice.restart();
          }
          backfill.stats.backfilled++;
          fanOutOne(fanout, entry.channel, entry.envelope);
          if (slice.spent()) {
            await nextTurn(); // the slice scheduled by fanOutOne's payloads writes them first
            slice.restart();
          }
        }
      }
    }
  }
}
