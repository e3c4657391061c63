// What the kernel says about a process: /proc/<pid>/status (VmRSS, VmHWM) and the machine's load.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { killWhenGone } from '@wirestream/testkit';

export const MiB = 1_048_576;

/** VmRSS and its peak VmHWM in bytes; undefined once the process is gone. */
export function rssOf(pid: number): { rss: number; hwm: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

export function loadAverage(): string {
  return loadavg().map((l) => l.toFixed(1)).join(' ');
}

/** A built app or tool this bench started (`node <script>`), with its log lines and exit time. */
export interface Child {
  readonly label: string;
  readonly pid: number;
  /** performance.now() at exit, once exited. */
  exitedAt(): number | undefined;
  exitCode(): number | null | undefined;
  readonly exited: Promise<void>;
  /** Resolves with the first JSON log line whose `msg` is `msg` (waits up to `timeoutMs`). */
  waitForLog(msg: string, timeoutMs: number): Promise<void>;
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startNode(label: string, args: readonly string[], env: Readonly<Record<string, string>>): Child {
  const child = spawn(process.execPath, args, { env: { PATH: process.env['PATH'] ?? '', NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${label}: node ${args.join(' ')}`);
  const pid = child.pid;
  running.add(child);
  killWhenGone(pid);
  let output = '';
  const messages = new Set<string>();
  const waiters: { msg: string; resolve: () => void }[] = [];
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-6_000);
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1];
      if (msg === undefined) continue;
      messages.add(msg);
      for (const w of waiters.filter((x) => x.msg === msg)) w.resolve();
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-6_000);
  });
  let exitedAt: number | undefined;
  let code: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (c) => {
      exitedAt = performance.now();
      code = c;
      running.delete(child);
      resolve();
    }),
  );
  return {
    label,
    pid,
    exited,
    exitedAt: () => exitedAt,
    exitCode: () => code,
    tail: () => output.trim(),
    waitForLog(msg, timeoutMs) {
      if (messages.has(msg)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${label}: no "${msg}" log line within ${timeoutMs} ms:\n${output.trim()}`)), timeoutMs);
        waiters.push({ msg, resolve: () => (clearTimeout(timer), resolve()) });
        void exited.then(() => reject(new Error(`${label} exited (code ${String(code)}) before "${msg}":\n${output.trim()}`)));
      });
    },
    async stop(graceMs = 10_000) {
      if (exitedAt !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Prometheus text → per metric name, the sum of its series (one series for the process gauges). */
export async function scrape(url: string, timeoutMs = 2_000): Promise<Map<string, number> | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const values = new Map<string, number>();
    for (const line of (await res.text()).split('\n')) {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
      if (m) values.set(m[1] as string, (values.get(m[1] as string) ?? 0) + Number(m[3]));
    }
    return values;
  } catch {
    return undefined;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function quantity(bytes: number): string {
  return (bytes / MiB).toFixed(1);
}
