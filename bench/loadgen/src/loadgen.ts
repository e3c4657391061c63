import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { addSparse, createHistogram, quantileUs } from './histogram.js';
import { COUNT_NAMES, zeroCounts, type ExpectedDeliveries, type JwtOptions, type WorkerCounters, type WorkerMessage, type WorkerReportMessage, type WorkerStartMessage, type WorkerTarget } from './ipc.js';
import { checkPlan, type OperationPlan } from './operations.js';

/**
 * Open files are capped at 20,000 per process on our machines (`ulimit -n` cannot be raised):
 * leave room for the runtime's own descriptors.
 */
export const MAX_SOCKETS_PER_WORKER = 19_000;

export interface LoadgenOptions {
  /** `ws://127.0.0.1:4000/graphql`; loopback only. Give this or {@link urls}. */
  readonly url?: string;
  /**
   * Several servers (e.g. three gateway processes on their own ports): socket `i` connects to
   * `urls[i % urls.length]`, so every worker and every connect wave spreads evenly over them.
   * Give this or {@link url}.
   */
  readonly urls?: readonly string[];
  /** Sockets to open, one subscription each. */
  readonly sockets: number;
  readonly plan: OperationPlan;
  /** Upper bound of events a run publishes: positions `offsetBase … offsetBase + maxEvents - 1`. */
  readonly maxEvents: number;
  /** @default 0 */
  readonly offsetBase?: number;
  /** The producer's clock offset (see `createBenchClock`), so latencies are on one timeline. */
  readonly clockOffsetUs: number;
  /** Worker processes. @default max(ceil(sockets / 19,000), min(2, sockets)) */
  readonly workers?: number;
  /**
   * Source addresses to spread sockets over; each gives about 28k ephemeral ports towards one
   * server port. @default 127.0.0.1 … 127.0.0.4
   */
  readonly sourceAddresses?: readonly string[];
  /** Handshakes in flight at once, over all workers. @default 256 */
  readonly connectConcurrency?: number;
  /** @default 250 (ms) */
  readonly progressIntervalMs?: number;
  /**
   * Sockets to open right away; {@link Loadgen.connect} opens more (e.g. two waves, to measure
   * per-socket memory as a slope between them). @default sockets
   */
  readonly connectNow?: number;
  /**
   * What the sockets ask the server for to save bandwidth: `deflate` offers permessage-deflate in
   * the upgrade (a browser always does), `delta` subscribes with `extensions: { delta: "fossil" }`.
   * The workers then inflate and apply deltas, so positions are still checked frame by frame.
   * @default { deflate: false, delta: false }
   */
  readonly wire?: { readonly deflate?: boolean; readonly delta?: boolean };
  /**
   * `graphql-transport-ws` (a WebSocket per socket) or `sse` (GraphQL over SSE, graphql-sse's
   * distinct connections mode: one POST per socket to the same `url`'s host, port and path).
   * @default 'graphql-transport-ws'
   */
  readonly protocol?: 'graphql-transport-ws' | 'graphql-ws' | 'sse';
  /**
   * Authenticate like a client of a gateway in jwt mode: each socket signs its own HS256 token
   * (`claims` plus `sub: loadgen-<index>`) and sends it as `{ "token": … }` in `connection_init`.
   * WebSocket protocols only. @default none (an empty connection_init)
   */
  readonly jwt?: JwtOptions;
}

/** Counters summed over workers. */
export interface LoadProgress extends Omit<WorkerCounters, 'workerIndex' | 'cpuUs' | 'rssBytes'> {
  readonly sockets: number;
  /** Subscribed sockets per URL, in the order of `urls` (one entry for `url`). */
  readonly subscribedPerTarget: readonly number[];
  /** Per worker, same order as workers. */
  readonly workerCpuUs: readonly number[];
  readonly workerRssBytes: readonly number[];
}

