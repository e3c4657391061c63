import { setTimeout as sleep } from 'node:timers/promises';
import type { EachBatchPayload } from 'kafkajs';
import type { Logger } from '@wirestream/telemetry';
import type { IngestState } from './ingest-state.js';
import type { IngestMetrics } from './metrics.js';
import type { IngestRedis } from './redis-client.js';

export type PauseKind = 'redis unavailable' | 'dead-letter topic unavailable';

/** The parts of kafkajs's eachBatch payload that a waiting batch needs. */
export type BatchLiveness = Pick<EachBatchPayload, 'isRunning' | 'isStale' | 'heartbeat'>;

export interface FlowControlOptions {
  readonly state: IngestState;
  /** The publisher's connection: its status says whether Redis is back (a Cluster's stays ready while one node fails over). */
  readonly redis: IngestRedis;
  /** Every topic the consumer is subscribed to (all are paused together). */
  readonly topics: readonly string[];
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
}

/** Pause/resume of consumption, and the waits of a batch that keep its group membership alive. Plain functions (no `this`). */
export interface FlowControl {
  /** Why consumption is paused, or undefined while it flows. */
  readonly pausedFor: () => PauseKind | undefined;
  readonly pause: (kind: PauseKind) => void;
  readonly resume: () => void;
  /** Sleeps `ms` while heartbeating; false when the batch must be given up. See {@link waitAlive}. */
  readonly waitAlive: (payload: BatchLiveness, ms: number) => Promise<boolean>;
  /**
   * A batch whose chunk could not be delivered waits `ms` and until Redis is connected, counted
   * as waiting (so the probe knows whether a dead-letter outage still has a batch to end it).
   */
  readonly waitToRedeliver: (payload: BatchLiveness, ms: number) => Promise<boolean>;
  /** Stops the pause probe (stop()). */
  readonly close: () => void;
}

const WAIT_STEP_MS = 250; // how often a waiting batch re-checks stop/staleness and heartbeats
const PAUSE_PROBE_MS = 500; // how often a paused consumer checks whether Redis is back

export function createFlowControl({ state, redis, topics, logger, metrics }: FlowControlOptions): FlowControl {
  let pausedFor: PauseKind | undefined;
  /** Batches inside a redelivery wait. */
  let waitingBatches = 0;
  let pauseProbe: NodeJS.Timeout | undefined;
  const allTopics = (): { topic: string }[] => topics.map((topic) => ({ topic }));

  /**
   * Stops fetching every topic while a chunk cannot be delivered. The batch in flight keeps
   * waiting inside eachBatch (heartbeating, so the group keeps the partition); pausing stops the
   * other partitions from fetching batches that would only wait too. Nothing is committed.
   */
  function pause(kind: PauseKind): void {
    if (pausedFor !== undefined || state.stopped) return;
    pausedFor = kind;
    state.stats.pauses++;
    metrics?.pauses.inc();
    metrics?.paused.set(1);
    state.consumer?.pause(allTopics());
    logger.warn({ reason: kind, redis: redis.status }, 'consumption paused');
    // A probe resumes, not only the waiting batch: after a rebalance no batch may be left to do it.
    // A dead-letter outage is only over when its batch gets through, unless that batch is gone.
    pauseProbe = setInterval(() => {
      if (redis.status === 'ready' && (pausedFor === 'redis unavailable' || waitingBatches === 0)) resume();
    }, PAUSE_PROBE_MS);
  }

  function resume(): void {
    if (pausedFor === undefined) return;
    clearInterval(pauseProbe);
    pauseProbe = undefined;
    pausedFor = undefined;
    metrics?.paused.set(0);
    state.consumer?.resume(allTopics());
    logger.info('consumption resumed');
  }

  async function waitToRedeliver(payload: BatchLiveness, ms: number): Promise<boolean> {
    waitingBatches++;
    try {
      return await waitAlive(state, redis, payload, ms, true);
    } finally {
      waitingBatches--;
    }
  }

  return {
    pausedFor: () => pausedFor,
    pause,
    resume,
    waitAlive: (payload, ms) => waitAlive(state, redis, payload, ms, false),
    waitToRedeliver,
    close: () => clearInterval(pauseProbe),
  };
}

/**
 * Waits `ms` (and, with `untilRedis`, until Redis is connected) while heartbeating, so the group
 * keeps this member. Returns false when the batch must be given up: a rebalance took the
 * partition, or stop() was called and its grace is over. A heartbeat that reports a rebalance
 * throws, which kafkajs handles by re-joining; the uncommitted chunk is then redone.
 */
async function waitAlive(state: IngestState, redis: IngestRedis, payload: BatchLiveness, ms: number, untilRedis: boolean): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (!payload.isRunning() && !state.stopped) return false;
    if (payload.isStale()) return false;
    if (state.stopped && Date.now() >= state.stopDeadline) return false;
    if (Date.now() >= until && (!untilRedis || redis.status === 'ready')) return true;
    await sleep(Math.max(1, Math.min(WAIT_STEP_MS, until - Date.now())));
    await payload.heartbeat();
  }
}
