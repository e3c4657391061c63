import type { Redis } from 'ioredis';
import { createLoadgen, variantOf, variantsOf, type BenchClock, type LatencySummary, type Loadgen, type OperationPlan } from '@wirestream/loadgen';
import { channelName, shardOf, topicChannels, type SubscriptionRoute } from '@wirestream/schema';
import os from 'node:os';
import { readCpuTimes, readCpuTimesOf, readMachineBusyMs, readRssBytes, type CpuTimes } from './processes.js';
import { publishEvents, type EventCorpus } from './publisher.js';
import { startSampler, type PhaseMark, type Sample } from './sampler.js';
import { fetchMemory, fetchStats, startServer, type MemoryUsage, type ServerHandle, type StackName } from './servers.js';

/** One measured configuration: N sockets with a plan, E events at a rate (or back-to-back). */
export interface RunSpec {
  readonly sockets: number;
  readonly plan: OperationPlan;
  readonly events: number;
  /** Events per second; 0 = back-to-back. */
  readonly ratePerSecond: number;
  /** Give up waiting for deliveries this long after the last publish. */
  readonly drainTimeoutMs: number;
  /** Stop waiting early when no delivery arrived for this long. */
  readonly stallTimeoutMs: number;
  /** Idle phase before any socket connects. */
  readonly idleMs: number;
  readonly workers?: number;
}

export interface RunContext {
  readonly redisUrl: string;
  /** A normal (non-subscriber) connection: PUBLISH and PUBSUB NUMSUB. */
  readonly redis: Redis;
  readonly corpus: EventCorpus;
  readonly route: SubscriptionRoute;
  readonly channelPrefix: string;
  readonly clock: BenchClock;
  readonly log: (line: string) => void;
  /** The private redis-server's pid (its CPU is ours, not noise). */
  readonly redisPid: number | undefined;
  /** NODE_ENV of every server process. */
  readonly nodeEnv: string;
  /** Extra environment for our gateway (its config is env-only). */
  readonly gatewayEnv?: Readonly<Record<string, string>>;
  /** Extra node flags per stack (e.g. --cpu-prof). */
  readonly nodeArgs?: (stack: StackName) => readonly string[];
}

export interface StackRun {
  readonly stack: StackName;
  readonly spec: RunSpec;
  readonly subscribed: number;
  readonly failed: number;
  readonly expected: number;
  readonly unique: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly closedByServer: number;
  readonly closeCodes: Readonly<Record<string, number>>;
  readonly errorSamples: readonly string[];
  readonly anomalies: number;
  /** Distinct deliveries per second, first publish → last delivery. */
  readonly deliveriesPerSec: number;
  readonly trafficSeconds: number;
  readonly latencyMs: LatencySummary;
  readonly meanFrameBytes: number;
  readonly memory: {
    readonly idle: MemoryUsage | undefined;
    /** After the first connect wave (N/2 sockets), when N ≥ 1,000. */
    readonly halfway: MemoryUsage | undefined;
    readonly halfwaySockets: number;
    readonly subscribed: MemoryUsage | undefined;
    readonly afterTraffic: MemoryUsage | undefined;
    /** VmRSS before the forced GCs, bytes. */
    readonly idleRawRss: number | undefined;
    readonly subscribedRawRss: number | undefined;
    readonly peakRss: number;
  };
  /** Per subscribed socket, bytes, idle → N; undefined when a reading is missing. */
  readonly perSocket: PerSocket;
  /** Per socket of the second connect wave (N/2 → N): the marginal cost, without one-off growth. */
  readonly perSocketSecondHalf: PerSocket;
  /** Server CPU from the first publish to the end of the drain (user + system, and split). */
  readonly serverCpuMs: number;
  readonly serverCpu: CpuTimes;
  /** All load workers' CPU over the same window, split, and in % of one core. */
  readonly clientCpu: CpuTimes;
  readonly clientCpuPct: number;
  /** 1-minute load average of the machine when this stack started (other tenants show up here). */
  readonly loadAverage: number;
  /**
   * CPU used by everything else on the machine during the traffic window (other tenants, the
   * kernel's own threads), % of one core: the noise this run had to live with.
   */
  readonly othersCpuPct: number;
  readonly clientPeakRssBytes: number;
  /** /stats counters over the traffic window (ours only): executions and frames. */
  readonly executions: number | undefined;
  readonly framesOut: number | undefined;
  readonly samples: readonly Sample[];
  readonly phases: readonly PhaseMark[];
  readonly serverExit: string | undefined;
}

