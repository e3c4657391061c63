/**
 * Memory that comes back (issue 18): after the saturation burst, with every socket still
 * subscribed, the gateway's RSS every second for 60 s after the last delivery, and RSS(+60 s)
 * over the level right before the burst (target ≤ 1.25×). Each allocator / V8 candidate is one
 * variant of our gateway's env, all measured in the same run; a forced GC at the end tells V8
 * garbage (it goes away) from native memory (it stays: glibc arenas, uWS buffers).
 */
import { markdownTable } from '@wirestream/bench-kit';
import { fmtInt, fmtMb, fmtMs } from './report.js';
import type { RunSpec, StackRun } from './run-stack.js';
import type { EnvVariant } from './variants.js';

/** The candidates, one variant each (`;`-separated, `jemalloc` = LD_PRELOAD of libjemalloc.so.2). */
export const DEFAULT_MEMORY_VARIANTS = [
  'default',
  'MALLOC_ARENA_MAX=2',
  'MALLOC_TRIM_THRESHOLD_=131072',
  'MALLOC_TRIM_THRESHOLD_=131072,MALLOC_TOP_PAD_=0',
  'MALLOC_MMAP_THRESHOLD_=131072',
  'jemalloc',
  'NODE_OPTIONS=--max-semi-space-size=4',
].join(';');

export const RETURN_TARGET = 1.25;

export function memoryReturnSpec(saturation: RunSpec, settleMs: number): RunSpec {
  return { ...saturation, settleMs, drainTimeoutMs: Math.max(saturation.drainTimeoutMs, 60_000) };
}

export interface MemoryReturnRow {
  /** The env variant of our gateway, or the reference stack's name. */
  readonly variant: EnvVariant;
  readonly run: StackRun;
}

/** RSS(+s) of a run's settle series, the first sample at or after `s` seconds. */
function rssAfter(run: StackRun, seconds: number): number | undefined {
  return run.settle?.find((s) => s.afterS >= seconds - 0.5)?.rssBytes;
}

/** RSS(+60 s) / RSS before the burst; NaN when either is missing. */
export function returnRatio(run: StackRun): number {
  const last = run.settle?.at(-1)?.rssBytes;
  const before = run.rssBeforeTraffic;
  return last === undefined || before === undefined || before <= 0 ? Number.NaN : last / before;
}

/** V8's committed heap (heapTotal, no forced GC) at the last sample of the settle phase, MB. */
function heapTotalAtSettleEndMb(run: StackRun): number | undefined {
  const settle = run.phases.find((p) => p.name === 'settle');
  const done = run.phases.find((p) => p.name === 'done');
  if (!settle || !done) return undefined;
  return run.samples.filter((s) => s.t >= settle.t && s.t <= done.t && s.heapTotalMb !== undefined).at(-1)?.heapTotalMb;
}

export function memoryReturnTable(rows: readonly MemoryReturnRow[]): string {
  const settleS = Math.round(rows[0]?.run.settle?.at(-1)?.afterS ?? 60);
  const out: string[][] = [
    [
      'variant',
      'RSS idle MB',
      'RSS before burst MB',
      'peak RSS MB',
      '+10 s',
      '+30 s',
      `+${settleS} s`,
      `+${settleS} s / before (≤ ${RETURN_TARGET})`,
      `anon RSS at +${settleS} s MB`,
      `V8 heapTotal at +${settleS} s MB`,
      'after forced GC: RSS / heapUsed / external MB',
      'RSS 3 s after all clients left (GC) MB',
      'delivered / expected',
      'deliveries/s',
      'p99',
      'server µs/delivery',
    ],
  ];
  for (const { variant, run } of rows) {
    const ratio = returnRatio(run);
    out.push([
      `\`${variant.label}\``,
      fmtMb(run.memory.idleRawRss),
      fmtMb(run.rssBeforeTraffic),
      fmtMb(run.memory.peakRss),
      fmtMb(rssAfter(run, 10)),
      fmtMb(rssAfter(run, 30)),
      fmtMb(run.settle?.at(-1)?.rssBytes),
      Number.isNaN(ratio) ? 'n/a' : `**${ratio.toFixed(2)}×**${ratio <= RETURN_TARGET ? ' met' : ''}`,
      fmtMb(run.settle?.at(-1)?.anonBytes),
      heapTotalAtSettleEndMb(run)?.toFixed(1) ?? 'n/a',
      `${fmtMb(run.memory.afterTraffic?.rss)} / ${fmtMb(run.memory.afterTraffic?.heapUsed)} / ${fmtMb(run.memory.afterTraffic?.external)}`,
      fmtMb(run.rssAfterClose),
      `${fmtInt(run.unique)} / ${fmtInt(run.expected)}`,
      fmtInt(run.deliveriesPerSec),
      fmtMs(run.latencyMs.p99),
      run.unique > 0 ? ((run.serverCpuMs * 1_000) / run.unique).toFixed(2) : 'n/a',
    ]);
  }
  return markdownTable(out);
}

export const MEMORY_RETURN_HOW_TO_READ =
  'How to read: each variant is our gateway with that environment on top of the run\'s, through the saturation scenario; after the last ' +
  'delivery its VmRSS is read every second for the settle time with every socket still subscribed and nothing forcing a GC (the sampler ' +
  'reads `process.memoryUsage()` without GC). "before burst" is VmRSS right before the first publish (after the subscribed phase\'s two ' +
  'forced GCs). "V8 heapTotal at +60 s" is the heap V8 still holds committed; RSS minus it is native memory (malloc arenas, uWS send ' +
  'buffers, code). The forced GC comes only after the settle time: a variant whose RSS falls there held V8 garbage, one whose RSS stays held native memory.';
