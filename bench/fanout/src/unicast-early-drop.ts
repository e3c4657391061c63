/**
 * The early drop of decision 0039 inside the fan-out engine, in one process so the machine's noise
 * hits both sides alike: the real engine (`createHub` on the in-process bus), K subscribers each
 * following its own listing (`listingUpdated(listing_id: "lst-…")`, a distinct operation each), fed
 * ~2 KB envelopes of K ÷ share listings (share 0.1: nine events in ten have no subscriber here, as
 * one of ten gateways sees a topic), in alternating rounds:
 *   - `routed`:   each envelope with the routing key its batch part gives (dropped unparsed when unwanted);
 *   - `unrouted`: the same envelopes without it (parsed, then found wanted by no group: before 0039's drop).
 * Reported: CPU per published event and per delivery. The transport is a no-op that builds each frame.
 */
import { ROUTED_ON_KAFKA_KEY } from '@wirestream/wire';
import { median } from '@wirestream/bench-kit';
import { benchEvents, compileSubscription, cpuTable, createCompiler, createFrameSink, engineCounts, engineOptions, feedSides, route, unicastQuery } from './engine-fixture.js';
import type { MicroBench } from './scenario.js';

export const unicastEarlyDrop: MicroBench = {
  description: "K subscribers on their own keys fed envelopes with and without the routing key (decision 0039's early drop)",
  options: { ...engineOptions(1_000, 20_000, 8), share: { arg: 'S', default: '0.1', help: 'share of the topic’s keys that have a subscriber (0 < S ≤ 1)' } },
  async run(o) {
    const { subscribers, count, rounds } = engineCounts(o);
    const share = o.number('share');
    if (!(share > 0 && share <= 1)) throw new RangeError(`--share must be above 0 and at most 1, got ${share}`);
    const topicKeys = Math.round(subscribers / share);
    const events = benchEvents(count, topicKeys, 1_600);
    const compiler = createCompiler({ maxCachedDocuments: subscribers });
    const operations = Array.from({ length: subscribers }, (_, k) => compileSubscription(compiler, unicastQuery(k)));
    const sink = createFrameSink<object>();
    const routedOn = route.keyField ?? ROUTED_ON_KAFKA_KEY;
    const { samples, engineOf } = await feedSides(
      ['unrouted', 'routed'] as const,
      rounds,
      events,
      () => ({ writer: sink.writer, subscribe: (hub) => operations.forEach((operation, i) => hub.subscribe({}, String(i), operation)) }),
      (side) => ({ burst: 64, routedOn: side === 'routed' ? routedOn : undefined }),
    );
    const deliveries = events.filter((e) => Number(e.key.slice(4)) < subscribers).length;
    const base = median(samples.get('unrouted') ?? []);
    return [
      `early drop in the fan-out engine: ${subscribers} subscribers on their own keys, ${count} events per round over ${topicKeys} keys (${deliveries} deliveries), ${rounds} rounds each, alternating`,
      cpuTable('side', samples, {
        'µs per published event': (us) => (us / count).toFixed(2),
        'µs per delivery': (us) => (us / deliveries).toFixed(2),
        'vs unrouted': (us) => `${((us / base - 1) * 100).toFixed(1)} %`,
        'dropped unparsed per round': (_, side) => (engineOf(side).hub.stats().unwanted / (rounds + 1)).toFixed(0),
      }),
      `frames built ${sink.frames()}`,
    ].join('\n');
  },
};
