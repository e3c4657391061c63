/**
 * The field's case: N sockets on the field's mix of operations (shared, compact, filtered), events
 * paced at the field's rate; every stack of --stacks but the bare references (they ignore filters).
 */
import { parseMix } from '@wirestream/loadgen';
import { compareStacks, describePlan, fanoutTargetLines } from './compare-stacks.js';
import { fmtInt } from './report.js';
import { drainTimeoutMs, withWorkers, type Scenario } from './scenario.js';

export const fieldScenario: Scenario = {
  name: 'field',
  description: "the field's case: paced events over a mix of operations, every stack but the bare references",
  options: {
    'field-sockets': { arg: 'N', default: '4000', quick: '500', help: 'sockets' },
    'field-rate': { arg: 'EV/S', default: '20', help: 'events per second' },
    'field-seconds': { arg: 'S', default: '10', quick: '2', help: 'seconds of traffic' },
    'field-mix': { arg: 'SPEC', default: 'shared:85,compact:5,filtered:10', help: 'operations: kind:percent, …' },
  },
  prepare(options, common) {
    const rate = options.number('field-rate');
    const seconds = options.number('field-seconds');
    const spec = withWorkers(common, {
      sockets: options.number('field-sockets'),
      plan: { mix: parseMix(options.required('field-mix')), filterKeys: common.filterKeys },
      events: Math.round(rate * seconds),
      ratePerSecond: rate,
      drainTimeoutMs: drainTimeoutMs(common, 20_000, 10_000),
      stallTimeoutMs: 10_000,
      idleMs: common.idleMs,
    });
    const stacks = common.stacks.filter((s) => s !== 'bare' && s !== 'bare-corked' && s !== 'bare-projecting');
    const title = `Field's case: N = ${fmtInt(spec.sockets)}, ${rate} events/s for ${seconds} s (${describePlan(spec.plan)})`;
    return { events: spec.events, run: (env) => compareStacks(env, { name: 'field', title, spec, stacks }) };
  },
  targets: fanoutTargetLines,
};
