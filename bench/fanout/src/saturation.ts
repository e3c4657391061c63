/**
 * Saturation: N sockets on one operation, events back-to-back, every stack of --stacks; optionally
 * a share of the sockets asking for conflation (`extensions.conflate`) on the same operation.
 */
import { parseMix, variantsOf, type OperationPlan, type OperationVariant } from '@wirestream/loadgen';
import { compareStacks, fanoutTargetLines } from './compare-stacks.js';
import { fmtInt, runLabel } from './report.js';
import type { RunSpec, StackRun } from './run-stack.js';
import { drainTimeoutMs, withWorkers, type CommonOptions, type OptionValues, type Scenario } from './scenario.js';

/**
 * Socket i subscribes with operations[i % 100]: the first share × 100 of them the shared operation
 * with `extensions.conflate`, the rest the shared operation as is (one operation for the gateway).
 */
function conflatingPlan(share: number, events: number, filterKeys: readonly string[]): Pick<RunSpec, 'plan' | 'expectedPerOperation'> {
  const sharedPayload = (variantsOf({ mix: parseMix('shared:100'), filterKeys: [] })[0] as OperationVariant).payload;
  return {
    plan: {
      operations: Array.from({ length: 100 }, (_, i) =>
        i < Math.round(share * 100) ? { label: 'conflating', payload: { ...sharedPayload, extensions: { conflate: true } } } : { label: 'shared', payload: sharedPayload },
      ),
      filterKeys,
    },
    expectedPerOperation: new Array<number>(100).fill(events),
  };
}

/** `lost` of a run summed per operation label, e.g. `conflating 80,000, shared 0`. */
function lostByLabel(run: StackRun, plan: OperationPlan): string {
  const byLabel = new Map<string, number>();
  plan.operations?.forEach((op, i) => byLabel.set(op.label, (byLabel.get(op.label) ?? 0) + (run.lostPerOperation[i] ?? 0)));
  return [...byLabel].map(([label, n]) => `${label} ${fmtInt(n)}`).join(', ');
}

function conflatingShareOf(options: OptionValues): number {
  const share = Number(options.string('conflating-share'));
  if (!(share >= 0 && share <= 1)) throw new RangeError(`--conflating-share: expected 0..1, got ${options.string('conflating-share')}`);
  return share;
}

/** The saturation spec (heap-limit and memory-return run the same burst). */
export function saturationSpecOf(options: OptionValues, common: CommonOptions): RunSpec {
  const events = options.number('saturation-events');
  const share = conflatingShareOf(options);
  return withWorkers(common, {
    sockets: options.number('saturation-sockets'),
    ...(share > 0 ? conflatingPlan(share, events, common.filterKeys) : { plan: { mix: parseMix('shared:100'), filterKeys: common.filterKeys } }),
    events,
    ratePerSecond: 0,
    // Baselines never finish 10M deliveries: 20 s of steady state measures their rate well enough.
    drainTimeoutMs: drainTimeoutMs(common, 20_000, 10_000),
    stallTimeoutMs: 10_000,
    idleMs: common.idleMs,
  });
}

export const saturationScenario: Scenario = {
  name: 'saturation',
  description: 'N sockets on one operation, events back-to-back: deliveries/s, CPU and memory per socket of every stack',
  options: {
    'saturation-sockets': { arg: 'N', default: '10000', quick: '500', help: 'sockets' },
    'saturation-events': { arg: 'E', default: '1000', quick: '200', help: 'events' },
    'conflating-share': {
      arg: 'F',
      default: '0',
      help: 'this fraction of sockets (0..1, in hundredths) subscribe with `extensions: { conflate: true }`, the others as before, all on one operation',
    },
  },
  prepare(options, common) {
    const spec = saturationSpecOf(options, common);
    const share = conflatingShareOf(options);
    const title = `Saturation: N = ${fmtInt(spec.sockets)} on one operation${share > 0 ? ` (${Math.round(share * 100)} % of sockets with \`extensions.conflate\`)` : ''}, ${fmtInt(spec.events)} events back-to-back`;
    const extraLines = (runs: readonly StackRun[]): string[] =>
      share > 0 ? ['**Undelivered by group (`--conflating-share`)**', '', ...runs.map((r) => `- ${runLabel(r, runs)}: ${lostByLabel(r, spec.plan)}`)] : [];
    return { events: spec.events, run: (env) => compareStacks(env, { name: 'saturation', title, spec, stacks: common.stacks, extraLines }) };
  },
  targets: fanoutTargetLines,
};
