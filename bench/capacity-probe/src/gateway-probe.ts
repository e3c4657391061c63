// The gateway against a real Redis: idle RSS, then per N subscribed sockets the heap under the
// fan-out bench's field load (its working set), the mean frame size, and the drain after SIGTERM.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { createBenchClock, createLoadgen, isoWithMicros, parseMix, type BenchClock, type Loadgen } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { DEFAULT_CHANNEL_PREFIX, channelName, encodeEnvelope } from '@wirestream/wire';
import { getJson, paceStream, prepareCorpus, readRssAndPeak, startGateway, type ServerProcess } from '@wirestream/bench-kit';

export interface V8Memory {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
}

export interface GatewayRun {
  readonly sockets: number;
  readonly subscribed: number;
  readonly failed: number;
  readonly connectS: number;
  /** VmRSS after the settle time, before any socket; and /debug/memory then (no GC, then after two GCs). */
  readonly idleRss: number;
  readonly idle: V8Memory;
  readonly idleGc: V8Memory;
  /** After every socket subscribed, two forced GCs. */
  readonly subscribedGc: V8Memory;
  /** The field load (`rate`/s for `loadS`), then a burst (`burst` events back-to-back). */
  readonly field: LoadWindow;
  readonly burst: LoadWindow | undefined;
  /** SIGTERM → the client saw the last subscribed socket closed; → the process exited. */
  readonly lastCloseMs: number;
  readonly exitMs: number;
  readonly closedByServer: number;
  readonly exitCode: number | null | undefined;
}

export interface GatewayProbeOptions {
  readonly redisUrl: string;
  readonly redis: Redis;
  readonly socketCounts: readonly number[];
  readonly idleSettleS: number;
  /** Field load: events/s for seconds (the fan-out bench's field case: 20/s for 10 s). */
  readonly rate: number;
  readonly loadS: number;
  /** Events back-to-back after the field load; 0: none. */
  readonly burst: number;
  readonly log: (line: string) => void;
}

const LISTINGS = 50;
const OFFSET_BASE = 1_000_000;
const PARTITIONS = 6;
const filterKeys = Array.from({ length: LISTINGS }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
const plan = { mix: parseMix('shared:85,compact:5,filtered:10'), filterKeys };

export async function probeGateway(o: GatewayProbeOptions): Promise<GatewayRun[]> {
  const runs: GatewayRun[] = [];
  for (const sockets of o.socketCounts) {
    o.log(`  gateway with ${sockets.toLocaleString('en-US')} sockets`);
    runs.push(await runOnce(o, sockets));
    const r = runs.at(-1) as GatewayRun;
    o.log(`    idle RSS ${(r.idleRss / 1_048_576).toFixed(1)} MiB, ${r.subscribed} subscribed in ${r.connectS.toFixed(1)} s; SIGTERM → last close ${r.lastCloseMs.toFixed(0)} ms, exit ${r.exitMs.toFixed(0)} ms`);
  }
  return runs;
}

type Gateway = ServerProcess;

/** As deployed (NODE_ENV=production, only PATH inherited), with `--expose-gc` for `/debug/memory?gc=1`; 10 s to drain on stop. */
function startProbedGateway(redisUrl: string): Promise<Gateway> {
  return startGateway({ redisUrl, nodeArgs: ['--expose-gc'], inheritEnv: false, graceMs: 10_000, env: { NODE_ENV: 'production' } });
}

function memory(gateway: Gateway, gc: boolean): Promise<V8Memory | undefined> {
  return getJson<V8Memory>(`${gateway.httpBase}/debug/memory${gc ? '?gc=1' : ''}`, 5_000);
}

async function mustMemory(gateway: Gateway, gc: boolean): Promise<V8Memory> {
  const m = await memory(gateway, gc);
  if (m === undefined) throw new Error('gateway /debug/memory did not answer within 5 s');
  return m;
}

async function waitSubscriptions(gateway: Gateway, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const stats = await getJson<Record<string, unknown>>(`${gateway.httpBase}/stats`, 2_000);
    if (Number(stats?.['subscriptions'] ?? -1) >= n && stats?.['confirmedChannels'] === stats?.['channels']) return;
    if (Date.now() > deadline) throw new Error(`gateway reports ${String(stats?.['subscriptions'])}/${n} subscriptions after 60 s`);
    await sleep(100);
  }
}

