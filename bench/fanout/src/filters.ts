/**
 * The filters scenario (issue 16): the same N sockets over 1,000 distinct operations on one
 * topic, and the same events, four ways (filter-plans.ts): one operation; 1,000 unfiltered
 * operations (different names); 1,000 each with its own `where` matching every event; 1,000 each
 * matching ~10 %. Interleaved per repetition, our gateway only. Then the compiled predicate alone,
 * in this process, through the gateway's public compiler (`createOperationCompiler`).
 */
import { createOperationCompiler, type CompiledSubscription } from '@wirestream/gateway/internals';
import type { WirestreamSchema } from '@wirestream/schema';
import { markdownTable, median } from '@wirestream/bench-kit';
import { FILTER_ARM_LABELS, FILTER_ARMS, filterCase, filterQuery, p90AmountOf, filterPlan, type FilterArm } from './filter-plans.js';
import type { EventCorpus } from './publisher.js';
import { fmtInt, fmtMs, rowNotes, section } from './report.js';
import { inRounds, roundTag } from './rounds.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { drainTimeoutMs, textSection, type Scenario } from './scenario.js';

export interface FiltersOptions {
  readonly sockets: number;
  readonly operations: number;
  readonly events: number;
  readonly repeat: number;
  readonly drainTimeoutMs: number;
  readonly idleMs: number;
  readonly workers: number | undefined;
  /** Rounds of the in-process predicate micro-bench (0 skips it). */
  readonly microRounds: number;
}

interface ArmRun {
  readonly arm: FilterArm;
  readonly repeat: number;
  readonly operations: number;
  readonly matchedShare: number;
  readonly run: StackRun;
}

const cpuUsPerEvent = (a: ArmRun): number => (a.run.serverCpuMs * 1_000) / a.run.spec.events;

/** Runs the arms (interleaved per repetition) and the micro-bench; returns the report section. */
async function filtersSection(ctx: RunContext, schema: WirestreamSchema, options: FiltersOptions): Promise<string> {
  const { sockets, operations, events, repeat } = options;
  const title = `Filters: N = ${fmtInt(sockets)} over ${fmtInt(operations)} distinct operations on one topic, ${fmtInt(events)} events back-to-back`;
  ctx.log(`\n## ${title}\n`);
  const plans = new Map(FILTER_ARMS.map((arm) => [arm, filterPlan(arm, operations, ctx.corpus, events)]));
  const runs = await inRounds(repeat, FILTER_ARMS, async (arm, rep) => {
    const plan = plans.get(arm) as ReturnType<typeof filterPlan>;
    ctx.log(`  ${arm}: ${FILTER_ARM_LABELS[arm]}${roundTag(rep, repeat)} …`);
    const spec: RunSpec = {
      sockets,
      plan: { operations: plan.operations, filterKeys: [] },
      expectedPerOperation: plan.expectedPerOperation,
      events,
      ratePerSecond: 0,
      drainTimeoutMs: options.drainTimeoutMs,
      stallTimeoutMs: 10_000,
      idleMs: options.idleMs,
      ...(options.workers === undefined ? {} : { workers: options.workers }),
    };
    const run = { ...(await runStack('ours', spec, ctx)), repeat: rep };
    const a: ArmRun = { arm, repeat: rep, operations: plan.operations.length, matchedShare: plan.matchedShare, run };
    ctx.log(
      `    ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.duplicates)} dup, ${fmtInt(run.deliveriesPerSec)}/s, ` +
        `${(cpuUsPerEvent(a) / 1_000).toFixed(2)} ms CPU/event, renders/event ${run.executions === undefined ? 'n/a' : (run.executions / events).toFixed(0)}`,
    );
    return a;
  });
  const micro = options.microRounds > 0 ? predicateMicroBench(schema, ctx.corpus, events, operations, options.microRounds) : undefined;
  const body = [
    ...derivedLines(runs).map((l) => `- ${l}`),
    '',
    armTable(runs),
    '',
    'How to read: one gateway process per row (`ours`, default settings, anonymous), the same N sockets (socket i subscribes with operation ' +
      'i mod ops) and the same demo events published back-to-back into Redis. "renders/event" is the gateway\'s `executions` counter ' +
      '(/stats) over the traffic, per event: one per group whose filter matched. "server CPU/event" is the gateway\'s user + system CPU ' +
      'from the first publish to the last delivery, per event; "µs per extra op" is (CPU/event − CPU/event of `unfiltered-1` in the ' +
      'same repetition) / (ops − 1). Expected deliveries per operation come from a reference test of each filter on the corpus ' +
      '(filter-plans.ts), not from the gateway.',
    '',
    ...rowNotes(runs, labelOf),
    ...(micro === undefined ? [] : ['', micro]),
  ].join('\n');
  return section(ctx.log, title, body);
}

