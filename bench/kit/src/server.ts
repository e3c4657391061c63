/**
 * A server under test as its own node process: on a free port of 127.0.0.1, given its host and
 * port through its environment, and waited for until an HTTP path answers 200. The built gateway
 * is one (`startGateway`), with the settings every bench gives it.
 */
import { join } from 'node:path';
import { findRepoRoot, freePort } from '@wirestream/testkit';
import { startNodeProcess, waitForHttpOk, type ManagedProcess, type StartOptions } from './processes.js';

const HOST = '127.0.0.1';

/** A started server: its process, and where it listens. */
export interface ServerProcess extends ManagedProcess {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly httpBase: string;
  /** `ws://127.0.0.1:<port>/graphql` */
  readonly wsUrl: string;
}

export interface ServerStartOptions extends Omit<StartOptions, 'env'> {
  /** Its environment (added as `StartOptions.env`), given the host and port it must listen on. */
  readonly env: (host: string, port: number) => Readonly<Record<string, string>>;
  /** What answers 200 once it is ready. */
  readonly readyPath: string;
  /** @default 30_000 (30 seconds: a loaded 2-core machine starts node slowly) */
  readonly readyTimeoutMs?: number;
}

/** Spawns `node <args>` on a free port and resolves once `readyPath` answers 200 (it is stopped, and the error names its output, if not in time). */
export async function startServerProcess(label: string, args: readonly string[], { env, readyPath, readyTimeoutMs = 30_000, ...start }: ServerStartOptions): Promise<ServerProcess> {
  const port = await freePort();
  const proc = startNodeProcess(label, args, { ...start, env: env(HOST, port) });
  const httpBase = `http://${HOST}:${port}`;
  await waitForHttpOk(proc, httpBase + readyPath, readyTimeoutMs);
  return Object.assign(proc, { port, httpBase, wsUrl: `ws://${HOST}:${port}/graphql` });
}

/**
 * What every bench sets on the gateway: the benches measure the fan-out, not auth (anonymous), read
 * its `/stats` and `/debug/memory` (debug endpoints), and the load client opens thousands of sockets
 * from a few loopback addresses (no per-address limit).
 */
export const BENCH_GATEWAY_ENV: Readonly<Record<string, string>> = Object.freeze({
  LOG_LEVEL: 'warn',
  GATEWAY_AUTH_MODE: 'anonymous',
  GATEWAY_DEBUG_ENDPOINTS: 'true',
  GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
});

export interface GatewayStartOptions extends Omit<StartOptions, 'env'> {
  readonly redisUrl: string;
  /** Added after {@link BENCH_GATEWAY_ENV} (and may override it). @default {} */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags before the script (`--expose-gc`, `--cpu-prof`). @default [] */
  readonly nodeArgs?: readonly string[];
  /** The gateway's entry point. @default this checkout's apps/gateway/dist/main.js */
  readonly main?: string;
  /** @default 'gateway' */
  readonly label?: string;
  /** @default 30_000 (30 seconds) */
  readonly readyTimeoutMs?: number;
}

/** The built gateway on a free port, resolved once `/readyz` answers (its broker connected). */
export function startGateway({ redisUrl, env = {}, nodeArgs = [], main, label = 'gateway', ...start }: GatewayStartOptions): Promise<ServerProcess> {
  const script = main ?? join(findRepoRoot(), 'apps', 'gateway', 'dist', 'main.js');
  return startServerProcess(label, [...nodeArgs, script], {
    ...start,
    env: (host, port) => ({ GATEWAY_HOST: host, GATEWAY_PORT: String(port), REDIS_URL: redisUrl, ...BENCH_GATEWAY_ENV, ...env }),
    readyPath: '/readyz',
  });
}

/** `GET url` as JSON, or undefined when it does not answer 200 within `timeoutMs` (a server too busy, or gone). */
export async function getJson<T>(url: string, timeoutMs: number): Promise<T | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? ((await res.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}
