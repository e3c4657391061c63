#!/usr/bin/env node
/**
 * Allocations and CPU of ingest's tracing per event (issue #19: none per event when nothing is sampled):
 * the chunk tracer apps/ingest uses (`createChunkTracer`, a real SDK tracer from `startTracing`),
 * over chunks of kafkajs-shaped records without a traceparent, as the bench's preloaded topics
 * hold them. Bytes come from the V8 heap with scavenges kept out of the measured loop
 * (`--max-semi-space-size`), after a forced GC; each case is run a few times and the least is kept.
 *
 *   node --expose-gc --max-semi-space-size=128 bench/ingest/dist/tracing-alloc.js [--chunks 200] [--chunk 500]
 */
import { loadConfig } from '@wirestream/config';
// (After a value import: tsc drops the comment above an elided `import type`, and --help prints it.)
import type { KafkaMessage } from 'kafkajs';
import { createChunkTracer } from '@wirestream/ingest';
import { startTracing, tracingSpec } from '@wirestream/telemetry';
import { startOtlpReceiver } from '@wirestream/testkit';
import { parseCli, requireGc } from '@wirestream/bench-kit';

const { values } = parseCli({ options: { chunks: { type: 'string', default: '200' }, chunk: { type: 'string', default: '500' }, tries: { type: 'string', default: '5' } } });
const CHUNKS = Number(values.chunks);
const CHUNK = Number(values.chunk);
const TRIES = Number(values.tries);
const gc = requireGc('run with node --expose-gc --max-semi-space-size=128');

const messages: KafkaMessage[] = Array.from({ length: CHUNK }, (_, i) => ({
  key: Buffer.from(`k${i}`),
  value: Buffer.from('{}'),
  timestamp: '1700000000000',
  attributes: 0,
  offset: String(1_000 + i),
  headers: {},
}));

const receiver = await startOtlpReceiver({ keepBodies: false });
const tracing = async (ratio: string) => {
  const t = await startTracing(loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio }), { defaultServiceName: 'alloc' });
  if (t === undefined) throw new Error('tracing did not start');
  return t;
};

/** Heap bytes allocated and CPU µs used by `CHUNKS` chunk traces (start, converted, end), least of TRIES each. */
function measure(tracer: ReturnType<typeof createChunkTracer> | undefined): { bytes: number; cpuUs: number } {
  let bytes = Infinity;
  let cpuUs = Infinity;
  for (let t = 0; t < TRIES; t++) {
    gc();
    const before = process.memoryUsage().heapUsed;
    const cpu = process.cpuUsage();
    for (let c = 0; c < CHUNKS; c++) {
      const trace = tracer?.start('listing-events', c % 6, messages, 0, CHUNK);
      trace?.converted();
      trace?.end(true);
    }
    const used = process.cpuUsage(cpu);
    bytes = Math.min(bytes, process.memoryUsage().heapUsed - before);
    cpuUs = Math.min(cpuUs, used.user + used.system);
  }
  return { bytes, cpuUs };
}

const rows: [string, { bytes: number; cpuUs: number }][] = [];
rows.push(['off (no tracer)', measure(undefined)]);
for (const [name, ratio] of [['on, 0 % sampled', '0'], ['on, 1 % sampled', '0.01'], ['on, 100 % sampled', '1']] as const) {
  const t = await tracing(ratio);
  const chunkTracer = createChunkTracer(t.tracer, 'bench');
  measure(chunkTracer); // warm-up (JIT, attribute caches)
  rows.push([name, measure(chunkTracer)]);
  await t.shutdown();
}
await receiver.stop();
console.log(`ingest tracing allocations: ${CHUNKS} chunks of ${CHUNK} records without traceparent, least of ${TRIES}`);
console.log('| tracing | bytes per chunk | bytes per event | CPU ns per event (the tracer alone) |');
console.log('| --- | --- | --- | --- |');
for (const [name, { bytes, cpuUs }] of rows) {
  console.log(`| ${name} | ${Math.round(bytes / CHUNKS).toLocaleString('en-US')} | ${(bytes / CHUNKS / CHUNK).toFixed(2)} | ${((cpuUs * 1_000) / CHUNKS / CHUNK).toFixed(1)} |`);
}
