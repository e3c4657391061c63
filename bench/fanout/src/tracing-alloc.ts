/**
 * Allocations of the gateway's tracing per event (issue #19: none per event when nothing is
 * sampled): the real hub (`createHub` on the in-process bus) with one group of subscribers, fed the
 * same envelopes with tracing off, on with no traced envelope (what ingest at 0 % publishes), on with
 * 1 % and 100 % of envelopes carrying a sampled traceparent. Bytes come from the V8 heap with
 * scavenges kept out of each measured round (`--max-semi-space-size`), after a forced GC, least of
 * a few rounds. The gateway's context manager is `synchronous` (main.ts); `--async-local-storage`
 * measures the other one.
 */
import { loadConfig } from '@wirestream/config';
import { encodeEnvelopeTrace } from '@wirestream/wire';
import { startTracing, tracingSpec, type Tracer } from '@wirestream/telemetry';
import { startOtlpReceiver } from '@wirestream/testkit';
import { createEnvelopeWriter, markdownTable, median, requireGc } from '@wirestream/bench-kit';
import { compileSubscription, createCompiler, createFrameSink, listingEvents, listingKey, listingUpdated, route, startEngine, turn, type EngineEvent } from './engine-fixture.js';
import { countOption, type MicroBench } from './scenario.js';

export const tracingAlloc: MicroBench = {
  description: 'heap bytes and CPU per event of the hub with tracing off, on at 0 %, 1 % and 100 % traced (issue #19)',
  nodeFlags: '--expose-gc --max-semi-space-size=256',
  options: {
    events: countOption(2_000, 'events per round'),
    subscribers: countOption(100, 'subscribers of the one operation (one group)'),
    tries: countOption(5, 'measured rounds per row after a warm-up'),
    'async-local-storage': { help: "the tracer's async-local-storage context manager instead of the gateway's synchronous one" },
  },
  async run(o) {
    const [count, subscribers, tries] = [o.positiveInt('events'), o.positiveInt('subscribers'), o.positiveInt('tries')];
    const gc = requireGc('run with node --expose-gc --max-semi-space-size=256');
    const events = listingEvents(count, (i) => {
      const key = listingKey(i % 50);
      return { key, payload: listingUpdated(i, key, { listing_id: key, title: `Listing ${i}`, current_price: { amount_cents: i, currency_code: 'EUR' } }) };
    });
    const operation = compileSubscription(createCompiler(), 'subscription { listingUpdated { listing_id event_type listing { title current_price { amount_cents currency_code } } } }');
    /** Least heap bytes and median CPU µs of a round (every event delivered to every subscriber). */
    const measure = async (tracer: Tracer | undefined, share: number): Promise<{ bytes: number; cpuUs: number }> => {
      const { bus, hub } = await startEngine<object>({
        writer: createFrameSink<object>({ layout: 'drop' }).writer,
        tracer,
        subscribe: (hub) => {
          for (let i = 0; i < subscribers; i++) hub.subscribe({}, String(i), operation);
        },
      });
      let least = Infinity;
      const cpus: number[] = [];
      for (let t = 0; t <= tries; t++) {
        const round = envelopes(events, t + 1, share); // made before the measured window
        gc();
        const before = process.memoryUsage().heapUsed;
        const cpu = process.cpuUsage();
        for (const { channel, text } of round) bus.publish(channel, text);
        // Every slice and flush done: the stats say every event went out.
        while (hub.stats().framesOut < (t + 1) * count * subscribers) await turn();
        const used = process.cpuUsage(cpu);
        const bytes = process.memoryUsage().heapUsed - before;
        if (t > 0) {
          // Round 0 warms up.
          least = Math.min(least, bytes);
          cpus.push(used.user + used.system);
        }
      }
      return { bytes: least, cpuUs: median(cpus) };
    };
    const receiver = await startOtlpReceiver({ keepBodies: false });
    const config = loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    const tracing = await startTracing(config, { defaultServiceName: 'alloc', contextManager: o.flag('async-local-storage') ? 'async-local-storage' : 'synchronous' });
    if (tracing === undefined) throw new Error('tracing did not start');
    const rows = [
      ['off (no tracer)', await measure(undefined, 0)],
      ['on, 0 % traced', await measure(tracing.tracer, 0)],
      ['on, 1 % traced', await measure(tracing.tracer, 0.01)],
      ['on, 100 % traced', await measure(tracing.tracer, 1)],
    ] as const;
    await tracing.shutdown();
    await receiver.stop();
    const off = rows[0][1];
    const offNs = (off.cpuUs * 1_000) / count / subscribers;
    const table = rows.map(([name, { bytes, cpuUs }]) => {
      const ns = (cpuUs * 1_000) / count / subscribers;
      return [name, Math.round(bytes / count).toLocaleString('en-US'), ((bytes - off.bytes) / count).toFixed(1), ns.toFixed(1), `${(((ns - offNs) / offNs) * 100).toFixed(1)} %`];
    });
    return [
      `gateway tracing allocations: ${count} events × ${subscribers} subscribers (one group) per round; bytes: least of ${tries} rounds, CPU: median`,
      markdownTable([['tracing', 'bytes per event', 'vs off, bytes per event', 'CPU ns per delivery (hub, no sockets)', 'vs off'], ...table]),
    ].join('\n');
  },
};

const writeEnvelope = createEnvelopeWriter(route.topic);

/** The envelopes of one round; `share` of them carry a sampled traceparent (each its own trace). */
function envelopes(events: readonly EngineEvent[], round: number, share: number): { channel: string; text: string }[] {
  const offset0 = round * events.length;
  return events.map(({ key, payload, channel }, i) => {
    const traced = share > 0 && Math.floor((i + 1) * share) > Math.floor(i * share);
    const trace = traced ? encodeEnvelopeTrace(`00-${(offset0 + i + 1).toString(16).padStart(32, '0')}-${(i + 1).toString(16).padStart(16, '0')}-01`) : undefined;
    return { channel, text: writeEnvelope(0, String(offset0 + i), key, 1, payload, trace) };
  });
}
