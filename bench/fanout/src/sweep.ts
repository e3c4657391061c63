/**
 * The distinct operations sweep (issue 18: cost per distinct operation per event). N sockets over
 * 1 / 100 / 1,000 operations that differ by name only (each receives every event), events
 * back-to-back; per stack the server CPU per event at each count, and the µs each extra operation
 * adds per event. The stacks run interleaved (per count: ours-base, ours, bare projecting, …) so
 * the drift of a shared machine hits them alike, and ours is judged by its ratio to the bare
 * projecting server of the same run, since this machine's µs are not the issue's.
 */
import os from 'node:os';
import { fmtInt, fmtMs } from './report.js';
import { rotated } from '@wirestream/bench-kit';
import { inRounds, roundTag } from './rounds.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { drainTimeoutMs, type Scenario } from './scenario.js';
import { isGateway, STACK_LABELS, STACK_SHORT, type StackName } from './servers.js';
import { logXLineChart, markdownTable, median } from '@wirestream/bench-kit';

/** The issue's bare server: ~4.6 µs of server CPU per extra projection per event, on its machine. */
export const REFERENCE_BARE_US_PER_OP = 4.6;
/** The issue's target: ≤ 8 µs per extra distinct operation per event (on that machine). */
export const TARGET_US_PER_OP = 8;

/** The bare server that projects per distinct operation: the reference of every ratio here. */
export const BARE_PROJECTING: StackName = 'bare-projecting';

export interface SweepOptions {
  readonly stacks: readonly StackName[];
  readonly sockets: readonly number[];
  readonly distinct: readonly number[];
  readonly events: number;
  /** Whole sweeps, interleaved; the summary takes the median per stack and count. */
  readonly repeat: number;
  readonly filterKeys: readonly string[];
  readonly drainTimeoutMs: number;
  readonly workers: number | undefined;
}

/** One run of the sweep: a stack at N sockets and D distinct operations. */
export interface SweepRun {
  readonly stack: StackName;
  readonly sockets: number;
  readonly distinct: number;
  readonly repeat: number;
  readonly run: StackRun;
  readonly cpuMsPerEvent: number;
}

function sweepSpec(sockets: number, distinct: number, o: Pick<SweepOptions, 'events' | 'filterKeys' | 'drainTimeoutMs' | 'workers'>): RunSpec {
  return {
    sockets,
    plan: { distinctOperations: distinct, filterKeys: o.filterKeys },
    events: o.events,
    ratePerSecond: 0,
    drainTimeoutMs: o.drainTimeoutMs,
    stallTimeoutMs: 10_000,
    idleMs: 500,
    ...(o.workers === undefined ? {} : { workers: o.workers }),
  };
}

/** µs of server CPU each operation beyond the first adds per event: (CPU/event at D − at 1) / (D − 1). */
export function usPerExtraOp(cpuMsAtOne: number, cpuMsAtMany: number, many: number): number {
  return ((cpuMsAtMany - cpuMsAtOne) * 1_000) / (many - 1);
}

/** Runs the sweep: repetitions outermost, then sockets, counts, and the stacks innermost (rotated per repetition). */
async function runSweep(ctx: RunContext, o: SweepOptions): Promise<SweepRun[]> {
  const cells = o.sockets.flatMap((sockets) => o.distinct.filter((distinct) => distinct <= sockets).map((distinct) => ({ sockets, distinct })));
  const perCell = await inRounds(o.repeat, cells, async ({ sockets, distinct }, rep) => {
    const runs: SweepRun[] = [];
    for (const stack of rotated(o.stacks, rep)) {
      ctx.log(`  ${STACK_SHORT[stack]}: N = ${fmtInt(sockets)}, ${fmtInt(distinct)} distinct operations${roundTag(rep, o.repeat)} …`);
      const run = await runStack(stack, sweepSpec(sockets, distinct, o), ctx);
      const cpuMsPerEvent = run.serverCpuMs / o.events;
      runs.push({ stack, sockets, distinct, repeat: rep, run, cpuMsPerEvent });
      ctx.log(
        `    ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${cpuMsPerEvent.toFixed(2)} ms CPU per event, ` +
          `${run.executions === undefined ? 'n/a' : (run.executions / o.events).toFixed(0)} executions per event`,
      );
    }
    return runs;
  });
  return perCell.flat();
}

