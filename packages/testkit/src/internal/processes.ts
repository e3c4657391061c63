import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether `pid` still runs. A zombie counts as gone: it holds no ports or files, and a process
 * re-parented to PID 1 can stay a zombie for a second or more on this machine. A JVM's main
 * thread turns zombie before its other threads finish exiting (its ports close only with the
 * last one), so every task is checked.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const taskDir = `/proc/${pid}/task`;
  let tids: string[];
  try {
    tids = readdirSync(taskDir);
  } catch {
    return true; // no /proc (not Linux): kill(0) is all we have
  }
  for (const tid of tids) {
    try {
      const state = /^State:\s+(\S)/m.exec(readFileSync(`${taskDir}/${tid}/status`, 'utf8'))?.[1];
      if (state !== undefined && state !== 'Z' && state !== 'X') return true;
    } catch {
      // the thread exited between readdir and read
    }
  }
  return false;
}

/** Output of a script that exited 0. */
export interface ScriptResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs a bash script to completion. Fails with its exit code and the tail of its output, which
 * is where infra scripts explain what went wrong (missing java, port taken, broker log tail).
 */
export function runScript(
  file: string,
  args: readonly string[],
  { timeoutMs }: { timeoutMs: number },
): Promise<ScriptResult> {
  return new Promise((resolveRun, reject) => {
    execFile(
      'bash',
      [file, ...args],
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) {
          resolveRun({ stdout, stderr });
          return;
        }
        const how =
          error.killed === true
            ? `was killed after the ${timeoutMs} ms limit`
            : `exited with ${String(error.code ?? error.signal)}`;
        const output = `${stdout}${stderr}`.trim().split('\n').slice(-60).join('\n');
        reject(new Error(`${file} ${args.join(' ')} ${how}:\n${output}`, { cause: error }));
      },
    );
  });
}

// Cleanups that must run even when a test file throws and never reaches its afterAll. 'exit'
// handlers must be synchronous, so each one only sends a signal.
const exitCleanups = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Runs `cleanup` (synchronous: signals only) when this process exits, unless the returned
 * function is called first. A SIGKILLed process runs no handlers: see {@link killWhenGone}.
 */
export function onProcessExit(cleanup: () => void): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const fn of exitCleanups) {
        try {
          fn();
        } catch {
          // best effort: the process is going away
        }
      }
    });
  }
  exitCleanups.add(cleanup);
  return () => exitCleanups.delete(cleanup);
}

/**
 * Starts a detached watchdog that SIGKILLs `childPid` once this process is gone, for the case no
 * exit handler covers: the test runner SIGKILLs its worker. It polls once a second and ends
 * by itself when either process is gone.
 */
export function killWhenGone(childPid: number): void {
  const script = `
    alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
    while alive "$0" && alive "$1"; do sleep 1; done
    alive "$1" && kill -KILL "$1" 2>/dev/null
    exit 0`;
  const watchdog = spawn('bash', ['-c', script, String(process.pid), String(childPid)], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
}
