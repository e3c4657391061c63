#!/usr/bin/env node
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
 *
 *   node bench/fanout/dist/conflation-overhead.js [--subscribers 5000] [--events 500] [--rounds 8]
 */
import { markdownTable, median, parseCli, positiveInts } from '@wirestream/bench-kit';
import { benchListing, compileSubscription, createCompiler, createFrameSink, feedSides, listingEvents, listingKey, listingUpdated, msRange, runEngineBench } from './engine-fixture.js';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '5000' },
    events: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '8' },
  },
});
const { subscribers: SUBSCRIBERS, events: EVENTS, rounds: ROUNDS } = positiveInts(values, ['subscribers', 'events', 'rounds']);
const SHARE = 0.1;

const events = listingEvents(EVENTS, (i) => {
  const key = listingKey(i % 50);
  return { key, payload: listingUpdated(i, key, benchListing(i, key, 1_200)) };
});
const operation = compileSubscription(
  createCompiler(),
  'subscription { listingUpdated { listing_id event_type occurred_at listing { title description current_price { amount_cents currency_code } } } }',
);

interface Conn {
  readonly room: boolean;
}
const sink = createFrameSink<Conn>({ hasRoom: (conn) => conn.room });

type Side = 'none' | 'keeping' | 'lagging';

runEngineBench(async () => {
  const sides: Side[] = ['none', 'keeping', 'lagging'];
  const { samples } = await feedSides(sides, ROUNDS, events, (side) => ({
    writer: sink.writer,
    subscribe: (hub) => {
      for (let i = 0; i < SUBSCRIBERS; i++) {
        const conflating = side !== 'none' && i % Math.round(1 / SHARE) === 0;
        hub.subscribe({ room: !(conflating && side === 'lagging') }, String(i), operation, { conflate: conflating });
      }
    },
  }));
  const plain = Math.round(SUBSCRIBERS * (1 - SHARE));
  const base = median(samples.get('none') ?? []);
  console.log(`conflation in the fan-out engine: ${SUBSCRIBERS} subscribers (${SHARE * 100} % conflating on two sides) × ${EVENTS} events per round, ${ROUNDS} rounds each, alternating`);
  const rows = sides.map((side) => {
    const t = samples.get(side) ?? [];
    const m = median(t);
    return [side, msRange(t), ((m * 1_000) / (EVENTS * plain)).toFixed(1), `${((m / base - 1) * 100).toFixed(1)} %`];
  });
  console.log(markdownTable([['side', 'CPU per round, median (min–max)', 'ns per delivery to the 90 %', 'vs none'], ...rows]));
  console.log(`frames built ${sink.frames()}`);
});
