import type { Redis } from 'ioredis';
import { createLoadgen, variantOf, variantsOf, type BenchClock, type LatencySummary, type Loadgen, type OperationPlan } from '@wirestream/loadgen';
import type { SubscriptionRoute } from '@wirestream/schema';
import { channelName, shardOf, topicChannels } from '@wirestream/wire';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { othersCpuPct, readCpuTimes, readCpuTimesOf, readMachineBusyMs, readRssBytes, readRssSplit, type CpuTimes, type PhaseMark } from '@wirestream/bench-kit';
import { publishEvents, type EventCorpus } from './publisher.js';
import { startProbe, type Probe, type ProbeSummary } from './probe.js';
import { startSampler, type Sample, type Sampler } from './sampler.js';
import { benchJwtClaims, BENCH_JWT_SECRET, fetchMajorGcs, fetchMemory, fetchStats, protocolOf, startServer, type MemoryUsage, type ServerHandle, type StackName } from './servers.js';

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
  /**
   * Server processes of the stack, each on its own port; the load client assigns sockets to them
   * round-robin (socket i → process i mod processes). @default 1
   */
  readonly processes?: number;
  /** Load client source addresses. @default loadgen's (127.0.0.1 … 127.0.0.4) */
  readonly sourceAddresses?: readonly string[];
  /** Poll `/healthz` (and scrape `/metrics`) from the first publish to the end of the drain (probe.ts). @default false */
  readonly probe?: boolean;
  /**
   * After the last delivery, read the server's RSS every second for this long, sockets still
   * subscribed, before anything forces a GC: does the memory come back? @default 0
   */
  readonly settleMs?: number;
  /** What the load client asks for to save bandwidth (permessage-deflate, delta mode). @default neither */
  readonly wire?: { readonly deflate?: boolean; readonly delta?: boolean };
  /** Share of events whose envelope carries a sampled traceparent, as ingest writes them when it traces (tracing.ts). @default 0 */
  readonly tracedShare?: number;
  /** Events per chunk in ingest's batch form (publisher.ts); 0: one PUBLISH per event. @default 0 */
  readonly batch?: number;
  /**
   * With `plan.operations`: how many of the `events` published each operation matches (same
   * index), counted by the scenario from the corpus with its own reference evaluation.
   */
  readonly expectedPerOperation?: readonly number[];
  /**
   * Runs once per server process when it is ready, before the idle phase and before any load
   * socket connects (the look-up scenario warms the gateway's cache here). @default none
   */
  readonly beforeIdle?: (server: ServerHandle) => Promise<void>;
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
  /** `cgroup.procs` of a memory budget every server process of the run starts in (memory-budget.ts). */
  readonly cgroupProcs?: string;
}

/** RSS of the server after the last delivery (RunSpec.settleMs). */
export interface SettleSample {
  /** Seconds since the last delivery. */
  readonly afterS: number;
  readonly rssBytes: number | undefined;
  /** Anonymous part of the RSS (heap, malloc), without the file-backed part (code, mapped libraries). */
  readonly anonBytes: number | undefined;
}

/** What one server process of a run measured: its own memory and CPU. */
export interface ProcessRun {
  readonly pid: number;
  /** Sockets subscribed to this process (loadgen's per-URL count). */
  readonly subscribed: number;
  readonly memory: MemoryPhases;
  readonly perSocket: PerSocket;
  readonly perSocketSecondHalf: PerSocket;
  /** User + system CPU from the first publish to the end of the drain. */
  readonly serverCpu: CpuTimes;
  readonly samples: readonly Sample[];
  readonly phases: readonly PhaseMark[];
  readonly serverExit: string | undefined;
}

export interface MemoryPhases {
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
}

/**
 * A stack's run. With several server processes, `memory`, `perSocket`, `perSocketSecondHalf`,
 * `samples` and `phases` are the first process's (each one's are in `processes`); CPU and
 * deliveries are totals over all of them.
 */
