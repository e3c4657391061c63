/**
 * Gateway processes: the built apps/gateway (`dist/main.js`) in Redis Cluster mode, each on its own
 * free port (the kit's `startGateway`, which takes node flags: `--cpu-prof` is refused in NODE_OPTIONS).
 */
import { getJson, startGateway, type ServerProcess } from '@wirestream/bench-kit';

export interface GatewayProcess extends ServerProcess {
  readonly index: number;
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
    for (let index = 0; index < count; index++) gateways.push(await startClusterGateway(index, options));
    return gateways;
  } catch (err) {
    await stopGateways(gateways);
    throw err;
  }
}

async function startClusterGateway(index: number, { redisUrl, nodeEnv, cpuProfileDir }: GatewayStartOptions): Promise<GatewayProcess> {
  const gateway = await startGateway({
    label: `gateway ${index + 1}`,
    redisUrl,
    nodeArgs: cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`],
    inheritEnv: false,
    // SIGTERM drains the gateway: give it time before SIGKILL.
    graceMs: 10_000,
    env: { NODE_ENV: nodeEnv, REDIS_MODE: 'cluster' },
  });
  return Object.assign(gateway, { index });
}

/** `GET /stats`, or undefined when the gateway does not answer in time. */
export function fetchStats(gateway: GatewayProcess, timeoutMs = 5_000): Promise<GatewayStats | undefined> {
  return getJson<GatewayStats>(`${gateway.httpBase}/stats`, timeoutMs);
}

/** Stops them all at once; resolves once all are gone. */
export async function stopGateways(gateways: readonly GatewayProcess[]): Promise<void> {
  await Promise.all(gateways.map((g) => g.stop()));
}
