/**
 * Gateway processes: the built apps/gateway (`dist/main.js`) in Redis Cluster mode, each on its own
 * free port. Spawned here rather than with testkit's `startApp` for one reason: node flags
 * (`--cpu-prof` is refused in NODE_OPTIONS).
 */
import { join } from 'node:path';
import { startNodeProcess, waitForHttpOk, type ManagedProcess } from '@wirestream/bench-kit';
import { findRepoRoot, freePort } from '@wirestream/testkit';

const HOST = '127.0.0.1';
/** A gateway must answer /readyz (its broker connected to every primary) within this. */
const READY_TIMEOUT_MS = 30_000; // 30 seconds: a loaded 2-core machine starts node slowly

export interface GatewayProcess extends ManagedProcess {
  readonly index: number;
  readonly wsUrl: string;
  readonly httpBase: string;
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

async function startGateway(index: number, { redisUrl, nodeEnv, cpuProfileDir }: GatewayStartOptions): Promise<GatewayProcess> {
  const port = await freePort();
  const main = join(findRepoRoot(), 'apps', 'gateway', 'dist', 'main.js');
  const nodeArgs = cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`];
  const proc = startNodeProcess(`gateway ${index + 1}`, [...nodeArgs, main], {
    inheritEnv: false,
    // SIGTERM drains the gateway: give it time before SIGKILL.
    graceMs: 10_000,
    env: {
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
    },
  });
  const httpBase = `http://${HOST}:${port}`;
  await waitForHttpOk(proc, `${httpBase}/readyz`, READY_TIMEOUT_MS);
  return Object.assign(proc, { index, wsUrl: `ws://${HOST}:${port}/graphql`, httpBase });
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
