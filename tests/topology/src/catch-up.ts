// How long the system took to recover from a fault: from the injection until every client had
// every event it should that Kafka acknowledged more than LAG_MS earlier, including events
// acknowledged after the fault was done (so a stalled pipeline with nothing new does not count as
// recovered). Each client keeps a cursor into the acknowledgements, so a poll only looks at what
// arrived since the last one; an event lost for good in one fault's window is left behind before
// the next fault (forgetBefore), so that it fails the final count of its window, not every recovery after it.
import { setTimeout as sleep } from 'node:timers/promises';
import { matchesFilter } from './delivery-count.js';
import type { AckedEvent } from './event-stream.js';
import type { FailoverClient } from './failover-client.js';

/** End-to-end delay still counted as "caught up": well above the pipeline's normal tens of ms on a loaded machine. */
export const LAG_MS = 1_000; // 1 second
const POLL_MS = 100;

export interface Laggard {
  readonly client: FailoverClient;
  /** The oldest acknowledged event it should have and has not received. */
  readonly lacks: AckedEvent;
}

export interface CatchUpTracker {
  /**
   * From now on, events acknowledged before `since` are no longer required: one that is still
   * missing was lost in an earlier fault's window (the final count reports it there), and must not
   * hold every later fault's recovery up.
   */
  forgetBefore(since: number): void;
  /** Clients that lack an event acknowledged at or before `until` (epoch ms). */
  laggards(until: number): Laggard[];
  /**
   * Resolves with the milliseconds from `injectedAt` until every client caught up with events
   * acknowledged after `doneAt`; rejects after `timeoutMs` naming who lacks what.
   */
  waitCaughtUp(injectedAt: number, doneAt: number, timeoutMs: number): Promise<number>;
}

export function createCatchUpTracker(acks: readonly AckedEvent[], clients: readonly FailoverClient[]): CatchUpTracker {
  const cursors = new Map<FailoverClient, number>(clients.map((c) => [c, 0]));

  function forgetBefore(since: number): void {
    let first = acks.length;
    while (first > 0 && (acks[first - 1] as AckedEvent).ackedAt >= since) first--;
    for (const [client, cursor] of cursors) cursors.set(client, Math.max(cursor, first));
  }

  function laggards(until: number): Laggard[] {
    const behind: Laggard[] = [];
    for (const client of clients) {
      let i = cursors.get(client) ?? 0;
      // Deliberately imperative: runs every 100 ms over the acknowledgements since the last poll.
      for (; i < acks.length; i++) {
        const event = acks[i] as AckedEvent;
        if (event.ackedAt > until) break;
        if (matchesFilter(client.filter, event) && !client.received.has(event.position)) break;
      }
      cursors.set(client, i);
      const lacks = acks[i];
      if (lacks !== undefined && lacks.ackedAt <= until) behind.push({ client, lacks });
    }
    return behind;
  }

  /** Whether an event acknowledged after `doneAt` is old enough to be required of every client. */
  function ackedSince(doneAt: number, until: number): boolean {
    for (let i = acks.length - 1; i >= 0; i--) {
      const { ackedAt } = acks[i] as AckedEvent;
      if (ackedAt <= until) return ackedAt > doneAt;
    }
    return false;
  }

  async function waitCaughtUp(injectedAt: number, doneAt: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = Date.now();
      const until = now - LAG_MS;
      const behind = laggards(until);
      if (behind.length === 0 && ackedSince(doneAt, until)) return now - injectedAt;
      if (now >= deadline) {
        const who = behind.map(({ client, lacks }) => `${client.name} lacks ${lacks.position} (acknowledged ${((now - lacks.ackedAt) / 1_000).toFixed(1)} s ago)`);
        const what = who.length > 0 ? who.join('; ') : `no event acknowledged since the fault was done ${((now - doneAt) / 1_000).toFixed(1)} s ago`;
        throw new Error(`not caught up ${((now - injectedAt) / 1_000).toFixed(1)} s after the fault: ${what}`);
      }
      await sleep(POLL_MS);
    }
  }

  return { forgetBefore, laggards, waitCaughtUp };
}
