// A trimmed copy of tests/e2e/src/app-process.ts: test projects do not import each other.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { findRepoRoot, waitFor } from '@wirestream/testkit';

/** A built app (`apps/<name>/dist/main.js`) running as a child process, with its JSON log lines. */
export interface AppProcess {
  readonly name: string;
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first log line matching `predicate` (waits with a deadline). */
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGTERM, SIGKILL after 15 s; resolves with the exit code once the process is gone. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();
// A crashed test run must not leave apps behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startApp(name: 'ingest' | 'gateway', env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, [join(findRepoRoot(), 'apps', name, 'dist', 'main.js')], {
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
    lines,
    waitForLog: (predicate, what, timeoutMs = 60_000) =>
      waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr}`);
          return lines.find(predicate);
        },
        { timeoutMs, message: `${name} to log ${what}` },
      ),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
