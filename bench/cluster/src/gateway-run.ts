/**
 * One measured setup of the scale-out part: N gateway processes over the cluster, the same total
 * sockets split over them (socket i → gateway i mod N), the same event stream at the same rate.
 * Measures deliveries at the clients, each gateway's CPU and /stats counters, and each Redis node's
 * CPU over the traffic window, with each node's idle CPU rate measured just before (so the per-event
 * Redis figures can leave out the cluster's own cron and bus pings).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLoadgen, variantOf, variantsOf, type LatencySummary, type Loadgen, type OperationPlan } from '@wirestream/loadgen';
import { shardOf } from '@wirestream/wire';
import { keySlot } from '@wirestream/testkit';
import type { FanInContext } from './fanin-run.js';
import { fetchStats, startGateways, stopGateways, type GatewayProcess, type GatewayStats } from './gateways.js';
import { loadAverages, othersCpuPct, readMachineBusyMs, readSchedCpuMs, readSchedCpuMsOf } from '@wirestream/bench-kit';
import { publishStream } from './publisher.js';
import { ownerOfSlot, type RedisNode } from './redis-nodes.js';

export interface ScaleSpec {
  readonly sockets: number;
  readonly plan: OperationPlan;
  readonly events: number;
  readonly ratePerSecond: number;
  /**
   * Events published (and delivered) before anything is measured, at the same rate: each setup
   * starts fresh gateway processes, and without a warm-up the measured window would carry each
   * process's JIT warm-up — N times over with N gateways.
   */
  readonly warmupEvents: number;
  /** Idle window before traffic, for each node's idle CPU rate. */
  readonly idleMs: number;
  /** Give up waiting for deliveries this long after the last publish. */
  readonly drainTimeoutMs: number;
  /** Stop waiting early when no delivery arrived for this long. */
  readonly stallTimeoutMs: number;
  readonly sourceAddresses: readonly string[];
}

/** What a scale run shares with the fan-in runs (the cluster, corpus and clock), and how to start gateways. */
export interface ScaleContext extends FanInContext {
  readonly redisUrl: string;
  readonly nodeEnv: string;
  readonly cpuProfileDir?: string | undefined;
}

/** One gateway process of a setup. */
export interface GatewayFigures {
  readonly pid: number;
  readonly subscribed: number;
  /** Distinct operations its sockets subscribe (from the plan): what it executes per matching event. */
  readonly operations: number;
  /** Deliveries its sockets should get (from the plan and the corpus). */
  readonly expectedDeliveries: number;
  /** /stats counters over the traffic window. */
  readonly framesOut: number;
  readonly eventsIn: number;
  readonly executions: number;
  /** CPU (all threads) over the traffic window, ms. */
  readonly cpuMs: number;
  /** CPU per second while subscribed and idle, ms/s. */
  readonly idleCpuMsPerSecond: number;
}

/** One Redis node over the traffic window of a setup. */
export interface RedisNodeFigures {
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shardPort: number;
  /** Events of the run whose partition lives on this node's shard. */
  readonly shardEvents: number;
  readonly cpuMs: number;
  readonly idleCpuMsPerSecond: number;
  /** `cpuMs − idle rate × window`: what the traffic cost. */
  readonly netCpuMs: number;
}

export interface ScaleRun {
  readonly gateways: number;
  readonly round: number;
  readonly sockets: number;
  readonly failed: number;
  readonly events: number;
  readonly ratePerSecond: number;
  readonly expected: number;
  /** Distinct deliveries counted at the clients. */
  readonly delivered: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly latencyMs: LatencySummary;
  /** First publish → end of the drain (every delivery in, or the drain gave up). */
  readonly windowSeconds: number;
  readonly perGateway: readonly GatewayFigures[];
  readonly redis: readonly RedisNodeFigures[];
  readonly loadgenCpuMs: number;
  /** CPU the rest of the machine (other tenants) used in the window, % of one core. */
  readonly othersCpuPct: number;
  readonly loadAverage1m: number;
}

interface Snapshot {
  readonly atMs: number;
  readonly gatewayCpu: readonly number[];
  readonly redisCpu: ReadonlyMap<number, number>;
  readonly loadgenCpu: number;
  readonly ownCpu: number;
  readonly machineBusy: number;
}

function snapshot(gateways: readonly GatewayProcess[], nodes: readonly RedisNode[], loadgen: Loadgen): Snapshot {
  const gatewayCpu = gateways.map((g) => readSchedCpuMs(g.pid) ?? 0);
  const redisCpu = new Map(nodes.map((n) => [n.port, readSchedCpuMs(n.pid) ?? 0]));
  const loadgenCpu = readSchedCpuMsOf(loadgen.pids);
  const ownCpu = readSchedCpuMs(process.pid) ?? 0;
  return { atMs: performance.now(), gatewayCpu, redisCpu, loadgenCpu, ownCpu, machineBusy: readMachineBusyMs() };
}

