#!/usr/bin/env node
/**
 * The bandwidth bench (issue #18): bytes per delivery on the wire and server CPU per delivery of
 * our gateway with plain frames, permessage-deflate, delta mode and both, in one run, on the same
 * demo events, the same N sockets and the same load client (which negotiates deflate like a
 * browser, inflates, applies deltas and still checks every position).
 *
 *   flock /tmp/wirestream-bench.lock node bench/fanout/dist/bandwidth.js            → bench/results/bandwidth.md
 *   node bench/fanout/dist/bandwidth.js --sockets 500 --events 40 --no-write         smoke run
 *   node bench/fanout/dist/bandwidth.js --help
 *
 * Two plans: `shared` (every socket the same unfiltered operation: consecutive payloads are mostly
 * different listings) and `filtered` (each socket follows one listing: the same object again and
 * again, the dashboards delta mode is for).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { parseMix, type OperationPlan } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { startRedis, type RedisServer } from '@wirestream/testkit';
import { loadAverageText, markdownTable, median, positiveInt } from '@wirestream/bench-kit';
import { prepareEvents } from './publisher.js';
import { fmtBytes, fmtInt, fmtMs, serverUsPerDelivery } from './report.js';
import { benchContext, runStack, type RunSpec, type StackRun } from './run-stack.js';
import { useBaseGateway } from './servers.js';

const HELP = `bandwidth bench: bytes and server CPU per delivery, plain vs deflate vs delta vs both (one run)
  --sockets N           default 4000
  --configs LIST        plain,deflate,delta,deflate+delta (default: all; deflate = GATEWAY_COMPRESSION=shared)
  --plans LIST          shared,filtered (default both)
  --events E            shared plan: events published (default 200)   --rate EV/S  default 10
  --filtered-events E   filtered plan (default 1000)                   --filtered-rate EV/S  default 100
  --listings L          distinct listings in the events; the filtered plan follows each of them (default 10)
  --base-gateway DIR    also run \`plain (base)\`: the gateway built in DIR (a checkout of the base commit), interleaved
                        with the others: what the change costs deliveries that use neither saving
  --repeat K            run the configs K times, interleaved (plain, deflate, …, plain, …); rows show the median
                        server CPU per delivery and its range (default 1)
  --out FILE            default bench/results/bandwidth.md; --no-write prints only
  --node-env V          NODE_ENV of the gateway (default production)`;

const { values } = parseArgs({
  options: {
    help: { type: 'boolean', default: false },
    sockets: { type: 'string', default: '4000' },
    configs: { type: 'string', default: 'plain,deflate,delta,deflate+delta' },
    plans: { type: 'string', default: 'shared,filtered' },
    events: { type: 'string', default: '200' },
    rate: { type: 'string', default: '10' },
    'filtered-events': { type: 'string', default: '1000' },
    'filtered-rate': { type: 'string', default: '100' },
    listings: { type: 'string', default: '10' },
    repeat: { type: 'string', default: '1' },
    'base-gateway': { type: 'string' },
    out: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    'node-env': { type: 'string', default: 'production' },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

interface Config {
  readonly name: string;
  /** `ours-base`: the --base-gateway checkout's build. */
  readonly stack?: 'ours' | 'ours-base';
  readonly what: string;
  readonly gatewayEnv: Readonly<Record<string, string>>;
  readonly wire: { readonly deflate: boolean; readonly delta: boolean };
}

const CONFIGS: readonly Config[] = [
  { name: 'plain (base)', stack: 'ours-base', what: 'the --base-gateway build, no compression, no delta', gatewayEnv: {}, wire: { deflate: false, delta: false } },
  { name: 'plain', what: 'GATEWAY_COMPRESSION=off, no delta', gatewayEnv: { GATEWAY_COMPRESSION: 'off' }, wire: { deflate: false, delta: false } },
  { name: 'deflate', what: 'GATEWAY_COMPRESSION=shared, client offers permessage-deflate', gatewayEnv: { GATEWAY_COMPRESSION: 'shared' }, wire: { deflate: true, delta: false } },
  { name: 'delta', what: 'subscribe with extensions.delta "fossil"', gatewayEnv: { GATEWAY_COMPRESSION: 'off' }, wire: { deflate: false, delta: true } },
  { name: 'deflate+delta', what: 'both', gatewayEnv: { GATEWAY_COMPRESSION: 'shared' }, wire: { deflate: true, delta: true } },
];

