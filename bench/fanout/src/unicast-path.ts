/**
 * Where a unicast delivery's CPU goes inside the fan-out engine (issue 37), in one process so the
 * machine's noise hits every side alike: K subscribers each following its own listing with the
 * whole selection (`listingUpdated(listing_id: "lst-…") { …FULL_SELECTION… }`, as the unicast
 * scenario's clients), fed the unicast scenario's corpus (the kit's demo listing events, ~2.6 KB
 * envelopes, snake_cased as ingest writes them, keyed round-robin over the K listings), so every
 * event is delivered exactly once. Alternating rounds of:
 *   - `engine`:        the real engine (`createHub` on the in-process bus, the routing key given
 *                      as a batch part gives it), a frame sink as transport;
 *   - `parse`:         `decodeEnvelope` of the same envelopes, nothing else;
 *   - `parse+project`: that and the operation's projector writing each payload;
 *   - `scan+bytes`:    the WebAssembly path the engine takes (decision 0043): the envelope checked
 *                      and the payload written from its text, the subscriber's filter included.
 * "the rest of the engine" (engine − scan+bytes, the render path the engine takes) is routing, queue,
 * slices, flush, frame layout. What the transport (uWS, the kernel) and Redis cost comes on
 * top, in the unicast scenario of main.js.
 */
import { decodeEnvelope } from '@wirestream/wire';
import { createByteProjector, projectBytes, scanEnvelope } from '@wirestream/gateway/internals';
import { createEnvelopeWriter, median, prepareCorpus, type CorpusEvent } from '@wirestream/bench-kit';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { alternate, compileSubscription, cpuMicros, cpuTable, createCompiler, createFrameSink, engineCounts, engineOptions, feed, listingEvents, listingKey, route, startEngine, TOPIC } from './engine-fixture.js';
import type { MicroBench } from './scenario.js';

const SIDES = ['engine', 'parse', 'parse+project', 'scan+bytes'] as const;

export const unicastPath: MicroBench = {
  description: 'CPU per unicast delivery in the engine (K subscribers, each its own key, the whole selection, demo events) next to the parse and the projection alone (issue 37)',
  options: engineOptions(10_000, 20_000, 6),
  async run(o) {
    const { subscribers, count, rounds } = engineCounts(o);
    // As the unicast scenario publishes: event i of listing i mod K, `occurred_at` set at publish.
    const corpus = prepareCorpus({ count, listings: subscribers, partitions: 6, shards: route.shards, keyOf: (i) => listingKey(i % subscribers) });
    const events = listingEvents(count, (i) => {
      const event = corpus.events[i] as CorpusEvent;
      return { key: event.key, payload: event.before + '2026-12-05T12:00:00.000000Z' + event.after };
    });
    const compiler = createCompiler({ maxCachedDocuments: subscribers });
    const operations = Array.from({ length: subscribers }, (_, k) => compileSubscription(compiler, `subscription { listingUpdated(listing_id: "${listingKey(k)}") { ${FULL_SELECTION} } }`));
    const projector = operations[0]?.projector;
    if (projector === undefined) throw new Error('the unicast operation has no projector');
    const sink = createFrameSink<object>();
    const engine = await startEngine<object>({ writer: sink.writer, subscribe: (hub) => operations.forEach((operation, i) => hub.subscribe({}, String(i), operation)) });
    const writeEnvelope = createEnvelopeWriter(TOPIC);
    const envelopes = events.map((e, i) => writeEnvelope(e.partition, String(i), e.key, Date.now(), e.payload));
    const tail = `,"extensions":{"position":{"topic":${JSON.stringify(TOPIC)},"partition":0,"offset":"0"}}}`;
    let written = 0;
    let bytesWritten = 0;
    const bytes = createByteProjector();
    const bytePlan = projector.bytes;
    if (bytePlan === undefined) throw new Error('the unicast operation has no byte plan');
    const filters = new Map(operations.map((operation) => [(operation.filter[0] as readonly [string, string])[1], operation.filter]));
    const filterOf = (key: string | null) => filters.get(key ?? '') ?? [];
    const sides: Record<(typeof SIDES)[number], () => Promise<number>> = {
      engine: () => cpuMicros(() => feed(engine.bus, events, { burst: 64, routedOn: route.keyField })),
      parse: () => cpuMicros(() => envelopes.forEach((text) => decodeEnvelope(text))),
      'parse+project': () => cpuMicros(() => envelopes.forEach((text) => (written += projector.project(decodeEnvelope(text).payload, '{"data":', tail)?.length ?? 0))),
      // The WebAssembly path (decision 0043): the envelope checked and its payload written from its text, the filter included.
      'scan+bytes': () =>
        cpuMicros(() =>
          envelopes.forEach((text) => {
            const envelope = scanEnvelope(bytes, text);
            const json = envelope === undefined ? undefined : projectBytes(bytes, envelope, bytePlan, filterOf(envelope.key), tail);
            if (typeof json !== 'string') throw new Error('the WebAssembly projector declined a demo event');
            bytesWritten += json.length;
          }),
        ),
    };
    const { samples } = await alternate(SIDES, rounds, (side) => sides[side]());
    const deliveries = engine.hub.stats().framesOut / (rounds + 1);
    if (deliveries !== count) throw new Error(`the engine delivered ${deliveries} frames a round, expected ${count}: not every event reached its one subscriber`);
    const engineUs = median(samples.get('engine') ?? []);
    const bytesUs = median(samples.get('scan+bytes') ?? []);
    return [
      `unicast in the fan-out engine: ${subscribers} subscribers on their own keys with the whole selection, ${count} demo listing events a round ` +
        `(mean envelope ${(envelopes.reduce((n, e) => n + e.length, 0) / envelopes.length / 1_024).toFixed(2)} KB), each delivered once; ${rounds} rounds each, alternating`,
      cpuTable('side', samples, {
        'µs per delivery': (us) => (us / count).toFixed(2),
        'share of the engine': (us) => `${((100 * us) / engineUs).toFixed(0)} %`,
      }),
      `the rest of the engine (engine − scan+bytes, the path it takes): ${((engineUs - bytesUs) / count).toFixed(2)} µs per delivery; frames built ${sink.frames()}, payload characters written ${written} (from bytes ${bytesWritten}); renders in the engine ${engine.hub.stats().executions}, of them from the envelope's bytes ${engine.hub.stats().byteRenders}`,
    ].join('\n');
  },
};