/**
 * Runs one setup of `count` gateways and stops everything it started. Uses offsets `firstOffset …
 * firstOffset + warmupEvents + events − 1` (the warm-up's, then the measured stream's).
 */
export async function runScale(count: number, round: number, firstOffset: number, spec: ScaleSpec, ctx: ScaleContext): Promise<ScaleRun> {
  const offsetBase = firstOffset + spec.warmupEvents;
  const loadAverage1m = loadAverages()[0];
  let gateways: GatewayProcess[] = [];
  let loadgen: Loadgen | undefined;
  try {
    gateways = await startGateways(count, { redisUrl: ctx.redisUrl, nodeEnv: ctx.nodeEnv, cpuProfileDir: ctx.cpuProfileDir });
    loadgen = createLoadgen({
      urls: gateways.map((g) => g.wsUrl),
      sockets: spec.sockets,
      plan: spec.plan,
      maxEvents: spec.events,
      offsetBase,
      clockOffsetUs: ctx.clock.offsetUs,
      progressIntervalMs: 100,
      sourceAddresses: spec.sourceAddresses,
    });
    const connected = await loadgen.settled(30_000 + spec.sockets * 5);
    await waitSubscribed(gateways, connected.subscribedPerTarget, spec, ctx);
    ctx.log(
      `    ${connected.subscribed}/${spec.sockets} subscribed (${connected.subscribedPerTarget.join(' + ')})${connected.failed > 0 ? `, ${connected.failed} failed` : ''}, ` +
        `distinct operations per gateway ${operationsByGateway(spec, count).join(' / ')}`,
    );
    await warmUp(firstOffset, spec, ctx, loadgen, gateways.length);
    await sleep(1_000);
    const idleStart = snapshot(gateways, ctx.nodes, loadgen);
    await sleep(spec.idleMs);
    const before = snapshot(gateways, ctx.nodes, loadgen);
    const statsBefore = await Promise.all(gateways.map((g) => fetchStats(g)));
    const traffic = await publishAndDrain(offsetBase, spec, ctx, loadgen, gateways);
    const after = snapshot(gateways, ctx.nodes, loadgen);
    const statsAfter = await Promise.all(gateways.map((g) => fetchStats(g, 10_000)));
    const report = await loadgen.report({ total: spec.events, perFilterKey: traffic.perFilterKey });
    const windowMs = after.atMs - before.atMs;
    const idleMs = before.atMs - idleStart.atMs;
    const ownMs =
      sumDelta(after.gatewayCpu, before.gatewayCpu) +
      [...after.redisCpu].reduce((t, [port, ms]) => t + ms - (before.redisCpu.get(port) ?? 0), 0) +
      (after.loadgenCpu - before.loadgenCpu) +
      (after.ownCpu - before.ownCpu);
    const expectedPerGateway = expectedByGateway(spec, count, traffic.perFilterKey);
    const operations = operationsByGateway(spec, count);
    const eventsPerPartition = ctx.corpus.countByPartition(spec.events);
    return {
      gateways: count,
      round,
      sockets: spec.sockets,
      failed: connected.failed,
      events: spec.events,
      ratePerSecond: spec.ratePerSecond,
      expected: report.expected,
      delivered: report.unique,
      lost: report.lost,
      duplicates: report.duplicates,
      latencyMs: report.latencyMs,
      windowSeconds: windowMs / 1_000,
      perGateway: gateways.map((g, i) => ({
        pid: g.pid,
        subscribed: connected.subscribedPerTarget[i] ?? 0,
        operations: operations[i] ?? 0,
        expectedDeliveries: expectedPerGateway[i] ?? 0,
        framesOut: statDelta(statsAfter[i], statsBefore[i], 'framesOut'),
        eventsIn: statDelta(statsAfter[i], statsBefore[i], 'eventsIn'),
        executions: statDelta(statsAfter[i], statsBefore[i], 'executions'),
        cpuMs: (after.gatewayCpu[i] ?? 0) - (before.gatewayCpu[i] ?? 0),
        idleCpuMsPerSecond: (((before.gatewayCpu[i] ?? 0) - (idleStart.gatewayCpu[i] ?? 0)) * 1_000) / idleMs,
      })),
      redis: ctx.nodes.map((n) => {
        const cpuMs = (after.redisCpu.get(n.port) ?? 0) - (before.redisCpu.get(n.port) ?? 0);
        const idleRate = ((before.redisCpu.get(n.port) ?? 0) - (idleStart.redisCpu.get(n.port) ?? 0)) / idleMs;
        return {
          port: n.port,
          role: n.role,
          shardPort: n.shardPort,
          shardEvents: eventsOnShard(n.shardPort, eventsPerPartition, ctx),
          cpuMs,
          idleCpuMsPerSecond: idleRate * 1_000,
          netCpuMs: cpuMs - idleRate * windowMs,
        };
      }),
      loadgenCpuMs: after.loadgenCpu - before.loadgenCpu,
      othersCpuPct: othersCpuPct(after.machineBusy - before.machineBusy, ownMs, windowMs),
      loadAverage1m,
    };
  } finally {
    await loadgen?.stop();
    await stopGateways(gateways);
  }
}

