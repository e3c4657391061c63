import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { getJson, startGateway, startServerProcess, type ManagedProcess, type ServerProcess } from '@wirestream/bench-kit';

/** The servers a run can measure. */
export type StackName = 'naive' | 'card' | 'ours' | 'ours-prod' | 'ours-sse' | 'ours-legacy' | 'ours-no-metrics' | 'ours-base' | 'ours-base-sse' | 'bare' | 'bare-corked' | 'bare-projecting' | 'bare-unicast';

/** Our gateway, with or without metrics, over WebSocket or SSE: the stacks that run apps/gateway. */
export function isGateway(stack: StackName): stack is GatewayStack {
  return stack === 'ours' || stack === 'ours-prod' || stack === 'ours-sse' || stack === 'ours-legacy' || stack === 'ours-no-metrics' || isBase(stack);
}

type GatewayStack = 'ours' | 'ours-prod' | 'ours-sse' | 'ours-legacy' | 'ours-no-metrics' | 'ours-base' | 'ours-base-sse';

/** The stacks that run the --base-gateway checkout's build. */
function isBase(stack: StackName): stack is 'ours-base' | 'ours-base-sse' {
  return stack === 'ours-base' || stack === 'ours-base-sse';
}

/** The protocol a stack's load client speaks (graphql-transport-ws unless said otherwise). */
export function protocolOf(stack: StackName): 'graphql-transport-ws' | 'graphql-ws' | 'sse' {
  return stack === 'ours-sse' || stack === 'ours-base-sse' ? 'sse' : stack === 'ours-legacy' ? 'graphql-ws' : 'graphql-transport-ws';
}

export const STACK_LABELS: Readonly<Record<StackName, string>> = {
  naive: 'naive (ws + graphql-redis-subscriptions + lodash)',
  card: 'card stack, usual way (graphql-ws uWS adapter + memo transform)',
  ours: 'ours (apps/gateway)',
  'ours-prod': 'ours with the production settings: JWT auth (HS256, a token per socket), metrics and history on',
  'ours-sse': 'ours over GraphQL over SSE (same gateway, same events; one POST stream per client)',
  'ours-legacy': 'ours over the legacy subscriptions-transport-ws protocol (subprotocol graphql-ws; same gateway, same events)',
  'ours-no-metrics': 'ours with GATEWAY_METRICS=false (issue 7: what metrics cost)',
  'ours-base': 'ours as built in the --base-gateway checkout (base vs change, same run)',
  'ours-base-sse': 'ours as built in the --base-gateway checkout, over GraphQL over SSE',
  bare: 'bare uWS, no GraphQL (ceiling)',
  'bare-corked': 'bare uWS, frames of one event-loop turn corked per socket',
  'bare-projecting':
    'bare uWS projecting per distinct operation: envelope parsed once, per operation its fields picked and JSON.stringify\'d once, corked per socket (issue 18 baseline)',
  'bare-unicast': "bare uWS unicast: each batch part's envelopes sent whole to the sockets of their routing key (no payload parse, no projection)",
};

export const STACK_SHORT: Readonly<Record<StackName, string>> = {
  naive: 'naive',
  card: 'card stack',
  ours: 'ours',
  'ours-prod': 'ours, JWT + metrics + history',
  'ours-sse': 'ours, SSE',
  'ours-legacy': 'ours, legacy graphql-ws',
  'ours-no-metrics': 'ours, metrics off',
  'ours-base': 'ours (base)',
  'ours-base-sse': 'ours (base), SSE',
  bare: 'bare uWS',
  'bare-corked': 'bare uWS corked',
  'bare-projecting': 'bare uWS projecting',
  'bare-unicast': 'bare uWS unicast',
};

/**
 * The HS256 secret of `ours-prod` (GATEWAY_JWT_HS256_SECRET) and what its load client signs
 * every socket's token with: a bench-only value, on loopback.
 */
export const BENCH_JWT_SECRET = 'wirestream-fanout-bench-hs256-secret-not-for-production';

/** The claims of each `ours-prod` socket's token (the load client adds `sub`): the scope the field needs, valid for a day. */
export function benchJwtClaims(): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1_000);
  return { scope: 'subscribe:listingUpdated', iat: now, exp: now + 86_400 };
}

/** What `ours-prod` runs with on top of the bench's defaults: the settings a deployment has on. */
const PRODUCTION_ENV: Readonly<Record<string, string>> = {
  GATEWAY_AUTH_MODE: 'jwt',
  GATEWAY_JWT_HS256_SECRET: BENCH_JWT_SECRET,
  GATEWAY_METRICS: 'true',
  GATEWAY_HISTORY: 'true',
};

export interface ServerHandle {
  readonly stack: StackName;
  readonly process: ManagedProcess;
  readonly port: number;
  readonly wsUrl: string;
  readonly httpBase: string;
}

const require = createRequire(import.meta.url);

let baseGatewayMain: string | undefined;
/** The Node.js that runs `ours-base` (this process's unless --base-node names another). */
let baseNode = process.execPath;

