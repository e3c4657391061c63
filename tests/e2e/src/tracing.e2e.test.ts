// OpenTelemetry end to end (decision 0020): a record produced with a W3C traceparent, through the
// built ingest and gateway processes, each exporting with the real SDK and OTLP/HTTP exporter to a
// receiver in this test; the spans must form one trace: producer → ingest → gateway.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { startOtlpReceiver, startStack, uniqueName, waitFor, type OtlpReceiver, type Stack } from '@wirestream/testkit';

/** One span as OTLP/JSON carries it (ids in hex), with the service that exported it. */
interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly links: readonly { traceId: string; spanId: string }[];
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[]; links?: { traceId: string; spanId: string }[] }[] }[];
  }[];
}

function attributes(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
  return out;
}

/** The spans of every OTLP/JSON export the receiver got so far. */
function receivedSpans(receiver: OtlpReceiver): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const request of receiver.requests) {
    if (request.path !== '/v1/traces') continue;
    const body = JSON.parse(request.body.toString('utf8')) as OtlpExport;
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attributes(rs.resource?.attributes)['service.name']);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributes(s.attributes), links: s.links ?? [] });
        }
      }
    }
  }
  return spans;
}

let stack: Stack;
let receiver: OtlpReceiver;
let topic: string;
let wsUrl: string;
let httpBase: string;
const clients: Client[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  topic = uniqueName('traced-events');
  // The real exporter, JSON encoding so the receiver can read it; ratio 0: only what a producer sampled is traced.
  const otel = {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  stack = await startStack({
    name: 'tracing',
    schema: `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${topic}", key: "id") }\n`,
    topics: [{ topic, numPartitions: 1 }],
    ingestEnv: otel,
    gatewayEnv: otel,
  });
  httpBase = stack.gateway.httpUrl;
  wsUrl = stack.gateway.wsUrl;
  stack.onStop(async () => {
    for (const client of clients) await client.dispose();
  });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

function subscribe(): { ns: number[] } {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  clients.push(client);
  const ns: number[] = [];
  client.subscribe<{ changed: { n: number } }>({ query: 'subscription { changed { id n } }' }, { next: (r) => void ns.push(r.data?.changed.n ?? -1), error: () => {}, complete: () => {} });
  return { ns };
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

describe('tracing, end to end', () => {
  it('one event produced with a traceparent is one trace: producer span → ingest → gateway deliver → execute and flush', async () => {
    const a = subscribe();
    const b = subscribe();
    await waitFor(async () => ((await (await fetch(`${httpBase}/stats`)).json()) as Record<string, number>)['subscriptions'] === 2, { message: 'two subscribers' });
    const traceId = hex(16);
    const producerSpanId = hex(8);
    await stack.send(topic, [
      { key: 'k0', value: JSON.stringify({ id: 'k0', n: 0 }) }, // untraced: ratio 0, so no span and no trace bytes
      { key: 'k1', value: JSON.stringify({ id: 'k1', n: 1 }), headers: { traceparent: `00-${traceId}-${producerSpanId}-01`, tracestate: 'vendor=opaque' } },
    ]);
    await waitFor(() => a.ns.length === 2 && b.ns.length === 2, { timeoutMs: 60_000, message: 'both events delivered to both clients' });
    const inTrace = (): ReceivedSpan[] => receivedSpans(receiver).filter((s) => s.traceId === traceId);
    await waitFor(() => inTrace().some((s) => s.name === 'flush'), { timeoutMs: 30_000, message: 'the gateway flush span exported' });
    await waitFor(() => inTrace().some((s) => s.name === `process ${topic}`), { timeoutMs: 30_000, message: 'the ingest chunk span exported' });

    const spans = inTrace();
    const one = (service: string, name: string): ReceivedSpan => {
      const found = spans.filter((s) => s.service === service && s.name === name);
      expect(found, `${service} ${name} in ${JSON.stringify(spans.map((s) => `${s.service} ${s.name}`))}`).toHaveLength(1);
      return found[0] as ReceivedSpan;
    };
    // Ingest: the record's span is the producer span's child, with the messaging conventions.
    const record = one('wirestream-ingest', `ingest ${topic}`);
    expect(record.parentSpanId).toBe(producerSpanId);
    expect(record.kind).toBe(5); // CONSUMER in OTLP's enum (SPAN_KIND_CONSUMER)
    expect(record.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.destination.name': topic, 'messaging.destination.partition.id': '0', 'messaging.operation.type': 'process', 'messaging.kafka.offset': 1 });
    // The chunk: recorded in the sampled record's trace, linked to it, with convert and publish below it.
    const chunk = one('wirestream-ingest', `process ${topic}`);
    expect(chunk.parentSpanId).toBe(producerSpanId);
    expect(chunk.attributes['messaging.batch.message_count']).toBe(2);
    expect(chunk.links).toEqual([expect.objectContaining({ traceId, spanId: producerSpanId })]);
    expect(record.links).toEqual([expect.objectContaining({ traceId, spanId: chunk.spanId })]);
    expect(one('wirestream-ingest', 'convert').parentSpanId).toBe(chunk.spanId);
    expect(one('wirestream-ingest', 'publish').parentSpanId).toBe(chunk.spanId);
    // Gateway: deliver is the ingest record span's child (the envelope carried it), one execution for the group of two, one flush.
    const deliver = one('wirestream-gateway', `deliver ${topic}`);
    expect(deliver.parentSpanId).toBe(record.spanId);
    expect(deliver.attributes).toMatchObject({ 'messaging.destination.name': topic, 'messaging.kafka.offset': 1, 'wirestream.groups': 1, 'wirestream.executions': 1, 'wirestream.deliveries': 2 });
    const execute = one('wirestream-gateway', 'execute changed');
    expect(execute.parentSpanId).toBe(deliver.spanId);
    expect(execute.attributes['wirestream.subscribers']).toBe(2);
    const flush = one('wirestream-gateway', 'flush');
    expect(flush.parentSpanId).toBe(deliver.spanId);
    expect(flush.attributes).toMatchObject({ 'wirestream.deliveries': 2, 'wirestream.groups': 1 });
    // Never a span per socket, and the untraced event made none at all.
    expect(receivedSpans(receiver).filter((s) => s.service === 'wirestream-gateway')).toHaveLength(3);
    expect(receivedSpans(receiver).filter((s) => s.traceId !== traceId)).toEqual([]);
    expect(receiver.requests.every((r) => r.contentType.startsWith('application/json'))).toBe(true);
  });

  it("a log line written while a chunk's span is active carries its trace_id and span_id", async () => {
    const traceId = hex(16);
    await stack.send(topic, [{ key: 'bad', value: 'not json', headers: { traceparent: `00-${traceId}-${hex(8)}-01` } }]);
    const line = await stack.ingest.waitForLog((l) => l['msg'] === 'message dead-lettered' && l['trace_id'] === traceId, 'a dead-letter log line with the trace id');
    await waitFor(() => receivedSpans(receiver).some((s) => s.traceId === traceId && s.name === `process ${topic}`), { timeoutMs: 30_000, message: 'its chunk span exported' });
    const chunk = receivedSpans(receiver).find((s) => s.traceId === traceId && s.name === `process ${topic}`) as ReceivedSpan;
    expect(line['span_id']).toBe(chunk.spanId);
  });
});
