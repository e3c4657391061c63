/**
 * The scenarios under bursts as report sections: burst, memory-return and heap-limit. Each runs its
 * stacks, prints its table as it goes and returns the markdown section and its SVG; the scenarios
 * themselves (their options, the stacks they take from --stacks) are at the end.
 */
import os from 'node:os';
import { BURST_HOW_TO_READ, burstSpec, burstTable, burstTargetLines, responsivenessOf } from './burst.js';
import { DEFAULT_UNBOUNDED_ENV, deathLogs, heapLimitTable, runHeapLimit, type HeapLimitOptions } from './heap-limit.js';
import { DEFAULT_MEMORY_VARIANTS, MEMORY_RETURN_HOW_TO_READ, memoryReturnSpec, memoryReturnTable, returnRatio, RETURN_TARGET, type MemoryReturnRow } from './memory-return.js';
import { runStacks } from './compare-stacks.js';
import { fmtInt, fmtMb, fmtMs, notesOf, rowNotes, section } from './report.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { saturationSpecOf } from './saturation.js';
import { drainTimeoutMs, type CommonOptions, type OptionValues, type Scenario, type ScenarioOutput } from './scenario.js';
import { isGateway, STACK_SHORT, type StackName } from './servers.js';
import { timelineChart, type TimelinePanel } from '@wirestream/bench-kit';
import { parseVariants, runVariant } from './variants.js';

export interface Section {
  readonly markdown: string;
  readonly svg: readonly [name: string, svg: string];
}

const NOTE = `phases: idle → connect → subscribed (forced GC) → traffic → drain · ${os.cpus().length} cores · node ${process.version}`;

function panelOf(title: string, r: StackRun, extra: string): TimelinePanel {
  return {
    title,
    subtitle: [`${fmtInt(r.unique)}/${fmtInt(r.expected)} · ${fmtInt(r.deliveriesPerSec)}/s · p99 ${fmtMs(r.latencyMs.p99)}`, extra],
    samples: r.samples,
    phases: r.phases,
  };
}

/** Burst: every stack in turn (interleaved with --repeat), issue 18's targets and ratios on top. */
async function burstSection(ctx: RunContext, stacks: readonly StackName[], spec: RunSpec, repeat: number, svgName: string): Promise<Section & { runs: StackRun[] }> {
  const title = `Burst: N = ${fmtInt(spec.sockets)} over ${fmtInt(spec.plan.distinctOperations ?? 0)} distinct operations, ${fmtInt(spec.events)} events back-to-back`;
  ctx.log(`\n## ${title}\n`);
  const runs = await runStacks(ctx, stacks, spec, repeat, (run) => {
    const x = run.responsiveness ? responsivenessOf(run.responsiveness) : undefined;
    return (
      `${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.duplicates)} dup, ${fmtInt(run.deliveriesPerSec)}/s, p99 ${fmtMs(run.latencyMs.p99)}, ` +
      `peak RSS ${fmtMb(run.memory.peakRss)} MB` +
      (x ? `; /healthz > 100 ms ${(x.over100Share * 100).toFixed(1)} %, unanswered ${(x.unansweredShare * 100).toFixed(1)} %, ELD p99 ${x.eldP99Ms === undefined ? 'n/a' : fmtMs(x.eldP99Ms)}` : '')
    );
  });
  const label = (r: StackRun): string => `${STACK_SHORT[r.stack]}${repeat > 1 ? ` #${r.repeat}` : ''}`;
  const targets = burstTargetLines(runs.filter((r) => r.repeat === 1));
  const body = [
    '**Issue 18 targets (first repetition)**',
    '',
    ...targets.map((t) => `- ${t}`),
    '',
    burstTable(runs, label),
    '',
    BURST_HOW_TO_READ,
    '',
    ...notesOf(runs, label).map((n) => `- ${n}`),
  ].join('\n');
  const svg = timelineChart(
    title,
    NOTE,
    runs.filter((r) => r.repeat === 1).map((r) => {
      const x = r.responsiveness ? responsivenessOf(r.responsiveness) : undefined;
      return panelOf(STACK_SHORT[r.stack], r, x ? `/healthz > 100 ms ${(x.over100Share * 100).toFixed(1)} % · ELD p99 ${x.eldP99Ms === undefined ? 'n/a' : fmtMs(x.eldP99Ms)}` : '');
    }),
  );
  return { markdown: section(ctx.log, title, body, { alt: 'burst', file: svgName }), svg: [svgName, svg], runs };
}

