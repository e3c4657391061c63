#!/usr/bin/env node
/**
 * The Redis Cluster benchmark (issue #17, scale-out), in one run on one real 3-primary + 3-replica
 * cluster (testkit's startRedisCluster):
 *
 * 1. scale-out: 1, 2 and 3 gateway processes (apps/gateway/dist/main.js, REDIS_MODE=cluster), the
 *    same sockets split over them, the same event stream at the same rate → deliveries per gateway
 *    CPU-second (1 gateway is the baseline) and Redis CPU per shard per 1k published events;
 * 2. fan-in: the same stream with SPUBLISH, then classic PUBLISH on the same channel names, with
 *    subscribers on different nodes → the bytes each node received per event (classic is the baseline).
 *
 * Rounds interleave everything (1, 2, 3 gateways, then the fan-in windows, order rotated each round)
 * so a shared machine's drift hits every setup alike; the report gives medians and ranges.
 *
 *   pnpm --filter @wirestream/bench-cluster bench    full run (~6 min after the machine is quiet): bench/results/cluster.{md,json}
 *   node bench/cluster/dist/main.js --quick          smoke run (seconds of traffic, one round), prints only
 *   node bench/cluster/dist/main.js --help
 */
import { mkdirSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Cluster } from 'ioredis';
import { createBenchClock, parseMix, type OperationPlan } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import {
  createRedisLayout,
  DEFAULT_CHANNEL_PREFIX,
  DEFAULT_HISTORY_PREFIX,
  RAISE_PARTITION_COUNT_SCRIPT,
} from '@wirestream/wire';
import { keySlot, startRedisCluster, type RedisCluster } from '@wirestream/testkit';
import { FAN_IN_MODES, runFanIn, type FanInContext, type FanInRun, type FanInSpec } from './fanin-run.js';
import { runScale, type ScaleContext, type ScaleRun, type ScaleSpec } from './gateway-run.js';
import { commandLine, fmtInt, gatewayVersion, loadAverages, machineText, prepareCorpus, rotated, waitForQuietMachine, type QuietWait } from '@wirestream/bench-kit';
import { describeNodes, ownerOfSlot, type RedisNode } from './redis-nodes.js';
import { fanInCpuTable, fanInTable, gatewayCostLine, scaleTable, shardFigureLines, shardTable } from './report.js';
import { fitGatewayCost, redisShardFigures, summarizeFanIn, summarizeScale, summarizeShards } from './summary.js';
import { writeResults, type ResultsInput } from './write-results.js';