function labelOf(a: ArmRun | undefined): string {
  return a === undefined ? '?' : `${a.arm} #${a.repeat}`;
}

function armTable(runs: readonly ArmRun[]): string {
  const baseline = (rep: number): ArmRun | undefined => runs.find((b) => b.arm === 'unfiltered-1' && b.repeat === rep);
  const rows: string[][] = [
    ['arm', 'rep', 'ops', 'events matched / op', 'delivered / expected', 'dup', 'deliveries/s', 'p99', 'renders / event', 'server CPU ms / event', 'µs per extra op per event', 'server µs / delivery', "others' CPU"],
  ];
  for (const a of runs) {
    const r = a.run;
    const base = baseline(a.repeat);
    const extra = base !== undefined && a.operations > 1 ? (cpuUsPerEvent(a) - cpuUsPerEvent(base)) / (a.operations - 1) : undefined;
    rows.push([
      a.arm,
      String(a.repeat),
      fmtInt(a.operations),
      `${(a.matchedShare * 100).toFixed(1)} %`,
      `${fmtInt(r.unique)} / ${fmtInt(r.expected)}`,
      fmtInt(r.duplicates),
      fmtInt(r.deliveriesPerSec),
      fmtMs(r.latencyMs.p99),
      r.executions === undefined ? 'n/a' : (r.executions / r.spec.events).toFixed(0),
      (cpuUsPerEvent(a) / 1_000).toFixed(2),
      extra === undefined ? '—' : extra.toFixed(2),
      r.unique > 0 ? ((r.serverCpuMs * 1_000) / r.unique).toFixed(2) : 'n/a',
      `${r.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  return markdownTable(rows);
}

/** The issue's figures from the arms, median over repetitions and paired per repetition. */
function derivedLines(runs: readonly ArmRun[]): string[] {
  const of = (arm: FilterArm): ArmRun[] => runs.filter((a) => a.arm === arm);
  const reps = [...new Set(runs.map((a) => a.repeat))];
  const pair = (arm: FilterArm, base: FilterArm, rep: number): [ArmRun, ArmRun] | undefined => {
    const a = runs.find((x) => x.arm === arm && x.repeat === rep);
    const b = runs.find((x) => x.arm === base && x.repeat === rep);
    return a && b ? [a, b] : undefined;
  };
  const lines: string[] = [];
  const perExtra = (arm: FilterArm): number[] =>
    reps.flatMap((rep) => {
      const p = pair(arm, 'unfiltered-1', rep);
      return p ? [(cpuUsPerEvent(p[0]) - cpuUsPerEvent(p[1])) / (p[0].operations - 1)] : [];
    });
  for (const arm of ['unfiltered', 'filtered-all', 'filtered-10'] as const) {
    const xs = of(arm);
    if (xs.length === 0) continue;
    const extra = perExtra(arm);
    lines.push(
      `${arm}: server CPU ${(median(xs.map(cpuUsPerEvent)) / 1_000).toFixed(2)} ms per event (runs ${xs.map((a) => (cpuUsPerEvent(a) / 1_000).toFixed(2)).join(', ')}), ` +
        `${extra.length > 0 ? `${median(extra).toFixed(2)} µs per extra distinct operation per event (runs ${extra.map((e) => e.toFixed(2)).join(', ')}), ` : ''}` +
        `${fmtInt(median(xs.map((a) => a.run.deliveriesPerSec)))} deliveries/s (runs ${xs.map((a) => fmtInt(a.run.deliveriesPerSec)).join(', ')}); ` +
        `every expected delivery once in every run: ${xs.every((a) => a.run.unique === a.run.expected && a.run.duplicates === 0) ? 'yes' : 'no'}`,
    );
  }
  const filterCost = reps.flatMap((rep) => {
    const p = pair('filtered-all', 'unfiltered', rep);
    return p ? [((cpuUsPerEvent(p[0]) - cpuUsPerEvent(p[1])) * 1_000) / p[0].operations] : [];
  });
  if (filterCost.length > 0) {
    const unfilteredCpu = median(of('unfiltered').map(cpuUsPerEvent));
    const spread = of('unfiltered').map(cpuUsPerEvent);
    const noiseNs = spread.length > 1 ? ((Math.max(...spread) - Math.min(...spread)) * 1_000) / (of('unfiltered')[0]?.operations ?? 1) : Number.NaN;
    lines.push(
      `**filter evaluation per event per operation** (filtered-all − unfiltered, same repetition, / ops): ${filterCost.map((c) => `${c.toFixed(0)} ns`).join(', ')} ` +
        `(median ${median(filterCost).toFixed(0)} ns), against ${(unfilteredCpu / 1_000).toFixed(2)} ms per event for the unfiltered 1,000; ` +
        `the unfiltered arm's own run-to-run spread is ${Number.isNaN(noiseNs) ? 'n/a (one run)' : `${noiseNs.toFixed(0)} ns per operation per event`}: ` +
        'a difference below that spread is not resolved by this method (the micro-bench below measures the predicate alone)',
    );
  }
  const saving = reps.flatMap((rep) => {
    const p = pair('filtered-10', 'unfiltered', rep);
    return p ? [cpuUsPerEvent(p[0]) / cpuUsPerEvent(p[1])] : [];
  });
  if (saving.length > 0) {
    lines.push(`filtered-10 / unfiltered server CPU per event: ${saving.map((s) => `${s.toFixed(2)}×`).join(', ')} (a filter that does not match skips the render and the writes)`);
  }
  return lines;
}

/**
 * The compiled predicate alone: each filter compiled by the gateway's own operation compiler (as
 * a subscribe is), then called on the corpus's payloads. Two loops: one filter at a time over the
 * events (monomorphic, the best case), and every one of the `operations` filters per event (what
 * the hub does for one event). Median of `rounds` timed rounds, after a warm-up round.
 */
export function predicateMicroBench(schema: WirestreamSchema, corpus: EventCorpus, events: number, operations: number, rounds: number): string {
  const compiler = createOperationCompiler(schema);
  const payloads = Array.from({ length: events }, (_, i) => corpus.payloadOf(i));
  const p90 = p90AmountOf(corpus, events);
  const rows: string[][] = [['filters', 'shape', 'predicates', 'evaluations / round', 'matched', 'ns / evaluation, min (least disturbed round)', 'median', 'max']];
  const keys = new Set<string>();
  for (const arm of ['filtered-all', 'filtered-10'] as const) {
    const compiled: { shape: string; where: NonNullable<CompiledSubscription['where']> }[] = [];
    for (let i = 0; i < operations; i++) {
      const c = filterCase(arm, i, p90);
      const result = compiler.compile({ query: filterQuery(i, true), operationName: `Listings${i}`, variables: { w: c.where } });
      if (!result.ok || result.operation.kind !== 'subscription' || result.operation.where === undefined) {
        throw new Error(`filter ${i} (${c.shape}) does not compile to a predicate: ${JSON.stringify(result)}`);
      }
      keys.add(result.operation.dedupKey);
      compiled.push({ shape: c.shape, where: result.operation.where });
    }
    // What the hub hands a filter: the envelope's payload and Kafka key (built once, outside the timing).
    const events = payloads.map((payload) => ({ payload, key: null }));
    for (const shape of [...new Set(compiled.map((c) => c.shape))]) {
      const one = compiled.find((c) => c.shape === shape)?.where;
      if (one === undefined) continue;
      rows.push(timedRow(arm, shape, 1, rounds, payloads.length, () => {
        let matched = 0;
        for (let e = 0; e < events.length; e++) if (one(events[e] as (typeof events)[number])) matched++;
        return matched;
      }));
    }
    const all = compiled.map((c) => c.where);
    rows.push(timedRow(arm, 'all three, per event every filter (the hub\'s loop)', all.length, rounds, payloads.length * all.length, () => {
      let matched = 0;
      for (let e = 0; e < payloads.length; e++) {
        const event = events[e] as (typeof events)[number];
        for (let f = 0; f < all.length; f++) if ((all[f] as NonNullable<(typeof all)[number]>)(event)) matched++;
      }
      return matched;
    }));
  }
  return [
    `**The compiled predicate alone** (in the bench process: \`createOperationCompiler(schema).compile(…)\` from \`@wirestream/gateway\`, ` +
      `then \`operation.where(payload)\` over the same ${fmtInt(payloads.length)} demo payloads; ${rounds} timed rounds of ≥ 20 ms after a warm-up; ` +
      'on a shared machine a round that other processes preempt is slower, so the least disturbed round (min) is the cost, the median and max show the noise; ' +
      `${fmtInt(keys.size)} distinct dedup keys from the ${fmtInt(2 * operations)} filters compiled):`,
    '',
    markdownTable(rows),
  ].join('\n');
}

function timedRow(arm: string, shape: string, predicates: number, rounds: number, evaluations: number, loop: () => number): string[] {
  let matched = loop(); // warm-up: V8 compiles the closures' code
  // Repeat the loop inside a round until it lasts ≥ 20 ms, so the timer's resolution does not matter.
  let inner = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < inner; k++) matched = loop();
    if (Number(process.hrtime.bigint() - t0) >= 20e6 || inner >= 1 << 20) break;
    inner *= 2;
  }
  const ns: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < inner; k++) matched = loop();
    ns.push(Number(process.hrtime.bigint() - t0) / (inner * evaluations));
  }
  return [arm, shape, fmtInt(predicates), fmtInt(evaluations), `${((matched / evaluations) * 100).toFixed(1)} %`, Math.min(...ns).toFixed(1), median(ns).toFixed(1), Math.max(...ns).toFixed(1)];
}