export interface LatencySummary {
  /** Milliseconds; Infinity when the quantile falls among undelivered events. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/** Counters summed and deliveries merged over workers: the workers' report fields, over all of them. */
export interface LoadReport
  extends LoadProgress,
    Pick<WorkerReportMessage, 'expected' | 'lost' | 'lostPerOperation' | 'firstDeliveryUs' | 'lastDeliveryUs' | 'closeCodes' | 'errorSamples'> {
  readonly latencyMs: LatencySummary;
}

export interface Loadgen {
  /** Worker process ids (for /proc sampling). */
  readonly pids: readonly number[];
  /** Latest counters (updated every `progressIntervalMs`). */
  progress(): LoadProgress;
  /** Resolves once every socket opened so far is subscribed or has failed; rejects after `timeoutMs`. */
  settled(timeoutMs: number): Promise<LoadProgress>;
  /** Opens sockets up to `total` (spread over workers like the first wave); returns the new target. */
  connect(total: number): number;
  /** Final numbers: each worker computes loss against `expected` and ships its histogram. */
  report(expected: ExpectedDeliveries): Promise<LoadReport>;
  /** Closes every socket and ends the workers (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

const workerPath = new URL('./worker.js', import.meta.url).pathname;

/** Forks the workers and starts connecting. */
export function createLoadgen(options: LoadgenOptions): Loadgen {
  const {
    url,
    urls = url === undefined ? [] : [url],
    sockets,
    plan,
    maxEvents,
    offsetBase = 0,
    clockOffsetUs,
    workers = Math.max(Math.ceil(sockets / MAX_SOCKETS_PER_WORKER), Math.min(2, sockets)),
    sourceAddresses = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'],
    connectConcurrency = 256,
    progressIntervalMs = 250,
    connectNow = sockets,
    wire = {},
    protocol = 'graphql-transport-ws',
    jwt,
  } = options;
  if (jwt !== undefined && protocol === 'sse') throw new RangeError('jwt: the SSE client sends no connection_init; use a WebSocket protocol');
  if (jwt !== undefined && Buffer.byteLength(jwt.hs256Secret) < 32) throw new RangeError('jwt.hs256Secret must be at least 32 bytes (what the gateway accepts)');
  if ((url === undefined) === (options.urls === undefined)) {
    throw new RangeError('give either url (one server) or urls (several, sockets assigned round-robin), not both and not neither');
  }
  if (urls.length === 0) throw new RangeError('urls must name at least one server');
  const endpoints = urls.map(parseTarget);
  checkPlan(plan);
  for (const address of sourceAddresses) {
    if (!isLoopback(address)) throw new RangeError(`source address ${address} is not a loopback address (127.x.x.x)`);
  }
  if (!Number.isInteger(sockets) || sockets < 1) throw new RangeError(`sockets must be a positive integer, got ${sockets}`);
  if (!Number.isInteger(workers) || workers < 1 || workers > sockets) {
    throw new RangeError(`workers must be an integer in 1..sockets (${sockets}), got ${workers}`);
  }
  const perWorker = Math.ceil(sockets / workers);
  if (perWorker > MAX_SOCKETS_PER_WORKER) {
    throw new RangeError(
      `${perWorker} sockets per worker is over ${MAX_SOCKETS_PER_WORKER} (open files are capped at 20,000 per process): ` +
        `use at least ${Math.ceil(sockets / MAX_SOCKETS_PER_WORKER)} workers`,
    );
  }
  // Conservative: a socket bound to a source address holds its port for every destination.
  const portsPerAddress = ephemeralPorts() - 500;
  if (Math.ceil(sockets / sourceAddresses.length) > portsPerAddress) {
    throw new RangeError(
      `${Math.ceil(sockets / sourceAddresses.length)} sockets per source address is over the ~${portsPerAddress} ephemeral ports ` +
        `one address has: give at least ${Math.ceil(sockets / portsPerAddress)} source addresses`,
    );
  }
  if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new RangeError(`maxEvents must be a positive integer, got ${maxEvents}`);

  const latest: WorkerCounters[] = [];
  const children: ChildProcess[] = [];
  const exited: Promise<void>[] = [];
  const reportWaiters = new Map<number, (report: WorkerReportMessage) => void>();
  let failure: Error | undefined;
  let stopping = false;
  const counts: number[] = [];
  const targetCount = endpoints.length;
  let targets: number[] = [];
  /** Each worker's share of a global socket target, proportional to its socket count. */
  const shareOf = (total: number): number[] => counts.map((c) => Math.min(c, Math.ceil((c * Math.min(total, sockets)) / sockets)));

  for (let w = 0; w < workers; w++) {
    const firstIndex = w * perWorker;
    const count = Math.max(0, Math.min(perWorker, sockets - firstIndex));
    counts.push(count);
    // execArgv: [] so that the parent's flags (--expose-gc, --inspect…) do not leak into workers.
    const child = fork(workerPath, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    latest.push(emptyCounters(w, targetCount));
    exited.push(new Promise((resolve) => child.once('exit', () => resolve())));
    child.on('exit', (code, signal) => {
      if (!stopping && (code !== 0 || signal !== null)) failure ??= new Error(`load worker ${w} exited with ${String(code ?? signal)}`);
    });
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'progress') latest[w] = message;
      else if (message.type === 'report') {
        latest[w] = message;
        reportWaiters.get(w)?.(message);
      }
    });
    const start: WorkerStartMessage = {
      type: 'start',
      workerIndex: w,
      targets: endpoints,
      firstIndex,
      count,
      sourceAddresses,
      plan,
      maxEvents,
      offsetBase,
      clockOffsetUs,
      connectConcurrency: Math.max(1, Math.floor(connectConcurrency / workers)),
      progressIntervalMs,
      connectNow: Math.min(count, Math.ceil((count * Math.min(connectNow, sockets)) / sockets)),
      deflate: wire.deflate === true,
      delta: wire.delta === true,
      sse: protocol === 'sse',
      legacy: protocol === 'graphql-ws',
      jwt,
    };
    child.send(start);
  }
  targets = shareOf(connectNow);
  const killOnExit = (): void => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  function progress(): LoadProgress {
    return sum(latest, sockets, targetCount);
  }

