#!/usr/bin/env node
/**
 * The fan-out benchmark (issue 4). Every stack runs as its own process on a free port, against
 * the same private redis-server, with the same load client, N and events; one stack at a time.
 *
 *   pnpm bench                        full run (< 10 min), writes bench/results/fanout.md + SVGs
 *   pnpm bench -- --quick             smoke run (N=500, seconds), prints only
 *   node dist/main.js --scenarios scale                      1 × 19,000 and 3 × 17,000 sockets → fanout-scale.md
 *   node dist/main.js --scenarios saturation --stacks ours,ours-no-metrics --repeat 4 --report metrics-overhead
 *   node dist/main.js --scenarios field --stacks ours,card --field-sockets 2000
 *   node dist/main.js --help
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createBenchClock, parseMix, variantsOf, type OperationPlan, type OperationVariant } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { startRedis, type RedisServer } from '@wirestream/testkit';
import { profilesIn, summarizeProfile } from './profile-summary.js';
import { prepareEvents } from './publisher.js';
import {
  fmtBytes,
  fmtInt,
  fmtMs,
  memoryTable,
  metricsOverheadLines,
  baseComparisonLines,
  transportRatioLines,
  notesOf,
  ratioTable,
  repeatSummaryTable,
  runLabel,
  scaleMemoryTable,
  scaleTable,
  stackTable,
  type ScaleRow,
} from './report.js';
import { runStack, type ProcessRun, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { isGateway, STACK_LABELS, STACK_SHORT, useBaseGateway, type StackName } from './servers.js';
import { burstSpec } from './burst.js';
import { burstSection, heapLimitSection, memoryReturnSection } from './burst-sections.js';
import { DEFAULT_UNBOUNDED_ENV } from './heap-limit.js';
import { filtersSection } from './filters.js';
import { unicastSection, type UnicastOptions } from './unicast.js';
import { lookupsSection, type LookupsOptions } from './lookups.js';
import { DEFAULT_MEMORY_VARIANTS, memoryReturnSpec } from './memory-return.js';
import { timelineChart } from './svg.js';
import { BARE_PROJECTING, runSweep, sweepSection, type SweepOptions } from './sweep.js';

const HELP = `fan-out bench: ours vs naive vs card stack (same run, same N, same events)
  --quick                      smoke run: small N, short traffic; prints only (unless --out)
  --scenarios LIST             field,saturation,sweep (default), and scale (opt-in: ~19k-51k sockets, a few minutes); lookups (opt-in);
                               issue 18 (opt-in): burst, memory-return, heap-limit (see below); issue 16 (opt-in): filters
  --stacks LIST                stacks for field/saturation: naive,card,ours,bare,bare-corked (default), bare-projecting, and
                               ours-no-metrics (our gateway with GATEWAY_METRICS=false, issue 7), ours-sse (GraphQL over
                               SSE) and ours-legacy (subscriptions-transport-ws, subprotocol graphql-ws); the bare uWS
                               reference points run in saturation only, they ignore filters
  --repeat K                   run the stacks of field/saturation K times, interleaved (ours, ours-no-metrics, ours, …),
                               and report median and spread per stack (default 1)
  --scale-single N             scale: one gateway process with N sockets (default 19000, the descriptor ceiling; 0 skips)
  --scale-multi PxN            scale: P gateway processes, N sockets each, one load client over all (default 3x17000; 0 skips)
  --scale-events E             default 20          --scale-rate EV/S   default 20     --scale-mix SPEC  default the field mix
  --scale-source-addresses A   127.0.0.1 … 127.0.0.A for scale runs (default: max(4, sockets / 3,500): binding a
                               source port slows down as an address fills up)
  --field-sockets N            default 4000        --field-rate EV/S   default 20     --field-seconds S default 10
  --field-mix SPEC             default shared:85,compact:5,filtered:10
  --saturation-sockets N       default 10000       --saturation-events E default 1000
  --conflating-share F         saturation: this fraction of sockets (0..1, in hundredths; default 0) subscribe with
                               \`extensions: { conflate: true }\` (issue #36), the others as before, all on one operation
  --sweep-sockets LIST         default 2000,8000   --sweep-distinct LIST default 1,100,1000
  --sweep-events E             default 200         --sweep-baselines   also run the card stack in the sweep
  --sweep-stacks LIST          sweep stacks, interleaved per count (default: ours-base with --base-gateway, ours,
                               bare-projecting: bare uWS projecting per distinct operation, the reference of the
                               "÷ bare" ratio and of "scaled to the issue's machine"); --repeat K repeats whole sweeps
  --burst-sockets N            default 10000       --burst-distinct D  default 1000   --burst-events E  default 200
                               burst: our gateway stacks of --stacks and bare-corked, /healthz every 50 ms and the
                               gateway's event-loop delay from /metrics during traffic
  --filter-sockets N           filters: default 2000 --filter-ops D   default 1000   --filter-events E default 200
                               filters: our gateway, the same N sockets over D operations: one operation; D unfiltered;
                               D each with its own where matching every event; D each matching ~10 % (interleaved
                               with --repeat); then the compiled predicate alone in process (--filter-micro-rounds R,
                               default 7; 0 skips) → filters.md
  --unicast-sockets LIST       unicast (issue 37, opt-in): socket counts, each socket following its own key (default
                               1000,10000,19000), next to --unicast-reference-keys K sockets on K keys (default 200)
  --unicast-events E           default 20000       --unicast-batch B   events per chunk of ingest's batch form (default 64;
                               0: one PUBLISH per event)   --unicast-rate EV/S  default 2000 (0: back-to-back)
                               --unicast-key-share F  the share of the topic's keys the sockets follow (default 1; 0.1: events
                               over 10× the keys, as one of ten gateways sees them)
                               stacks: ours-base (with --base-gateway) and ours, interleaved with --repeat → unicast.md
  --lookups-sockets N          lookups (issue 32, opt-in): saturation sockets on one operation (default 10000), events
  --lookups-events E           back-to-back (default 1000): look-ups with a warm cache vs none, deliveries/s and gateway CPU
  --lookups-paced-sockets N    paced part: sockets (default 2000) at --lookups-rate EV/S (default 20) for --lookups-seconds S
                               (default 10): no look-ups, warm cache, cold cache (TTL 1 ms): p99 added vs the subgraph's latency
  --lookups-latency-ms L       the seller subgraph (apps/demo/dist/sellers.js, its own process) answers after L ms (default 20)
                               → lookups.md
  --settle-seconds S           memory-return: RSS every 1 s for S s after the last delivery (default 60)
  --memory-variants LIST       memory-return: each gateway stack of --stacks (default ours; e.g. ours-base-sse,ours-sse)
                               once per env variant, ';' between variants, ',' within one,
                               'jemalloc' = LD_PRELOAD of libjemalloc.so.2 (default: the allocator/V8 candidates)
  --heap-budget-mib M          heap-limit: memory budget (cgroup) of the gateway (default 512)
  --heap-old-space-mib M       heap-limit: NODE_OPTIONS=--max-old-space-size=M (default 256)
  --heap-scenarios LIST        heap-limit: saturation,burst (default both)
  --heap-unbounded-env LIST    heap-limit: env that lifts the bounds (default GATEWAY_INBOUND_MAX_BYTES=1073741824,
                               GATEWAY_MAX_BACKPRESSURE_BYTES=268435456)
  --drain-timeout S            default 20 (sweep 30, --quick 10): stop waiting for deliveries this long after the last publish
  --workers N                  load worker processes (default: max(2, N/19000))
  --node-env VALUE             NODE_ENV of every server process (default: production, as deployed; graphql-js and
                               graphql-ws do extra checks in development)
  --base-gateway DIR           another checkout (e.g. a git worktree of the base commit, built) measured as stack ours-base
  --base-node PATH             the node binary that runs ours-base (default: this one), for a runtime change
  --gateway-env LIST           extra env for our gateway, e.g. GATEWAY_MAX_PAYLOAD_BYTES=16384,GATEWAY_IDLE_TIMEOUT_SECONDS=120
  --cpu-prof DIR               write a V8 CPU profile of each server process of --cpu-prof-stacks (default: ours) into DIR
  --out DIR                    where fanout.md and the SVGs go (default: bench/results; none for --quick)
  --report NAME                report file NAME.md, SVGs NAME-<scenario>.svg (default: fanout; fanout-scale when
                               --scenarios is only scale)
  --no-write                   print only`;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scenarios: { type: 'string', default: 'field,saturation,sweep' },
    stacks: { type: 'string', default: 'naive,card,ours,bare,bare-corked' },
    'field-sockets': { type: 'string' },
    'field-rate': { type: 'string' },
    'field-seconds': { type: 'string' },
    'field-mix': { type: 'string', default: 'shared:85,compact:5,filtered:10' },
    'saturation-sockets': { type: 'string' },
    'saturation-events': { type: 'string' },
    'conflating-share': { type: 'string', default: '0' },
    'sweep-sockets': { type: 'string' },
    'sweep-distinct': { type: 'string' },
    'sweep-events': { type: 'string' },
    'sweep-baselines': { type: 'boolean', default: false },
    'sweep-stacks': { type: 'string' },
    'burst-sockets': { type: 'string' },
    'burst-distinct': { type: 'string' },
    'burst-events': { type: 'string' },
    'settle-seconds': { type: 'string' },
    'filter-sockets': { type: 'string' },
    'filter-ops': { type: 'string' },
    'filter-events': { type: 'string' },
    'filter-micro-rounds': { type: 'string' },
    'unicast-sockets': { type: 'string' },
    'unicast-reference-keys': { type: 'string' },
    'unicast-events': { type: 'string' },
    'unicast-batch': { type: 'string' },
    'unicast-rate': { type: 'string' },
    'unicast-key-share': { type: 'string' },
    'lookups-sockets': { type: 'string' },
    'lookups-events': { type: 'string' },
    'lookups-paced-sockets': { type: 'string' },
    'lookups-rate': { type: 'string' },
    'lookups-seconds': { type: 'string' },
    'lookups-latency-ms': { type: 'string' },
    'memory-variants': { type: 'string', default: DEFAULT_MEMORY_VARIANTS },
    'heap-budget-mib': { type: 'string', default: '512' },
    'heap-old-space-mib': { type: 'string', default: '256' },
    'heap-scenarios': { type: 'string', default: 'saturation,burst' },
    'heap-unbounded-env': { type: 'string', default: DEFAULT_UNBOUNDED_ENV },
    repeat: { type: 'string', default: '1' },
    'scale-single': { type: 'string' },
    'scale-multi': { type: 'string' },
    'scale-events': { type: 'string' },
    'scale-rate': { type: 'string' },
    'scale-mix': { type: 'string', default: 'shared:85,compact:5,filtered:10' },
    'scale-source-addresses': { type: 'string' },
    report: { type: 'string' },
    'drain-timeout': { type: 'string' },
    workers: { type: 'string' },
    out: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'gateway-env': { type: 'string' },
    'base-gateway': { type: 'string' },
    'base-node': { type: 'string' },
    'node-env': { type: 'string', default: 'production' },
    'cpu-prof-stacks': { type: 'string', default: 'ours' },
    'no-write': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

const quick = values.quick;
const num = (value: string | undefined, full: number, small: number): number => {
  const n = value === undefined ? (quick ? small : full) : Number(value);
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`expected a non-negative number, got ${String(value)}`);
  return n;
};
const list = (value: string | undefined, full: number[], small: number[]): number[] =>
  value === undefined ? (quick ? small : full) : value.split(',').map(Number);

const scenarios = new Set(values.scenarios.split(','));
const stacks = values.stacks.split(',') as StackName[];
for (const s of stacks) if (!(s in STACK_LABELS)) throw new RangeError(`unknown stack "${s}": use ${Object.keys(STACK_LABELS).join(', ')}`);
if (values['base-gateway'] !== undefined) useBaseGateway(values['base-gateway'], values['base-node']);
else if (stacks.includes('ours-base') || stacks.includes('ours-base-sse')) throw new RangeError('--stacks ours-base(-sse) needs --base-gateway <checkout with apps/gateway built>');
const SCENARIOS = ['field', 'saturation', 'sweep', 'scale', 'burst', 'memory-return', 'heap-limit', 'filters', 'unicast', 'lookups'];
for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new RangeError(`unknown scenario "${s}": use ${SCENARIOS.join(', ')}`);
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) throw new RangeError(`--repeat must be a positive integer, got ${values.repeat}`);

const LISTINGS = 50;
const filterKeys = Array.from({ length: LISTINGS }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
const workers = values.workers === undefined ? undefined : Number(values.workers);
const drainOverride = values['drain-timeout'] === undefined ? undefined : Number(values['drain-timeout']) * 1_000;
const idleMs = quick ? 500 : 2_000;
const withWorkers = (spec: Omit<RunSpec, 'workers'>): RunSpec => (workers === undefined ? spec : { ...spec, workers });

const fieldRate = num(values['field-rate'], 20, 20);
const fieldSeconds = num(values['field-seconds'], 10, 2);
const fieldSpec = withWorkers({
  sockets: num(values['field-sockets'], 4_000, 500),
  plan: { mix: parseMix(values['field-mix']), filterKeys },
  events: Math.round(fieldRate * fieldSeconds),
  ratePerSecond: fieldRate,
  drainTimeoutMs: drainOverride ?? (quick ? 10_000 : 20_000),
  stallTimeoutMs: 10_000,
  idleMs,
});
const saturationEvents = num(values['saturation-events'], 1_000, 200);
const conflatingShare = Number(values['conflating-share']);
if (!(conflatingShare >= 0 && conflatingShare <= 1)) throw new RangeError(`--conflating-share: expected 0..1, got ${values['conflating-share']}`);
// Socket i subscribes with operations[i % 100]: the first share × 100 of them the shared operation
// with `extensions.conflate`, the rest the shared operation as is (one operation for the gateway).
const sharedPayload = (variantsOf({ mix: parseMix('shared:100'), filterKeys: [] })[0] as OperationVariant).payload;
const conflatingPlan = (share: number): Pick<RunSpec, 'plan' | 'expectedPerOperation'> => ({
  plan: {
    operations: Array.from({ length: 100 }, (_, i) =>
      i < Math.round(share * 100) ? { label: 'conflating', payload: { ...sharedPayload, extensions: { conflate: true } } } : { label: 'shared', payload: sharedPayload },
    ),
    filterKeys,
  },
  expectedPerOperation: new Array<number>(100).fill(saturationEvents),
});
/** `lost` of a run summed per operation label, e.g. `conflating 80,000, shared 0`. */
const lostByLabel = (run: StackRun, plan: OperationPlan): string => {
  const byLabel = new Map<string, number>();
  plan.operations?.forEach((op, i) => byLabel.set(op.label, (byLabel.get(op.label) ?? 0) + (run.lostPerOperation[i] ?? 0)));
  return [...byLabel].map(([label, n]) => `${label} ${fmtInt(n)}`).join(', ');
};
const saturationSpec = withWorkers({
  sockets: num(values['saturation-sockets'], 10_000, 500),
  ...(conflatingShare > 0 ? conflatingPlan(conflatingShare) : { plan: { mix: parseMix('shared:100'), filterKeys } }),
  events: saturationEvents,
  ratePerSecond: 0,
  // Baselines never finish 10M deliveries: 20 s of steady state measures their rate well enough.
  drainTimeoutMs: drainOverride ?? (quick ? 10_000 : 20_000),
  stallTimeoutMs: 10_000,
  idleMs,
});
const sweepSockets = list(values['sweep-sockets'], [2_000, 8_000], [250, 500]);
const sweepDistinct = list(values['sweep-distinct'], [1, 100, 1_000], [1, 10, 100]);
const sweepEvents = num(values['sweep-events'], 200, 100);
const sweepStacks = (values['sweep-stacks']?.split(',') ?? [
  ...(values['sweep-baselines'] ? ['card'] : []),
  ...(values['base-gateway'] === undefined ? [] : ['ours-base']),
  'ours',
  BARE_PROJECTING,
]) as StackName[];
for (const s of sweepStacks) if (!(s in STACK_LABELS)) throw new RangeError(`--sweep-stacks: unknown stack "${s}": use ${Object.keys(STACK_LABELS).join(', ')}`);
if (sweepStacks.includes('ours-base') && values['base-gateway'] === undefined) throw new RangeError('--sweep-stacks ours-base needs --base-gateway <checkout>');
if (scenarios.has('sweep') && !sweepDistinct.includes(1)) throw new RangeError('--sweep-distinct must include 1: "per extra operation" is against one');
const sweepOptions: SweepOptions = {
  stacks: sweepStacks,
  sockets: sweepSockets,
  distinct: sweepDistinct,
  events: sweepEvents,
  repeat,
  filterKeys,
  drainTimeoutMs: drainOverride ?? 30_000,
  workers,
};