export interface PerSocket {
  readonly heapBytes: number | undefined;
  readonly rssBytes: number | undefined;
  readonly rawRssBytes: number | undefined;
}

const OFFSET_BASE = 1_000_000;

/** Channels the plan's subscriptions need Redis to have confirmed before publishing. */
function neededChannels(plan: OperationPlan, sockets: number, route: SubscriptionRoute, prefix: string): string[] {
  const variants = variantsOf(plan);
  const used = new Set<number>();
  for (let i = 0; i < sockets; i++) used.add(variantOf(plan, i));
  const channels = new Set<string>();
  for (const v of used) {
    const variant = variants[v];
    if (!variant) continue;
    if (variant.filterKey < 0) for (const c of topicChannels(prefix, route.topic, route.shards)) channels.add(c);
    else channels.add(channelName(prefix, route.topic, shardOf(plan.filterKeys[variant.filterKey] as string, route.shards)));
  }
  return [...channels];
}

/** Deliveries the whole plan should receive for `events` published events. */
function expectedTotal(plan: OperationPlan, sockets: number, total: number, perFilterKey: readonly number[]): number {
  const variants = variantsOf(plan);
  let sum = 0;
  for (let i = 0; i < sockets; i++) {
    const fk = variants[variantOf(plan, i)]?.filterKey ?? -1;
    sum += fk < 0 ? total : (perFilterKey[fk] ?? 0);
  }
  return sum;
}