export interface StackRun {
  readonly stack: StackName;
  readonly spec: RunSpec;
  /** 1-based repetition of this stack in a `--repeat` run. */
  readonly repeat: number;
  readonly processes: readonly ProcessRun[];
  readonly workers: number;
  readonly sourceAddresses: number;
  /** Seconds from the first connect to every socket subscribed (both waves, memory reads between them included). */
  readonly connectSeconds: number;
  readonly subscribed: number;
  readonly failed: number;
  readonly expected: number;
  readonly unique: number;
  readonly lost: number;
  /** `lost` per entry of `plan.operations` (same index); empty when the plan lists none. */
  readonly lostPerOperation: readonly number[];
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
  /** `next` frames received (duplicates included) and what the sockets read after the upgrade (frames as they travelled). */
  readonly frames: number;
  readonly wireBytes: number;
  /** Of `frames`: deflated ones, and those that carried a delta payload. */
  readonly compressedFrames: number;
  readonly deltaFrames: number;
  readonly memory: MemoryPhases;
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
  /** Largest RSS one load worker reached, and the peak of all workers together (sampled every 250 ms). */
  readonly clientPeakRssBytes: number;
  readonly clientPeakRssTotalBytes: number;
  /** Lowest MemAvailable of the machine during the run, MB. */
  readonly machineMinAvailableMb: number | undefined;
  /** /stats counters over the traffic window (ours only): executions and frames. */
  readonly executions: number | undefined;
  readonly framesOut: number | undefined;
  /** Major GCs the server processes ran over the traffic window (their `/metrics`); undefined without them. */
  readonly majorGcs: number | undefined;
  readonly samples: readonly Sample[];
  readonly phases: readonly PhaseMark[];
  readonly serverExit: string | undefined;
  /** The last lines the (first) server process wrote: a V8 "Reached heap limit" shows up here. */
  readonly serverTail: string;
  /** VmRSS of the (first) server right before the first publish (after the subscribed phase's forced GCs). */
  readonly rssBeforeTraffic: number | undefined;
  /** `/healthz` and `/metrics` during traffic, when the spec asked for the probe. */
  readonly responsiveness: ProbeSummary | undefined;
  /** RSS every second after the last delivery, when the spec asked for it (first process). */
  readonly settle: readonly SettleSample[] | undefined;
  /**
   * With a settle time: VmRSS 3 s after every client left, after two forced GCs — what the
   * sockets themselves held (per-socket buffers) against what the process keeps regardless.
   */
  readonly rssAfterClose: number | undefined;
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
function expectedTotal(plan: OperationPlan, sockets: number, total: number, perFilterKey: readonly number[], perOperation: readonly number[] | undefined): number {
  const variants = variantsOf(plan);
  let sum = 0;
  for (let i = 0; i < sockets; i++) {
    const variant = variants[variantOf(plan, i)];
    const fk = variant?.filterKey ?? -1;
    if (variant?.operation !== undefined) {
      const count = perOperation?.[variant.operation];
      if (count === undefined) throw new RangeError(`RunSpec.expectedPerOperation has no count for operation ${variant.operation} (${variant.label})`);
      sum += count;
    } else sum += fk < 0 ? total : (perFilterKey[fk] ?? 0);
  }
  return sum;
}

async function waitServerSubscribed(
  server: ServerHandle,
  subscribed: number,
  channels: readonly string[],
  redis: Redis,
  /** Redis subscribers each channel needs: every server process of the run. */
  minSubscribers = 1,
): Promise<void> {
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
      for (let i = 1; i < reply.length; i += 2) if (Number(reply[i]) < minSubscribers) redisOk = false;
    }
    if (redisOk) return;
    last = `server reports ${subs}/${subscribed} subscriptions${confirmedOk ? '' : ' (Redis SUBSCRIBE pending)'}`;
    if (server.process.exitInfo() !== undefined) throw new Error(`${server.stack} exited: ${server.process.tail()}`);
    if (Date.now() > deadline) throw new Error(`${server.stack}: subscriptions not in place after 60 s: ${last}`);
    await sleep(100);
  }
}