function sumDelta(after: readonly number[], before: readonly number[]): number {
  return after.reduce((t, a, i) => t + a - (before[i] ?? 0), 0);
}

function statDelta(after: GatewayStats | undefined, before: GatewayStats | undefined, name: 'framesOut' | 'eventsIn' | 'executions'): number {
  if (after === undefined || before === undefined) throw new Error(`a gateway did not answer /stats around the traffic window (${name})`);
  return after[name] - before[name];
}

/** Events whose partition's hash tag lives on the shard of primary `shardPort`. */
function eventsOnShard(shardPort: number, eventsPerPartition: readonly number[], ctx: ScaleContext): number {
  let events = 0;
  eventsPerPartition.forEach((n, p) => {
    if (ownerOfSlot(ctx.nodes, keySlot(ctx.layout.streamKey(ctx.topic, p))).port === shardPort) events += n;
  });
  return events;
}

/**
 * Publishes the warm-up events (offsets below the load client's range: it counts them as unknown
 * positions, never as deliveries or latencies) and waits until the clients got them.
 */
async function warmUp(firstOffset: number, spec: ScaleSpec, ctx: ScaleContext, loadgen: Loadgen, count: number): Promise<void> {
  if (spec.warmupEvents === 0) return;
  const perFilterKey = ctx.corpus.countByKey(spec.plan.filterKeys, spec.warmupEvents);
  const expected = expectedByGateway({ ...spec, events: spec.warmupEvents }, count, perFilterKey).reduce((a, b) => a + b, 0);
  const before = loadgen.progress().unknownPosition;
  await publishStream({
    ...ctx, // its cluster, layout, corpus, topic and clock
    offsetBase: firstOffset,
    count: spec.warmupEvents,
    ratePerSecond: spec.ratePerSecond,
    mode: 'sharded',
  });
  const deadline = Date.now() + spec.drainTimeoutMs;
  while (loadgen.progress().unknownPosition - before < expected && Date.now() < deadline) await sleep(50);
  const got = loadgen.progress().unknownPosition - before;
  if (got < expected) ctx.log(`    warm-up: ${got}/${expected} delivered within ${spec.drainTimeoutMs / 1_000} s`);
}

/** Publishes the stream and waits until every expected delivery arrived (or the drain deadline / a stall). */
async function publishAndDrain(
  offsetBase: number,
  spec: ScaleSpec,
  ctx: ScaleContext,
  loadgen: Loadgen,
  gateways: readonly GatewayProcess[],
): Promise<{ perFilterKey: number[] }> {
  const perFilterKey = ctx.corpus.countByKey(spec.plan.filterKeys, spec.events);
  const expected = expectedByGateway(spec, gateways.length, perFilterKey).reduce((a, b) => a + b, 0);
  const { lastPublishUs } = await publishStream({
    ...ctx, // its cluster, layout, corpus, topic and clock
    offsetBase,
    count: spec.events,
    ratePerSecond: spec.ratePerSecond,
    mode: 'sharded',
  });
  let last = -1;
  let lastChangeMs = performance.now();
  for (;;) {
    const { unique } = loadgen.progress();
    if (unique >= expected) break;
    if (unique !== last) {
      last = unique;
      lastChangeMs = performance.now();
    }
    if (ctx.clock.nowUs() > lastPublishUs + spec.drainTimeoutMs * 1_000) {
      ctx.log(`    drain deadline: ${unique}/${expected} delivered ${spec.drainTimeoutMs / 1_000} s after the last publish`);
      break;
    }
    if (performance.now() - lastChangeMs > spec.stallTimeoutMs) {
      ctx.log(`    stalled: no delivery for ${spec.stallTimeoutMs / 1_000} s at ${unique}/${expected}`);
      break;
    }
    const exited = gateways.find((g) => g.exitInfo() !== undefined);
    if (exited) throw new Error(`gateway ${exited.index + 1} exited during traffic (${String(exited.exitInfo())}):\n${exited.tail()}`);
    await sleep(20);
  }
  return { perFilterKey };
}