const sockets = positiveInt('sockets', values.sockets);
const listings = positiveInt('listings', values.listings);
const repeat = positiveInt('repeat', values.repeat);
const configs = values.configs.split(',').map((name) => {
  const config = CONFIGS.find((c) => c.name === name.trim() && c.stack !== 'ours-base');
  if (!config) throw new RangeError(`--configs: unknown "${name}"; choose from plain, deflate, delta, deflate+delta`);
  return config;
});
if (values['base-gateway'] !== undefined) {
  useBaseGateway(values['base-gateway']);
  configs.unshift(CONFIGS[0] as Config);
}
const filterKeys = Array.from({ length: listings }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
const PLANS: Readonly<Record<string, { title: string; plan: OperationPlan; events: number; rate: number }>> = {
  shared: {
    title: `shared: ${fmtInt(sockets)} sockets on one operation (every field of ListingEvent), events of ${listings} listings interleaved`,
    plan: { mix: parseMix('shared:100'), filterKeys },
    events: positiveInt('events', values.events),
    rate: positiveInt('rate', values.rate),
  },
  filtered: {
    title: `filtered: ${fmtInt(sockets)} sockets, each following one of ${listings} listings (listingUpdated(listing_id), every field): the same object again and again`,
    plan: { mix: parseMix('filtered:100'), filterKeys },
    events: positiveInt('filtered-events', values['filtered-events']),
    rate: positiveInt('filtered-rate', values['filtered-rate']),
  },
};
const plans = values.plans.split(',').map((name) => {
  const plan = PLANS[name.trim()];
  if (!plan) throw new RangeError(`--plans: unknown "${name}"; choose from ${Object.keys(PLANS).join(', ')}`);
  return plan;
});

const log = (line: string): void => console.log(line);
const perDelivery = (total: number, r: StackRun): number => (r.unique > 0 ? total / r.unique : Number.NaN);


/** One row per config: the run with the median server CPU per delivery, and the range over repeats. */
function resultTable(all: readonly { config: Config; run: StackRun }[]): string {
  const byConfig = new Map<string, StackRun[]>();
  for (const { config, run } of all) byConfig.set(config.name, [...(byConfig.get(config.name) ?? []), run]);
  const runs = [...byConfig.entries()].map(([name, rs]) => {
    const m = median(rs.map(serverUsPerDelivery));
    const run = rs.reduce((best, r) => (Math.abs(serverUsPerDelivery(r) - m) < Math.abs(serverUsPerDelivery(best) - m) ? r : best));
    return { config: CONFIGS.find((c) => c.name === name) as Config, run, cpu: m, range: rs.length > 1 ? ` [${Math.min(...rs.map(serverUsPerDelivery)).toFixed(2)}–${Math.max(...rs.map(serverUsPerDelivery)).toFixed(2)}]` : '' };
  });
  const base = runs.find((r) => r.config.name === 'plain');
  // Ratios are to `plain` of this build; `plain (base)` against it is what the change costs.
  const ratio = (value: number, of: number | undefined): string => (of === undefined || !(of > 0) ? '' : ` (${(value / of).toFixed(2)}×)`);
  return markdownTable([
    [
      'config',
      'delivered',
      'deflated / delta frames',
      'wire bytes per delivery',
      'payload bytes per delivery (inflated)',
      repeat > 1 ? `server CPU µs per delivery (median of ${repeat} [range])` : 'server CPU µs per delivery',
      'client CPU µs per delivery',
      'latency p50 / p99',
      'server peak RSS',
      'others on the machine',
    ],
    ...runs.map(({ config, run: r, cpu, range }) => [
      config.name,
      `${fmtInt(r.unique)}/${fmtInt(r.expected)}${r.duplicates > 0 ? `, ${fmtInt(r.duplicates)} dup` : ''}${r.anomalies > 0 ? `, ${fmtInt(r.anomalies)} anomalies` : ''}`,
      `${pct(r.compressedFrames, r.frames)} / ${pct(r.deltaFrames, r.frames)}`,
      `${fmtInt(perDelivery(r.wireBytes, r))}${ratio(perDelivery(r.wireBytes, r), base && perDelivery(base.run.wireBytes, base.run))}`,
      fmtInt(perDelivery(r.meanFrameBytes * r.frames, r)),
      `${cpu.toFixed(2)}${ratio(cpu, base?.cpu)}${range}`,
      perDelivery((r.clientCpu.userMs + r.clientCpu.systemMs) * 1_000, r).toFixed(2),
      `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}`,
      fmtBytes(r.memory.peakRss),
      `${r.othersCpuPct.toFixed(0)} % of a core`,
    ]),
  ]);
}

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(0)} %` : 'n/a';
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareEvents(Math.max(...plans.map((p) => p.events)), route, 'ws', listings);
  const loadAtStart = loadAverageText();
  const started = new Date();
  let redisServer: RedisServer | undefined;
  let redis: Redis | undefined;
  const sections: string[] = [];
  try {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    const ctx = benchContext(redisServer, redis, corpus, route, { log, nodeEnv: values['node-env'] });
    for (const p of plans) {
      log(`\n## ${p.title}; ${fmtInt(p.events)} events at ${p.rate}/s\n`);
      const runs: { config: Config; run: StackRun }[] = [];
      for (let rep = 1; rep <= repeat; rep++) {
        // Interleaved: slow drifts of a shared machine hit every config alike.
        for (const config of configs) {
          log(`  ${config.name} (${config.what})${repeat > 1 ? ` ${rep}/${repeat}` : ''} …`);
          const spec: RunSpec = {
            sockets,
            plan: p.plan,
            events: p.events,
            ratePerSecond: p.rate,
            drainTimeoutMs: 60_000,
            stallTimeoutMs: 10_000,
            idleMs: 500,
            wire: config.wire,
          };
          const run = await runStack(config.stack ?? 'ours', spec, { ...ctx, gatewayEnv: config.gatewayEnv });
          runs.push({ config, run });
          log(
            `    ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(perDelivery(run.wireBytes, run))} wire B/delivery, ` +
              `${serverUsPerDelivery(run).toFixed(2)} µs server CPU/delivery, ${pct(run.deltaFrames, run.frames)} deltas, ${pct(run.compressedFrames, run.frames)} deflated`,
          );
          if (run.errorSamples.length > 0) log(`    errors: ${run.errorSamples.join(' | ')}`);
        }
      }
      sections.push(`## ${p.title}; ${fmtInt(p.events)} events at ${p.rate}/s\n\n${resultTable(runs)}\n`);
      log(`\n${resultTable(runs)}`);
    }
  } finally {
    redis?.disconnect();
    await redisServer?.stop();
  }
  const command = `flock /tmp/wirestream-bench.lock node bench/fanout/dist/bandwidth.js ${process.argv.slice(2).join(' ')}`.trim();
  const header = [
    '# Bandwidth: bytes and server CPU per delivery (issue #18)',
    '',
    `Command: \`${command}\` — ${started.toISOString()}, commit ${gitCommit()}, ` +
      `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ` +
      `load average at start ${loadAtStart}, at end ${loadAverageText()} (the machine is shared).`,
    '',
    'One gateway process per row (`node apps/gateway/dist/main.js`, NODE_ENV=production), the same demo listing events ' +
      '(snake_cased by our transform, published into a private redis-server), the same load client (`@wirestream/loadgen`: raw ' +
      'TCP; with deflate it offers `permessage-deflate; client_max_window_bits` as browsers do and inflates, with delta it ' +
      'subscribes with `extensions: { delta: "fossil" }` and applies the deltas, and in every row it checks each position).',
    '',
    '- **wire bytes per delivery**: bytes the client sockets read after the upgrade (frame headers and deflate included; ' +
      'a few bytes of `connection_ack` and pings too), over distinct deliveries. The ratio is to `plain` of the same plan.',
    '- **server CPU per delivery**: the gateway process\'s user + system CPU from the first publish to the last delivery, over distinct deliveries.',
    '- Rows run one after the other on a 2-core machine that other work shares: read CPU as ratios within a table, and see the last column.',
    '',
  ].join('\n');
  const text = `${header}\n${sections.join('\n')}`;
  if (values['no-write']) return;
  const out = values.out ?? new URL('../../results/bandwidth.md', import.meta.url).pathname;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  log(`\nwrote ${relative(process.cwd(), out)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