const burstSpecOfRun = burstSpec({
  sockets: num(values['burst-sockets'], 10_000, 500),
  distinct: num(values['burst-distinct'], 1_000, 50),
  events: num(values['burst-events'], 200, 50),
  filterKeys,
  drainTimeoutMs: drainOverride ?? (quick ? 10_000 : 60_000),
  idleMs,
});
const filterOptions = {
  sockets: num(values['filter-sockets'], 2_000, 500),
  operations: num(values['filter-ops'], 1_000, 100),
  events: num(values['filter-events'], 200, 100),
  repeat,
  drainTimeoutMs: drainOverride ?? 30_000,
  idleMs: 500,
  workers,
  microRounds: num(values['filter-micro-rounds'], 7, 3),
};
if (filterOptions.operations < 2) throw new RangeError(`--filter-ops must be at least 2 (per extra operation is against one), got ${filterOptions.operations}`);
const unicastOptions: UnicastOptions = {
  sockets: list(values['unicast-sockets'], [1_000, 10_000, 19_000], [1_000]),
  referenceKeys: num(values['unicast-reference-keys'], 200, 200),
  events: num(values['unicast-events'], 20_000, 2_000),
  batch: num(values['unicast-batch'], 64, 64),
  ratePerSecond: num(values['unicast-rate'], 2_000, 0),
  keyShare: Number(values['unicast-key-share'] ?? 1),
  stacks: values['base-gateway'] === undefined ? ['ours'] : ['ours-base', 'ours'],
  repeat,
  drainTimeoutMs: drainOverride ?? 60_000,
  workers,
};
if (!(unicastOptions.keyShare > 0 && unicastOptions.keyShare <= 1)) throw new RangeError(`--unicast-key-share must be a number above 0 and at most 1, got ${String(values['unicast-key-share'])}`);
const lookupsOptions: LookupsOptions = {
  saturationSockets: num(values['lookups-sockets'], 10_000, 500),
  saturationEvents: num(values['lookups-events'], 1_000, 200),
  pacedSockets: num(values['lookups-paced-sockets'], 2_000, 200),
  pacedRate: num(values['lookups-rate'], 20, 20),
  pacedSeconds: num(values['lookups-seconds'], 10, 2),
  latencyMs: num(values['lookups-latency-ms'], 20, 20),
  repeat,
  drainTimeoutMs: drainOverride ?? (quick ? 10_000 : 30_000),
  idleMs,
  workers,
};
if (lookupsOptions.pacedRate <= 0) throw new RangeError(`--lookups-rate must be above 0 (the paced part measures latency), got ${values['lookups-rate']}`);
const settleMs = num(values['settle-seconds'], 60, 10) * 1_000;
const heapOptions = {
  budgetBytes: num(values['heap-budget-mib'], 512, 512) * 1_048_576,
  oldSpaceMb: num(values['heap-old-space-mib'], 256, 256),
  unboundedEnv: values['heap-unbounded-env'],
};
const heapScenarios = values['heap-scenarios'].split(',');
for (const s of heapScenarios) if (s !== 'saturation' && s !== 'burst') throw new RangeError(`--heap-scenarios: "${s}" is not saturation or burst`);

