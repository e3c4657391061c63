import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { findRepoRoot } from './findRepoRoot.js';
import { waitFor } from './waitFor.js';

/** A built app (`apps/<name>/dist/<entry>.js`, `main` unless said) running as a child process, with its JSON log lines. */
export interface AppProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first log line matching `predicate` (waits with a deadline). */
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Sends `signal` (SIGKILL after 15 s) and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** The last lines of stderr, for failure messages. */
  stderr(): string;
}

const running = new Set<ChildProcess>();
// A crashed test run must not leave apps behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** `entry`: another program of the app, e.g. the demo's seller subgraph (`startApp('demo', env, 'sellers')`). */
export function startApp(name: 'ingest' | 'gateway' | 'demo', env: Record<string, string>, entry = 'main'): AppProcess {
  const main = join(findRepoRoot(), 'apps', name, 'dist', `${entry}.js`);
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ msg: line });
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );

  return {
    name,
    child,
    lines,
    stderr: () => stderr,
    waitForLog: (predicate, what, timeoutMs = 60_000) =>
      waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr}`);
          return lines.find(predicate);
        },
        { timeoutMs, message: `${name} to log ${what}` },
      ),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
