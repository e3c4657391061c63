// The chunk tracer's decisions (decision 0020) with the real SDK, exporting to an OTLP/HTTP
// receiver: which records' envelopes carry a trace, and which spans a chunk makes.
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@wirestream/config';
import { startTracing, tracingSpec, type Tracing } from '@wirestream/telemetry';
import { startOtlpReceiver, type OtlpReceiver } from '@wirestream/testkit';
import { createChunkTracer } from './chunk-tracing.js';

const PRODUCER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331';

function record(offset: number, headers: IHeaders = {}): KafkaMessage {
  return { key: null, value: Buffer.from('{}'), timestamp: '1', attributes: 0, offset: String(offset), headers };
}

let receiver: OtlpReceiver;
const started: Tracing[] = [];
async function tracer(ratio: string) {
  const tracing = await startTracing(loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio }), { defaultServiceName: 'test' });
  if (tracing === undefined) throw new Error('tracing did not start');
  started.push(tracing);
  return createChunkTracer(tracing.tracer, 'group-1');
}

/** Span names and parents exported so far. */
async function exported(tracing: Tracing): Promise<{ name: string; traceId: string; spanId: string; parentSpanId: string }[]> {
  await tracing.forceFlush();
  return receiver.requests.flatMap((r) => {
    const body = JSON.parse(r.body.toString('utf8')) as { resourceSpans: { scopeSpans: { spans: { name: string; traceId: string; spanId: string; parentSpanId?: string }[] }[] }[] };
    return body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '' }))));
  });
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  for (const t of started) await t.shutdown();
  await receiver.stop();
});

describe('chunk tracing', () => {
  it('nothing sampled and no record with a traceparent: no trace at all, no envelope bytes', async () => {
    const chunkTracer = await tracer('0');
    expect(chunkTracer.start('t', 0, [record(1), record(2)], 0, 2)).toBeUndefined();
  });

  it("an unsampled producer context is passed on unchanged (the gateway follows it: no spans), the others carry nothing", async () => {
    const trace = (await tracer('0')).start('t', 0, [record(1), record(2, { traceparent: Buffer.from(`${PRODUCER}-00`), tracestate: 'v=1' })], 0, 2);
    expect(trace?.context).toBeUndefined();
    expect(trace?.envelopeTraces).toEqual([undefined, `,"tp":"${PRODUCER}-00","tr":"v=1"`]);
    trace?.end(true);
  });

  it('a root chunk sampled by ratio: every record without a context of its own continues the chunk span', async () => {
    const chunkTracer = await tracer('1');
    const trace = chunkTracer.start('t', 3, [record(10), record(11), record(12)], 0, 3);
    expect(trace?.context).toBeDefined();
    const traces = trace?.envelopeTraces ?? [];
    expect(new Set(traces).size).toBe(1);
    const tp = /"tp":"00-([0-9a-f]{32})-([0-9a-f]{16})-01"/.exec(traces[0] ?? '');
    expect(tp).not.toBeNull();
    trace?.converted();
    trace?.end(true);
    const spans = (await exported(started[started.length - 1] as Tracing)).filter((s) => s.traceId === tp?.[1]);
    const chunk = spans.find((s) => s.name === 'process t');
    expect(chunk?.spanId).toBe(tp?.[2]);
    expect(chunk?.parentSpanId).toBe('');
    expect(spans.filter((s) => s.parentSpanId === chunk?.spanId).map((s) => s.name).sort()).toEqual(['convert', 'publish']);
  });

  it('a sampled producer context: its record gets a child span whose context its envelope carries; a bad header is ignored', async () => {
    const chunkTracer = await tracer('0');
    const trace = chunkTracer.start('t', 0, [record(1, { traceparent: 'garbage' }), record(2, { traceparent: `${PRODUCER}-01` })], 0, 2);
    expect(trace?.envelopeTraces?.[0]).toBeUndefined();
    const tp = /"tp":"00-([0-9a-f]{32})-([0-9a-f]{16})-01"/.exec(trace?.envelopeTraces?.[1] ?? '');
    expect(tp?.[1]).toBe('0af7651916cd43dd8448eb211c80319c');
    trace?.converted();
    trace?.end(false, new Error('Redis down'));
    const spans = (await exported(started[started.length - 1] as Tracing)).filter((s) => s.traceId === tp?.[1]);
    expect(spans.find((s) => s.spanId === tp?.[2])).toMatchObject({ name: 'ingest t', parentSpanId: 'b7ad6b7169203331' });
    expect(spans.find((s) => s.name === 'process t')?.parentSpanId).toBe('b7ad6b7169203331');
  });
});
