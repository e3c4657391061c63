import { describe, expect, it } from 'vitest';
import { conflationOverhead } from './conflation-overhead.js';
import { filterPredicate } from './filter-predicate.js';
import { projectorEngine } from './projector-engine.js';
import { createOptionValues, type MicroBench } from './scenario.js';
import { unicastCompile } from './unicast-compile.js';
import { unicastEarlyDrop } from './unicast-early-drop.js';

// The smallest run of each bench that needs no node flag and takes well under a second. The package's
// bench:smoke runs the others: unicast-memory and tracing-alloc need --expose-gc, projector-cost's
// graphql-jit meets two graphql module instances under vitest, engine-metrics-overhead times a million
// metric calls whatever its options.
const smallest: readonly [string, MicroBench, Record<string, string>, string][] = [
  ['conflation-overhead', conflationOverhead, { subscribers: '20', events: '10', rounds: '1' }, '| lagging | '],
  ['projector-engine', projectorEngine, { subscribers: '4', distinct: '2', events: '5', rounds: '1' }, '| projector | '],
  ['filter-predicate', filterPredicate, { events: '10', ops: '4', rounds: '1' }, '| filtered-10 | '],
  ['unicast-early-drop', unicastEarlyDrop, { subscribers: '5', events: '100', rounds: '1' }, '| routed | '],
  ['unicast-compile', unicastCompile, { clients: '10', rounds: '1' }, '| as sent | '],
];

describe('the micro benches', () => {
  it.each(smallest)('%s runs from its declared options and returns its table', async (_, bench, given, row) => {
    const printed = await bench.run(createOptionValues(bench.options, given, false));
    expect(printed).toContain(row);
  }, 60_000);

  it('names the option and the value it refuses', async () => {
    await expect(unicastEarlyDrop.run(createOptionValues(unicastEarlyDrop.options, { share: '2' }, false))).rejects.toThrow('--share must be above 0 and at most 1, got 2');
    await expect(unicastCompile.run(createOptionValues(unicastCompile.options, { clients: '0' }, false))).rejects.toThrow('--clients must be a positive integer, got 0');
  });
});