const scaleSingle = num(values['scale-single'], 19_000, 2_000);
const scaleMulti = ((): { processes: number; perProcess: number } | undefined => {
  const spec = values['scale-multi'] ?? (quick ? '3x1000' : '3x17000');
  if (spec === '0' || spec === 'none') return undefined;
  const match = /^(\d+)x(\d+)$/.exec(spec);
  if (!match) throw new RangeError(`--scale-multi must look like 3x17000 (processes x sockets per process) or 0, got "${spec}"`);
  const processes = Number(match[1]);
  const perProcess = Number(match[2]);
  if (processes < 1 || perProcess < 1) throw new RangeError(`--scale-multi needs at least 1 process and 1 socket, got "${spec}"`);
  // Each process holds its sockets plus ~30 descriptors of its own under the 20,000 open-file cap.
  if (perProcess > 19_500) throw new RangeError(`--scale-multi: ${perProcess} sockets per process is over the ~19,900 open files one process can hold`);
  return { processes, perProcess };
})();
if (scaleSingle > 19_900) throw new RangeError(`--scale-single ${scaleSingle} is over the ~19,900 sockets one process can hold (open files capped at 20,000)`);
const scaleEvents = num(values['scale-events'], 20, 20);
const scaleRate = num(values['scale-rate'], 20, 20);
const scaleMix = parseMix(values['scale-mix']);
const scaleAddresses = (sockets: number): string[] => {
  // bind(port 0) searches the ephemeral range for a port free on that address: it slows down
  // badly as an address fills up (51,000 sockets over 6 addresses connected in 62 s, over 16 in
  // 14 s, bench/results/fanout-scale.md), so keep each address at a few thousand sockets.
  const count = values['scale-source-addresses'] === undefined ? Math.max(4, Math.ceil(sockets / 3_500)) : Number(values['scale-source-addresses']);
  if (!Number.isInteger(count) || count < 1 || count > 250) throw new RangeError(`--scale-source-addresses must be 1..250, got ${count}`);
  return Array.from({ length: count }, (_, i) => `127.0.0.${i + 1}`);
};

