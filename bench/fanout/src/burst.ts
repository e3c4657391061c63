/**
 * The burst scenario (issue 18, "hold the line under bursts"): N = 10,000 sockets over 1,000
 * distinct operations (the sweep's plan: each receives every event, so 1,000 executions per
 * event), 200 events back-to-back, while the probe polls `/healthz` every 50 ms and scrapes the
 * gateway's event-loop delay. Our gateway (and its base) against bare uWS corked, which ignores
 * operations and writes one prebuilt frame per event to every socket: the machine's ceiling.
 */
import type { OperationPlan } from '@wirestream/loadgen';
import { markdownTable, quantile } from '@wirestream/bench-kit';
import type { ProbeSummary } from './probe.js';
import { fmtInt, fmtMb, fmtMs } from './report.js';
import type { RunSpec, StackRun } from './run-stack.js';
import { isGateway, STACK_SHORT } from './servers.js';

export interface BurstOptions {
  readonly sockets: number;
  readonly distinct: number;
  readonly events: number;
  readonly filterKeys: readonly string[];
  readonly drainTimeoutMs: number;
  readonly idleMs: number;
}

export function burstSpec(o: BurstOptions): RunSpec {
  const plan: OperationPlan = { distinctOperations: o.distinct, filterKeys: o.filterKeys };
  return {
    sockets: o.sockets,
    plan,
    events: o.events,
    ratePerSecond: 0,
    drainTimeoutMs: o.drainTimeoutMs,
    stallTimeoutMs: 10_000,
    idleMs: o.idleMs,
    probe: true,
  };
}

/** The figures the issue asks for, from one run's probe (undefined fields: not measured). */
export interface Responsiveness {
  readonly polls: number;
  readonly healthzP50Ms: number;
  readonly healthzP99Ms: number;
  readonly healthzMaxMs: number;
  /** Shares of all polls, 0..1. */
  readonly over100Share: number;
  readonly unansweredShare: number;
  readonly suspect: number;
  /** Worst interval's p99 of the gateway's event-loop delay, and its max over the run, ms. */
  readonly eldP99Ms: number | undefined;
  readonly eldMaxMs: number | undefined;
  readonly eldScrapes: number;
  readonly scrapesUnanswered: number;
  readonly inboundQueuePeakBytes: number | undefined;
  readonly redisPausedTotal: number | undefined;
  readonly ownLagP99Ms: number;
  readonly ownLagMaxMs: number;
}

export function responsivenessOf(p: ProbeSummary): Responsiveness {
  const max = (values: (number | undefined)[]): number | undefined => {
    const defined = values.filter((v): v is number => v !== undefined);
    return defined.length > 0 ? Math.max(...defined) : undefined;
  };
  // Unanswered polls are slower than any answer: the p99 over all polls counts them as +∞.
  const all = [...p.answeredMs, ...Array.from({ length: p.unanswered }, () => Number.POSITIVE_INFINITY)];
  return {
    polls: p.polls,
    healthzP50Ms: quantile(all, 0.5),
    healthzP99Ms: quantile(all, 0.99),
    healthzMaxMs: all.at(-1) ?? Number.NaN,
    over100Share: p.polls > 0 ? p.over100Ms / p.polls : Number.NaN,
    unansweredShare: p.polls > 0 ? p.unanswered / p.polls : Number.NaN,
    suspect: p.suspect,
    eldP99Ms: max(p.scrapes.map((s) => s.eldP99Ms)),
    eldMaxMs: max(p.scrapes.map((s) => s.eldMaxMs)),
    eldScrapes: p.scrapes.length,
    scrapesUnanswered: p.scrapesUnanswered,
    inboundQueuePeakBytes: max(p.scrapes.map((s) => s.inboundQueueBytes)),
    redisPausedTotal: p.scrapes.at(-1)?.redisPausedTotal,
    ownLagP99Ms: p.ownLagP99Ms,
    ownLagMaxMs: p.ownLagMaxMs,
  };
}

const pct = (share: number): string => (Number.isNaN(share) ? 'n/a' : `${(share * 100).toFixed(1)} %`);
const optMs = (ms: number | undefined): string => (ms === undefined ? 'not exposed' : fmtMs(ms));

