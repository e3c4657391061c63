/**
 * Gateway processes: the built apps/gateway (`dist/main.js`) in Redis Cluster mode, each on its own
 * free port. Spawned here rather than with testkit's `startApp` for one reason: node flags
 * (`--cpu-prof` is refused in NODE_OPTIONS).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { findRepoRoot, freePort, killWhenGone } from '@wirestream/testkit';

const HOST = '127.0.0.1';
/** A gateway must answer /readyz (its broker connected to every primary) within this. */
const READY_TIMEOUT_MS = 30_000; // 30 seconds: a loaded 2-core machine starts node slowly

export interface GatewayProcess {
  readonly index: number;
  readonly pid: number;
  readonly wsUrl: string;
  readonly httpBase: string;
  readonly child: ChildProcess;
  /** Exit description once exited (`code 0`, `signal SIGKILL`), else undefined. */
  exitInfo(): string | undefined;
  /** The last lines it wrote (stdout + stderr), for error messages. */
  tail(): string;
  /** SIGTERM (the gateway drains), SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** The counters of the gateway's `GET /stats` this bench reads. */
export interface GatewayStats {
  readonly subscriptions: number;
  readonly channels: number;
  readonly confirmedChannels: number;
  readonly eventsIn: number;
  readonly executions: number;
  readonly framesOut: number;
  readonly ready: boolean;
}

export interface GatewayStartOptions {
  /** Any node of the cluster (`redis://127.0.0.1:<port>`): the gateway discovers the others. */
  readonly redisUrl: string;
  /** NODE_ENV of the gateway (as deployed: production). */
  readonly nodeEnv: string;
  /** Write a V8 CPU profile of each gateway into this folder (on its exit). */
  readonly cpuProfileDir?: string | undefined;
}

/** Starts `count` gateways one after the other (each takes its own free port) and waits until each is ready. */
export async function startGateways(count: number, options: GatewayStartOptions): Promise<GatewayProcess[]> {
  const gateways: GatewayProcess[] = [];
  try {
    for (let index = 0; index < count; index++) gateways.push(await startGateway(index, options));
    return gateways;
  } catch (err) {
    await stopGateways(gateways);
    throw err;
  }
}

const running = new Set<ChildProcess>();
// 'exit' handlers must be synchronous: signals only. (The watchdogs cover a SIGKILLed bench.)
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function spawnGateway(index: number, nodeArgs: readonly string[], env: Record<string, string>): Omit<GatewayProcess, 'wsUrl' | 'httpBase'> {
  const main = join(findRepoRoot(), 'apps', 'gateway', 'dist', 'main.js');
  const child = spawn(process.execPath, [...nodeArgs, main], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start gateway ${index + 1}: node ${main}`);
  const pid = child.pid;
  running.add(child);
  killWhenGone(pid);
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
  return {
    index,
    pid,
    child,
    exitInfo: () => info,
    tail: () => output.trim(),
    async stop(graceMs = 10_000) {
      if (info !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function startGateway(index: number, { redisUrl, nodeEnv, cpuProfileDir }: GatewayStartOptions): Promise<GatewayProcess> {
  const port = await freePort();
  const nodeArgs = cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`];
  const proc = spawnGateway(index, nodeArgs, {
    NODE_ENV: nodeEnv,
    GATEWAY_HOST: HOST,
    GATEWAY_PORT: String(port),
    REDIS_MODE: 'cluster',
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    // As the fan-out bench runs it: the bench measures the fan-out, not auth, and the load client
    // opens thousands of sockets from a few loopback addresses.
    GATEWAY_AUTH_MODE: 'anonymous',
    GATEWAY_DEBUG_ENDPOINTS: 'true',
    GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
  });
  const httpBase = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const exit = proc.exitInfo();
    if (exit !== undefined) throw new Error(`gateway ${index + 1} exited (${exit}) before it was ready:\n${proc.tail()}`);
    try {
      const res = await fetch(`${httpBase}/readyz`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.stop(0);
      throw new Error(`gateway ${index + 1} did not answer /readyz within ${READY_TIMEOUT_MS / 1_000} s:\n${proc.tail()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ...proc, wsUrl: `ws://${HOST}:${port}/graphql`, httpBase };
}

/** `GET /stats`, or undefined when the gateway does not answer in time. */
export async function fetchStats(gateway: GatewayProcess, timeoutMs = 5_000): Promise<GatewayStats | undefined> {
  try {
    const res = await fetch(`${gateway.httpBase}/stats`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? ((await res.json()) as GatewayStats) : undefined;
  } catch {
    return undefined;
  }
}

/** Stops them all at once; resolves once all are gone. */
export async function stopGateways(gateways: readonly GatewayProcess[]): Promise<void> {
  await Promise.all(gateways.map((g) => g.stop()));
}
