#!/usr/bin/env node
/**
 * The early drop of decision 0039 inside the fan-out engine, in one process so the machine's noise
 * hits both sides alike: the real engine (`createHub` on the in-process bus), K subscribers each
 * following its own listing (`listingUpdated(listing_id: "lst-…")`, a distinct operation each), fed
 * ~2 KB envelopes of K ÷ share listings (share 0.1: nine events in ten have no subscriber here, as
 * one of ten gateways sees a topic), in alternating rounds:
 *   - `routed`:   each envelope with the routing key its batch part gives (dropped unparsed when unwanted);
 *   - `unrouted`: the same envelopes without it (parsed, then found wanted by no group: before 0039's drop).
 * Reported: CPU per published event and per delivery. The transport is a no-op that builds each frame.
 *
 *   node bench/fanout/dist/unicast-early-drop.js [--subscribers 1000] [--share 0.1] [--events 20000] [--rounds 8]
 */
import { ROUTED_ON_KAFKA_KEY } from '@wirestream/wire';
import { markdownTable, median, parseCli, positiveInts } from '@wirestream/bench-kit';
import { benchListing, compileSubscription, createCompiler, createFrameSink, feedSides, listingEvents, listingKey, listingUpdated, msRange, route, runEngineBench } from './engine-fixture.js';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '1000' },
    share: { type: 'string', default: '0.1' },
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '8' },
  },
});
const { subscribers: SUBSCRIBERS, events: EVENTS, rounds: ROUNDS } = positiveInts(values, ['subscribers', 'events', 'rounds']);
const SHARE = Number(values.share);
if (!(SHARE > 0 && SHARE <= 1)) throw new RangeError(`--share must be above 0 and at most 1, got ${values.share}`);

const topicKeys = Math.round(SUBSCRIBERS / SHARE);
const events = listingEvents(EVENTS, (i) => {
  const key = listingKey(i % topicKeys);
  return { key, payload: listingUpdated(i, key, benchListing(i, key, 1_600)) };
});
const compiler = createCompiler({ maxCachedDocuments: SUBSCRIBERS });
const operations = Array.from({ length: SUBSCRIBERS }, (_, k) =>
  compileSubscription(compiler, `subscription { listingUpdated(listing_id: "${listingKey(k)}") { listing_id event_type occurred_at listing { title current_price { amount_cents } } } }`),
);
const sink = createFrameSink<object>();

type Side = 'routed' | 'unrouted';
runEngineBench(async () => {
  const sides: Side[] = ['unrouted', 'routed'];
  const routedOn = route.keyField ?? ROUTED_ON_KAFKA_KEY;
  const { samples, engineOf } = await feedSides(
    sides,
    ROUNDS,
    events,
    () => ({ writer: sink.writer, subscribe: (hub) => operations.forEach((operation, i) => hub.subscribe({}, String(i), operation)) }),
    (side) => ({ burst: 64, routedOn: side === 'routed' ? routedOn : undefined }),
  );
  const deliveries = events.filter((e) => Number(e.key.slice(4)) < SUBSCRIBERS).length;
  const base = median(samples.get('unrouted') ?? []);
  console.log(`early drop in the fan-out engine: ${SUBSCRIBERS} subscribers on their own keys, ${EVENTS} events per round over ${topicKeys} keys (${deliveries} deliveries), ${ROUNDS} rounds each, alternating`);
  const rows = sides.map((side) => {
    const t = samples.get(side) ?? [];
    const m = median(t);
    const unwanted = engineOf(side).hub.stats().unwanted / (ROUNDS + 1);
    return [side, msRange(t), (m / EVENTS).toFixed(2), (m / deliveries).toFixed(2), `${((m / base - 1) * 100).toFixed(1)} %`, unwanted.toFixed(0)];
  });
  console.log(markdownTable([['side', 'CPU per round, median (min–max)', 'µs per published event', 'µs per delivery', 'vs unrouted', 'dropped unparsed per round'], ...rows]));
  console.log(`frames built ${sink.frames()}`);
});