const onlyOf = (...names: string[]): boolean => [...scenarios].every((s) => names.includes(s));
const reportBase =
  values.report ??
  (onlyOf('filters') ? 'filters' : onlyOf('lookups') ? 'lookups' : onlyOf('unicast') ? 'unicast' : onlyOf('scale') ? 'fanout-scale' : onlyOf('memory-return') ? 'memory-return' : onlyOf('burst', 'heap-limit') ? 'burst' : 'fanout');
if (!/^[A-Za-z0-9_.-]+$/.test(reportBase)) throw new RangeError(`--report must be a plain file name (letters, digits, _ . -), got "${reportBase}"`);
const reportName = `${reportBase}${quick ? '-quick' : ''}`;
/** NAME-scenario.svg, or NAME.svg when the report is already named after the scenario (fanout-scale). */
const svgNameOf = (scenario: string): string =>
  `${reportBase.endsWith(scenario) ? reportBase : `${reportBase}-${scenario}`}${quick ? '-quick' : ''}.svg`;

const outDir =
  values['no-write'] ? undefined : values.out ?? (quick ? undefined : new URL('../../results/', import.meta.url).pathname);

const log = (line: string): void => console.log(line);
const wallStart = Date.now();
const loadAtStart = os.loadavg().map((l) => l.toFixed(1)).join(' ');