/** One row per run: deliveries, once-each, latency, memory, `/healthz` and event-loop delay. */
export function burstTable(runs: readonly StackRun[], labelOf: (r: StackRun) => string): string {
  const rows: string[][] = [
    [
      'stack',
      'delivered / expected',
      'dup',
      'deliveries/s',
      'p99',
      'peak RSS MB',
      '/healthz p50 / p99 / max',
      '> 100 ms',
      'unanswered in 2 s',
      'ELD p99 (worst 1 s) / max',
      'inbound queue peak',
      'Redis pauses',
      'probe own lag p99 / max (slow polls while it lagged)',
      'server exit',
    ],
  ];
  for (const r of runs) {
    const x = r.responsiveness ? responsivenessOf(r.responsiveness) : undefined;
    rows.push([
      labelOf(r),
      `${fmtInt(r.unique)} / ${fmtInt(r.expected)}`,
      fmtInt(r.duplicates),
      fmtInt(r.deliveriesPerSec),
      fmtMs(r.latencyMs.p99),
      fmtMb(r.memory.peakRss),
      x ? `${fmtMs(x.healthzP50Ms)} / ${fmtMs(x.healthzP99Ms)} / ${fmtMs(x.healthzMaxMs)} (${fmtInt(x.polls)} polls)` : 'n/a',
      x ? pct(x.over100Share) : 'n/a',
      x ? pct(x.unansweredShare) : 'n/a',
      x ? `${optMs(x.eldP99Ms)} / ${optMs(x.eldMaxMs)}${x.eldScrapes > 0 ? ` (${x.eldScrapes} scrapes${x.scrapesUnanswered > 0 ? `, ${x.scrapesUnanswered} unanswered` : ''})` : ''}` : 'n/a',
      x?.inboundQueuePeakBytes === undefined ? 'n/a' : `${fmtMb(x.inboundQueuePeakBytes)} MB`,
      x?.redisPausedTotal === undefined ? 'n/a' : fmtInt(x.redisPausedTotal),
      x ? `${fmtMs(x.ownLagP99Ms)} / ${fmtMs(x.ownLagMaxMs)} (${fmtInt(x.suspect)})` : 'n/a',
      r.serverExit ?? 'running',
    ]);
  }
  return markdownTable(rows);
}

/** Issue 18's targets for each gateway run, and the ratios to bare uWS corked of the same run. */
export function burstTargetLines(runs: readonly StackRun[]): string[] {
  const mark = (ok: boolean): string => (ok ? '**met**' : '**not met**');
  const bare = runs.find((r) => r.stack === 'bare-corked');
  const lines: string[] = [];
  for (const r of runs) {
    if (!isGateway(r.stack)) continue;
    const name = STACK_SHORT[r.stack];
    const x = r.responsiveness ? responsivenessOf(r.responsiveness) : undefined;
    const once = r.unique === r.expected && r.duplicates === 0;
    lines.push(
      `${name}: every event delivered once: ${fmtInt(r.unique)}/${fmtInt(r.expected)}, ${fmtInt(r.duplicates)} duplicates ${mark(once)}` +
        (r.serverExit === undefined ? '' : `; the server exited (${r.serverExit})`),
    );
    if (x) {
      lines.push(
        `${name}: p99 event-loop delay ≤ 50 ms: ${x.eldP99Ms === undefined ? 'not exposed by this build' : `${fmtMs(x.eldP99Ms)} (worst 1 s interval; max ${optMs(x.eldMaxMs)}) ${mark(x.eldP99Ms <= 50)}`}`,
        `${name}: /healthz within 100 ms throughout: ${pct(1 - x.over100Share)} of ${fmtInt(x.polls)} polls answered within 100 ms ${mark(x.over100Share === 0)}; ` +
          `unanswered within 2 s: ${pct(x.unansweredShare)}; p99 ${fmtMs(x.healthzP99Ms)}, max ${fmtMs(x.healthzMaxMs)}`,
      );
    }
    if (bare) {
      const ratio = (a: number, b: number): string => (b > 0 && Number.isFinite(a / b) ? (a / b).toFixed(2) : 'n/a');
      lines.push(
        `${name} / bare uWS corked: deliveries/s ${ratio(r.deliveriesPerSec, bare.deliveriesPerSec)} (${fmtInt(r.deliveriesPerSec)} vs ${fmtInt(bare.deliveriesPerSec)}), ` +
          `p99 ${fmtMs(r.latencyMs.p99)} vs ${fmtMs(bare.latencyMs.p99)}, peak RSS ${fmtMb(r.memory.peakRss)} vs ${fmtMb(bare.memory.peakRss)} MB`,
      );
    }
  }
  return lines;
}

export const BURST_HOW_TO_READ =
  'How to read: "/healthz" is `GET /healthz` every 50 ms from the bench\'s main process (keep-alive, 2 s timeout) from the first publish ' +
  'to the end of the drain; an unanswered poll counts as slower than any answer (in "> 100 ms" and as ∞ in the quantiles). ' +
  '"ELD" is the gateway\'s own `wirestream_gateway_event_loop_delay_seconds` (quantiles over the interval since the previous scrape), ' +
  'scraped every second: the worst interval\'s p99 and the largest max; "not exposed" when the build has no such series (bare uWS, the base). ' +
  'The probe shares the two cores with the server, the load workers and Redis: "probe own lag" is its own timer lag (10 ms heartbeat), ' +
  'and the number in brackets counts slow or unanswered polls during which the probe itself lagged > 20 ms — those may be the bench\'s ' +
  'fault rather than the server\'s. "delivered" counts distinct positions per socket; "dup" frames of a position a socket already had.';
