/**
 * Conflation's cost inside the fan-out engine (issue #36: with 10 % of sockets conflating, CPU per
 * delivery within 5 % of today's for the others), in one process so the machine's noise hits every
 * side alike: the real engine (`createHub` on the in-process bus) fed the same ~2 KB envelopes, in
 * alternating rounds, with
 *   - `none`:     no subscriber conflating (today's path plus one property read per write);
 *   - `keeping`:  10 % conflating whose connections have room (they take the shared write);
 *   - `lagging`:  10 % conflating whose connections have no room (their frames go to their queues).
 * The transport is a no-op that still builds each frame (`head + payload + '}'`). Reported: CPU per
 * round and ns per delivery to the 90 % that do not conflate (every side delivers the same to them;
 * what the 10 % cost is in the total).
 */
import { median } from '@wirestream/bench-kit';
import { benchEvents, compileSubscription, cpuTable, createCompiler, createFrameSink, engineCounts, engineOptions, feedSides, LISTING_QUERY } from './engine-fixture.js';
import type { MicroBench } from './scenario.js';

const SHARE = 0.1;

export const conflationOverhead: MicroBench = {
  description: 'CPU per round with none, 10 % keeping-up and 10 % lagging conflating subscribers (issue #36)',
  options: engineOptions(5_000, 500, 8),
  async run(o) {
    const { subscribers, count, rounds } = engineCounts(o);
    const events = benchEvents(count, 50, 1_200);
    const operation = compileSubscription(createCompiler(), LISTING_QUERY);
    const sink = createFrameSink<{ readonly room: boolean }>({ hasRoom: (conn) => conn.room });
    const { samples } = await feedSides(['none', 'keeping', 'lagging'] as const, rounds, events, (side) => ({
      writer: sink.writer,
      subscribe: (hub) => {
        for (let i = 0; i < subscribers; i++) {
          const conflating = side !== 'none' && i % Math.round(1 / SHARE) === 0;
          hub.subscribe({ room: !(conflating && side === 'lagging') }, String(i), operation, { conflate: conflating });
        }
      },
    }));
    const plain = Math.round(subscribers * (1 - SHARE));
    const base = median(samples.get('none') ?? []);
    return [
      `conflation in the fan-out engine: ${subscribers} subscribers (${SHARE * 100} % conflating on two sides) × ${count} events per round, ${rounds} rounds each, alternating`,
      cpuTable('side', samples, {
        'ns per delivery to the 90 %': (us) => ((us * 1_000) / (count * plain)).toFixed(1),
        'vs none': (us) => `${((us / base - 1) * 100).toFixed(1)} %`,
      }),
      `frames built ${sink.frames()}`,
    ].join('\n');
  },
};
