// The hub's spans (decision 0020) on the real in-process bus, with the real SDK exporting OTLP/JSON
// to a receiver: one deliver span per traced event, one execute per operation group, one flush,
// counts as attributes; nothing for an event without a sampled traceparent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@wirestream/config';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, createEnvelopeHeadEncoder, encodeEnvelopeTrace, shardOf } from '@wirestream/wire';
import { createLogger, createMemorySink, startTracing, tracingSpec, type Tracing } from '@wirestream/telemetry';
import { startOtlpReceiver, waitFor, type OtlpReceiver } from '@wirestream/testkit';
import { createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter, type FlowLimits } from '../src/index.js';

const schema = loadWirestreamSchema(auctionSchemaPath);
const TOPIC = 'listing-events';
const SHARDS = 16;
const compiler = createOperationCompiler(schema);
const encodeHead = createEnvelopeHeadEncoder(TOPIC);

function op(query: string): CompiledSubscription {
  const result = compiler.compile({ query });
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`does not compile: ${JSON.stringify(result)}`);
  return result.operation;
}

interface Conn {
  frames: number;
}
const writer: ConnectionWriter<Conn> = {
  send: () => undefined,
  sendFrames: (c, _head, payloads) => void (c.frames += payloads.length),
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

interface Span {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

let receiver: OtlpReceiver;
let tracing: Tracing;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const config = loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  tracing = (await startTracing(config, { defaultServiceName: 'hub-test', contextManager: 'synchronous' })) as Tracing;
});
afterAll(async () => {
  await tracing.shutdown();
  await receiver.stop();
});

async function spansOf(traceId: string): Promise<Span[]> {
  await tracing.forceFlush();
  return receiver.requests.flatMap((r) => {
    const body = JSON.parse(r.body.toString('utf8')) as { resourceSpans: { scopeSpans: { spans: { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[] }[] }[] }[] };
    return body.resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) =>
        ss.spans
          .filter((s) => s.traceId === traceId)
          .map((s) => ({ name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? Number(a.value.intValue)])) })),
      ),
    );
  });
}

function setup(flow?: FlowLimits) {
  const bus = createMemoryBus();
  const hub = createHub<Conn>({ schema, broker: bus.broker, logger: createLogger({ name: 'hub-test', destination: createMemorySink() }), writer, tracer: tracing.tracer, ...(flow === undefined ? {} : { flow }) });
  const publish = (offset: number, trace?: string): void => {
    const text = encodeHead(0, String(offset), 'lst-a', Date.now(), trace) + JSON.stringify({ listing_id: 'lst-a', event_type: `e${offset}` }) + '}';
    bus.publish(channelName('ws', TOPIC, shardOf('lst-a', SHARDS)), text);
  };
  return { hub, publish };
}

const hex = (n: number, length: number): string => n.toString(16).padStart(length, '0');

describe('hub tracing', () => {
  it('a traced event: deliver (child of the envelope context) → execute per group and one flush, with the delivery counts', async () => {
    const { hub, publish } = setup();
    const conns = [{ frames: 0 }, { frames: 0 }, { frames: 0 }, { frames: 0 }];
    const all = op('subscription { listingUpdated { listing_id event_type } }');
    const mine = op('subscription { listingUpdated(listing_id: "lst-a") { listing_id } }');
    conns.slice(0, 3).forEach((c, i) => hub.subscribe(c, String(i), all));
    hub.subscribe(conns[3] as Conn, '9', mine);
    await waitFor(() => hub.stats().confirmedChannels === SHARDS, { timeoutMs: 2_000, intervalMs: 1 });
    const traceId = hex(0xabc, 32);
    const parent = hex(0x123, 16);
    publish(0, encodeEnvelopeTrace(`00-${traceId}-${parent}-01`));
    publish(1); // untraced
    publish(2, encodeEnvelopeTrace(`00-${hex(0xdef, 32)}-${parent}-00`)); // traced but not sampled
    await waitFor(() => conns.every((c) => c.frames === 3), { timeoutMs: 2_000, intervalMs: 1, message: 'all three events to all four' });
    const spans = await spansOf(traceId);
    const deliver = spans.find((s) => s.name === `deliver ${TOPIC}`);
    expect(deliver).toMatchObject({ parentSpanId: parent, attributes: { 'messaging.destination.name': TOPIC, 'messaging.kafka.offset': 0, 'wirestream.groups': 2, 'wirestream.executions': 2, 'wirestream.deliveries': 4 } });
    const executes = spans.filter((s) => s.name === 'execute listingUpdated');
    expect(executes.map((s) => [s.parentSpanId, s.attributes['wirestream.subscribers']]).sort()).toEqual([[deliver?.spanId, 1], [deliver?.spanId, 3]]);
    expect(spans.filter((s) => s.name === 'flush')).toEqual([expect.objectContaining({ parentSpanId: deliver?.spanId, attributes: { 'wirestream.deliveries': 4, 'wirestream.groups': 2 } })]);
    expect(spans).toHaveLength(4);
    expect(await spansOf(hex(0xdef, 32))).toEqual([]);
  });

  it('a fan-out split across slices ends its trip once, after its last group was written', async () => {
    const { hub, publish } = setup({ sliceMs: 0, flushDelayMs: 0, maxInboundBytes: 1 << 24 });
    const conns = Array.from({ length: 40 }, () => ({ frames: 0 }));
    conns.forEach((c, i) => hub.subscribe(c, '1', op(`subscription { listingUpdated { listing_id a${i}: event_type } }`)));
    await waitFor(() => hub.stats().confirmedChannels === SHARDS, { timeoutMs: 2_000, intervalMs: 1 });
    const traceId = hex(0x5117, 32);
    publish(0, encodeEnvelopeTrace(`00-${traceId}-${hex(1, 16)}-01`));
    await waitFor(() => conns.every((c) => c.frames === 1), { timeoutMs: 2_000, intervalMs: 1 });
    await waitFor(async () => (await spansOf(traceId)).some((s) => s.name === `deliver ${TOPIC}`), { timeoutMs: 5_000, message: 'the deliver span exported' });
    const spans = await spansOf(traceId);
    expect(spans.filter((s) => s.name === `deliver ${TOPIC}`)).toEqual([expect.objectContaining({ attributes: expect.objectContaining({ 'wirestream.groups': 40, 'wirestream.executions': 40 }) as unknown })]);
    expect(spans.filter((s) => s.name === 'execute listingUpdated')).toHaveLength(40);
    // Every group's write is counted, whichever flush took it.
    expect(spans.find((s) => s.name === `deliver ${TOPIC}`)?.attributes['wirestream.deliveries']).toBe(40);
  });
});