/** VmRSS at 1 s, 2 s, … `settleMs` after the last delivery (slots already past are read at once). */
async function sampleSettle(pid: number, lastDeliveryUs: number, settleMs: number, clock: BenchClock): Promise<SettleSample[]> {
  const samples: SettleSample[] = [];
  for (let s = 1; s <= Math.round(settleMs / 1_000); s++) {
    const waitMs = (lastDeliveryUs + s * 1e6 - clock.nowUs()) / 1_000;
    if (waitMs > 0) await sleep(waitMs);
    samples.push({ afterS: (clock.nowUs() - lastDeliveryUs) / 1e6, rssBytes: readRssBytes(pid), anonBytes: readRssSplit(pid)?.anonBytes });
  }
  return samples;
}

/** Runs one stack through idle → connected and subscribed → traffic → drain, and cleans up. */
export async function runStack(stack: StackName, spec: RunSpec, ctx: RunContext): Promise<StackRun> {
  const { redis, corpus, route, channelPrefix, clock, log } = ctx;
  const loadAverage = os.loadavg()[0] ?? 0;
  const processCount = spec.processes ?? 1;
  const servers: ServerHandle[] = [];
  const samplers: Sampler[] = [];
  let loadgen: Loadgen | undefined;
  try {
    // One after the other: each picks its own free port.
    for (let i = 0; i < processCount; i++) {
      const server = await startServer(stack, ctx.redisUrl, ctx.nodeArgs?.(stack) ?? [], { NODE_ENV: ctx.nodeEnv }, ctx.gatewayEnv ?? {}, ctx.cgroupProcs);
      servers.push(server);
      samplers.push(startSampler(server));
    }
    const mark = (name: string): void => samplers.forEach((s) => s.mark(name));
    const rawRssAll = (): (number | undefined)[] => servers.map((s) => readRssBytes(s.process.pid));
    const memoryAll = (timeoutMs: number): Promise<(MemoryUsage | undefined)[]> =>
      Promise.all(servers.map((s) => fetchMemory(s, true, timeoutMs)));
    const anyExited = (): string | undefined => servers.map((s) => s.process.exitInfo()).find((e) => e !== undefined);
    const serverPids = servers.map((s) => s.process.pid);

    for (const server of servers) await spec.beforeIdle?.(server);
    mark('idle');
    await sleep(spec.idleMs);
    const idleRawRss = rawRssAll();
    const idle = await memoryAll(10_000);

    // Two connect waves: per-socket memory is also measured as the slope between N/2 and N, which
    // leaves out one-off growth (V8 sizing its young generation during the first connect burst).
    const half = spec.sockets >= 1_000 ? Math.floor(spec.sockets / 2) : spec.sockets;
    mark('connect');
    const started = performance.now();
    const target = servers.length === 1 ? { url: (servers[0] as ServerHandle).wsUrl } : { urls: servers.map((s) => s.wsUrl) };
    loadgen = createLoadgen({
      ...target,
      sockets: spec.sockets,
      plan: spec.plan,
      maxEvents: spec.events,
      offsetBase: OFFSET_BASE,
      clockOffsetUs: clock.offsetUs,
      progressIntervalMs: 100,
      connectNow: half,
      ...(spec.workers === undefined ? {} : { workers: spec.workers }),
      ...(spec.sourceAddresses === undefined ? {} : { sourceAddresses: spec.sourceAddresses }),
      ...(spec.wire === undefined ? {} : { wire: spec.wire }),
      protocol: protocolOf(stack),
      ...(stack === 'ours-prod' ? { jwt: { hs256Secret: BENCH_JWT_SECRET, claims: benchJwtClaims() } } : {}),
    });
    for (const sampler of samplers) sampler.attach(loadgen);
    const connectTimeoutMs = 30_000 + spec.sockets * 5;
    let connected = await loadgen.settled(connectTimeoutMs);
    let halfway: (MemoryUsage | undefined)[] = servers.map(() => undefined);
    let halfwayRawRss: (number | undefined)[] = servers.map(() => undefined);
    const halfPerProcess = [...connected.subscribedPerTarget];
    if (half < spec.sockets) {
      // Which filtered channels the first wave needs depends on the workers' split: check counts only.
      for (const [i, server] of servers.entries()) await waitServerSubscribed(server, halfPerProcess[i] ?? 0, [], redis);
      mark('half');
      await sleep(1_000);
      halfwayRawRss = rawRssAll();
      halfway = await memoryAll(10_000);
      mark('connect');
      loadgen.connect(spec.sockets);
      connected = await loadgen.settled(connectTimeoutMs);
    }
    const channels = neededChannels(spec.plan, spec.sockets, route, channelPrefix);
    for (const [i, server] of servers.entries()) {
      await waitServerSubscribed(server, connected.subscribedPerTarget[i] ?? 0, channels, redis, servers.length);
    }
    const connectSeconds = (performance.now() - started) / 1_000;
    log(
      `    ${connected.subscribed}/${spec.sockets} subscribed in ${connectSeconds.toFixed(1)} s` +
        (servers.length > 1 ? ` (${connected.subscribedPerTarget.join(' + ')} over ${servers.length} processes)` : '') +
        (connected.failed > 0 ? `, ${connected.failed} failed` : ''),
    );

    mark('subscribed');
    await sleep(1_000);
    const subscribedRawRss = rawRssAll();
    const subscribed = await memoryAll(10_000);

    mark('traffic');
    const statsBefore = await Promise.all(servers.map((s) => fetchStats(s)));
    const gcsBefore = await Promise.all(servers.map((s) => fetchMajorGcs(s)));
    const zero: CpuTimes = { userMs: 0, systemMs: 0 };
    const cpuBefore = servers.map((s) => readCpuTimes(s.process.pid) ?? zero);
    const clientCpuBefore = readCpuTimesOf(loadgen.pids);
    const ownPids = [...loadgen.pids, ...serverPids, ...(ctx.redisPid === undefined ? [] : [ctx.redisPid]), process.pid];
    const ownBefore = readCpuTimesOf(ownPids);
    const machineBefore = readMachineBusyMs();
    const rssBeforeTraffic = readRssBytes((servers[0] as ServerHandle).process.pid);
    const probe: Probe | undefined = spec.probe ? startProbe({ httpBase: (servers[0] as ServerHandle).httpBase }) : undefined;
    const { firstPublishUs, lastPublishUs } = await publishEvents({
      redis,
      corpus,
      topic: route.topic,
      clock,
      offsetBase: OFFSET_BASE,
      count: spec.events,
      ratePerSecond: spec.ratePerSecond,
      ...(spec.tracedShare === undefined ? {} : { tracedShare: spec.tracedShare }),
      ...(spec.batch === undefined ? {} : { batch: spec.batch }),
    });
    mark('drain');
    const perFilterKey = corpus.countByKey(spec.plan.filterKeys, spec.events);
    const expected = expectedTotal(spec.plan, spec.sockets, spec.events, perFilterKey, spec.expectedPerOperation);
    const drainDeadlineUs = lastPublishUs + spec.drainTimeoutMs * 1_000;
    const serversCpuMs = (): number => {
      const t = readCpuTimesOf(serverPids);
      return t.userMs + t.systemMs;
    };
    let lastUnique = -1;
    let lastChangeUs = clock.nowUs();
    let serverCpuAtChange = serversCpuMs();
    for (;;) {
      const p = loadgen.progress();
      const nowUs = clock.nowUs();
      if (p.unique >= expected) break;
      if (p.unique !== lastUnique) {
        lastUnique = p.unique;
        lastChangeUs = nowUs;
        serverCpuAtChange = serversCpuMs();
      }
      if (nowUs > drainDeadlineUs) {
        log(`    drain deadline: ${p.unique}/${expected} delivered ${spec.drainTimeoutMs / 1_000} s after the last publish`);
        break;
      }
      if (nowUs - lastChangeUs > spec.stallTimeoutMs * 1_000) {
        // Silent and idle is a stall; silent and busy is a server computing a big batch before
        // it writes (deliveries are late, not lost): keep waiting until the drain deadline.
        const busyMs = serversCpuMs() - serverCpuAtChange;
        if (busyMs < 0.1 * ((nowUs - lastChangeUs) / 1_000)) {
          log(`    stalled: no delivery and an idle server for ${spec.stallTimeoutMs / 1_000} s at ${p.unique}/${expected}`);
          break;
        }
      }
      const exit = anyExited();
      if (exit !== undefined) {
        log(`    server exited during traffic (${exit})`);
        break;
      }
      await sleep(20);
    }
    const responsiveness = await probe?.stop();
    const cpuAfter = servers.map((s, i) => readCpuTimes(s.process.pid) ?? (cpuBefore[i] as CpuTimes));
    const clientCpuAfter = readCpuTimesOf(loadgen.pids);
    const ownAfter = readCpuTimesOf(ownPids);
    const machineAfter = readMachineBusyMs();
    const windowMs = (clock.nowUs() - firstPublishUs) / 1_000;
    const ownMs = ownAfter.userMs + ownAfter.systemMs - ownBefore.userMs - ownBefore.systemMs;
    const othersCpu = othersCpuPct(machineAfter - machineBefore, ownMs, windowMs);
    // The progress tick lags up to 250 ms: the report below has the exact counters.
    const report = await loadgen.report({
      total: spec.events,
      perFilterKey,
      ...(spec.expectedPerOperation === undefined ? {} : { perOperation: spec.expectedPerOperation }),
    });
    let settle: SettleSample[] | undefined;
    if ((spec.settleMs ?? 0) > 0) {
      mark('settle');
      settle = await sampleSettle((servers[0] as ServerHandle).process.pid, report.lastDeliveryUs || clock.nowUs(), spec.settleMs ?? 0, clock);
    }
    const statsAfter = await Promise.all(servers.map((s) => fetchStats(s, 10_000)));
    const gcsAfter = await Promise.all(servers.map((s) => fetchMajorGcs(s, 10_000)));
    mark('done');
    const afterTraffic = await Promise.all(servers.map((s) => fetchMemory(s, true, 5_000)));
    let rssAfterClose: number | undefined;
    if (settle !== undefined) {
      mark('closed');
      await loadgen.stop();
      await sleep(3_000);
      await fetchMemory(servers[0] as ServerHandle, true, 5_000);
      rssAfterClose = readRssBytes((servers[0] as ServerHandle).process.pid);
    }
    await sleep(250);
    for (const sampler of samplers) sampler.stop();

    const trafficSeconds = report.lastDeliveryUs > 0 ? (report.lastDeliveryUs - firstPublishUs) / 1e6 : 0;
    const counterDelta = (name: string): number | undefined => {
      let total = 0;
      for (const [i, after] of statsAfter.entries()) {
        const a = after?.[name];
        const b = statsBefore[i]?.[name];
        if (typeof a !== 'number' || typeof b !== 'number') return undefined;
        total += a - b;
      }
      return total;
    };
    const processes = servers.map((server, i): ProcessRun => {
      const n = connected.subscribedPerTarget[i] ?? 0;
      const secondWave = n - (halfPerProcess[i] ?? 0);
      const diff = (a: number | undefined, b: number | undefined): number | undefined =>
        a === undefined || b === undefined || n === 0 ? undefined : (a - b) / n;
      const slope = (a: number | undefined, b: number | undefined): number | undefined =>
        halfway[i] === undefined || a === undefined || b === undefined || secondWave <= 0 ? undefined : (a - b) / secondWave;
      const sampler = samplers[i] as Sampler;
      const before = cpuBefore[i] as CpuTimes;
      const after = cpuAfter[i] as CpuTimes;
      return {
        pid: server.process.pid,
        subscribed: n,
        memory: {
          idle: idle[i],
          halfway: halfway[i],
          halfwaySockets: halfPerProcess[i] ?? 0,
          subscribed: subscribed[i],
          afterTraffic: afterTraffic[i],
          idleRawRss: idleRawRss[i],
          subscribedRawRss: subscribedRawRss[i],
          peakRss: Math.max(0, ...sampler.samples.map((s) => (s.rssMb ?? 0) * 1_048_576)),
        },
        perSocket: {
          heapBytes: diff(subscribed[i]?.heapUsed, idle[i]?.heapUsed),
          rssBytes: diff(subscribed[i]?.rss, idle[i]?.rss),
          rawRssBytes: diff(subscribedRawRss[i], idleRawRss[i]),
        },
        perSocketSecondHalf: {
          heapBytes: slope(subscribed[i]?.heapUsed, halfway[i]?.heapUsed),
          rssBytes: slope(subscribed[i]?.rss, halfway[i]?.rss),
          rawRssBytes: slope(subscribedRawRss[i], halfwayRawRss[i]),
        },
        serverCpu: { userMs: after.userMs - before.userMs, systemMs: after.systemMs - before.systemMs },
        samples: sampler.samples,
        phases: sampler.phases,
        serverExit: server.process.exitInfo(),
      };
    });
    const first = processes[0] as ProcessRun;
    const serverCpu = processes.reduce(
      (t, p) => ({ userMs: t.userMs + p.serverCpu.userMs, systemMs: t.systemMs + p.serverCpu.systemMs }),
      { userMs: 0, systemMs: 0 },
    );
    const allSamples = samplers.flatMap((s) => s.samples);
    const available = allSamples.map((s) => s.machineAvailableMb).filter((m): m is number => m !== undefined);
    return {
      stack,
      spec,
      repeat: 1,
      processes,
      workers: loadgen.pids.length,
      sourceAddresses: spec.sourceAddresses?.length ?? 4,
      connectSeconds,
      subscribed: connected.subscribed,
      failed: connected.failed,
      expected,
      unique: report.unique,
      lost: report.lost,
      lostPerOperation: report.lostPerOperation,
      duplicates: report.duplicates,
      closedByServer: report.closedByServer,
      closeCodes: report.closeCodes,
      errorSamples: report.errorSamples,
      anomalies: report.unknownPosition + report.noTimestamp + report.protocolErrors,
      deliveriesPerSec: trafficSeconds > 0 ? report.unique / trafficSeconds : 0,
      trafficSeconds,
      latencyMs: report.latencyMs,
      meanFrameBytes: report.frames > 0 ? report.bytes / report.frames : 0,
      frames: report.frames,
      wireBytes: report.wireBytes,
      compressedFrames: report.compressedFrames,
      deltaFrames: report.deltaFrames,
      memory: first.memory,
      perSocket: first.perSocket,
      perSocketSecondHalf: first.perSocketSecondHalf,
      serverCpuMs: serverCpu.userMs + serverCpu.systemMs,
      serverCpu,
      clientCpu: { userMs: clientCpuAfter.userMs - clientCpuBefore.userMs, systemMs: clientCpuAfter.systemMs - clientCpuBefore.systemMs },
      clientCpuPct:
        windowMs > 0 ? ((clientCpuAfter.userMs + clientCpuAfter.systemMs - clientCpuBefore.userMs - clientCpuBefore.systemMs) / windowMs) * 100 : 0,
      loadAverage,
      othersCpuPct: othersCpu,
      clientPeakRssBytes: Math.max(0, ...report.workerRssBytes, ...allSamples.map((s) => s.clientMaxWorkerRssMb * 1_048_576)),
      clientPeakRssTotalBytes: Math.max(
        report.workerRssBytes.reduce((a, b) => a + b, 0),
        ...allSamples.map((s) => s.clientRssMb * 1_048_576),
      ),
      machineMinAvailableMb: available.length > 0 ? Math.min(...available) : undefined,
      executions: counterDelta('executions'),
      framesOut: counterDelta('framesOut'),
      majorGcs: gcsAfter.every((n, i) => n !== undefined && gcsBefore[i] !== undefined) ? gcsAfter.reduce<number>((sum, n, i) => sum + (n ?? 0) - (gcsBefore[i] ?? 0), 0) : undefined,
      samples: first.samples,
      phases: first.phases,
      serverExit: first.serverExit ?? processes.map((p) => p.serverExit).find((e) => e !== undefined),
      serverTail: (servers[0] as ServerHandle).process.tail(),
      rssBeforeTraffic,
      responsiveness,
      settle,
      rssAfterClose,
    };
  } finally {
    for (const sampler of samplers) sampler.stop();
    await loadgen?.stop();
    await Promise.all(servers.map((s) => s.process.stop()));
  }
}
