#!/usr/bin/env node
/**
 * The CI-sized regression guard (issue 18): a short profile (< 2 minutes on two shared cores)
 * that prints our gateway's ratios to bare uWS corked measured in the same run — saturation
 * deliveries/s, burst /healthz and event-loop delay, sweep CPU per extra distinct operation (also
 * as a ratio to bare uWS projecting per operation, the "bare server" baseline) — so
 * a change can be checked before it lands. Prints only; the test command does not run it.
 *
 *   node bench/fanout/dist/guard.js
 *   node bench/fanout/dist/guard.js --base-gateway /tmp/base      also ours-base, same run
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { parseMix } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { startRedis } from '@wirestream/testkit';
import { loadAverageText, markdownTable } from '@wirestream/bench-kit';
import { burstSpec, responsivenessOf } from './burst.js';
import { prepareEvents } from './publisher.js';
import { fmtInt, fmtMs, serverUsPerDelivery } from './report.js';
import { benchContext, runStack, type RunSpec, type StackRun } from './run-stack.js';
import { STACK_SHORT, useBaseGateway, type StackName } from './servers.js';
import { againstBare, BARE_PROJECTING, REFERENCE_BARE_US_PER_OP, TARGET_US_PER_OP, usPerExtraOp } from './sweep.js';
import { parseEnvList } from './variants.js';

const HELP = `regression guard: ours vs bare uWS corked, same run, < 2 min
  --sockets N          default 2000
  --base-gateway DIR   also measure the checkout DIR's gateway as ours-base
  --gateway-env LIST   extra env for our gateway (NAME=VALUE,…)`;

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '2000' },
    'base-gateway': { type: 'string' },
    'gateway-env': { type: 'string', default: '' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const sockets = Number(values.sockets);
if (!Number.isInteger(sockets) || sockets < 100) throw new RangeError(`--sockets must be an integer ≥ 100, got ${values.sockets}`);
if (values['base-gateway'] !== undefined) useBaseGateway(values['base-gateway']);
const gateways: StackName[] = values['base-gateway'] === undefined ? ['ours'] : ['ours-base', 'ours'];

const LISTINGS = 50;
const filterKeys = Array.from({ length: LISTINGS }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
const SATURATION_EVENTS = 300;
const SWEEP_EVENTS = 100;
// 1,000, not 100: at 100 the extra operations' CPU (~99 × 5 µs per event for the bare projecting
// server) was smaller than one short run's noise next to 2,000 deliveries per event, and the bare
// figure came out 0 or twice itself from one run to the next.
const SWEEP_DISTINCT = 1_000;
const common = { ratePerSecond: 0, drainTimeoutMs: 20_000, stallTimeoutMs: 10_000, idleMs: 300 } as const;
const saturation: RunSpec = { ...common, sockets, plan: { mix: parseMix('shared:100'), filterKeys }, events: SATURATION_EVENTS };
const burst = burstSpec({ sockets, distinct: Math.min(200, sockets), events: 100, filterKeys, drainTimeoutMs: 20_000, idleMs: 300 });
const sweep = (distinct: number): RunSpec => ({ ...common, sockets, plan: { distinctOperations: distinct, filterKeys }, events: SWEEP_EVENTS });

const log = (line: string): void => console.log(line);

async function main(): Promise<void> {
  const started = Date.now();
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareEvents(SATURATION_EVENTS, route, 'ws', LISTINGS);
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  try {
    const ctx = benchContext(redisServer, redis, corpus, route, { log: () => undefined, nodeEnv: 'production', gatewayEnv: parseEnvList(values['gateway-env']) });
    const run = async (what: string, stack: StackName, spec: RunSpec): Promise<StackRun> => {
      const r = await runStack(stack, spec, ctx);
      log(`  ${what}, ${STACK_SHORT[stack]}: ${fmtInt(r.unique)}/${fmtInt(r.expected)}, ${fmtInt(r.deliveriesPerSec)}/s, server CPU ${(r.serverCpuMs / 1_000).toFixed(2)} s`);
      return r;
    };
    const all: StackName[] = [...gateways, 'bare-corked'];
    const sat = new Map<StackName, StackRun>();
    const bur = new Map<StackName, StackRun>();
    const sweepCpu = new Map<StackName, number>();
    for (const stack of all) sat.set(stack, await run('saturation', stack, saturation));
    for (const stack of all) bur.set(stack, await run('burst', stack, burst));
    // CPU ms per event, one operation vs SWEEP_DISTINCT: the cost of each extra distinct operation,
    // ours and the bare server that projects per operation, interleaved per count.
    const sweepStacks: StackName[] = [...gateways, BARE_PROJECTING];
    const sweepOne = new Map<StackName, StackRun>();
    for (const stack of sweepStacks) sweepOne.set(stack, await run('sweep 1 op', stack, sweep(1)));
    for (const stack of sweepStacks) {
      const many = await run(`sweep ${SWEEP_DISTINCT} ops`, stack, sweep(SWEEP_DISTINCT));
      const one = sweepOne.get(stack) as StackRun;
      sweepCpu.set(stack, usPerExtraOp(one.serverCpuMs / SWEEP_EVENTS, many.serverCpuMs / SWEEP_EVENTS, SWEEP_DISTINCT) / 1_000);
    }
    const bare = sat.get('bare-corked') as StackRun;
    const bareBurst = bur.get('bare-corked') as StackRun;
    const bareCpuPerEvent = bare.serverCpuMs / SATURATION_EVENTS;
    log('');
    log(guardTable(gateways, { sat, bur, sweepCpu, bare, bareBurst, bareCpuPerEvent }));
    log(
      `\nN = ${fmtInt(sockets)}; saturation ${SATURATION_EVENTS} events on one operation; burst ${burst.plan.distinctOperations} distinct operations × ${burst.events} events ` +
        `with /healthz every 50 ms; sweep 1 vs ${SWEEP_DISTINCT} distinct operations × ${SWEEP_EVENTS} events. ` +
        `"per extra op" is server CPU per event per additional distinct operation, over bare uWS corked's CPU for one whole event fan-out, ` +
        `and over the same figure of bare uWS projecting per operation (envelope parsed once, fields picked and JSON.stringify'd per operation; ` +
        `the issue's bare server: ~${REFERENCE_BARE_US_PER_OP} µs per extra projection, so ratio × ${REFERENCE_BARE_US_PER_OP} µs estimates ours there). ` +
        `${os.cpus().length} cores, load ${loadAverageText()}; wall ${((Date.now() - started) / 1_000).toFixed(0)} s. Ratios only mean something within this run.`,
    );
  } finally {
    redis.disconnect();
    await redisServer.stop();
  }
}

interface GuardFigures {
  readonly sat: ReadonlyMap<StackName, StackRun>;
  readonly bur: ReadonlyMap<StackName, StackRun>;
  readonly sweepCpu: ReadonlyMap<StackName, number>;
  readonly bare: StackRun;
  readonly bareBurst: StackRun;
  readonly bareCpuPerEvent: number;
}

function guardTable(gateways: readonly StackName[], f: GuardFigures): string {
  const rows: string[][] = [['ratio to bare uWS corked', ...gateways.map((g) => STACK_SHORT[g]), 'bare uWS corked (absolute)']];
  const cell = (g: StackName, value: (r: StackRun) => number, bareValue: number): string => {
    const r = f.sat.get(g);
    return r ? (value(r) / bareValue).toFixed(2) : 'n/a';
  };
  rows.push(['saturation deliveries/s (higher is better)', ...gateways.map((g) => cell(g, (r) => r.deliveriesPerSec, f.bare.deliveriesPerSec)), fmtInt(f.bare.deliveriesPerSec)]);
  rows.push(['saturation server CPU µs/delivery (lower is better)', ...gateways.map((g) => cell(g, serverUsPerDelivery, serverUsPerDelivery(f.bare))), serverUsPerDelivery(f.bare).toFixed(2)]);
  const burstOf = (r: StackRun | undefined): ReturnType<typeof responsivenessOf> | undefined => (r?.responsiveness ? responsivenessOf(r.responsiveness) : undefined);
  const bareX = burstOf(f.bareBurst);
  rows.push([
    'burst deliveries/s',
    ...gateways.map((g) => ((f.bur.get(g)?.deliveriesPerSec ?? Number.NaN) / f.bareBurst.deliveriesPerSec).toFixed(2)),
    fmtInt(f.bareBurst.deliveriesPerSec),
  ]);
  rows.push([
    'burst /healthz p99 (lower is better)',
    ...gateways.map((g) => {
      const p99 = burstOf(f.bur.get(g))?.healthzP99Ms ?? Number.NaN;
      // An unanswered poll is +∞: say so rather than print a ratio of infinity.
      return Number.isFinite(p99) ? `${(p99 / (bareX?.healthzP99Ms ?? Number.NaN)).toFixed(2)} (${fmtMs(p99)})` : 'unanswered polls in the p99';
    }),
    bareX ? fmtMs(bareX.healthzP99Ms) : 'n/a',
  ]);
  rows.push([
    'burst /healthz > 100 ms, share (absolute)',
    ...gateways.map((g) => `${((burstOf(f.bur.get(g))?.over100Share ?? Number.NaN) * 100).toFixed(1)} %`),
    bareX ? `${(bareX.over100Share * 100).toFixed(1)} %` : 'n/a',
  ]);
  rows.push([
    'burst event-loop delay p99 / max (absolute)',
    ...gateways.map((g) => {
      const x = burstOf(f.bur.get(g));
      return x?.eldP99Ms === undefined ? 'not exposed' : `${fmtMs(x.eldP99Ms)} / ${fmtMs(x.eldMaxMs ?? Number.NaN)}`;
    }),
    'n/a',
  ]);
  rows.push([
    'sweep CPU per extra op per event / bare CPU per event',
    ...gateways.map((g) => `${((f.sweepCpu.get(g) ?? Number.NaN) / f.bareCpuPerEvent).toFixed(3)} (${((f.sweepCpu.get(g) ?? Number.NaN) * 1_000).toFixed(1)} µs)`),
    `${(f.bareCpuPerEvent * 1_000).toFixed(0)} µs/event`,
  ]);
  const bareOp = f.sweepCpu.get(BARE_PROJECTING) ?? Number.NaN;
  rows.push([
    `sweep µs per extra op / bare projecting's (≤ ${(TARGET_US_PER_OP / REFERENCE_BARE_US_PER_OP).toFixed(2)}: the issue's ${TARGET_US_PER_OP} µs on its machine)`,
    ...gateways.map((g) => {
      // A baseline that did not rise with the operations is noise, not a figure to divide by.
      if (!(bareOp > 0)) return "n/a: bare projecting's CPU did not rise with the operations in this run (noise): run again";
      const x = againstBare(f.sweepCpu.get(g) ?? Number.NaN, bareOp);
      return `${x.ratio.toFixed(2)} (≈ ${x.scaledUs.toFixed(1)} µs there ${x.met ? 'met' : '**not met**'})`;
    }),
    `${(bareOp * 1_000).toFixed(1)} µs per extra op`,
  ]);
  const lost = gateways.flatMap((g) =>
    [f.sat.get(g), f.bur.get(g)].filter((r): r is StackRun => r !== undefined && (r.unique !== r.expected || r.duplicates > 0)),
  );
  rows.push(['every event once (saturation, burst)', ...gateways.map((g) => (lost.some((r) => r.stack === g) ? '**no**' : 'yes')), '']);
  return markdownTable(rows);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