function describePlan(plan: OperationPlan): string {
  if (plan.distinctOperations !== undefined) return `${plan.distinctOperations} distinct operations`;
  return (plan.mix ?? []).map((e) => `${e.percent} % ${e.kind}`).join(', ');
}

async function main(): Promise<void> {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const maxEvents = Math.max(lookupsOptions.saturationEvents, Math.round(lookupsOptions.pacedRate * lookupsOptions.pacedSeconds), fieldSpec.events, saturationSpec.events, sweepEvents, scaleEvents, burstSpecOfRun.events, filterOptions.events);
  const corpus = prepareEvents(maxEvents, route, 'ws', LISTINGS);

  let redisServer: RedisServer | undefined;
  let redis: Redis | undefined;
  const sections: string[] = [];
  const svgs: [string, string][] = [];
  try {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    const profileDir = values['cpu-prof'];
    const profiled = new Set(values['cpu-prof-stacks'].split(','));
    const ctx: RunContext = {
      redisUrl: redisServer.url,
      redis,
      corpus,
      route,
      channelPrefix: 'ws',
      clock: createBenchClock(),
      log,
      redisPid: redisServer.pid,
      nodeEnv: values['node-env'],
      gatewayEnv: Object.fromEntries(
        (values['gateway-env'] ?? '')
          .split(',')
          .filter((kv) => kv.includes('='))
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      ),
      nodeArgs: (stack) => (profileDir !== undefined && profiled.has(stack) ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    };
    log(`redis-server pid ${String(redisServer.pid)} on ${redisServer.url}; mean envelope ${fmtBytes(corpus.meanEnvelopeBytes)}`);

    const runScenario = async (name: string, title: string, spec: RunSpec, names: StackName[]): Promise<StackRun[]> => {
      log(`\n## ${title}\n`);
      const runs: StackRun[] = [];
      // Interleaved (a, b, a, b, …): slow drifts of a noisy machine hit every stack alike.
      for (let rep = 1; rep <= repeat; rep++) {
        for (const stack of names) {
          log(`  ${STACK_LABELS[stack]}${repeat > 1 ? ` (${rep}/${repeat})` : ''} …`);
          const run = { ...(await runStack(stack, spec, ctx)), repeat: rep };
          runs.push(run);
          log(
            `    ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(run.deliveriesPerSec)}/s, ` +
              `p99 ${fmtMs(run.latencyMs.p99)}, heap/socket ${fmtBytes(run.perSocket.heapBytes)}, RSS/socket ${fmtBytes(run.perSocket.rssBytes)}`,
          );
        }
      }
      const overhead = metricsOverheadLines(runs);
      const againstBase = baseComparisonLines(runs);
      const againstTransport = name === 'saturation' && runs.some((r) => r.stack === 'ours-prod') ? transportRatioLines(runs) : [];
      const body = [
        ...(againstTransport.length > 0
          ? ['**Against the transport (issue 18: deliveries/s ≥ 95 % of bare uWS corked with the production settings on)**', '', ...againstTransport.map((l) => `- ${l}`), '']
          : []),
        ...(overhead.length > 0 ? ['**Metrics on vs off (issue 7)**', '', ...overhead.map((l) => `- ${l}`), ''] : []),
        ...(againstBase.length > 0 ? ['**Change vs base (`ours` vs `ours-base`)**', '', ...againstBase.map((l) => `- ${l}`), ''] : []),
        ...(name === 'saturation' && conflatingShare > 0 ? ['**Undelivered by group (`--conflating-share`)**', '', ...runs.map((r) => `- ${runLabel(r, runs)}: ${lostByLabel(r, spec.plan)}`), ''] : []),
        ...(repeat > 1 ? [`Median and spread over ${repeat} interleaved repetitions:`, '', repeatSummaryTable(runs), ''] : []),
        stackTable(runs),
        '',
        // With repetitions, ratios against one arbitrary repetition would mislead: the summary above has the medians.
        ...(repeat > 1 ? [] : [ratioTable(runs), '']),
        ...notesOf(runs).map((n) => `- ${n}`),
        '',
        '<details><summary>memory by phase (process.memoryUsage() after two forced GCs, MB)</summary>',
        '',
        memoryTable(runs, (r) => runLabel(r, runs)),
        '',
        '</details>',
      ].join('\n');
      log(`\n${body}\n`);
      const svgName = svgNameOf(name);
      svgs.push([
        svgName,
        timelineChart(
          title + (repeat > 1 ? ' (first repetition)' : ''),
          `phases: idle → connect → subscribed (forced GC) → traffic → drain · ${os.cpus().length} cores · node ${process.version}`,
          runs
            .filter((r) => r.repeat === 1)
            .map((r) => ({
              title: STACK_SHORT[r.stack],
              subtitle: [
                `${fmtInt(r.deliveriesPerSec)} deliveries/s · p50 ${fmtMs(r.latencyMs.p50)} · p99 ${fmtMs(r.latencyMs.p99)}`,
                `per socket: heap ${fmtBytes(r.perSocket.heapBytes)} · RSS ${fmtBytes(r.perSocket.rssBytes)} (after GC)`,
              ],
              samples: r.samples,
              phases: r.phases,
            })),
        ),
      ]);
      sections.push(`## ${title}\n\n${body}\n\n![${name}](${svgName})\n`);
      return runs;
    };

    const fieldStacks = stacks.filter((s) => s !== 'bare' && s !== 'bare-corked' && s !== 'bare-projecting');
    if (scenarios.has('scale')) sections.push(await runScale(ctx, svgs));
    let fieldRuns: StackRun[] = [];
    let saturationRuns: StackRun[] = [];
    if (scenarios.has('field')) {
      fieldRuns = await runScenario(
        'field',
        `Field's case: N = ${fmtInt(fieldSpec.sockets)}, ${fieldRate} events/s for ${fieldSeconds} s (${describePlan(fieldSpec.plan)})`,
        fieldSpec,
        fieldStacks,
      );
    }
    if (scenarios.has('saturation')) {
      saturationRuns = await runScenario(
        'saturation',
        `Saturation: N = ${fmtInt(saturationSpec.sockets)} on one operation${conflatingShare > 0 ? ` (${Math.round(conflatingShare * 100)} % of sockets with \`extensions.conflate\`)` : ''}, ${fmtInt(saturationSpec.events)} events back-to-back`,
        saturationSpec,
        stacks,
      );
    }
    const targets = targetLines(fieldRuns, saturationRuns);
    if (targets.length > 0) {
      const body = targets.map((t) => `- ${t}`).join('\n');
      log(`\n## Issue 4 targets\n\n${body}\n`);
      sections.unshift(`## Issue 4 targets (this run)\n\n${body}\n`);
    }
    await runIssue18(ctx, sections, svgs);
    if (scenarios.has('filters')) sections.push(await filtersSection(ctx, schema, filterOptions));
    if (scenarios.has('unicast')) sections.push(await unicastSection(ctx, unicastOptions));
    if (scenarios.has('lookups')) sections.push(await lookupsSection(ctx, lookupsOptions));
    if (scenarios.has('sweep')) {
      log(`\n## Distinct operations sweep (${sweepOptions.stacks.join(', ')})\n`);
      const { markdown, svg } = sweepSection(await runSweep(ctx, sweepOptions), sweepOptions, svgNameOf('sweep'));
      log(`\n${markdown}\n`);
      sections.push(markdown);
      svgs.push([...svg]);
    }
  } finally {
    redis?.disconnect();
    await redisServer?.stop();
  }

  if (values['cpu-prof'] !== undefined) {
    for (const file of profilesIn(values['cpu-prof'])) log(`\nCPU profile ${file} (self time):\n${summarizeProfile(file).join('\n')}`);
  }
  const minutes = ((Date.now() - wallStart) / 60_000).toFixed(1);
  log(`\nwall time ${minutes} min`);
  if (outDir) {
    mkdirSync(outDir, { recursive: true });
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const header = [
      `# Fan-out benchmark${reportBase === 'fanout' ? '' : `: ${reportBase}`}${quick ? ' (quick)' : ''}`,
      '',
      `- date: ${new Date().toISOString()}`,
      `- node ${process.version}, ${os.platform()} ${os.release()}, ${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`,
      `- machine: shared and noisy (load average ${loadAtStart} at start, ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at end; ` +
        'other tenants\' benchmarks may run at the same time): compare ratios within one run, not absolute numbers across runs',
      `- command: \`node bench/fanout/dist/main.js ${process.argv.slice(2).join(' ')}\` (wall time ${minutes} min)`,
      `- gateway measured: \`${gatewayVersion()}\` (apps/gateway/dist as found; build it first)`,
      ...(values['base-gateway'] === undefined ? [] : [`- base gateway (ours-base): \`${gatewayVersion(values['base-gateway'])}\` in ${values['base-gateway']}, run by ${values['base-node'] ?? process.execPath}`]),
      `- servers: each stack its own \`node --expose-gc\` process (default heap limit), NODE_ENV=${values['node-env']}` +
        (values['gateway-env'] ? `, gateway env ${values['gateway-env']}` : ''),
      `- events: @wirestream/demo-events listing events (seed 42, ${LISTINGS} listings), snake_cased by @wirestream/transform, ` +
        `mean envelope ${fmtBytes(corpus.meanEnvelopeBytes)}, published straight into a private redis-server`,
      '',
      'How to read: each stack is its own process on its own port, run one after the other with the same load client ' +
        '(@wirestream/loadgen, raw graphql-transport-ws over TCP, worker processes, source addresses 127.0.0.1-4 unless a section says otherwise). ' +
        '"delivered" counts distinct positions per socket (`extensions.position`); "lost" is expected minus delivered when the ' +
        'drain deadline (or 10 s without deliveries while the server sat idle) ended the wait: undelivered, not necessarily dropped; latency is producer timestamp (µs clock shared by all processes, carried ' +
        'in `occurred_at`) to client receipt, with undelivered events counted as infinitely late. Per-socket memory is ' +
        '(subscribed − idle) / sockets from `/debug/memory?gc=1` (two forced GCs), and as the slope of the second connect wave ' +
        '(N/2 → N, which leaves out one-off growth such as V8 sizing its young generation during the first burst); ' +
        '"raw RSS" is /proc VmRSS without forcing GC. ' +
        '"server CPU" is the server process\'s user+system time from first publish to the end of the drain; "client CPU" is all ' +
        'load workers over the same window in % of one core (2 cores in total are shared by server, client and Redis); ' +
        '"others\' CPU" is what the rest of the machine (other tenants, kernel threads) used in that window, in % of one core: ' +
        'a row with a high value was measured on a busy machine.',
      '',
    ].join('\n');
    writeFileSync(join(outDir, `${reportName}.md`), `${header}\n${sections.join('\n')}`);
    for (const [name, svg] of svgs) writeFileSync(join(outDir, name), svg);
    log(`wrote ${relative(process.cwd(), outDir) || '.'}/${reportName}.md and ${svgs.length} SVG(s)`);
  }
}

/** Issue 18's scenarios, in the order burst, heap-limit, memory-return. */
async function runIssue18(ctx: RunContext, sections: string[], svgs: [string, string][]): Promise<void> {
  const gatewayStacks = stacks.filter((s) => isGateway(s));
  if (scenarios.has('burst')) {
    const burstStacks: StackName[] = [...gatewayStacks, 'bare-corked'];
    const { markdown, svg } = await burstSection(ctx, burstStacks, burstSpecOfRun, repeat, svgNameOf('burst'));
    sections.push(markdown);
    svgs.push([...svg]);
  }
  if (scenarios.has('heap-limit')) {
    const specs = heapScenarios.map((name) => ({
      name,
      spec: name === 'burst' ? burstSpecOfRun : { ...saturationSpec, drainTimeoutMs: drainOverride ?? 60_000 },
    }));
    const { markdown, svg } = await heapLimitSection(ctx, gatewayStacks, specs, heapOptions, svgNameOf('heap-limit'));
    sections.push(markdown);
    svgs.push([...svg]);
  }
  if (scenarios.has('memory-return')) {
    const { markdown, svg } = await memoryReturnSection(ctx, memoryReturnSpec(saturationSpec, settleMs), values['memory-variants'], svgNameOf('memory-return'), gatewayStacks);
    sections.push(markdown);
    svgs.push([...svg]);
  }
}

/**
 * The scale scenario (opt-in): one gateway process at the descriptor ceiling, then several
 * processes on their own ports holding ≥ 50,000 sockets together; a few events to check that
 * every socket still gets every event, and per-process memory after forced GCs.
 */
async function runScale(ctx: RunContext, svgs: [string, string][]): Promise<string> {
  const setups: { setup: string; processes: number; sockets: number }[] = [];
  if (scaleSingle > 0) setups.push({ setup: `1 × ${fmtInt(scaleSingle)}`, processes: 1, sockets: scaleSingle });
  if (scaleMulti) {
    const { processes, perProcess } = scaleMulti;
    setups.push({ setup: `${processes} × ${fmtInt(perProcess)}`, processes, sockets: processes * perProcess });
  }
  const title = `Scale: ${setups.map((s) => `${s.setup} sockets`).join(', then ')}; ${fmtInt(scaleEvents)} events at ${scaleRate}/s (${describePlan({ mix: scaleMix, filterKeys })})`;
  log(`\n## ${title}\n`);
  const rows: ScaleRow[] = [];
  for (const { setup, processes, sockets } of setups) {
    log(`  ours, ${setup} …`);
    const run = await runStack(
      'ours',
      withWorkers({
        sockets,
        processes,
        sourceAddresses: scaleAddresses(sockets),
        plan: { mix: scaleMix, filterKeys },
        events: scaleEvents,
        ratePerSecond: scaleRate,
        // Up to a million deliveries on two shared cores: give the drain time, it is not the measurement.
        drainTimeoutMs: drainOverride ?? 60_000,
        stallTimeoutMs: 10_000,
        idleMs,
      }),
      ctx,
    );
    rows.push({ setup, run });
    log(
      `    ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(run.duplicates)} duplicates, p99 ${fmtMs(run.latencyMs.p99)}; ` +
        `RSS/socket ${run.processes.map((p) => fmtBytes(p.perSocket.rssBytes)).join(' / ')}`,
    );
  }
  const targets = scaleTargetLines(rows);
  const body = [
    ...targets.map((t) => `- ${t}`),
    '',
    'How to read: each setup starts its gateway processes (each its own port and `node --expose-gc` process, GATEWAY_AUTH_MODE=anonymous, ' +
      'GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=1000000, GATEWAY_DEBUG_ENDPOINTS=true) and one load client whose worker processes (≤ 19,000 sockets ' +
      'each) assign socket i to process i mod P and bind source addresses 127.0.0.1 … 127.0.0.A round-robin. Sockets connect in two waves ' +
      '(N/2, then N) with forced-GC memory readings of every process before, between and after; then the events are published at the given rate. ' +
      'Per-socket figures are per process (its own sockets); deliveries, latency and CPU are totals over all processes. ' +
      '"server peak RSS" and the workers\' RSS are sampled every 250 ms (workers report their own RSS); "MemAvailable min" is the whole machine\'s ' +
      '(24 GiB shared with other tenants), the lowest it went during the setup.',
    '',
    scaleTable(rows),
    '',
    scaleMemoryTable(rows),
    '',
    ...notesOf(
      rows.map((r) => r.run),
      (r) => rows.find((row) => row.run === r)?.setup ?? STACK_SHORT[r.stack],
    ).map((n) => `- ${n}`),
    '',
    '<details><summary>memory by phase, per process (process.memoryUsage() after two forced GCs, MB)</summary>',
    '',
    memoryTable(
      rows.map((r) => r.run),
      (r) => rows.find((row) => row.run === r)?.setup ?? STACK_SHORT[r.stack],
    ),
    '',
    '</details>',
  ].join('\n');
  log(`\n${body}\n`);
  const svgName = svgNameOf('scale');
  svgs.push([
    svgName,
    timelineChart(
      title,
      `one column per gateway process · deliveries/s and client CPU are totals over the setup · ${os.cpus().length} cores · node ${process.version}`,
      rows.flatMap(({ setup, run }) =>
        run.processes.map((p, i) => ({
          title: run.processes.length > 1 ? `${setup}: process ${i + 1}` : setup,
          subtitle: [
            `${fmtInt(p.subscribed)} sockets · RSS ${fmtBytes(p.perSocket.rssBytes)}/socket, heap ${fmtBytes(p.perSocket.heapBytes)}/socket (GC)`,
            `all: ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered · p99 ${fmtMs(run.latencyMs.p99)}`,
          ],
          samples: p.samples,
          phases: p.phases,
        })),
      ),
    ),
  ]);
  return `## ${title}\n\n${body}\n\n![scale](${svgName})\n`;
}

/** Issue 4 at scale: sockets held, memory per socket at the ceiling, every event delivered. */
function scaleTargetLines(rows: readonly ScaleRow[]): string[] {
  const mark = (ok: boolean): string => (ok ? '**met**' : '**not met**');
  const lines: string[] = [];
  for (const { setup, run } of rows) {
    const wanted = run.spec.sockets;
    if (run.processes.length === 1) {
      const p = run.processes[0] as ProcessRun;
      const rss = p.perSocket.rssBytes ?? Number.NaN;
      const slope = p.perSocketSecondHalf.rssBytes ?? Number.NaN;
      lines.push(
        `${setup}: one process holds ${fmtInt(run.subscribed)}/${fmtInt(wanted)} subscribed sockets ${mark(run.subscribed >= wanted && run.failed === 0)}; ` +
          `after GC: V8 heap ${fmtBytes(p.perSocket.heapBytes)}/socket ${mark((p.perSocket.heapBytes ?? Number.NaN) <= 2_048)}, ` +
          `RSS idle→N ${fmtBytes(rss)}/socket ${mark(rss <= 2_048)}, RSS N/2→N ${fmtBytes(slope)}/socket ${mark(slope <= 2_048)} (≤ 2 KB)`,
      );
    } else {
      lines.push(
        `${setup}: ${run.processes.length} processes hold ${fmtInt(run.subscribed)} sockets together (${run.processes.map((p) => fmtInt(p.subscribed)).join(' + ')}), ` +
          `≥ 50,000 ${mark(run.subscribed >= 50_000 && run.failed === 0)}; RSS/socket after GC per process ` +
          `${run.processes.map((p) => fmtBytes(p.perSocket.rssBytes)).join(' / ')} (N/2→N ${run.processes.map((p) => fmtBytes(p.perSocketSecondHalf.rssBytes)).join(' / ')})`,
      );
    }
    const all = run.unique === run.expected && run.duplicates === 0 && run.lost === 0;
    lines.push(
      `${setup}: every event to every socket ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.duplicates)} duplicates ${mark(all)}; ` +
        `p99 ${fmtMs(run.latencyMs.p99)} (${fmtInt(scaleEvents)} events at ${scaleRate}/s = ${fmtInt(run.expected / Math.max(1, scaleEvents / Math.max(scaleRate, 1e-9)))} deliveries/s offered; ` +
        `the field's 50 ms target is for 4,000 sockets)`,
    );
  }
  return lines;
}

/** The gateway version measured: last commit touching apps/gateway, and whether the tree differs from it. */
function gatewayVersion(checkout = new URL('../../..', import.meta.url).pathname): string {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', cwd: checkout }).trim();
    } catch {
      return '';
    }
  };
  const commit = git('log', '-1', '--format=%h %s', '--', 'apps/gateway');
  const dirty = git('status', '--porcelain', '--', 'apps/gateway') !== '';
  const head = git('rev-parse', '--short', 'HEAD');
  return commit === '' ? 'unknown (not a git checkout)' : `${commit}${dirty ? ' + uncommitted changes' : ''} (checkout at ${head})`;
}