export const filtersScenario: Scenario = {
  name: 'filters',
  description:
    'opt-in: our gateway, the same N sockets over D operations: one operation; D unfiltered; D each with its own where matching every event; ' +
    'D each matching ~10 % (interleaved with --repeat); then the compiled predicate alone in process',
  report: 'filters',
  options: {
    'filter-sockets': { arg: 'N', default: '2000', quick: '500', help: 'sockets' },
    'filter-ops': { arg: 'D', default: '1000', quick: '100', help: 'distinct operations (at least 2)' },
    'filter-events': { arg: 'E', default: '200', quick: '100', help: 'events' },
    'filter-micro-rounds': { arg: 'R', default: '7', quick: '3', help: 'rounds of the in-process predicate micro-bench (0 skips it)' },
  },
  prepare(options, common) {
    const filterOptions: FiltersOptions = {
      sockets: options.number('filter-sockets'),
      operations: options.number('filter-ops'),
      events: options.number('filter-events'),
      repeat: common.repeat,
      drainTimeoutMs: drainTimeoutMs(common, 30_000),
      idleMs: 500,
      workers: common.workers,
      microRounds: options.number('filter-micro-rounds'),
    };
    if (filterOptions.operations < 2) throw new RangeError(`--filter-ops must be at least 2 (per extra operation is against one), got ${filterOptions.operations}`);
    return textSection(filterOptions.events, (env) => filtersSection(env.ctx, env.schema, filterOptions));
  },
};
