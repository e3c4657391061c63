/**
 * The figures the report prints and cluster.json carries, computed from the raw runs: medians over
 * rounds with their range, every ratio against a baseline of the same run (1 gateway for 2 and 3;
 * classic PUBLISH for sharded).
 */
import type { FanInMode, FanInRun } from './fanin-run.js';
import type { ScaleRun } from './gateway-run.js';
import type { NodeCounters } from './redis-nodes.js';
import { fitLine, spreadOf, type Spread } from '@wirestream/bench-kit';

export interface ScaleSummary {
  readonly gateways: number;
  readonly rounds: number;
  readonly socketsPerGateway: number;
  /** Sums over rounds. */
  readonly delivered: number;
  readonly expected: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly deliveriesPerSecond: Spread;
  /** Client-counted deliveries ÷ the CPU-seconds of all gateways together. */
  readonly deliveriesPerGatewayCpuSecond: Spread;
  /** The same over the 1-gateway median of this run. */
  readonly relativeToOneGateway: number;
  readonly gatewayCpuSecondsPerGateway: Spread;
  /** Each gateway's CPU per event it received (µs): the per-event work every gateway repeats. */
  readonly gatewayCpuUsPerEventIn: Spread;
  readonly executionsPerEventPerGateway: Spread;
  /** Net of idle, all primaries (resp. replicas) together, per 1,000 events published. */
  readonly redisPrimaryCpuMsPer1kEvents: Spread;
  readonly redisReplicaCpuMsPer1kEvents: Spread;
  readonly p50Ms: Spread;
  readonly p99Ms: Spread;
  readonly othersCpuPct: Spread;
  readonly loadAverage1m: Spread;
}

export function summarizeScale(runs: readonly ScaleRun[]): ScaleSummary[] {
  const counts = [...new Set(runs.map((r) => r.gateways))].sort((a, b) => a - b);
  const perCpuSecond = (r: ScaleRun): number => r.delivered / (r.perGateway.reduce((t, g) => t + g.cpuMs, 0) / 1_000);
  const oneGateway = spreadOf(runs.filter((r) => r.gateways === 1).map(perCpuSecond)).median;
  const redisPer1k = (r: ScaleRun, role: 'primary' | 'replica'): number =>
    (r.redis.filter((n) => n.role === role).reduce((t, n) => t + n.netCpuMs, 0) / r.events) * 1_000;
  return counts.map((gateways) => {
    const of = runs.filter((r) => r.gateways === gateways);
    const dps = spreadOf(of.map(perCpuSecond));
    return {
      gateways,
      rounds: of.length,
      socketsPerGateway: Math.round((of[0]?.sockets ?? 0) / gateways),
      delivered: of.reduce((t, r) => t + r.delivered, 0),
      expected: of.reduce((t, r) => t + r.expected, 0),
      lost: of.reduce((t, r) => t + r.lost, 0),
      duplicates: of.reduce((t, r) => t + r.duplicates, 0),
      deliveriesPerSecond: spreadOf(of.map((r) => r.delivered / r.windowSeconds)),
      deliveriesPerGatewayCpuSecond: dps,
      relativeToOneGateway: dps.median / oneGateway,
      gatewayCpuSecondsPerGateway: spreadOf(of.map((r) => r.perGateway.reduce((t, g) => t + g.cpuMs, 0) / 1_000 / gateways)),
      gatewayCpuUsPerEventIn: spreadOf(of.flatMap((r) => r.perGateway.map((g) => (g.cpuMs * 1_000) / Math.max(1, g.eventsIn)))),
      executionsPerEventPerGateway: spreadOf(of.map((r) => r.perGateway.reduce((t, g) => t + g.executions, 0) / r.events / gateways)),
      redisPrimaryCpuMsPer1kEvents: spreadOf(of.map((r) => redisPer1k(r, 'primary'))),
      redisReplicaCpuMsPer1kEvents: spreadOf(of.map((r) => redisPer1k(r, 'replica'))),
      p50Ms: spreadOf(of.map((r) => r.latencyMs.p50)),
      p99Ms: spreadOf(of.map((r) => r.latencyMs.p99)),
      othersCpuPct: spreadOf(of.map((r) => r.othersCpuPct)),
      loadAverage1m: spreadOf(of.map((r) => r.loadAverage1m)),
    };
  });
}

/**
 * Why deliveries per CPU-second change with N: each gateway's CPU per event it received against the
 * deliveries it wrote per event, a straight line over every gateway of every run. The intercept is
 * the work each gateway repeats per event whatever its sockets (decode, one execution per distinct
 * operation the event matches); the slope is the cost of one delivery.
 */
export interface GatewayCostFit {
  readonly usPerEventPerGateway: number;
  readonly usPerDelivery: number;
  readonly points: number;
}

export function fitGatewayCost(runs: readonly ScaleRun[]): GatewayCostFit {
  const points = runs.flatMap((r) => r.perGateway.filter((g) => g.eventsIn > 0).map((g): [number, number] => [g.framesOut / g.eventsIn, (g.cpuMs * 1_000) / g.eventsIn]));
  const fit = fitLine(points);
  return { usPerEventPerGateway: fit.intercept, usPerDelivery: fit.slope, points: points.length };
}