const HELP = `cluster bench: 1, 2, 3 gateways over a 3+3 Redis Cluster, and sharded vs classic pub/sub fan-in (one run)
  --quick                 smoke run: 600 sockets, 3 s of traffic, one round, no load wait; prints only
  --rounds K              interleaved rounds, medians reported (default 3)
  --gateways LIST         gateway counts (default 1,2,3; the first is the baseline)
  --sockets N             sockets in total, split over the gateways (default 4000)
  --mix SPEC              loadgen mix (default filtered:95,shared:3,compact:2: mostly one listing each, some unfiltered)
  --listings N            distinct listing ids, the keys filtered sockets choose from (default 199)
  --partitions P          Kafka partitions of the simulated topic (default 12)
  --rate EV/S             events per second in the gateway runs (default 200)   --seconds S   default 10
  --fanin-rate EV/S       events per second in the fan-in windows (default 1000) --fanin-seconds S  default 5
  --fanin-subscribers K   subscriber sets (as K gateways would hold them) in the fan-in windows (default 3)
  --burst-events E        events of each burst window, back-to-back (default 20000)
  --chunk-events C        most events of one partition per pipeline in bursts (default 100; ingest's chunk is ≤ 500)
  --max-load L            wait until the 1-minute load is below L before starting (default 2.5)
  --max-wait-minutes M    give up waiting after M minutes and run anyway, saying so (default 20)
  --no-wait               do not wait for a quiet machine
  --node-env VALUE        NODE_ENV of the gateways (default production)
  --cpu-prof DIR          write a V8 CPU profile of every gateway process into DIR
  --out DIR               where cluster.md and cluster.json go (default bench/results; none for --quick)
  --no-write              print only`;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    gateways: { type: 'string', default: '1,2,3' },
    sockets: { type: 'string' },
    // Both defaults keep each gateway's share of the plan like the whole: loadgen gives socket i the
    // key (i·7919 mod listings), the kind by (i·37 mod 100) and the gateway i mod N. With 200 listings
    // and 2 gateways every key's sockets sat on one gateway (each executed half the filtered
    // operations), and compact:1 put every compact socket on odd indexes. 199 is prime, and
    // compact:2 takes an even and an odd index per hundred.
    mix: { type: 'string', default: 'filtered:95,shared:3,compact:2' },
    listings: { type: 'string', default: '199' },
    partitions: { type: 'string', default: '12' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    'fanin-rate': { type: 'string' },
    'fanin-seconds': { type: 'string' },
    'fanin-subscribers': { type: 'string', default: '3' },
    'burst-events': { type: 'string' },
    'chunk-events': { type: 'string' },
    'max-load': { type: 'string', default: '2.5' },
    'max-wait-minutes': { type: 'string', default: '20' },
    'no-wait': { type: 'boolean', default: false },
    'node-env': { type: 'string', default: 'production' },
    'cpu-prof': { type: 'string' },
    out: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

const quick = values.quick;
/** A positive number from a flag (or its full / quick default); fails naming the flag. */
function num(flag: string, value: string | undefined, full: number, small: number, integer = true): number {
  const n = value === undefined ? (quick ? small : full) : Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new RangeError(`--${flag} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}`);
  }
  return n;
}
const rounds = num('rounds', values.rounds, 3, 1);
const gatewayCounts = values.gateways.split(',').map((g) => num('gateways', g, 1, 1));
const sockets = num('sockets', values.sockets, 4_000, 600);
const listings = num('listings', values.listings, 199, 199);
const partitions = num('partitions', values.partitions, 12, 12);
const rate = num('rate', values.rate, 200, 100, false);
const seconds = num('seconds', values.seconds, 10, 3, false);
const faninRate = num('fanin-rate', values['fanin-rate'], 1_000, 500, false);
const faninSeconds = num('fanin-seconds', values['fanin-seconds'], 5, 1, false);
const faninSubscribers = num('fanin-subscribers', values['fanin-subscribers'], 3, 3);
const maxLoad = num('max-load', values['max-load'], 2.5, 2.5, false);
const maxWaitMinutes = num('max-wait-minutes', values['max-wait-minutes'], 20, 20, false);
const outDir = values['no-write'] ? undefined : (values.out ?? (quick ? undefined : new URL('../../results/', import.meta.url).pathname));

const filterKeys = Array.from({ length: listings }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
const plan: OperationPlan = { mix: parseMix(values.mix), filterKeys };
const scaleSpec: ScaleSpec = {
  sockets,
  plan,
  events: Math.round(rate * seconds),
  ratePerSecond: rate,
  warmupEvents: Math.round(rate * (quick ? 1 : 3)),
  idleMs: quick ? 1_000 : 3_000,
  drainTimeoutMs: 20_000,
  stallTimeoutMs: 10_000,
  // A few thousand sockets per source address keep bind() fast (bench/results/fanout-scale.md).
  sourceAddresses: Array.from({ length: Math.max(4, Math.ceil(sockets / 3_500)) }, (_, i) => `127.0.0.${i + 1}`),
};
const burstEvents = num('burst-events', values['burst-events'], 20_000, 2_400);
const chunkEvents = num('chunk-events', values['chunk-events'], 100, 100);
const fanInSpec: FanInSpec = { events: Math.round(faninRate * faninSeconds), ratePerSecond: faninRate, burstEvents, chunkEvents, subscribers: faninSubscribers };

const log = (line: string): void => console.log(line);

// Exit through process.exit on a signal, so every exit hook runs (testkit SIGKILLs the cluster's
// nodes and the gateways it started; the gateways' watchdogs cover a SIGKILLed bench).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping the bench's processes\n`);
    process.exit(130);
  });
}

/** `n` rotated by `by`: round r starts with a different setup, so no setup always runs first (or last). */
interface Measured {
  readonly scale: ScaleRun[];
  readonly fanIn: FanInRun[];
  readonly nodes: readonly RedisNode[];
  readonly partitionsByShard: ReadonlyMap<number, number[]>;
  readonly meanEnvelopeBytes: number;
  readonly clusterStartupMs: number;
}