/** Distinct operations (plan variants) the sockets of each gateway subscribe. */
function operationsByGateway(spec: Pick<ScaleSpec, 'sockets' | 'plan'>, count: number): number[] {
  const sets = Array.from({ length: count }, () => new Set<number>());
  for (let i = 0; i < spec.sockets; i++) sets[i % count]?.add(variantOf(spec.plan, i));
  return sets.map((s) => s.size);
}

/** Deliveries the sockets of each gateway should get (socket i is on gateway i mod count). */
function expectedByGateway(spec: ScaleSpec, count: number, perFilterKey: readonly number[]): number[] {
  const variants = variantsOf(spec.plan);
  const expected = new Array<number>(count).fill(0);
  for (let i = 0; i < spec.sockets; i++) {
    const fk = variants[variantOf(spec.plan, i)]?.filterKey ?? -1;
    expected[i % count] = (expected[i % count] ?? 0) + (fk < 0 ? spec.events : (perFilterKey[fk] ?? 0));
  }
  return expected;
}

/**
 * Waits until each gateway holds its sockets' subscriptions with every channel confirmed, and Redis
 * agrees: on each wire channel's primary, `PUBSUB SHARDNUMSUB` counts every gateway that needs it.
 * Without the second check the first events could miss a gateway still subscribing.
 */
async function waitSubscribed(gateways: readonly GatewayProcess[], subscribedPerTarget: readonly number[], spec: ScaleSpec, ctx: ScaleContext): Promise<void> {
  const needed = neededWireChannels(gateways.length, spec, ctx);
  const deadline = Date.now() + 60_000;
  let last = '';
  for (;;) {
    const stats = await Promise.all(gateways.map((g) => fetchStats(g)));
    const hubsOk = stats.every((s, i) => s !== undefined && s.subscriptions >= (subscribedPerTarget[i] ?? 0) && s.confirmedChannels === s.channels && s.ready);
    const missing = hubsOk ? await missingRedisSubscriptions(needed, ctx) : -1;
    if (missing === 0) return;
    last = hubsOk ? `${missing} wire channels short of subscribers in Redis` : `gateways report ${stats.map((s) => `${s?.subscriptions ?? '?'} subs, ${s?.confirmedChannels ?? '?'}/${s?.channels ?? '?'} channels`).join('; ')}`;
    if (Date.now() > deadline) throw new Error(`subscriptions not in place after 60 s: ${last}`);
    await sleep(200);
  }
}

/** Wire channel → gateways that must have SSUBSCRIBEd it (the channels of each gateway's sockets, on every partition). */
function neededWireChannels(count: number, spec: ScaleSpec, ctx: ScaleContext): Map<string, number> {
  const variants = variantsOf(spec.plan);
  const shardsPerGateway = Array.from({ length: count }, () => new Set<number>());
  for (let i = 0; i < spec.sockets; i++) {
    const fk = variants[variantOf(spec.plan, i)]?.filterKey ?? -1;
    const set = shardsPerGateway[i % count] as Set<number>;
    if (fk < 0) for (let s = 0; s < ctx.shards; s++) set.add(s);
    else set.add(shardOf(spec.plan.filterKeys[fk] as string, ctx.shards));
  }
  const needed = new Map<string, number>();
  for (const shards of shardsPerGateway) {
    for (const s of shards) {
      for (let p = 0; p < ctx.corpus.partitions; p++) {
        const wire = ctx.layout.wireChannel(ctx.topic, p, s);
        needed.set(wire, (needed.get(wire) ?? 0) + 1);
      }
    }
  }
  return needed;
}

async function missingRedisSubscriptions(needed: ReadonlyMap<string, number>, ctx: ScaleContext): Promise<number> {
  const byOwner = new Map<RedisNode, string[]>();
  for (const wire of needed.keys()) {
    const owner = ownerOfSlot(ctx.nodes, keySlot(wire));
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), wire]);
  }
  let missing = 0;
  for (const [owner, wires] of byOwner) {
    const reply = (await owner.admin.call('PUBSUB', 'SHARDNUMSUB', ...wires)) as (string | number)[];
    for (let i = 0; i + 1 < reply.length; i += 2) if (Number(reply[i + 1]) < (needed.get(String(reply[i])) ?? 0)) missing++;
  }
  return missing;
}