/** Every run of one stack at one N and D delivered every event exactly once. */
const complete = (rs: readonly SweepRun[]): boolean => rs.length > 0 && rs.every((r) => r.run.unique === r.run.expected && r.run.duplicates === 0);

/** Per stack at one N: the median CPU per event at each count, and what each extra operation adds. */
export interface SweepFigures {
  readonly stack: StackName;
  readonly sockets: number;
  /** Count → median CPU ms per event (NaN when it did not run). */
  readonly cpuMsPerEvent: ReadonlyMap<number, number>;
  /** Count (> 1) → µs per extra operation per event against the 1-operation case. */
  readonly usPerExtraOp: ReadonlyMap<number, number>;
  /** Count → whether every run delivered every event once. */
  readonly complete: ReadonlyMap<number, boolean>;
  readonly runs: readonly SweepRun[];
}

export function sweepFigures(runs: readonly SweepRun[], stack: StackName, sockets: number, distinct: readonly number[]): SweepFigures {
  const mine = runs.filter((r) => r.stack === stack && r.sockets === sockets);
  const at = (d: number): SweepRun[] => mine.filter((r) => r.distinct === d);
  const cpu = new Map(distinct.map((d) => [d, median(at(d).map((r) => r.cpuMsPerEvent))]));
  const one = cpu.get(1) ?? Number.NaN;
  const perOp = new Map(distinct.filter((d) => d > 1).map((d) => [d, usPerExtraOp(one, cpu.get(d) ?? Number.NaN, d)]));
  return { stack, sockets, cpuMsPerEvent: cpu, usPerExtraOp: perOp, complete: new Map(distinct.map((d) => [d, complete(at(d))])), runs: mine };
}

/** Ratio of a gateway's µs per extra operation to the bare projector's, and that ratio times the issue's bare figure. */
export function againstBare(ours: number, bare: number): { ratio: number; scaledUs: number; met: boolean } {
  const ratio = ours / bare;
  const scaledUs = ratio * REFERENCE_BARE_US_PER_OP;
  return { ratio, scaledUs, met: scaledUs <= TARGET_US_PER_OP };
}

