/**
 * What the kernel says about a process and the machine, from /proc (Linux only, like the machines
 * the benches run on). Readers of a process return undefined once it is gone.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Clock ticks per second of /proc/<pid>/stat and /proc/stat times (USER_HZ: 100 on every Linux we run on). */
export const CLOCK_TICKS_PER_S = readClockTicks();

function readClockTicks(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

export const MiB = 1_048_576;

/** `/proc/<pid>/status` fields in kB (VmRSS, VmHWM, RssAnon, …) as bytes; NaN for a missing field. */
export function readStatusBytes<const F extends string>(pid: number, fields: readonly F[]): Record<F, number> | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const out = {} as Record<F, number>;
  for (const field of fields) out[field] = Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1_024;
  return out;
}

/** VmRSS of a process in bytes. */
export function readRssBytes(pid: number): number | undefined {
  const rss = readStatusBytes(pid, ['VmRSS'])?.VmRSS;
  return rss === undefined || Number.isNaN(rss) ? undefined : rss;
}

/** VmRSS and its peak VmHWM, in bytes. */
export function readRssAndPeak(pid: number): { rss: number; hwm: number } | undefined {
  const s = readStatusBytes(pid, ['VmRSS', 'VmHWM']);
  return s && { rss: s.VmRSS, hwm: s.VmHWM };
}

/** RssAnon, and RssFile + RssShmem, in bytes. */
export function readRssSplit(pid: number): { anonBytes: number; fileBytes: number } | undefined {
  const s = readStatusBytes(pid, ['RssAnon', 'RssFile', 'RssShmem']);
  return s && { anonBytes: s.RssAnon, fileBytes: s.RssFile + s.RssShmem };
}

export interface CpuTimes {
  readonly userMs: number;
  readonly systemMs: number;
}

/** CPU time of a process in ms (user, system; all threads), from `/proc/<pid>/stat` (10 ms ticks). */
export function readCpuTimes(pid: number): CpuTimes | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  // After the name, state is field 3, so utime (14) and stime (15) are at indexes 11 and 12.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { userMs: (Number(fields[11]) * 1_000) / CLOCK_TICKS_PER_S, systemMs: (Number(fields[12]) * 1_000) / CLOCK_TICKS_PER_S };
}

/** CPU time (user + system) of a process in ms. */
export function readCpuMs(pid: number): number | undefined {
  const times = readCpuTimes(pid);
  return times === undefined ? undefined : times.userMs + times.systemMs;
}

/** Summed CPU times of several processes (gone ones count 0). */
export function readCpuTimesOf(pids: readonly number[]): CpuTimes {
  let userMs = 0;
  let systemMs = 0;
  for (const pid of pids) {
    const t = readCpuTimes(pid);
    if (t) {
      userMs += t.userMs;
      systemMs += t.systemMs;
    }
  }
  return { userMs, systemMs };
}

/**
 * CPU time of every thread of a process in ms, from `/proc/<pid>/task/<tid>/schedstat` (time on a
 * CPU in ns): /proc/<pid>/stat counts in 10 ms ticks, and a Redis node at a few hundred events/s
 * uses a few ms per second, below what ticks resolve. A thread that exited during a window would
 * take its time with it; node and redis-server keep their threads for their lifetime.
 */
export function readSchedCpuMs(pid: number): number | undefined {
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

/** Summed schedstat CPU ms of several processes (gone ones count 0). */
export function readSchedCpuMsOf(pids: readonly number[]): number {
  let ms = 0;
  for (const pid of pids) ms += readSchedCpuMs(pid) ?? 0;
  return ms;
}

/** Machine-wide CPU counters from the first line of /proc/stat, in clock ticks (all cores). */
export interface MachineTicks {
  /** user + nice + system + irq + softirq: every process's work, the hypervisor's steal left out. */
  readonly busy: number;
  readonly steal: number;
  readonly total: number;
}

export function readMachineTicks(): MachineTicks {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq, steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

/** Busy CPU time of the whole machine (all cores, everything but idle and iowait, steal included) in ms. */
export function readMachineBusyMs(): number {
  try {
    const { busy, steal } = readMachineTicks();
    return ((busy + steal) * 1_000) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** MemAvailable of the whole machine in MB (/proc/meminfo), or undefined off Linux. */
export function readMemAvailableMb(): number | undefined {
  try {
    const match = /^MemAvailable:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return match ? Number(match[1]) / 1_024 : undefined;
  } catch {
    return undefined;
  }
}

/** The 1-, 5- and 15-minute load averages. */
export function loadAverages(): [number, number, number] {
  const [a = 0, b = 0, c = 0] = os.loadavg();
  return [a, b, c];
}

/** The load averages as `uptime` prints them: `0.4 0.7 1.1`. */
export function loadAverageText(): string {
  return loadAverages()
    .map((l) => l.toFixed(1))
    .join(' ');
}

/**
 * CPU the rest of the machine (other tenants) used over a window, in % of one core: the machine's
 * busy time over the window less what our own processes used, never below 0.
 */
export function othersCpuPct(machineBusyDeltaMs: number, ownCpuMs: number, windowMs: number): number {
  return windowMs > 0 ? Math.max(0, ((machineBusyDeltaMs - ownCpuMs) / windowMs) * 100) : 0;
}
