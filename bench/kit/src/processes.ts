/**
 * Node processes a bench starts (a built app, a server under test, a loop): spawned with their
 * output kept, stopped SIGTERM-then-SIGKILL, and never left behind (an 'exit' hook, SIGINT/SIGTERM
 * handlers and testkit's detached watchdog for a SIGKILLed bench).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { killWhenGone } from '@wirestream/testkit';

/** A process this bench started; it must be gone when the bench ends, whatever happens. */
export interface ManagedProcess {
  readonly label: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Exit description once exited (`code 0`, `signal SIGKILL`), else undefined. */
  exitInfo(): string | undefined;
  /** Exit code once exited (null after a signal), else undefined. */
  exitCode(): number | null | undefined;
  /** performance.now() at exit, once exited. */
  exitedAt(): number | undefined;
  /** The last characters it wrote (stdout + stderr), for error messages. */
  tail(): string;
  /** Resolves once a line of its stdout matches `test` (a JSON log line's `msg`, when a string); rejects on timeout or exit. */
  waitForLine(test: string | RegExp, timeoutMs: number): Promise<void>;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  /** Added to the environment: this process's whole environment, or only PATH when `inheritEnv` is false. */
  readonly env?: Readonly<Record<string, string>>;
  /** @default true */
  readonly inheritEnv?: boolean;
  /** The node binary (another runtime for a base): @default process.execPath */
  readonly node?: string | undefined;
  /**
   * A cgroup's `cgroup.procs`: a shell writes its own pid there and then execs node, so the process
   * is under that cgroup's limits from its first allocation on.
   */
  readonly cgroupProcs?: string | undefined;
  /** What `stop()` waits before SIGKILL. @default 5_000 (5 seconds) */
  readonly graceMs?: number;
  /** How much output `tail()` keeps. @default 6_000 characters */
  readonly tailChars?: number;
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
  // A signal ends the bench without 'exit' handlers: kill ours, then let the signal do what it
  // would have done (`once` has removed this listener; a test runner's own handler still runs).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
}

/** `msg` of a JSON log line (pino's), or undefined. */
function logMessage(line: string): string | undefined {
  return /"msg":"([^"]*)"/.exec(line)?.[1];
}

/** Spawns `node <args>` and keeps what it writes; see the module comment. */
export function startNodeProcess(label: string, args: readonly string[], options: StartOptions = {}): ManagedProcess {
  const { env = {}, inheritEnv = true, node = process.execPath, cgroupProcs, graceMs: defaultGraceMs = 5_000, tailChars = 6_000 } = options;
  installHooks();
  const [command, argv] = cgroupProcs === undefined ? [node, args] : ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroupProcs, node, ...args]];
  const child = spawn(command, argv, {
    env: inheritEnv ? { ...process.env, ...env } : { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${label}: node ${args.join(' ')}`);
  const pid = child.pid;
  running.add(child);
  killWhenGone(pid);
  let output = '';
  const keep = (text: string): void => {
    output = (output + text).slice(-tailChars);
  };
  // What a later wait may ask for: every distinct log `msg` (few), and the last lines for patterns.
  const messages = new Set<string>();
  const lines: string[] = [];
  const waiters = new Set<{ test: string | RegExp; resolve: () => void }>();
  const matches = (test: string | RegExp, line: string): boolean => (typeof test === 'string' ? logMessage(line) === test : test.test(line));
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    keep(text);
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const msg = logMessage(line);
      if (msg !== undefined) messages.add(msg);
      lines.push(line);
      if (lines.length > 200) lines.shift();
      for (const w of waiters) if (matches(w.test, line)) w.resolve();
    }
  });
  child.stderr.on('data', (chunk: Buffer) => keep(chunk.toString('utf8')));
  let info: string | undefined;
  let code: number | null | undefined;
  let exitedAt: number | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (c, signal) => {
      exitedAt = performance.now();
      code = c;
      info = c !== null ? `code ${c}` : `signal ${String(signal)}`;
      running.delete(child);
      resolve();
    });
  });
  return {
    label,
    pid,
    child,
    exited,
    exitInfo: () => info,
    exitCode: () => code,
    exitedAt: () => exitedAt,
    tail: () => output.trim(),
    waitForLine(test, timeoutMs) {
      if (typeof test === 'string' ? messages.has(test) : lines.some((line) => test.test(line))) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const waiter = { test, resolve: () => (clearTimeout(timer), waiters.delete(waiter), resolve()) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`${label}: no "${String(test)}" log line within ${timeoutMs} ms:\n${output.trim()}`));
        }, timeoutMs);
        waiters.add(waiter);
        void exited.then(() => {
          if (!waiters.has(waiter)) return;
          clearTimeout(timer);
          reject(new Error(`${label} exited (code ${String(code)}) before "${String(test)}":\n${output.trim()}`));
        });
      });
    },
    async stop(graceMs = defaultGraceMs) {
      if (info !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Polls `url` until it answers 2xx (a `/readyz`): throws with the process's output if it exits first
 * or `timeoutMs` passes (and then stops it).
 */
export async function waitForHttpOk(proc: ManagedProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exit = proc.exitInfo();
    if (exit !== undefined) throw new Error(`${proc.label} exited (${exit}) before it was ready:\n${proc.tail()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.stop(0);
      throw new Error(`${proc.label} did not answer ${new URL(url).pathname} within ${timeoutMs / 1_000} s:\n${proc.tail()}`);
    }
    await sleep(100);
  }
}