/**
 * Measures `ours-base` from another checkout of this repository (e.g. a `git worktree` of the
 * base commit, built): the base-vs-change comparison of a hot-path change, interleaved in one run.
 * `node` runs it on another Node.js (a runtime change: the base on its own runtime).
 */
export function useBaseGateway(checkout: string, node?: string): void {
  const main = resolve(checkout, 'apps', 'gateway', 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`--base-gateway ${checkout}: no ${main}; build that checkout first (npx turbo run build --filter=@wirestream/gateway)`);
  if (node !== undefined && !existsSync(node)) throw new Error(`--base-node ${node}: no such file; give the path of a node binary`);
  baseGatewayMain = main;
  baseNode = node ?? process.execPath;
}

/** The built gateway entry point (the devDependency makes turbo build it before this bench). */
function gatewayMain(stack: GatewayStack): string {
  if (isBase(stack)) {
    if (baseGatewayMain === undefined) throw new Error(`stack ${stack} needs --base-gateway <checkout>`);
    return baseGatewayMain;
  }
  return join(dirname(require.resolve('@wirestream/gateway/package.json')), 'dist', 'main.js');
}

function baselineMain(file: string): string {
  return new URL(`./servers/${file}`, import.meta.url).pathname;
}

/**
 * Starts one stack as its own process on a free port, with --expose-gc so `/debug/memory?gc=1`
 * can force collections. Resolves once it answers `/healthz` (and, for ours, `/readyz`).
 */
export async function startServer(
  stack: StackName,
  redisUrl: string,
  nodeArgs: readonly string[] = [],
  commonEnv: Readonly<Record<string, string>> = {},
  gatewayEnv: Readonly<Record<string, string>> = {},
  /** `cgroup.procs` of a memory budget the server runs under (see memory-budget.ts). */
  cgroupProcs?: string,
): Promise<ServerHandle> {
  let proc: ServerProcess;
  if (isGateway(stack)) {
    proc = await startGateway({
      label: `${stack} server`,
      redisUrl,
      nodeArgs: ['--expose-gc', ...nodeArgs],
      main: gatewayMain(stack),
      env: {
        ...commonEnv,
        ...gatewayEnv,
        // Last, so --gateway-env cannot turn the comparison into ours vs ours.
        ...(stack === 'ours-no-metrics' ? { GATEWAY_METRICS: 'false' } : {}),
        ...(stack === 'ours-prod' ? PRODUCTION_ENV : {}),
      },
      cgroupProcs,
      node: isBase(stack) ? baseNode : process.execPath,
      readyTimeoutMs: 20_000,
    });
  } else {
    const file = { naive: 'naive.js', card: 'card-stack.js', bare: 'bare-uws.js', 'bare-corked': 'bare-uws.js', 'bare-projecting': 'bare-uws.js', 'bare-unicast': 'bare-uws.js' }[stack];
    proc = await startServerProcess(`${stack} server`, ['--expose-gc', ...nodeArgs, baselineMain(file)], {
      env: (host, port) => ({
        PORT: String(port),
        HOST: host,
        REDIS_URL: redisUrl,
        BARE_CORK_BATCH: String(stack === 'bare-corked' || stack === 'bare-projecting'),
        BARE_PROJECT: String(stack === 'bare-projecting'),
        BARE_UNICAST: String(stack === 'bare-unicast'),
        ...commonEnv,
      }),
      readyPath: '/healthz',
      readyTimeoutMs: 20_000,
      cgroupProcs,
    });
  }
  return { stack, process: proc, port: proc.port, wsUrl: proc.wsUrl, httpBase: proc.httpBase };
}

export interface MemoryUsage {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/** `GET /debug/memory` (after two forced GCs with `gc`), or undefined when the server is too busy to answer in time. */
export function fetchMemory(server: Pick<ServerHandle, 'httpBase'>, gc: boolean, timeoutMs: number): Promise<MemoryUsage | undefined> {
  return getJson<MemoryUsage>(`${server.httpBase}/debug/memory${gc ? '?gc=1' : ''}`, timeoutMs);
}

/**
 * Major GCs (mark-compacts) the server ran so far: `wirestream_nodejs_gc_duration_seconds_count`
 * of kind "major" in its `GET /metrics` (prom-client's process metrics, which the gateway exports
 * by default); undefined for a server without them (bare uWS) or on timeout. The count says whether
 * a run's window held V8's major collections (decision 0044), whose concurrent marking runs on
 * V8's worker threads and counts in the process's CPU.
 */
export async function fetchMajorGcs(server: Pick<ServerHandle, 'httpBase'>, timeoutMs = 2_000): Promise<number | undefined> {
  try {
    const res = await fetch(`${server.httpBase}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    let count: number | undefined;
    for (const line of (await res.text()).split('\n')) {
      if (line.startsWith('wirestream_nodejs_gc_duration_seconds_count{') && line.includes('kind="major"')) count = (count ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return count;
  } catch {
    return undefined;
  }
}

/** `GET /stats`, or undefined on timeout. */
export function fetchStats(server: Pick<ServerHandle, 'httpBase'>, timeoutMs = 2_000): Promise<Record<string, unknown> | undefined> {
  return getJson<Record<string, unknown>>(`${server.httpBase}/stats`, timeoutMs);
}