/** The issue's targets, checked against this run (pass/fail with the number). */
function targetLines(field: readonly StackRun[], saturation: readonly StackRun[]): string[] {
  const lines: string[] = [];
  const mark = (ok: boolean): string => (ok ? '**met**' : '**not met**');
  const oursField = field.find((r) => r.stack === 'ours');
  const oursSat = saturation.find((r) => r.stack === 'ours');
  for (const r of [oursField, oursSat]) {
    if (!r) continue;
    const heap = r.perSocket.heapBytes ?? Number.NaN;
    const rss = r.perSocket.rssBytes ?? Number.NaN;
    const rssSlope = r.perSocketSecondHalf.rssBytes;
    lines.push(
      `memory ≤ 2 KB per idle subscribed socket (N = ${fmtInt(r.subscribed)}, after GC): V8 heap ${fmtBytes(heap)} ${mark(heap <= 2_048)}; ` +
        `RSS idle→N ${fmtBytes(rss)} ${mark(rss <= 2_048)}` +
        (rssSlope === undefined ? '' : `; RSS of the second half (N/2→N) ${fmtBytes(rssSlope)} ${mark(rssSlope <= 2_048)}`),
    );
  }
  if (oursField) {
    const all = oursField.lost === 0 && oursField.duplicates === 0 && oursField.unique === oursField.expected;
    lines.push(
      `field's case, every event to every socket: ${fmtInt(oursField.unique)}/${fmtInt(oursField.expected)}, ` +
        `${fmtInt(oursField.duplicates)} duplicates ${mark(all)}; p99 ${fmtMs(oursField.latencyMs.p99)} ≤ 50 ms ${mark(oursField.latencyMs.p99 <= 50)}`,
    );
  }
  if (oursSat) {
    const naive = saturation.find((r) => r.stack === 'naive');
    const card = saturation.find((r) => r.stack === 'card');
    if (naive) {
      const ratio = oursSat.deliveriesPerSec / naive.deliveriesPerSec;
      lines.push(`saturation ≥ 50× naive deliveries/s: ${ratio.toFixed(1)}× ${mark(ratio >= 50)}`);
    }
    if (card) {
      const ratio = oursSat.deliveriesPerSec / card.deliveriesPerSec;
      lines.push(`saturation ≥ 15× card stack deliveries/s: ${ratio.toFixed(1)}× ${mark(ratio >= 15)}`);
    }
    lines.push(`saturation ≥ 500,000 deliveries/s from one process: ${fmtInt(oursSat.deliveriesPerSec)}/s ${mark(oursSat.deliveriesPerSec >= 500_000)}`);
  }
  return lines;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
