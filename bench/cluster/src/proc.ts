/**
 * What this bench reads about processes and the machine, from /proc (Linux only, like the machines
 * the benches run on).
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Clock ticks per second of /proc/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time of every thread of a process in ms, from `/proc/<pid>/task/<tid>/schedstat` (time on a
 * CPU in ns): /proc/<pid>/stat counts in 10 ms ticks, and a Redis node at a few hundred events/s
 * uses a few ms per second, below what ticks resolve. A thread that exited during a window would
 * take its time with it; gateways (node) and redis-server keep their threads for their lifetime.
 * Undefined once the process is gone.
 */
export function readCpuMs(pid: number): number | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread exited between readdir and read
    }
  }
  return ns / 1e6;
}

/** Summed CPU ms of several processes (gone ones count 0). */
export function readCpuMsOf(pids: readonly number[]): number {
  let ms = 0;
  for (const pid of pids) ms += readCpuMs(pid) ?? 0;
  return ms;
}

/** Busy CPU time of the whole machine (all cores, everything but idle and iowait) in ms, from /proc/stat. */
export function readMachineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return ((total - idle) * 1_000) / TICKS_PER_SECOND;
}

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export function loadAverages(): [number, number, number] {
  const [a = 0, b = 0, c = 0] = os.loadavg();
  return [a, b, c];
}

export interface QuietWait {
  /** Whether the 1-minute load went below the bound before the deadline. */
  readonly reached: boolean;
  readonly waitedMs: number;
  /** The 1-minute load at each poll, first to last. */
  readonly polls: readonly number[];
}

export interface QuietWaitOptions {
  /** Start once the 1-minute load average is below this. */
  readonly maxLoad: number;
  /** Give up (and run anyway) after this. */
  readonly maxWaitMs: number;
  /** @default 30_000 (30 seconds) */
  readonly pollMs?: number;
  readonly log: (line: string) => void;
}

/**
 * Waits for a quiet machine: the machine is shared (2 cores) and other tenants' work shows up in
 * every CPU figure. Never fails: a machine that stays busy is run on anyway, and the results say so.
 */
export async function waitForQuietMachine({ maxLoad, maxWaitMs, pollMs = 30_000, log }: QuietWaitOptions): Promise<QuietWait> {
  const started = Date.now();
  const polls: number[] = [];
  for (;;) {
    const [load] = loadAverages();
    polls.push(load);
    const waitedMs = Date.now() - started;
    if (load < maxLoad) return { reached: true, waitedMs, polls };
    if (waitedMs + pollMs > maxWaitMs) {
      log(`  1-minute load still ${load.toFixed(2)} after ${(waitedMs / 60_000).toFixed(1)} min: running anyway (the results say so)`);
      return { reached: false, waitedMs, polls };
    }
    log(`  1-minute load ${load.toFixed(2)} ≥ ${maxLoad}: waiting ${pollMs / 1_000} s (${(waitedMs / 60_000).toFixed(1)} of ${maxWaitMs / 60_000} min)`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
