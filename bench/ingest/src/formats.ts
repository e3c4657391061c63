// CPU per event of ingest's conversion, JSON against Avro, on the same demo events in one run:
// each event as the demo producer writes it (camelCase JSON) through the app's JSON converter, and
// as an Avro producer writes it (Confluent's AvroSerializer, the wire format, a schema inferred from
// the events and registered in Confluent's MockClient) through the app's wire-format converter.
// Both build the same envelope bytes; the run checks that every Avro envelope's payload equals the
// JSON one's, then times interleaved rounds (process.cpuUsage, one thread: no Kafka, no Redis).
//
//   npx turbo run build --filter=@wirestream/bench-ingest...
//   flock /tmp/wirestream-bench.lock node bench/ingest/dist/formats.js [--events 20000] [--rounds 7]
import { parseArgs } from 'node:util';
import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import avsc from 'avsc';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { createEventConverter, createWireConverter, type EventConverter } from '@wirestream/ingest';
import { createRegistrySource, createSchemaDecoders } from '@wirestream/registry';
import { createEnvelopeHeadEncoder } from '@wirestream/schema';
import { toSnakeCase } from '@wirestream/transform';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } });
const EVENTS = Number(args.events);
const ROUNDS = Number(args.rounds);

interface Encoded {
  readonly topic: DemoEvent['topic'];
  readonly keyField: string;
  readonly head: string;
  readonly json: Buffer;
  readonly avro: Buffer;
}

/**
 * An Avro schema that every value of `values` fits: avsc infers one per value, then merges them;
 * fractions as `double` (avsc infers `float` where a value fits one, which no JSON producer means).
 */
function inferSchema(name: string, values: readonly unknown[]): avsc.Type {
  const types = values.map((value) => avsc.Type.forValue(value as object));
  const merged = avsc.Type.forTypes(types, { wrapUnions: false });
  const schema = JSON.parse(JSON.stringify({ ...(merged.schema() as object), name }).replaceAll('"float"', '"double"')) as avsc.Schema;
  return avsc.Type.forSchema(schema);
}

async function encodeAll(): Promise<{ events: Encoded[]; schemas: Record<string, string>; client: MockClient }> {
  const generator = createAuctionEventGenerator({ seed: 42, listings: 5_000 });
  const demo = Array.from({ length: EVENTS }, () => generator.next());
  const client = new MockClient();
  const schemas: Record<string, string> = {};
  const serializers = new Map<string, AvroSerializer>();
  for (const topic of ['listing-events', 'bid-events'] as const) {
    const values = demo.filter((e) => e.topic === topic).map((e) => e.value);
    const type = inferSchema(topic === 'listing-events' ? 'ListingEvent' : 'BidEvent', values);
    schemas[topic] = JSON.stringify(type.schema());
    await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: schemas[topic] });
    serializers.set(topic, new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true }));
  }
  const heads = { 'listing-events': createEnvelopeHeadEncoder('listing-events'), 'bid-events': createEnvelopeHeadEncoder('bid-events') };
  const events: Encoded[] = [];
  for (const [i, event] of demo.entries()) {
    const avro = await (serializers.get(event.topic) as AvroSerializer).serialize(event.topic, event.value);
    events.push({ topic: event.topic, keyField: 'listing_id', head: heads[event.topic](i % 6, String(i), event.key, 1_700_000_000_000 + i), json: Buffer.from(JSON.stringify(event.value)), avro });
  }
  return { events, schemas, client };
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU µs per event of one pass over every event. */
function pass(events: readonly Encoded[], convert: (e: Encoded) => ReturnType<EventConverter>): number {
  const started = cpuMicros();
  let bytes = 0;
  // Deliberately imperative: the loop is what is measured.
  for (let i = 0; i < events.length; i++) {
    const result = convert(events[i] as Encoded);
    if (result.ok) bytes += result.bytes.length;
  }
  if (bytes === 0) throw new Error('nothing converted');
  return (cpuMicros() - started) / events.length;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const { events, client } = await encodeAll();
const jsonConvert = createEventConverter();
const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: toSnakeCase });
const converters = {
  'listing-events': createWireConverter({ decoders, topic: 'listing-events' }),
  'bid-events': createWireConverter({ decoders, topic: 'bid-events' }),
};
await decoders.load(events.map((e) => e.avro.readUInt32BE(1)));

// The same envelope, both ways: a check that the Avro path maps the demo events as the JSON path does.
let mismatches = 0;
for (const e of events) {
  const a = jsonConvert(e.json, e.head, e.keyField);
  const b = converters[e.topic](e.avro, e.head, e.keyField);
  if (!a.ok || !b.ok) throw new Error(`a demo event did not convert: ${JSON.stringify(a.ok ? b : a)}`);
  if (JSON.stringify(JSON.parse(a.bytes.toString())) !== JSON.stringify(JSON.parse(b.bytes.toString())) || a.routeValue !== b.routeValue) {
    if (mismatches++ === 0 && process.env['BENCH_SHOW_MISMATCH'] === '1') console.log(a.bytes.toString(), '\n', b.bytes.toString());
  }
}

const jsonRuns: number[] = [];
const avroRuns: number[] = [];
pass(events, (e) => jsonConvert(e.json, e.head, e.keyField)); // warm-up, both
pass(events, (e) => converters[e.topic](e.avro, e.head, e.keyField));
for (let round = 0; round < ROUNDS; round++) {
  jsonRuns.push(pass(events, (e) => jsonConvert(e.json, e.head, e.keyField)));
  avroRuns.push(pass(events, (e) => converters[e.topic](e.avro, e.head, e.keyField)));
}
const meanBytes = (pick: (e: Encoded) => Buffer) => events.reduce((n, e) => n + pick(e).length, 0) / events.length;
const json = median(jsonRuns);
const avro = median(avroRuns);
console.log(`${EVENTS} demo events (${events.filter((e) => e.topic === 'listing-events').length} listing, ${events.filter((e) => e.topic === 'bid-events').length} bid), ${ROUNDS} interleaved rounds, Node ${process.version}`);
console.log(`payloads equal both ways: ${events.length - mismatches} of ${events.length}`);
console.log('');
console.log('| path | mean value bytes | CPU µs/event median | min | max | × JSON |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
console.log(`| JSON (byte-level snake_case rewrite, the baseline) | ${meanBytes((e) => e.json).toFixed(0)} | ${json.toFixed(2)} | ${Math.min(...jsonRuns).toFixed(2)} | ${Math.max(...jsonRuns).toFixed(2)} | 1.00 |`);
console.log(`| Avro (wire format → JSON bytes in one pass) | ${meanBytes((e) => e.avro).toFixed(0)} | ${avro.toFixed(2)} | ${Math.min(...avroRuns).toFixed(2)} | ${Math.max(...avroRuns).toFixed(2)} | ${(avro / json).toFixed(2)} |`);
if (mismatches > 0) process.exitCode = 1;
