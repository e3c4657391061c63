import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { killWhenGone } from '@wirestream/testkit';

/** A server process this bench started; it must be gone when the bench ends, whatever happens. */
export interface ManagedProcess {
  readonly label: string;
  readonly pid: number;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Exit description once exited (`code 0`, `signal SIGKILL`), else undefined. */
  exitInfo(): string | undefined;
  /** The last lines it wrote (stdout + stderr), for error messages. */
  tail(): string;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
let hooksInstalled = false;

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // 'exit' handlers must be synchronous: signals only.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the bench's processes\n`);
      process.exit(130);
    });
  }
}

/**
 * Spawns `node <args>` (this process's Node unless `node` names another) with `env` added to ours. A detached watchdog SIGKILLs it if this process
 * dies without running exit handlers (SIGKILL, OOM), so no server outlives the bench.
 *
 * With `cgroupProcs` (a cgroup's `cgroup.procs`), a shell writes its own pid there and then execs
 * node: the process is under that cgroup's limits from its first allocation on.
 */
export function startNodeProcess(label: string, args: readonly string[], env: Record<string, string>, cgroupProcs?: string, node = process.execPath): ManagedProcess {
  installHooks();
  const [command, argv] = cgroupProcs === undefined ? [node, args] : ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroupProcs, node, ...args]];
  const child = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${label}: node ${args.join(' ')}`);
  const pid = child.pid;
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-6_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let info: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      info = code !== null ? `code ${code}` : `signal ${String(signal)}`;
      running.delete(child);
      resolve();
    });
  });
  killWhenGone(pid);
  return {
    label,
    pid,
    exited,
    exitInfo: () => info,
    tail: () => output.trim(),
    async stop(graceMs = 5_000) {
      if (info !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** VmRSS of a process in bytes, or undefined once it is gone. */
export function readRssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1_024 : undefined;
  } catch {
    return undefined;
  }
}

/** RssAnon and RssFile of a process in bytes (/proc/<pid>/status), or undefined once it is gone. */
export function readRssSplit(pid: number): { anonBytes: number; fileBytes: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1_024;
    return { anonBytes: kb('RssAnon'), fileBytes: kb('RssFile') + kb('RssShmem') };
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface CpuTimes {
  readonly userMs: number;
  readonly systemMs: number;
}

/** CPU time of a process in ms (user, system), or undefined once it is gone. */
export function readCpuTimes(pid: number): CpuTimes | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized command name (which may contain spaces): utime is field 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { userMs: (Number(fields[11]) * 1_000) / TICKS_PER_SECOND, systemMs: (Number(fields[12]) * 1_000) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) of a process in ms, or undefined once it is gone. */
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

/** Busy CPU time of the whole machine (all cores, everything but idle and iowait) in ms, from /proc/stat. */
export function readMachineBusyMs(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return ((total - idle) * 1_000) / TICKS_PER_SECOND;
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