/** The sweep's report section: target lines, the summary per stack, every run, and a chart. */
export function sweepSection(runs: readonly SweepRun[], o: SweepOptions, svgName: string): { markdown: string; svg: readonly [string, string] } {
  const counts = [...o.distinct];
  const lines: string[] = [];
  const summaries: string[] = [];
  for (const sockets of o.sockets) {
    const figures = o.stacks.map((s) => sweepFigures(runs, s, sockets, counts.filter((d) => d <= sockets)));
    summaries.push(`N = ${fmtInt(sockets)}:\n\n${summaryTable(figures, counts.filter((d) => d <= sockets), o.events)}`);
    lines.push(...ratioLines(runs, o, sockets, figures));
  }
  const rows: string[][] = [
    ['stack', ...(o.repeat > 1 ? ['rep'] : []), 'sockets', 'distinct ops', 'delivered / expected', 'deliveries/s', 'p99', 'executions / event', 'server CPU ms / event', 'server CPU µs / delivery', "others' CPU"],
  ];
  for (const r of runs) {
    rows.push([
      STACK_SHORT[r.stack],
      ...(o.repeat > 1 ? [String(r.repeat)] : []),
      fmtInt(r.sockets),
      fmtInt(r.distinct),
      `${fmtInt(r.run.unique)} / ${fmtInt(r.run.expected)}`,
      fmtInt(r.run.deliveriesPerSec),
      fmtMs(r.run.latencyMs.p99),
      r.run.executions === undefined ? 'n/a' : (r.run.executions / o.events).toFixed(0),
      r.cpuMsPerEvent.toFixed(2),
      r.run.unique > 0 ? ((r.run.serverCpuMs * 1_000) / r.run.unique).toFixed(2) : 'n/a',
      `${r.run.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  const series = new Map<string, [number, number][]>();
  for (const sockets of o.sockets) {
    for (const stack of o.stacks) {
      const f = sweepFigures(runs, stack, sockets, counts.filter((d) => d <= sockets));
      series.set(`${STACK_SHORT[stack]}, N = ${fmtInt(sockets)}`, [...f.cpuMsPerEvent].filter(([, v]) => Number.isFinite(v)));
    }
  }
  const svg = logXLineChart(
    'Server CPU per event vs distinct operations',
    `${fmtInt(o.events)} events back-to-back, each operation receives all; user+system CPU (/proc); median of ${o.repeat} · ${os.cpus().length} cores`,
    'distinct operations among N sockets (log scale)',
    'server CPU ms per event',
    [...series].map(([label, points]) => ({ label, points })),
  );
  const markdown =
    `## Distinct operations sweep: ${fmtInt(o.events)} events back-to-back, every operation receives every event\n\n` +
    `Stacks, interleaved per count: ${o.stacks.map((s) => `\`${s}\``).join(', ')}. Server CPU (user + system, /proc) from the first publish to the last delivery, ` +
    `divided by events; "µs per extra op" = (CPU ms/event at D − at 1) / (D − 1) × 1,000, from the median CPU per count over ${o.repeat} repetition(s). ` +
    `The reference is \`bare-projecting\` (bare uWS, no GraphQL: the envelope parsed once per event, then per distinct operation its selected fields picked ` +
    `and \`JSON.stringify\`'d once, frames corked per socket): the issue measured such a bare server at ~${REFERENCE_BARE_US_PER_OP} µs per extra projection and ` +
    `sets ≤ ${TARGET_US_PER_OP} µs (${(TARGET_US_PER_OP / REFERENCE_BARE_US_PER_OP).toFixed(2)}× bare) as the target, so "scaled" = our ratio to bare × ${REFERENCE_BARE_US_PER_OP} µs.\n\n` +
    (lines.length > 0 ? `${lines.map((l) => `- ${l}`).join('\n')}\n\n` : '') +
    `${summaries.join('\n\n')}\n\nEvery run:\n\n${markdownTable(rows)}\n\n![sweep](${svgName})\n`;
  return { markdown, svg: [svgName, svg] };
}

/** Per gateway stack and count: its ratio to bare projecting (median, and per repetition), scaled to the issue's machine; and change vs base. */
function ratioLines(runs: readonly SweepRun[], o: SweepOptions, sockets: number, figures: readonly SweepFigures[]): string[] {
  const counts = o.distinct.filter((d) => d <= sockets);
  const bare = figures.find((f) => f.stack === BARE_PROJECTING);
  const base = figures.find((f) => f.stack === 'ours-base');
  const lines: string[] = [];
  const op = (f: SweepFigures | undefined, d: number): number => f?.usPerExtraOp.get(d) ?? Number.NaN;
  const trusted = (f: SweepFigures, d: number): boolean => (f.complete.get(d) ?? false) && (f.complete.get(1) ?? false);
  for (const f of figures) {
    if (!isGateway(f.stack)) continue;
    for (const d of counts.filter((m) => m > 1)) {
      const head = `N = ${fmtInt(sockets)}, 1 → ${fmtInt(d)} operations: ${STACK_SHORT[f.stack]} ${op(f, d).toFixed(1)} µs per extra operation per event`;
      if (bare) {
        const x = againstBare(op(f, d), op(bare, d));
        const reps =
          o.repeat > 1
            ? ` (per repetition: ${Array.from({ length: o.repeat }, (_, i) => {
                const mine = runs.filter((r) => r.repeat === i + 1);
                return (op(sweepFigures(mine, f.stack, sockets, counts), d) / op(sweepFigures(mine, BARE_PROJECTING, sockets, counts), d)).toFixed(2);
              }).join(' / ')})`
            : '';
        lines.push(
          `${head}, bare projecting ${op(bare, d).toFixed(1)} µs: **${x.ratio.toFixed(2)}× bare**${reps}; scaled to the issue's machine ` +
            `${x.ratio.toFixed(2)} × ${REFERENCE_BARE_US_PER_OP} µs = **${x.scaledUs.toFixed(1)} µs** vs the ≤ ${TARGET_US_PER_OP} µs target ` +
            `${x.met ? '**met**' : '**not met**'}${trusted(f, d) && trusted(bare, d) ? '' : ' (a run behind it did not deliver every event: not to be trusted)'}`,
        );
      }
      if (base && f.stack === 'ours') {
        lines.push(`${head} vs ours (base) ${op(base, d).toFixed(1)} µs: change ÷ base **${(op(f, d) / op(base, d)).toFixed(2)}**${trusted(base, d) ? '' : ' (base did not deliver every event)'}`);
      }
    }
  }
  return lines;
}

function summaryTable(figures: readonly SweepFigures[], counts: readonly number[], events: number): string {
  const many = counts.filter((d) => d > 1);
  const bare = figures.find((f) => f.stack === BARE_PROJECTING);
  const rows: string[][] = [
    [
      'stack',
      ...counts.map((d) => `CPU ms/event @ ${fmtInt(d)}`),
      ...many.map((d) => `µs per extra op (1 → ${fmtInt(d)})`),
      ...(bare ? many.map((d) => `÷ bare (1 → ${fmtInt(d)})`) : []),
      ...counts.map((d) => `deliveries/s @ ${fmtInt(d)}`),
      'delivered / expected (all counts)',
      `executions / event @ ${fmtInt(counts.at(-1) ?? 1)}`,
    ],
  ];
  for (const f of figures) {
    const delivered = f.runs.reduce((n, r) => n + r.run.unique, 0);
    const expected = f.runs.reduce((n, r) => n + r.run.expected, 0);
    const last = f.runs.filter((r) => r.distinct === counts.at(-1));
    const execs = last.map((r) => r.run.executions).filter((x): x is number => x !== undefined);
    rows.push([
      STACK_SHORT[f.stack],
      ...counts.map((d) => (f.cpuMsPerEvent.get(d) ?? Number.NaN).toFixed(2)),
      ...many.map((d) => (f.usPerExtraOp.get(d) ?? Number.NaN).toFixed(1)),
      ...(bare ? many.map((d) => ((f.usPerExtraOp.get(d) ?? Number.NaN) / (bare.usPerExtraOp.get(d) ?? Number.NaN)).toFixed(2)) : []),
      ...counts.map((d) => fmtInt(median(f.runs.filter((r) => r.distinct === d).map((r) => r.run.deliveriesPerSec)))),
      `${fmtInt(delivered)} / ${fmtInt(expected)}${delivered === expected && f.runs.every((r) => r.run.duplicates === 0) ? '' : ' **incomplete**'}`,
      execs.length === 0 ? 'n/a' : (median(execs) / events).toFixed(0),
    ]);
  }
  return markdownTable(rows);
}

export const sweepScenario: Scenario = {
  name: 'sweep',
  description: 'N sockets over 1 … D operations that differ by name only, events back-to-back: server CPU per extra distinct operation per event',
  options: {
    'sweep-sockets': { arg: 'LIST', default: '2000,8000', quick: '250,500', help: 'socket counts' },
    'sweep-distinct': { arg: 'LIST', default: '1,100,1000', quick: '1,10,100', help: 'distinct operation counts (must include 1)' },
    'sweep-events': { arg: 'E', default: '200', quick: '100', help: 'events' },
    'sweep-baselines': { help: 'also run the card stack in the sweep' },
    'sweep-stacks': {
      arg: 'LIST',
      help:
        'sweep stacks, interleaved per count (default: ours-base with --base-gateway, ours, bare-projecting: bare uWS projecting per distinct ' +
        'operation, the reference of the "÷ bare" ratio); --repeat K repeats whole sweeps',
    },
  },
  prepare(options, common) {
    const stacks = (options.string('sweep-stacks')?.split(',') ?? [
      ...(options.flag('sweep-baselines') ? ['card'] : []),
      ...(common.baseGateway === undefined ? [] : ['ours-base']),
      'ours',
      BARE_PROJECTING,
    ]) as StackName[];
    for (const s of stacks) if (!(s in STACK_LABELS)) throw new RangeError(`--sweep-stacks: unknown stack "${s}": use ${Object.keys(STACK_LABELS).join(', ')}`);
    if (stacks.includes('ours-base') && common.baseGateway === undefined) throw new RangeError('--sweep-stacks ours-base needs --base-gateway <checkout>');
    const distinct = options.numbers('sweep-distinct');
    if (!distinct.includes(1)) throw new RangeError('--sweep-distinct must include 1: "per extra operation" is against one');
    const o: SweepOptions = {
      stacks,
      sockets: options.numbers('sweep-sockets'),
      distinct,
      events: options.number('sweep-events'),
      repeat: common.repeat,
      filterKeys: common.filterKeys,
      drainTimeoutMs: drainTimeoutMs(common, 30_000),
      workers: common.workers,
    };
    return {
      events: o.events,
      run: async (env) => {
        env.ctx.log(`\n## Distinct operations sweep (${o.stacks.join(', ')})\n`);
        const { markdown, svg } = sweepSection(await runSweep(env.ctx, o), o, env.svgName('sweep'));
        env.ctx.log(`\n${markdown}\n`);
        return { markdown, svgs: [svg] };
      },
    };
  },
};
