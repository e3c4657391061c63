/**
 * The hub's counters (`/stats`, tests, benchmarks). Each counter has one writer, named beside it;
 * the others read them through `Hub.stats()`.
 */
export interface HubStats {
  /** fanout.ts */
  eventsIn: number;
  /** Events re-read from history after a broker reconnect (backfill.ts). */
  backfilled: number;
  /** Subscriptions that asked to resume (hub.ts), and those told history could not cover their gap (resume.ts). */
  resumes: number;
  resumesNotRecovered: number;
  /** Subscriptions replayed from a time (`extensions.since`), and those told history does not reach back (since.ts). */
  replaysByTime: number;
  replaysByTimeNotRecovered: number;
  /** Events sent from history to resuming subscribers and replays by time (replay.ts). */
  replayed: number;
  /** Subscriptions served a snapshot, and the entries sent to them (snapshot.ts). */
  snapshots: number;
  snapshotEntries: number;
  /** Events a newer one of the same key replaced in a lagging conflating subscriber's queue (conflation.ts). */
  conflated: number;
  /** The same, for subscriptions with a rate cap (extensions.maxRate): events their cap skipped (conflation.ts). */
  rateCapped: number;
  /**
   * Events no group of their channel pins, dropped by the routing key their batch part gave before
   * their payload was parsed (fanout.ts; decision 0039). Counted in `eventsIn` too.
   */
  unwanted: number;
  /** Envelopes dropped because their position was already delivered (ingest re-publishes after a crash or rebalance; fanout.ts). */
  duplicates: number;
  /** fanout.ts; snapshot.ts for a snapshot's entries. */
  badEnvelopes: number;
  /** render.ts */
  executions: number;
  /** Of `executions`, those the WebAssembly projector wrote from the envelope's text (render.ts; decision 0043). */
  byteRenders: number;
  /** flush.ts */
  framesOut: number;
  /** Frames of `framesOut` that carried a delta payload instead of the full one (flush.ts). */
  deltaFramesOut: number;
  /** Times the broker was paused because the inbound queue passed its bound (inbound.ts). */
  pauses: number;
  /** Renders that returned a promise (a custom resolver, a look-up), and the most in flight at once (async-renders.ts). */
  asyncRenders: number;
  peakRendersInFlight: number;
}

export function createHubStats(): HubStats {
  return { eventsIn: 0, backfilled: 0, resumes: 0, resumesNotRecovered: 0, replaysByTime: 0, replaysByTimeNotRecovered: 0, replayed: 0, snapshots: 0, snapshotEntries: 0, conflated: 0, rateCapped: 0, unwanted: 0, duplicates: 0, badEnvelopes: 0, executions: 0, byteRenders: 0, framesOut: 0, deltaFramesOut: 0, pauses: 0, asyncRenders: 0, peakRendersInFlight: 0 };
}
