/**
 * The stacks side by side on one RunSpec (field's case and saturation): every stack in turn,
 * interleaved with --repeat, one section with the stack table, ratios, paired comparisons and a
 * timeline chart; and the fan-out targets checked against the field and saturation runs.
 */
import os from 'node:os';
import type { OperationPlan } from '@wirestream/loadgen';
import {
  baseComparisonLines,
  fmtBytes,
  fmtInt,
  fmtMs,
  mark,
  memoryDetails,
  metricsOverheadLines,
  notesOf,
  ratioTable,
  repeatSummaryTable,
  runLabel,
  section,
  stackTable,
  transportRatioLines,
} from './report.js';
import { inRounds, roundTag } from './rounds.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import type { ScenarioEnv, ScenarioOutput } from './scenario.js';
import { STACK_LABELS, STACK_SHORT, type StackName } from './servers.js';
import { timelineChart } from '@wirestream/bench-kit';

/** `85 % shared, 5 % compact, 10 % filtered`, or `100 distinct operations`. */
export function describePlan(plan: OperationPlan): string {
  if (plan.distinctOperations !== undefined) return `${plan.distinctOperations} distinct operations`;
  return (plan.mix ?? []).map((e) => `${e.percent} % ${e.kind}`).join(', ');
}

export interface Comparison {
  /** The scenario's name: the chart's file name and its alt text. */
  readonly name: string;
  readonly title: string;
  readonly spec: RunSpec;
  readonly stacks: readonly StackName[];
  /** Lines the scenario adds on top of the section (after the paired comparisons). */
  readonly extraLines?: (runs: readonly StackRun[]) => string[];
}

/** What a comparison logs after each run. */
function runLine(run: StackRun): string {
  return (
    `${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(run.deliveriesPerSec)}/s, ` +
    `p99 ${fmtMs(run.latencyMs.p99)}, heap/socket ${fmtBytes(run.perSocket.heapBytes)}, RSS/socket ${fmtBytes(run.perSocket.rssBytes)}`
  );
}

/** Every stack on one spec, interleaved with --repeat (slow drifts of a noisy machine hit every stack alike); `describe` is logged after each run. */
export function runStacks(ctx: RunContext, stacks: readonly StackName[], spec: RunSpec, repeat: number, describe: (run: StackRun) => string = runLine): Promise<StackRun[]> {
  return inRounds(repeat, stacks, async (stack, rep) => {
    ctx.log(`  ${STACK_LABELS[stack]}${roundTag(rep, repeat)} …`);
    const run = { ...(await runStack(stack, spec, ctx)), repeat: rep };
    ctx.log(`    ${describe(run)}`);
    return run;
  });
}

/** Runs every stack of the comparison: one section with its tables and a timeline chart. */
export async function compareStacks(env: ScenarioEnv, c: Comparison): Promise<ScenarioOutput> {
  const { ctx } = env;
  const { repeat } = env.common;
  ctx.log(`\n## ${c.title}\n`);
  const runs = await runStacks(ctx, c.stacks, c.spec, repeat);
  const body = comparisonBody(c, runs, repeat);
  const svgName = env.svgName(c.name);
  const svg = timelineChart(
    c.title + (repeat > 1 ? ' (first repetition)' : ''),
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
  );
  return { markdown: section(ctx.log, c.title, body, { alt: c.name, file: svgName }), svgs: [[svgName, svg]], runs };
}

function comparisonBody(c: Comparison, runs: readonly StackRun[], repeat: number): string {
  const overhead = metricsOverheadLines(runs);
  const againstBase = baseComparisonLines(runs);
  const againstTransport = c.name === 'saturation' && runs.some((r) => r.stack === 'ours-prod') ? transportRatioLines(runs) : [];
  const extra = c.extraLines?.(runs) ?? [];
  return [
    ...(againstTransport.length > 0
      ? ['**Against the transport (issue 18: deliveries/s ≥ 95 % of bare uWS corked with the production settings on)**', '', ...againstTransport.map((l) => `- ${l}`), '']
      : []),
    ...(overhead.length > 0 ? ['**Metrics on vs off (issue 7)**', '', ...overhead.map((l) => `- ${l}`), ''] : []),
    ...(againstBase.length > 0 ? ['**Change vs base (`ours` vs `ours-base`)**', '', ...againstBase.map((l) => `- ${l}`), ''] : []),
    ...(extra.length > 0 ? [...extra, ''] : []),
    ...(repeat > 1 ? [`Median and spread over ${repeat} interleaved repetitions:`, '', repeatSummaryTable(runs), ''] : []),
    stackTable(runs),
    '',
    // With repetitions, ratios against one arbitrary repetition would mislead: the summary above has the medians.
    ...(repeat > 1 ? [] : [ratioTable(runs), '']),
    ...notesOf(runs).map((n) => `- ${n}`),
    '',
    ...memoryDetails('memory by phase', runs, (r) => runLabel(r, runs)),
  ].join('\n');
}

/** The fan-out targets (memory per socket, the field's case, saturation against the baselines), checked against this run. */
export function fanoutTargetLines(runsOf: ReadonlyMap<string, readonly StackRun[]>): string[] {
  const field = runsOf.get('field') ?? [];
  const saturation = runsOf.get('saturation') ?? [];
  const lines: string[] = [];
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
  if (oursSat) lines.push(...saturationTargetLines(oursSat, saturation));
  return lines;
}

function saturationTargetLines(ours: StackRun, saturation: readonly StackRun[]): string[] {
  const lines: string[] = [];
  const naive = saturation.find((r) => r.stack === 'naive');
  const card = saturation.find((r) => r.stack === 'card');
  if (naive) {
    const ratio = ours.deliveriesPerSec / naive.deliveriesPerSec;
    lines.push(`saturation ≥ 50× naive deliveries/s: ${ratio.toFixed(1)}× ${mark(ratio >= 50)}`);
  }
  if (card) {
    const ratio = ours.deliveriesPerSec / card.deliveriesPerSec;
    lines.push(`saturation ≥ 15× card stack deliveries/s: ${ratio.toFixed(1)}× ${mark(ratio >= 15)}`);
  }
  lines.push(`saturation ≥ 500,000 deliveries/s from one process: ${fmtInt(ours.deliveriesPerSec)}/s ${mark(ours.deliveriesPerSec >= 500_000)}`);
  return lines;
}