/** Starts the cluster, runs every round, and stops what it started. */
async function measure(): Promise<Measured> {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareCorpus({ count: Math.max(scaleSpec.events, fanInSpec.events, fanInSpec.burstEvents), listings, partitions, shards: route.shards });
  const layout = createRedisLayout('cluster', DEFAULT_CHANNEL_PREFIX, DEFAULT_HISTORY_PREFIX);
  let redisCluster: RedisCluster | undefined;
  let client: Cluster | undefined;
  let nodes: RedisNode[] = [];
  try {
    redisCluster = await startRedisCluster();
    nodes = await describeNodes(redisCluster);
    log(`cluster up in ${(redisCluster.startupMs / 1_000).toFixed(1)} s: ${nodes.map((n) => `${n.port} ${n.role}${n.role === 'replica' ? ` of ${n.shardPort}` : ''} (pid ${n.pid})`).join(', ')}`);
    client = new Cluster([...redisCluster.startupNodes]);
    // As ingest does before its first publish: gateways subscribe every partition's channels from this count.
    await client.eval(RAISE_PARTITION_COUNT_SCRIPT, 1, layout.partitionCountKey(route.topic), String(partitions));
    await client.sadd(layout.partitionsKey(route.topic), ...Array.from({ length: partitions }, (_, p) => String(p)));
    const partitionsByShard = new Map<number, number[]>();
    for (let p = 0; p < partitions; p++) {
      const owner = ownerOfSlot(nodes, keySlot(layout.streamKey(route.topic, p))).port;
      partitionsByShard.set(owner, [...(partitionsByShard.get(owner) ?? []), p]);
    }
    log(`topic ${route.topic}: ${partitions} partitions × ${route.shards} key shards; partitions per primary ${[...partitionsByShard].map(([port, ps]) => `${port}: ${ps.join(',')}`).join(' · ')}`);
    log(`events: ${fmtInt(corpus.events.length)} demo listing events, mean envelope ${fmtInt(corpus.meanEnvelopeBytes)} B`);
    const clock = createBenchClock();
    const seed = redisCluster.startupNodes[0] as { host: string; port: number };
    const scaleCtx: ScaleContext = { cluster: client, layout, nodes, topic: route.topic, shards: route.shards, corpus, clock, redisUrl: `redis://${seed.host}:${seed.port}`, nodeEnv: values['node-env'], cpuProfileDir: values['cpu-prof'], log };
    const fanInCtx: FanInContext = { cluster: client, layout, nodes, topic: route.topic, shards: route.shards, corpus, clock, log };
    const scale: ScaleRun[] = [];
    const fanIn: FanInRun[] = [];
    let nextOffset = 1_000_000;
    for (let round = 1; round <= rounds; round++) {
      log(`\n## round ${round}/${rounds} (load ${loadAverages().map((l) => l.toFixed(2)).join(' ')})`);
      for (const count of rotated(gatewayCounts, round)) {
        log(`  ${count} gateway${count > 1 ? 's' : ''}, ${fmtInt(sockets)} sockets, ${fmtInt(scaleSpec.events)} events at ${rate}/s …`);
        const run = await runScale(count, round, nextOffset, scaleSpec, scaleCtx);
        nextOffset += scaleSpec.warmupEvents + scaleSpec.events;
        scale.push(run);
        const cpuS = run.perGateway.reduce((t, g) => t + g.cpuMs, 0) / 1_000;
        log(`    ${fmtInt(run.delivered)}/${fmtInt(run.expected)} delivered, ${fmtInt(run.delivered / cpuS)} per gateway CPU-second, gateway CPU ${run.perGateway.map((g) => (g.cpuMs / 1_000).toFixed(2)).join(' + ')} s, p99 ${run.latencyMs.p99.toFixed(1)} ms`);
      }
      for (const mode of rotated(FAN_IN_MODES, round)) {
        const run = await runFanIn(mode, round, nextOffset, fanInSpec, fanInCtx);
        nextOffset += Math.max(fanInSpec.events, fanInSpec.burstEvents);
        fanIn.push(run);
        const bytes = run.nodes.reduce((t, n) => t + n.delta.busInBytes + n.delta.clientInBytes + n.delta.replInBytes, 0);
        log(`  fan-in ${mode}: ${fmtInt(run.events)} events in ${run.windowSeconds.toFixed(1)} s, the 6 nodes received ${fmtInt(bytes)} B${run.expectedReceived > 0 ? `, subscribers got ${fmtInt(run.received)}/${fmtInt(run.expectedReceived)}` : ''}`);
      }
    }
    return { scale, fanIn, nodes, partitionsByShard, meanEnvelopeBytes: corpus.meanEnvelopeBytes, clusterStartupMs: redisCluster.startupMs };
  } finally {
    for (const n of nodes) n.admin.disconnect();
    client?.disconnect();
    await redisCluster?.stop();
  }
}