/** Memory-return: our gateway through the saturation burst once per env variant, then 60 s of RSS. */
async function memoryReturnSection(ctx: RunContext, spec: RunSpec, variantsSpec: string, svgName: string, gatewayStacks: readonly StackName[] = []): Promise<Section> {
  const stacks = gatewayStacks.length > 0 ? gatewayStacks : (['ours'] as const);
  const settleS = Math.round((spec.settleMs ?? 0) / 1_000);
  const title = `Memory return: N = ${fmtInt(spec.sockets)} on one operation, ${fmtInt(spec.events)} events back-to-back, then ${settleS} s with every socket subscribed`;
  ctx.log(`\n## ${title}\n`);
  const rows: MemoryReturnRow[] = [];
  const variants = parseVariants(variantsSpec);
  // Each gateway stack once per variant; with one stack the rows keep the variants' own labels.
  const runs = stacks.flatMap((stack) => variants.map((variant) => ({ stack, variant, label: stacks.length > 1 ? `${STACK_SHORT[stack]}: ${variant.label}` : variant.label })));
  for (const { stack, variant, label } of runs) {
    ctx.log(`  ${STACK_SHORT[stack]} with ${variant.label} …`);
    const run = await runVariant(stack, spec, ctx, variant.env);
    rows.push({ variant: { ...variant, label }, run });
    const ratio = returnRatio(run);
    ctx.log(
      `    ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.deliveriesPerSec)}/s; RSS before ${fmtMb(run.rssBeforeTraffic)} MB, ` +
        `peak ${fmtMb(run.memory.peakRss)} MB, +${settleS} s ${fmtMb(run.settle?.at(-1)?.rssBytes)} MB = ${ratio.toFixed(2)}× (target ≤ ${RETURN_TARGET})`,
    );
  }
  // The reference: bare uWS (no GraphQL, same uWS) through the same burst — what uWS and the allocator keep on their own.
  ctx.log('  bare uWS corked (reference) …');
  const bare = await runStack('bare-corked', spec, ctx);
  rows.push({ variant: { label: 'bare uWS corked (reference)', env: {} }, run: bare });
  ctx.log(`    RSS before ${fmtMb(bare.rssBeforeTraffic)} MB, +${settleS} s ${fmtMb(bare.settle?.at(-1)?.rssBytes)} MB = ${returnRatio(bare).toFixed(2)}×`);
  const body = [memoryReturnTable(rows), '', MEMORY_RETURN_HOW_TO_READ, '', ...rowNotes(rows, (row) => row?.variant.label ?? '')].join('\n');
  const svg = timelineChart(
    title,
    `${NOTE} → settle (RSS every 1 s, no forced GC)`,
    rows.map(({ variant, run }) => panelOf(variant.label, run, `RSS +${settleS} s / before burst: ${returnRatio(run).toFixed(2)}×`)),
  );
  return { markdown: section(ctx.log, title, body, { alt: 'memory return', file: svgName }), svg: [svgName, svg] };
}

/** Heap-limit: every gateway stack × scenario × bounds in a memory budget. */
async function heapLimitSection(
  ctx: RunContext,
  stacks: readonly StackName[],
  scenarios: readonly { name: string; spec: RunSpec }[],
  options: HeapLimitOptions,
  svgName: string,
): Promise<Section> {
  const title = `Heap limit: NODE_OPTIONS=--max-old-space-size=${options.oldSpaceMb} in a ${fmtMb(options.budgetBytes)} MB budget, ${scenarios.map((s) => s.name).join(' and ')}, bounds as shipped and lifted`;
  ctx.log(`\n## ${title}\n`);
  const rows = await runHeapLimit(ctx, stacks, scenarios, options);
  const logs = deathLogs(rows);
  const body = [
    `- budget: ${rows[0]?.budget ?? 'n/a'} (one fresh cgroup per run; the kernel OOM-kills a process over it, SIGKILL, as it would a pod over its limit)`,
    `- bounds lifted: \`${options.unboundedEnv}\``,
    '',
    heapLimitTable(rows),
    '',
    'How to read: "outcome" says whether the gateway process exited before the bench stopped it (exit code or signal; "heap limit" when V8\'s ' +
      '"Reached heap limit" / "heap out of memory" is in its log; OOM-killed when the budget\'s oom_kill counter rose). "budget peak" is the ' +
      'cgroup\'s own high-water mark (RSS plus page cache charged to it). Sockets closed by the server are the slow-consumer policy at work ' +
      '(1013, the client may resume); their events count as not delivered here, since the load client does not resume.',
    '',
    ...(logs.length > 0 ? ['Last log lines of each process that died:', '', ...logs, ''] : []),
  ].join('\n');
  const svg = timelineChart(
    title,
    `${NOTE} · budget ${fmtMb(options.budgetBytes)} MB`,
    rows.flatMap((row) => (row.run ? [panelOf(`${STACK_SHORT[row.stack]}, ${row.scenario}, bounds ${row.bounds}`, row.run, row.run.serverExit === undefined ? 'survived' : `died: ${row.run.serverExit}`)] : [])),
  );
  return { markdown: section(ctx.log, title, body, { alt: 'heap limit', file: svgName }), svg: [svgName, svg] };
}