async function runOnce(o: GatewayProbeOptions, sockets: number): Promise<GatewayRun> {
  const gateway = await startProbedGateway(o.redisUrl);
  let loadgen: Loadgen | undefined;
  try {
    await sleep(o.idleSettleS * 1000);
    const idleRss = readRssAndPeak(gateway.pid)?.rss ?? NaN;
    const idle = await mustMemory(gateway, false);
    const idleGc = await mustMemory(gateway, true);
    const clock = createBenchClock();
    const events = o.rate * o.loadS;
    const maxEvents = events + o.burst;
    const connectStarted = performance.now();
    loadgen = createLoadgen({ url: gateway.wsUrl, sockets, plan, maxEvents, offsetBase: OFFSET_BASE, clockOffsetUs: clock.offsetUs, progressIntervalMs: 10 });
    const connected = await loadgen.settled(180_000);
    await waitSubscriptions(gateway, connected.subscribed);
    const connectS = (performance.now() - connectStarted) / 1000;
    await sleep(1_000);
    const subscribedGc = await mustMemory(gateway, true);

    const field = await loadWindow(o, gateway, loadgen, clock, 0, events, o.rate);
    const burst = o.burst > 0 ? await loadWindow(o, gateway, loadgen, clock, events, o.burst, 0) : undefined;
    const drain = await sigterm(gateway, loadgen, connected.subscribed);
    return { sockets, subscribed: connected.subscribed, failed: connected.failed, connectS, idleRss, idle, idleGc, subscribedGc, field, burst, ...drain };
  } finally {
    await loadgen?.stop();
    await gateway.stop(5_000);
  }
}

/** One load window: the heap peaks read from /debug/memory (no GC) every 200 ms, VmHWM after it, what loadgen received. */
export interface LoadWindow {
  readonly peak: V8Memory;
  readonly hwm: number;
  readonly events: number;
  readonly frames: number;
  readonly frameBytes: number;
  readonly seconds: number;
}

/** Publishes `count` demo listing events (positions from `first`) at `rate`/s (0: back-to-back) while sampling; waits until deliveries stop. */
async function loadWindow(o: GatewayProbeOptions, gateway: Gateway, loadgen: Loadgen, clock: BenchClock, first: number, count: number, rate: number): Promise<LoadWindow> {
  const framesBefore = loadgen.progress().frames;
  const bytesBefore = loadgen.progress().bytes;
  const peak = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const m = await memory(gateway, false);
      if (m) for (const k of ['rss', 'heapTotal', 'heapUsed', 'external'] as const) peak[k] = Math.max(peak[k], m[k]);
      await sleep(200);
    }
  })();
  const started = performance.now();
  await publish(o.redis, clock, first, count, rate);
  // Deliveries settle: wait until frames stop growing for 3 s (at most 120 s; a loaded machine stalls the clients for a second now and then).
  let frames = loadgen.progress().frames;
  for (let quiet = 0, waited = 0; quiet < 3_000 && waited < 120_000; waited += 100) {
    await sleep(100);
    const now = loadgen.progress().frames;
    quiet = now === frames ? quiet + 100 : 0;
    frames = now;
  }
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  const p = loadgen.progress();
  return { peak, hwm: readRssAndPeak(gateway.pid)?.hwm ?? NaN, events: count, frames: p.frames - framesBefore, frameBytes: p.bytes - bytesBefore, seconds };
}

async function sigterm(gateway: Gateway, loadgen: Loadgen, subscribed: number) {
  const t0 = performance.now();
  process.kill(gateway.pid, 'SIGTERM');
  let lastCloseAt: number | undefined;
  const deadline = t0 + 120_000;
  while ((lastCloseAt === undefined || gateway.exitedAt() === undefined) && performance.now() < deadline) {
    if (lastCloseAt === undefined && loadgen.progress().closedByServer >= subscribed) lastCloseAt = performance.now();
    await sleep(2);
  }
  await gateway.exited;
  return {
    lastCloseMs: (lastCloseAt ?? NaN) - t0,
    exitMs: (gateway.exitedAt() ?? NaN) - t0,
    closedByServer: loadgen.progress().closedByServer,
    exitCode: gateway.exitCode(),
  };
}

/** Demo listing events as ingest writes them (the kit's corpus), paced (the kit's clock), one PUBLISH each. */
async function publish(redis: Redis, clock: BenchClock, first: number, count: number, rate: number): Promise<void> {
  const route = loadWirestreamSchema(auctionSchemaPath).routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareCorpus({ count, listings: LISTINGS, partitions: PARTITIONS, shards: route.shards, seed: 42 + first });
  const channels = Array.from({ length: route.shards }, (_, shard) => channelName(DEFAULT_CHANNEL_PREFIX, route.topic, shard));
  await paceStream({
    count,
    ratePerSecond: rate,
    nowUs: () => clock.nowUs(),
    send(from, to) {
      let last: Promise<number> = Promise.resolve(0);
      for (const [k, e] of corpus.events.slice(from, to).entries()) {
        const nowUs = clock.nowUs();
        const head = { topic: route.topic, partition: e.partition, offset: String(OFFSET_BASE + first + from + k), key: e.key, ts: Math.floor(nowUs / 1000) };
        last = redis.publish(channels[e.shard] as string, encodeEnvelope(head, e.before + isoWithMicros(nowUs) + e.after));
      }
      return last;
    },
  });
}
