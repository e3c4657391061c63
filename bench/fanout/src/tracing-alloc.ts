#!/usr/bin/env node
/**
 * Allocations of the gateway's tracing per event (issue #19: none per event when nothing is
 * sampled): the real hub (`createHub` on the in-process bus) with one group of subscribers, fed the
 * same envelopes with tracing off, on with no traced envelope (what ingest at 0 % publishes), on with
 * 1 % and 100 % of envelopes carrying a sampled traceparent. Bytes come from the V8 heap with
 * scavenges kept out of each measured round (`--max-semi-space-size`), after a forced GC, least of
 * a few rounds.
 *
 *   node --expose-gc --max-semi-space-size=256 bench/fanout/dist/tracing-alloc.js [--events 2000] [--subscribers 100] [--async-local-storage]
 *
 * The gateway's context manager is `synchronous` (main.ts); `--async-local-storage` measures the other one.
 */
import { loadConfig } from '@wirestream/config';
import { createEnvelopeHeadEncoder, encodeEnvelopeTrace } from '@wirestream/wire';
import { startTracing, tracingSpec, type Tracer } from '@wirestream/telemetry';
import { startOtlpReceiver } from '@wirestream/testkit';
import { markdownTable, median, parseCli, positiveInts, requireGc } from '@wirestream/bench-kit';
import { compileSubscription, createCompiler, createFrameSink, listingEvents, listingKey, listingUpdated, route, startEngine, turn } from './engine-fixture.js';

const { values } = parseCli({ options: { events: { type: 'string', default: '2000' }, subscribers: { type: 'string', default: '100' }, tries: { type: 'string', default: '5' }, 'async-local-storage': { type: 'boolean', default: false } } });
const { events: EVENTS, subscribers: SUBSCRIBERS, tries: TRIES } = positiveInts(values, ['events', 'subscribers', 'tries']);
const gc = requireGc('run with node --expose-gc --max-semi-space-size=256');

const encodeHead = createEnvelopeHeadEncoder(route.topic);
const operation = compileSubscription(createCompiler(), 'subscription { listingUpdated { listing_id event_type listing { title current_price { amount_cents currency_code } } } }');
const { writer } = createFrameSink<object>({ layout: 'drop' });
const events = listingEvents(EVENTS, (i) => {
  const key = listingKey(i % 50);
  return { key, payload: listingUpdated(i, key, { listing_id: key, title: `Listing ${i}`, current_price: { amount_cents: i, currency_code: 'EUR' } }) };
});

/** The envelopes of one round; `share` of them carry a sampled traceparent (each its own trace). */
function envelopes(round: number, share: number): { channel: string; text: string }[] {
  return events.map(({ key, payload, channel }, i) => {
    const traced = share > 0 && Math.floor((i + 1) * share) > Math.floor(i * share);
    const trace = traced ? encodeEnvelopeTrace(`00-${(round * EVENTS + i + 1).toString(16).padStart(32, '0')}-${(i + 1).toString(16).padStart(16, '0')}-01`) : undefined;
    return { channel, text: encodeHead(0, String(round * EVENTS + i), key, 1, trace) + payload + '}' };
  });
}

/** Least heap bytes and median CPU µs of a round (every event delivered to every subscriber). */
async function measure(tracer: Tracer | undefined, share: number): Promise<{ bytes: number; cpuUs: number }> {
  const { bus, hub } = await startEngine<object>({
    writer,
    tracer,
    subscribe: (hub) => {
      for (let i = 0; i < SUBSCRIBERS; i++) hub.subscribe({}, String(i), operation);
    },
  });
  let least = Infinity;
  const cpus: number[] = [];
  for (let t = 0; t <= TRIES; t++) {
    const round = envelopes(t + 1, share); // made before the measured window
    gc();
    const before = process.memoryUsage().heapUsed;
    const cpu = process.cpuUsage();
    for (const { channel, text } of round) bus.publish(channel, text);
    // Every slice and flush done: the stats say every event went out.
    while (hub.stats().framesOut < (t + 1) * EVENTS * SUBSCRIBERS) await turn();
    const used = process.cpuUsage(cpu);
    const bytes = process.memoryUsage().heapUsed - before;
    if (t > 0) {
      // Round 0 warms up.
      least = Math.min(least, bytes);
      cpus.push(used.user + used.system);
    }
  }
  return { bytes: least, cpuUs: median(cpus) };
}

const receiver = await startOtlpReceiver({ keepBodies: false });
const tracing = await startTracing(loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }), { defaultServiceName: 'alloc', contextManager: values['async-local-storage'] ? 'async-local-storage' : 'synchronous' });
if (tracing === undefined) throw new Error('tracing did not start');
const rows: [string, { bytes: number; cpuUs: number }][] = [
  ['off (no tracer)', await measure(undefined, 0)],
  ['on, 0 % traced', await measure(tracing.tracer, 0)],
  ['on, 1 % traced', await measure(tracing.tracer, 0.01)],
  ['on, 100 % traced', await measure(tracing.tracer, 1)],
];
await tracing.shutdown();
await receiver.stop();
const off = rows[0]?.[1] ?? { bytes: 0, cpuUs: 0 };
console.log(`gateway tracing allocations: ${EVENTS} events × ${SUBSCRIBERS} subscribers (one group) per round; bytes: least of ${TRIES} rounds, CPU: median`);
const offNs = (off.cpuUs * 1_000) / EVENTS / SUBSCRIBERS;
const table = rows.map(([name, { bytes, cpuUs }]) => {
  const ns = (cpuUs * 1_000) / EVENTS / SUBSCRIBERS;
  return [name, Math.round(bytes / EVENTS).toLocaleString('en-US'), ((bytes - off.bytes) / EVENTS).toFixed(1), ns.toFixed(1), `${(((ns - offNs) / offNs) * 100).toFixed(1)} %`];
});
console.log(markdownTable([['tracing', 'bytes per event', 'vs off, bytes per event', 'CPU ns per delivery (hub, no sockets)', 'vs off'], ...table]));