async function waitServerSubscribed(server: ServerHandle, subscribed: number, channels: readonly string[], redis: Redis): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = '';
  for (;;) {
    const stats = await fetchStats(server);
    const subs = Number(stats?.['subscriptions'] ?? -1);
    const confirmedOk = stats?.['confirmedChannels'] === undefined || stats['confirmedChannels'] === stats['channels'];
    let redisOk = false;
    if (subs >= subscribed && confirmedOk) {
      const reply = (await redis.call('PUBSUB', 'NUMSUB', ...channels)) as (string | number)[];
      redisOk = true;
      for (let i = 1; i < reply.length; i += 2) if (Number(reply[i]) < 1) redisOk = false;
    }
    if (redisOk) return;
    last = `server reports ${subs}/${subscribed} subscriptions${confirmedOk ? '' : ' (Redis SUBSCRIBE pending)'}`;
    if (server.process.exitInfo() !== undefined) throw new Error(`${server.stack} exited: ${server.process.tail()}`);
    if (Date.now() > deadline) throw new Error(`${server.stack}: subscriptions not in place after 60 s: ${last}`);
    await sleep(100);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs one stack through idle → connected and subscribed → traffic → drain, and cleans up. */
export async function runStack(stack: StackName, spec: RunSpec, ctx: RunContext): Promise<StackRun> {
  const { redis, corpus, route, channelPrefix, clock, log } = ctx;
  const loadAverage = os.loadavg()[0] ?? 0;
  const server = await startServer(stack, ctx.redisUrl, ctx.nodeArgs?.(stack) ?? [], { NODE_ENV: ctx.nodeEnv }, ctx.gatewayEnv ?? {});
  const sampler = startSampler(server);
  let loadgen: Loadgen | undefined;
  try {
    sampler.mark('idle');
    await sleep(spec.idleMs);
    const idleRawRss = readRssBytes(server.process.pid);
    const idle = await fetchMemory(server, true, 10_000);

    // Two connect waves: per-socket memory is also measured as the slope between N/2 and N, which
    // leaves out one-off growth (V8 sizing its young generation during the first connect burst).
    const half = spec.sockets >= 1_000 ? Math.floor(spec.sockets / 2) : spec.sockets;
    sampler.mark('connect');
    const started = performance.now();
    loadgen = createLoadgen({
      url: server.wsUrl,
      sockets: spec.sockets,
      plan: spec.plan,
      maxEvents: spec.events,
      offsetBase: OFFSET_BASE,
      clockOffsetUs: clock.offsetUs,
      progressIntervalMs: 100,
      connectNow: half,
      ...(spec.workers === undefined ? {} : { workers: spec.workers }),
    });
    sampler.attach(loadgen);
    const connectTimeoutMs = 30_000 + spec.sockets * 5;
    let connected = await loadgen.settled(connectTimeoutMs);
    let halfway: MemoryUsage | undefined;
    let halfwayRawRss: number | undefined;
    const halfSubscribed = connected.subscribed;
    if (half < spec.sockets) {
      // Which filtered channels the first wave needs depends on the workers' split: check counts only.
      await waitServerSubscribed(server, connected.subscribed, [], redis);
      sampler.mark('half');
      await sleep(1_000);
      halfwayRawRss = readRssBytes(server.process.pid);
      halfway = await fetchMemory(server, true, 10_000);
      sampler.mark('connect');
      loadgen.connect(spec.sockets);
      connected = await loadgen.settled(connectTimeoutMs);
    }
    await waitServerSubscribed(server, connected.subscribed, neededChannels(spec.plan, spec.sockets, route, channelPrefix), redis);
    log(`    ${connected.subscribed}/${spec.sockets} subscribed in ${((performance.now() - started) / 1_000).toFixed(1)} s` +
      (connected.failed > 0 ? `, ${connected.failed} failed` : ''));

    sampler.mark('subscribed');
    await sleep(1_000);
    const subscribedRawRss = readRssBytes(server.process.pid);
    const subscribed = await fetchMemory(server, true, 10_000);

    sampler.mark('traffic');
    const statsBefore = await fetchStats(server);
    const zero: CpuTimes = { userMs: 0, systemMs: 0 };
    const cpuBefore = readCpuTimes(server.process.pid) ?? zero;
    const clientCpuBefore = readCpuTimesOf(loadgen.pids);
    const ownPids = [...loadgen.pids, server.process.pid, ...(ctx.redisPid === undefined ? [] : [ctx.redisPid]), process.pid];
    const ownBefore = readCpuTimesOf(ownPids);
    const machineBefore = readMachineBusyMs();
    const { firstPublishUs, lastPublishUs } = await publishEvents({
      redis,
      corpus,
      topic: route.topic,
      clock,
      offsetBase: OFFSET_BASE,
      count: spec.events,
      ratePerSecond: spec.ratePerSecond,
    });
    sampler.mark('drain');
    const perFilterKey = corpus.countByKey(spec.plan.filterKeys, spec.events);
    const expected = expectedTotal(spec.plan, spec.sockets, spec.events, perFilterKey);
    const drainDeadlineUs = lastPublishUs + spec.drainTimeoutMs * 1_000;
    let lastUnique = -1;
    let lastChangeUs = clock.nowUs();
    let serverCpuAtChange = readCpuTimes(server.process.pid);
    for (;;) {
      const p = loadgen.progress();
      const nowUs = clock.nowUs();
      if (p.unique >= expected) break;
      if (p.unique !== lastUnique) {
        lastUnique = p.unique;
        lastChangeUs = nowUs;
        serverCpuAtChange = readCpuTimes(server.process.pid);
      }
      if (nowUs > drainDeadlineUs) {
        log(`    drain deadline: ${p.unique}/${expected} delivered ${spec.drainTimeoutMs / 1_000} s after the last publish`);
        break;
      }
      if (nowUs - lastChangeUs > spec.stallTimeoutMs * 1_000) {
        // Silent and idle is a stall; silent and busy is a server computing a big batch before
        // it writes (deliveries are late, not lost): keep waiting until the drain deadline.
        const cpu = readCpuTimes(server.process.pid);
        const busyMs = cpu && serverCpuAtChange ? cpu.userMs + cpu.systemMs - serverCpuAtChange.userMs - serverCpuAtChange.systemMs : 0;
        if (busyMs < 0.1 * ((nowUs - lastChangeUs) / 1_000)) {
          log(`    stalled: no delivery and an idle server for ${spec.stallTimeoutMs / 1_000} s at ${p.unique}/${expected}`);
          break;
        }
      }
      if (server.process.exitInfo() !== undefined) {
        log(`    server exited during traffic (${server.process.exitInfo() ?? ''})`);
        break;
      }
      await sleep(20);
    }
    const cpuAfter = readCpuTimes(server.process.pid) ?? cpuBefore;
    const clientCpuAfter = readCpuTimesOf(loadgen.pids);
    const ownAfter = readCpuTimesOf(ownPids);
    const machineAfter = readMachineBusyMs();
    const windowMs = (clock.nowUs() - firstPublishUs) / 1_000;
    const ownMs = ownAfter.userMs + ownAfter.systemMs - ownBefore.userMs - ownBefore.systemMs;
    const othersCpuPct = windowMs > 0 ? Math.max(0, ((machineAfter - machineBefore - ownMs) / windowMs) * 100) : 0;
    // The progress tick lags up to 250 ms: the report below has the exact counters.
    const report = await loadgen.report({ total: spec.events, perFilterKey });
    const statsAfter = await fetchStats(server, 10_000);
    sampler.mark('done');
    const afterTraffic = await fetchMemory(server, true, 5_000);
    const secondWave = connected.subscribed - halfSubscribed;
    const slope = (a: number | undefined, b: number | undefined): number | undefined =>
      halfway === undefined || a === undefined || b === undefined || secondWave <= 0 ? undefined : (a - b) / secondWave;
    await sleep(250);
    sampler.stop();

    const trafficSeconds = report.lastDeliveryUs > 0 ? (report.lastDeliveryUs - firstPublishUs) / 1e6 : 0;
    const n = connected.subscribed;
    const diff = (a: number | undefined, b: number | undefined): number | undefined =>
      a === undefined || b === undefined || n === 0 ? undefined : (a - b) / n;
    const counterDelta = (name: string): number | undefined => {
      const a = statsAfter?.[name];
      const b = statsBefore?.[name];
      return typeof a === 'number' && typeof b === 'number' ? a - b : undefined;
    };
    return {
      stack,
      spec,
      subscribed: n,
      failed: connected.failed,
      expected,
      unique: report.unique,
      lost: report.lost,
      duplicates: report.duplicates,
      closedByServer: report.closedByServer,
      closeCodes: report.closeCodes,
      errorSamples: report.errorSamples,
      anomalies: report.unknownPosition + report.noTimestamp + report.protocolErrors,
      deliveriesPerSec: trafficSeconds > 0 ? report.unique / trafficSeconds : 0,
      trafficSeconds,
      latencyMs: report.latencyMs,
      meanFrameBytes: report.frames > 0 ? report.bytes / report.frames : 0,
      memory: {
        idle,
        halfway,
        halfwaySockets: halfSubscribed,
        subscribed,
        afterTraffic,
        idleRawRss,
        subscribedRawRss,
        peakRss: Math.max(0, ...sampler.samples.map((s) => (s.rssMb ?? 0) * 1_048_576)),
      },
      perSocket: {
        heapBytes: diff(subscribed?.heapUsed, idle?.heapUsed),
        rssBytes: diff(subscribed?.rss, idle?.rss),
        rawRssBytes: diff(subscribedRawRss, idleRawRss),
      },
      perSocketSecondHalf: {
        heapBytes: slope(subscribed?.heapUsed, halfway?.heapUsed),
        rssBytes: slope(subscribed?.rss, halfway?.rss),
        rawRssBytes: slope(subscribedRawRss, halfwayRawRss),
      },
      serverCpuMs: cpuAfter.userMs + cpuAfter.systemMs - cpuBefore.userMs - cpuBefore.systemMs,
      serverCpu: { userMs: cpuAfter.userMs - cpuBefore.userMs, systemMs: cpuAfter.systemMs - cpuBefore.systemMs },
      clientCpu: { userMs: clientCpuAfter.userMs - clientCpuBefore.userMs, systemMs: clientCpuAfter.systemMs - clientCpuBefore.systemMs },
      clientCpuPct:
        windowMs > 0 ? ((clientCpuAfter.userMs + clientCpuAfter.systemMs - clientCpuBefore.userMs - clientCpuBefore.systemMs) / windowMs) * 100 : 0,
      loadAverage,
      othersCpuPct,
      clientPeakRssBytes: Math.max(0, ...report.workerRssBytes),
      executions: counterDelta('executions'),
      framesOut: counterDelta('framesOut'),
      samples: sampler.samples,
      phases: sampler.phases,
      serverExit: server.process.exitInfo(),
    };
  } finally {
    sampler.stop();
    await loadgen?.stop();
    await server.process.stop();
  }
}