async function main(): Promise<void> {
  const wallStart = Date.now();
  let quiet: QuietWait | undefined;
  if (!quick && !values['no-wait']) {
    log(`waiting for a quiet machine (1-minute load < ${maxLoad}, polled every 30 s, up to ${maxWaitMinutes} min)`);
    quiet = await waitForQuietMachine({ maxLoad, maxWaitMs: maxWaitMinutes * 60_000, log });
  }
  const loadAtStart = loadAverages();
  const runStart = Date.now();
  const measured = await measure();
  const loadAtEnd = loadAverages();
  const scale = summarizeScale(measured.scale);
  const shards = summarizeShards(measured.scale);
  const fanIn = summarizeFanIn(measured.fanIn);
  const figures = redisShardFigures(measured.fanIn, measured.scale, faninSubscribers);
  const gatewayCost = fitGatewayCost(measured.scale);
  const partitionsOf = (port: number): number[] => measured.partitionsByShard.get(port) ?? [];
  const tables = {
    scale: scaleTable(scale),
    gatewayCost: gatewayCostLine(gatewayCost),
    shards: shardTable(shards, partitionsOf),
    fanIn: fanInTable(fanIn),
    fanInCpu: fanInCpuTable(fanIn, faninSubscribers, chunkEvents),
    figures: shardFigureLines(figures, faninSubscribers),
  };
  log(`\n## Scale-out: deliveries per gateway CPU-second\n\n${tables.scale}\n\n- ${tables.gatewayCost}`);
  log(`\n## Redis CPU per shard (net of idle), ms per 1k published events\n\n${tables.shards}`);
  log(`\n## Fan-in: bytes each node received per published event (net of idle)\n\n${tables.fanIn}`);
  log(`\n## Redis CPU in the fan-in windows (net of idle), ms per 1k events\n\n${tables.fanInCpu}`);
  log(`\n${tables.figures.map((l) => `- ${l}`).join('\n')}`);
  if (!fanIn.allReceived) log('\n- NOTE: some fan-in subscribers did not receive every message (see the round lines above)');
  const runMinutes = (Date.now() - runStart) / 60_000;
  log(`\nmeasured run ${runMinutes.toFixed(1)} min (wall ${((Date.now() - wallStart) / 60_000).toFixed(1)} min with the wait); load ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start, ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')} at end`);
  if (outDir === undefined) return;
  const input: ResultsInput = {
    command: commandLine(),
    machine: machineText({ platform: true }),
    gateway: gatewayVersion(),
    quiet,
    maxLoad,
    loadAtStart,
    loadAtEnd,
    runMinutes,
    settings: { rounds, gatewayCounts, sockets, mix: values.mix, listings, partitions, rate, seconds, warmupEvents: scaleSpec.warmupEvents, faninRate, faninSeconds, faninSubscribers, burstEvents, chunkEvents, nodeEnv: values['node-env'], meanEnvelopeBytes: measured.meanEnvelopeBytes, clusterStartupMs: measured.clusterStartupMs },
    partitionsByShard: Object.fromEntries([...measured.partitionsByShard].map(([port, ps]) => [String(port), ps])),
    scale,
    shards,
    fanIn,
    figures,
    gatewayCost,
    tables,
    raw: { scale: measured.scale, fanIn: measured.fanIn },
  };
  mkdirSync(outDir, { recursive: true });
  const files = writeResults(outDir, input);
  for (const file of files) log(`wrote ${relative(process.cwd(), file)}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
