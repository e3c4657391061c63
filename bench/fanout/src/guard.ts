/**
 * The CI-sized regression guard: a short profile (< 2 minutes on two shared cores) that gives our
 * gateway's ratios to bare uWS corked measured in the same run — saturation deliveries/s, burst
 * /healthz and event-loop delay, sweep CPU per extra distinct operation (also as a ratio to bare
 * uWS projecting per operation, the "bare server" baseline) — so a change can be checked before it
 * lands. With --base-gateway the base is a column next to ours. Not part of the test command.
 */
import os from 'node:os';
import { parseMix } from '@wirestream/loadgen';
import { markdownTable } from '@wirestream/bench-kit';
import { burstSpec, responsivenessOf } from './burst.js';
import { fmtInt, fmtMs, serverUsPerDelivery } from './report.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { withWorkers, type CommonOptions, type Scenario } from './scenario.js';
import { STACK_SHORT, type StackName } from './servers.js';
import { againstBare, BARE_PROJECTING, REFERENCE_BARE_US_PER_OP, TARGET_US_PER_OP, usPerExtraOp } from './sweep.js';

const SATURATION_EVENTS = 300;
const SWEEP_EVENTS = 100;
// 1,000, not 100: at 100 the extra operations' CPU (~99 × 5 µs per event for the bare projecting
// server) was smaller than one short run's noise next to 2,000 deliveries per event, and the bare
// figure came out 0 or twice itself from one run to the next.
const SWEEP_DISTINCT = 1_000;

interface GuardSpecs {
  readonly sockets: number;
  readonly gateways: readonly StackName[];
  readonly saturation: RunSpec;
  readonly burst: RunSpec;
  readonly sweep: (distinct: number) => RunSpec;
}

function guardSpecsOf(sockets: number, common: CommonOptions): GuardSpecs {
  const { filterKeys } = common;
  const timing = { ratePerSecond: 0, drainTimeoutMs: common.drainOverrideMs ?? 20_000, stallTimeoutMs: 10_000, idleMs: 300 } as const;
  return {
    sockets,
    gateways: common.baseGateway === undefined ? ['ours'] : ['ours-base', 'ours'],
    saturation: withWorkers(common, { ...timing, sockets, plan: { mix: parseMix('shared:100'), filterKeys }, events: SATURATION_EVENTS }),
    burst: withWorkers(common, burstSpec({ sockets, distinct: Math.min(200, sockets), events: 100, filterKeys, drainTimeoutMs: timing.drainTimeoutMs, idleMs: 300 })),
    sweep: (distinct) => withWorkers(common, { ...timing, sockets, plan: { distinctOperations: distinct, filterKeys }, events: SWEEP_EVENTS }),
  };
}

async function guardSection(ctx: RunContext, g: GuardSpecs): Promise<string> {
  const started = Date.now();
  const { gateways, saturation, burst, sweep } = g;
  const quiet = { ...ctx, log: (): void => undefined };
  const run = async (what: string, stack: StackName, spec: RunSpec): Promise<StackRun> => {
    const r = await runStack(stack, spec, quiet);
    ctx.log(`  ${what}, ${STACK_SHORT[stack]}: ${fmtInt(r.unique)}/${fmtInt(r.expected)}, ${fmtInt(r.deliveriesPerSec)}/s, server CPU ${(r.serverCpuMs / 1_000).toFixed(2)} s`);
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
  const body = [
    guardTable(gateways, { sat, bur, sweepCpu, bare, bareBurst, bareCpuPerEvent: bare.serverCpuMs / SATURATION_EVENTS }),
    '',
    `N = ${fmtInt(g.sockets)}; saturation ${SATURATION_EVENTS} events on one operation; burst ${burst.plan.distinctOperations} distinct operations × ${burst.events} events ` +
      `with /healthz every 50 ms; sweep 1 vs ${SWEEP_DISTINCT} distinct operations × ${SWEEP_EVENTS} events. ` +
      `"per extra op" is server CPU per event per additional distinct operation, over bare uWS corked's CPU for one whole event fan-out, ` +
      `and over the same figure of bare uWS projecting per operation (envelope parsed once, fields picked and JSON.stringify'd per operation; ` +
      `the bare server: ~${REFERENCE_BARE_US_PER_OP} µs per extra projection, so ratio × ${REFERENCE_BARE_US_PER_OP} µs estimates ours there). ` +
      `${os.cpus().length} cores; wall ${((Date.now() - started) / 1_000).toFixed(0)} s. Ratios only mean something within this run.`,
  ].join('\n');
  ctx.log(`\n${body}\n`);
  return `## Regression guard: ours vs bare uWS corked, N = ${fmtInt(g.sockets)}\n\n${body}\n`;
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

export const guardScenario: Scenario = {
  name: 'guard',
  description:
    "opt-in, < 2 min: our gateway's ratios to bare uWS corked in one run (saturation, burst /healthz and event-loop delay, " +
    'sweep CPU per extra operation, also over bare uWS projecting); with --base-gateway the base too',
  report: 'guard',
  options: {
    'guard-sockets': { arg: 'N', default: '2000', quick: '1000', help: 'sockets (at least 100)' },
  },
  prepare(options, common) {
    const sockets = options.positiveInt('guard-sockets');
    if (sockets < 100) throw new RangeError(`--guard-sockets must be an integer ≥ 100, got ${sockets}`);
    const specs = guardSpecsOf(sockets, common);
    return { events: SATURATION_EVENTS, run: async (env) => ({ markdown: await guardSection(env.ctx, specs), svgs: [] }) };
  },
};
