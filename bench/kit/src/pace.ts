/**
 * The publishers' clock: a stream of `count` events sent at a fixed rate, or back-to-back. Due
 * times are counted from the first send, so timer drift does not accumulate; what fell due while a
 * timer slept goes out together (a consumer's fetch loop). The transport is the caller's.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** What every publisher of a corpus is given, whatever its transport (one Redis, a cluster). */
export interface StreamOptions<Corpus> {
  readonly corpus: Corpus;
  readonly topic: string;
  /** The bench's shared clock (loadgen's `BenchClock`): the events' timestamps and their pacing. */
  readonly clock: { nowUs(): number };
  /** Offset of event 0; event i gets `offsetBase + i` (unique, rising: what the load client dedups on). */
  readonly offsetBase: number;
  /** Events to publish (≤ corpus size). */
  readonly count: number;
  /** Events per second; 0: back-to-back. */
  readonly ratePerSecond: number;
}

export interface PaceOptions {
  /** Events to send. */
  readonly count: number;
  /** Events per second; 0: back-to-back, `slice` events per send, each answered before the next is made. */
  readonly ratePerSecond: number;
  /** Back-to-back: events per send. @default count (one send of everything) */
  readonly slice?: number;
  /** At a fixed rate, the least time between two sends (a fetch loop's tick). @default 0 */
  readonly tickMs?: number;
  /** Microseconds on the bench's clock. */
  readonly nowUs: () => number;
  /** Sends events `[from, to)`; at a fixed rate its promises are awaited together at the end. */
  readonly send: (from: number, to: number) => Promise<unknown>;
  /** Whether to stop sending (a failed send). @default never */
  readonly stopped?: () => boolean;
}

/**
 * Sends the stream and resolves once every send is answered, with the clock at the first send and
 * when the last was made (before its answer: a caller that wants the answer reads its clock then).
 */
export async function paceStream({ count, ratePerSecond, slice = count, tickMs = 0, nowUs, send, stopped = () => false }: PaceOptions): Promise<{ firstPublishUs: number; lastPublishUs: number }> {
  if (!(ratePerSecond >= 0)) throw new RangeError(`ratePerSecond must be ≥ 0, got ${ratePerSecond}`);
  if (!(slice >= 1) && count > 0) throw new RangeError(`slice must be ≥ 1, got ${slice}`);
  const firstPublishUs = nowUs();
  const pending: Promise<unknown>[] = [];
  if (ratePerSecond === 0) {
    for (let from = 0; from < count && !stopped(); from += slice) {
      const sent = send(from, Math.min(count, from + slice));
      if (from + slice < count) await sent;
      else pending.push(sent);
    }
  } else {
    const intervalUs = 1e6 / ratePerSecond;
    for (let next = 0; next < count && !stopped(); ) {
      const elapsedUs = nowUs() - firstPublishUs;
      const due = Math.min(count, Math.floor(elapsedUs / intervalUs) + 1);
      if (due > next) {
        pending.push(send(next, due));
        next = due;
      }
      if (next < count) await sleep(Math.max(tickMs, (next * intervalUs - elapsedUs) / 1_000));
    }
  }
  const lastPublishUs = nowUs();
  await Promise.all(pending);
  return { firstPublishUs, lastPublishUs };
}