/** One Redis node in the scale part, per gateway count. */
export interface ShardNodeSummary {
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shardPort: number;
  /** Share of the published events whose partition lives on this shard. */
  readonly eventShare: number;
  readonly idleCpuMsPerSecond: Spread;
  readonly byGateways: readonly {
    readonly gateways: number;
    /** Net CPU per 1,000 events published to the topic (all shards' events). */
    readonly cpuMsPer1kPublishedEvents: Spread;
    /** Net CPU per 1,000 of the events that landed on this shard (= µs per event of its own). */
    readonly cpuMsPer1kShardEvents: Spread;
  }[];
}

export function summarizeShards(runs: readonly ScaleRun[]): ShardNodeSummary[] {
  const first = runs[0];
  if (!first) return [];
  const counts = [...new Set(runs.map((r) => r.gateways))].sort((a, b) => a - b);
  return first.redis.map((node) => {
    const all = runs.map((r) => r.redis.find((n) => n.port === node.port)).filter((n) => n !== undefined);
    return {
      port: node.port,
      role: node.role,
      shardPort: node.shardPort,
      eventShare: node.shardEvents / first.events,
      idleCpuMsPerSecond: spreadOf(all.map((n) => n.idleCpuMsPerSecond)),
      byGateways: counts.map((gateways) => {
        const of = runs.filter((r) => r.gateways === gateways).map((r) => ({ r, n: r.redis.find((n) => n.port === node.port) }));
        return {
          gateways,
          cpuMsPer1kPublishedEvents: spreadOf(of.map(({ r, n }) => ((n?.netCpuMs ?? Number.NaN) / r.events) * 1_000)),
          cpuMsPer1kShardEvents: spreadOf(of.map(({ n }) => ((n?.netCpuMs ?? Number.NaN) / (n?.shardEvents ?? 0)) * 1_000)),
        };
      }),
    };
  });
}

/** Bytes a node received per published event, by source, net of the idle window of the same round. */
export interface BytesPerEvent {
  readonly bus: Spread;
  readonly clients: Spread;
  readonly replication: Spread;
  readonly total: Spread;
  /** Bus messages of the publish types (publish + publishshard) per event. */
  readonly busPublishMessages: Spread;
  /** Net CPU per 1,000 events, ms. */
  readonly cpuMsPer1kEvents: Spread;
}

export interface FanInNodeSummary {
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shardPort: number;
  readonly idle: { readonly busBytesPerSecond: Spread; readonly cpuMsPerSecond: Spread };
  readonly modes: Readonly<Record<Exclude<FanInMode, 'idle'>, BytesPerEvent>>;
  /** classic − sharded, total bytes per event (paired within a round). */
  readonly avoidedBytesPerEvent: Spread;
}

export interface FanInSummary {
  readonly nodes: readonly FanInNodeSummary[];
  /** The whole cluster (every node summed). */
  readonly cluster: FanInNodeSummary;
  /** Every round's subscribers got every message. */
  readonly allReceived: boolean;
}

type Accessor = (c: NodeCounters) => number;

/** Per-event figure of `mode` in one round, net of that round's idle window (scaled to the same length). */
function netPerEvent(rounds: readonly number[], runs: readonly FanInRun[], mode: FanInMode, pick: (run: FanInRun) => NodeCounters | undefined, field: Accessor): number[] {
  return rounds.map((round) => {
    const run = runs.find((r) => r.round === round && r.mode === mode);
    const idle = runs.find((r) => r.round === round && r.mode === 'idle');
    const a = run && pick(run);
    const b = idle && pick(idle);
    if (!run || !idle || !a || !b || run.events === 0) return Number.NaN;
    return (field(a) - field(b) * (run.windowSeconds / idle.windowSeconds)) / run.events;
  });
}

function summarizeFanInNode(runs: readonly FanInRun[], pick: (run: FanInRun) => NodeCounters | undefined, identity: Pick<FanInNodeSummary, 'port' | 'role' | 'shardPort'>): FanInNodeSummary {
  const rounds = [...new Set(runs.map((r) => r.round))];
  const per = (mode: FanInMode, field: Accessor): number[] => netPerEvent(rounds, runs, mode, pick, field);
  const total: Accessor = (c) => c.busInBytes + c.clientInBytes + c.replInBytes;
  const bytes = (mode: Exclude<FanInMode, 'idle'>): BytesPerEvent => ({
    bus: spreadOf(per(mode, (c) => c.busInBytes)),
    clients: spreadOf(per(mode, (c) => c.clientInBytes)),
    replication: spreadOf(per(mode, (c) => c.replInBytes)),
    total: spreadOf(per(mode, total)),
    busPublishMessages: spreadOf(per(mode, (c) => c.publishMessagesIn + c.publishShardMessagesIn)),
    cpuMsPer1kEvents: spreadOf(per(mode, (c) => c.cpuMs * 1_000)),
  });
  const classic = per('classic', total);
  const sharded = per('sharded', total);
  const idleRuns = runs.filter((r) => r.mode === 'idle');
  return {
    ...identity,
    idle: {
      busBytesPerSecond: spreadOf(idleRuns.map((r) => (pick(r)?.busInBytes ?? Number.NaN) / r.windowSeconds)),
      cpuMsPerSecond: spreadOf(idleRuns.map((r) => (pick(r)?.cpuMs ?? Number.NaN) / r.windowSeconds)),
    },
    modes: {
      unsubscribed: bytes('unsubscribed'),
      sharded: bytes('sharded'),
      classic: bytes('classic'),
      'burst-unsubscribed': bytes('burst-unsubscribed'),
      'burst-sharded': bytes('burst-sharded'),
    },
    avoidedBytesPerEvent: spreadOf(classic.map((c, i) => c - (sharded[i] ?? Number.NaN))),
  };
}