/** Our gateway's stacks of --stacks (the bare references have no gateway to push). */
const gatewayStacksOf = (common: CommonOptions): StackName[] => common.stacks.filter((s) => isGateway(s));

const outputOf = (section: Section): ScenarioOutput => ({ markdown: section.markdown, svgs: [section.svg] });

function burstSpecOf(options: OptionValues, common: CommonOptions): RunSpec {
  return burstSpec({
    sockets: options.number('burst-sockets'),
    distinct: options.number('burst-distinct'),
    events: options.number('burst-events'),
    filterKeys: common.filterKeys,
    drainTimeoutMs: drainTimeoutMs(common, 60_000, 10_000),
    idleMs: common.idleMs,
  });
}

export const burstScenario: Scenario = {
  name: 'burst',
  description:
    'opt-in: our gateway stacks of --stacks and bare-corked, N sockets over D distinct operations, events back-to-back; ' +
    "/healthz every 50 ms and the gateway's event-loop delay from /metrics during traffic",
  report: 'burst',
  options: {
    'burst-sockets': { arg: 'N', default: '10000', quick: '500', help: 'sockets' },
    'burst-distinct': { arg: 'D', default: '1000', quick: '50', help: 'distinct operations' },
    'burst-events': { arg: 'E', default: '200', quick: '50', help: 'events' },
  },
  prepare(options, common) {
    const spec = burstSpecOf(options, common);
    const stacks: StackName[] = [...gatewayStacksOf(common), 'bare-corked'];
    return {
      events: spec.events,
      run: async (env) => {
        const { markdown, svg, runs } = await burstSection(env.ctx, stacks, spec, common.repeat, env.svgName('burst'));
        return { markdown, svgs: [svg], runs };
      },
    };
  },
};

export const heapLimitScenario: Scenario = {
  name: 'heap-limit',
  description: 'opt-in: our gateway stacks of --stacks in a memory budget with a bounded old space, through the saturation and burst scenarios (their options), bounds as shipped and lifted',
  report: 'burst',
  options: {
    'heap-budget-mib': { arg: 'M', default: '512', help: 'memory budget (cgroup) of the gateway' },
    'heap-old-space-mib': { arg: 'M', default: '256', help: 'NODE_OPTIONS=--max-old-space-size=M' },
    'heap-scenarios': { arg: 'LIST', default: 'saturation,burst', help: 'the bursts to go through: saturation, burst' },
    'heap-unbounded-env': { arg: 'LIST', default: DEFAULT_UNBOUNDED_ENV, help: 'env that lifts the bounds' },
  },
  prepare(options, common) {
    const names = options.required('heap-scenarios').split(',');
    for (const s of names) if (s !== 'saturation' && s !== 'burst') throw new RangeError(`--heap-scenarios: "${s}" is not saturation or burst`);
    const specs = names.map((name) => ({
      name,
      spec: name === 'burst' ? burstSpecOf(options, common) : { ...saturationSpecOf(options, common), drainTimeoutMs: drainTimeoutMs(common, 60_000) },
    }));
    const heapOptions: HeapLimitOptions = {
      budgetBytes: options.number('heap-budget-mib') * 1_048_576,
      oldSpaceMb: options.number('heap-old-space-mib'),
      unboundedEnv: options.required('heap-unbounded-env'),
    };
    return {
      events: Math.max(0, ...specs.map((s) => s.spec.events)),
      run: async (env) => outputOf(await heapLimitSection(env.ctx, gatewayStacksOf(common), specs, heapOptions, env.svgName('heap-limit'))),
    };
  },
};

export const memoryReturnScenario: Scenario = {
  name: 'memory-return',
  description: "opt-in: the saturation burst (its options), then the gateway's RSS every 1 s with every socket subscribed, once per env variant",
  report: 'memory-return',
  options: {
    'settle-seconds': { arg: 'S', default: '60', quick: '10', help: 'RSS every 1 s for S s after the last delivery' },
    'memory-variants': {
      arg: 'LIST',
      default: DEFAULT_MEMORY_VARIANTS,
      help: "each gateway stack of --stacks (ours when none; e.g. ours-base-sse,ours-sse) once per env variant, ';' between variants, ',' within one, 'jemalloc' = LD_PRELOAD of libjemalloc.so.2",
    },
  },
  prepare(options, common) {
    const spec = memoryReturnSpec(saturationSpecOf(options, common), options.number('settle-seconds') * 1_000);
    const variants = options.required('memory-variants');
    return {
      events: spec.events,
      run: async (env) => outputOf(await memoryReturnSection(env.ctx, spec, variants, env.svgName('memory-return'), gatewayStacksOf(common))),
    };
  },
};