  return {
    pids: children.map((c) => c.pid ?? -1),
    progress,

    async settled(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (failure) throw failure;
        const p = progress();
        const target = targets.reduce((a, b) => a + b, 0);
        if (p.subscribed + p.failed >= target) return p;
        if (Date.now() > deadline) {
          throw new Error(
            `loadgen: after ${timeoutMs} ms only ${p.subscribed}/${target} sockets are subscribed (${p.failed} failed, ${p.open} open)`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },

    connect(total) {
      targets = shareOf(total);
      children.forEach((child, w) => {
        if (child.connected) child.send({ type: 'connect', upTo: targets[w] ?? 0 });
      });
      return targets.reduce((a, b) => a + b, 0);
    },

    async report(expected) {
      if (failure) throw failure;
      const reports = await Promise.all(
        children.map(
          (child, w) =>
            new Promise<WorkerReportMessage>((resolve, reject) => {
              const timer = setTimeout(() => reject(new Error(`load worker ${w} did not report within 30 s`)), 30_000);
              reportWaiters.set(w, (r) => {
                clearTimeout(timer);
                reportWaiters.delete(w);
                resolve(r);
              });
              child.send({ type: 'report', expected });
            }),
        ),
      );
      const histogram = createHistogram();
      const closeCodes: Record<string, number> = {};
      const errorSamples = new Set<string>();
      let lost = 0;
      const lostPerOperation: number[] = [];
      let expectedTotal = 0;
      let maxLatencyUs = 0;
      let firstDeliveryUs = 0;
      let lastDeliveryUs = 0;
      for (const r of reports) {
        addSparse(histogram, r.histogram);
        lost += r.lost;
        r.lostPerOperation.forEach((n, i) => (lostPerOperation[i] = (lostPerOperation[i] ?? 0) + n));
        expectedTotal += r.expected;
        maxLatencyUs = Math.max(maxLatencyUs, r.maxLatencyUs);
        if (r.firstDeliveryUs > 0 && (firstDeliveryUs === 0 || r.firstDeliveryUs < firstDeliveryUs)) firstDeliveryUs = r.firstDeliveryUs;
        lastDeliveryUs = Math.max(lastDeliveryUs, r.lastDeliveryUs);
        for (const [code, count] of Object.entries(r.closeCodes)) closeCodes[code] = (closeCodes[code] ?? 0) + count;
        for (const e of r.errorSamples) errorSamples.add(e);
      }
      const ms = (q: number): number => quantileUs(histogram, q, lost) / 1_000;
      return {
        ...sum(reports, sockets, targetCount),
        expected: expectedTotal,
        lost,
        lostPerOperation,
        latencyMs: { p50: ms(0.5), p90: ms(0.9), p99: ms(0.99), max: lost > 0 ? Number.POSITIVE_INFINITY : maxLatencyUs / 1_000 },
        firstDeliveryUs,
        lastDeliveryUs,
        closeCodes,
        errorSamples: [...errorSamples],
      };
    },

    async stop() {
      stopping = true;
      for (const child of children) if (child.connected) child.send({ type: 'stop' });
      const timer = setTimeout(killOnExit, 5_000);
      await Promise.all(exited);
      clearTimeout(timer);
      process.removeListener('exit', killOnExit);
    },
  };
}

function emptyCounters(workerIndex: number, targets: number): WorkerCounters {
  return { workerIndex, ...zeroCounts(), subscribedPerTarget: new Array<number>(targets).fill(0), cpuUs: 0, rssBytes: 0 };
}

function sum(all: readonly WorkerCounters[], sockets: number, targets: number): LoadProgress {
  const subscribedPerTarget = new Array<number>(targets).fill(0);
  const counts = zeroCounts();
  for (const c of all) {
    for (const name of COUNT_NAMES) counts[name] += c[name];
    c.subscribedPerTarget.forEach((n, t) => (subscribedPerTarget[t] = (subscribedPerTarget[t] ?? 0) + n));
  }
  const total = { sockets, ...counts, subscribedPerTarget, workerCpuUs: all.map((c) => c.cpuUs), workerRssBytes: all.map((c) => c.rssBytes) };
  return total;
}

/** `ws://127.0.0.1:4000/graphql` → host, port, path; loopback ws:// only (load stays on this machine). */
function parseTarget(url: string): WorkerTarget {
  const target = new URL(url);
  if (target.protocol !== 'ws:') throw new RangeError(`url must be ws://… (plain loopback), got ${url}`);
  if (!isLoopback(target.hostname)) {
    throw new RangeError(`url host must be a loopback address (127.x.x.x): load goes to this machine only, got ${target.hostname}`);
  }
  return { host: target.hostname, port: Number(target.port || 80), path: target.pathname + target.search };
}

function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === 'localhost';
}

/** Size of the kernel's ephemeral port range (Linux), or a conservative 28,000 elsewhere. */
function ephemeralPorts(): number {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && high > low) return high - low + 1;
  } catch {
    // not Linux
  }
  return 28_000;
}