function sumCounters(all: readonly NodeCounters[]): NodeCounters {
  const sum = (f: Accessor): number => all.reduce((t, c) => t + f(c), 0);
  return {
    cpuMs: sum((c) => c.cpuMs),
    clientInBytes: sum((c) => c.clientInBytes),
    replInBytes: sum((c) => c.replInBytes),
    busInBytes: sum((c) => c.busInBytes),
    busMessagesIn: sum((c) => c.busMessagesIn),
    publishMessagesIn: sum((c) => c.publishMessagesIn),
    publishShardMessagesIn: sum((c) => c.publishShardMessagesIn),
  };
}

export function summarizeFanIn(runs: readonly FanInRun[]): FanInSummary {
  const nodes = (runs[0]?.nodes ?? []).map((node) =>
    summarizeFanInNode(runs, (run) => run.nodes.find((n) => n.port === node.port)?.delta, { port: node.port, role: node.role, shardPort: node.shardPort }),
  );
  return {
    nodes,
    cluster: summarizeFanInNode(runs, (run) => sumCounters(run.nodes.map((n) => n.delta)), { port: 0, role: 'primary', shardPort: 0 }),
    allReceived: runs.every((r) => r.received >= r.expectedReceived),
  };
}

/** Redis CPU per published event and per subscriber message, on the primaries (µs). */
export interface PublishCost {
  /** XADD + SPUBLISH with no subscriber, replica feed included: all primaries' net CPU ÷ events. */
  readonly usPerPublishedEvent: Spread;
  /** (with K subscriber sets − without) net primary CPU ÷ (events × K), paired within each round. */
  readonly usPerSubscriberMessage: Spread;
}

/** The figures scripts/capacity.mjs reads (its contract: µs on one shard's primary), and how else they were measured. */
export interface RedisShardFigures {
  /** From the burst windows: ingest-sized chunks back-to-back, the cost at throughput (what capacity planning needs). */
  readonly cpuUsPerPublishedEvent: number;
  readonly cpuUsPerSubscriberMessage: number;
  readonly burst: PublishCost;
  /** The paced windows (one-event pipelines at the fan-in rate): the low-rate cost. */
  readonly paced: PublishCost;
  /** The gateway runs: primary net CPU µs per event against N gateways (N messages per event), least squares over every run. */
  readonly scaleFit: { readonly interceptUsPerEvent: number; readonly usPerSubscriberMessage: number; readonly points: number };
}

function publishCost(fanIn: readonly FanInRun[], without: FanInMode, withSubscribers: FanInMode, subscribers: number): PublishCost {
  const rounds = [...new Set(fanIn.map((r) => r.round))];
  const primaries = (run: FanInRun): NodeCounters => sumCounters(run.nodes.filter((n) => n.role === 'primary').map((n) => n.delta));
  const cpuUs: Accessor = (c) => c.cpuMs * 1_000;
  const alone = netPerEvent(rounds, fanIn, without, primaries, cpuUs);
  const subscribed = netPerEvent(rounds, fanIn, withSubscribers, primaries, cpuUs);
  return { usPerPublishedEvent: spreadOf(alone), usPerSubscriberMessage: spreadOf(subscribed.map((s, i) => (s - (alone[i] ?? Number.NaN)) / subscribers)) };
}

export function redisShardFigures(fanIn: readonly FanInRun[], scale: readonly ScaleRun[], subscribers: number): RedisShardFigures {
  const burst = publishCost(fanIn, 'burst-unsubscribed', 'burst-sharded', subscribers);
  const paced = publishCost(fanIn, 'unsubscribed', 'sharded', subscribers);
  const points = scale.map((r): [number, number] => [r.gateways, (r.redis.filter((n) => n.role === 'primary').reduce((t, n) => t + n.netCpuMs, 0) * 1_000) / r.events]);
  const fit = fitLine(points);
  return {
    cpuUsPerPublishedEvent: burst.usPerPublishedEvent.median,
    cpuUsPerSubscriberMessage: burst.usPerSubscriberMessage.median,
    burst,
    paced,
    scaleFit: { interceptUsPerEvent: fit.intercept, usPerSubscriberMessage: fit.slope, points: points.length },
  };
}
