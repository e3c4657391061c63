// CPU per event of ingest's conversion, JSON against Avro, Protobuf and JSON Schema, on the same demo
// events in one run: each event as the demo producer writes it (camelCase JSON) through the app's
// JSON converter, and as Confluent's AvroSerializer, ProtobufSerializer and JsonSerializer write it
// (the wire format; an Avro schema inferred from the events, and a .proto and a JSON Schema derived
// from it, all registered in Confluent's MockClient) through the app's wire-format converter. All
// build the same envelope bytes; the run checks that every envelope's payload equals the JSON one's,
// then times interleaved rounds (process.cpuUsage, one thread: no Kafka, no Redis). For decision
// 0018 it also times Confluent's own ProtobufDeserializer and JsonDeserializer (decode only, to
// objects) and protobufjs's decode alone (the object step of our Protobuf path, without JSON).
//
//   npx turbo run build --filter=@wirestream/bench-ingest...
//   flock /tmp/wirestream-bench.lock node bench/ingest/dist/formats.js [--events 20000] [--rounds 7]
import { AvroSerializer, JsonDeserializer, JsonSerializer, MockClient, ProtobufDeserializer, SerdeType } from '@confluentinc/schemaregistry';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { createEventConverter, createWireConverter, type EventConverter } from '@wirestream/ingest';
import protobuf from 'protobufjs';
import { createRegistrySource, createSchemaDecoders } from '@wirestream/registry';
import { createEnvelopeHeadEncoder } from '@wirestream/wire';
import { confluentProtobufSerializer } from '@wirestream/testkit';
import { median, parseCli } from '@wirestream/bench-kit';
import { inferSchema, jsonSchemaOf, protoOf, withoutNulls } from './formats-schemas.js';
import { toSnakeCase } from '@wirestream/transform';

const { values: args } = parseCli({ options: { events: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } });
const EVENTS = Number(args.events);
const ROUNDS = Number(args.rounds);

interface Encoded {
  readonly topic: DemoEvent['topic'];
  readonly keyField: string;
  readonly head: string;
  readonly json: Buffer;
  readonly avro: Buffer;
  readonly protobuf: Buffer;
  readonly jsonSchema: Buffer;
}

async function encodeAll(): Promise<{ events: Encoded[]; protos: Record<string, string>; client: MockClient }> {
  const generator = createAuctionEventGenerator({ seed: 42, listings: 5_000 });
  const demo = Array.from({ length: EVENTS }, () => generator.next());
  const client = new MockClient();
  const protos: Record<string, string> = {};
  const writers = new Map<string, { avro: AvroSerializer; protobuf: (value: unknown) => Promise<Buffer>; json: JsonSerializer }>();
  for (const topic of ['listing-events', 'bid-events'] as const) {
    const values = demo.filter((e) => e.topic === topic).map((e) => e.value);
    const name = topic === 'listing-events' ? 'ListingEvent' : 'BidEvent';
    const type = inferSchema(name, values);
    await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(type.schema()) });
    // The same shape as a .proto (registered by Confluent's serializer itself, under <topic>-proto-value) and as a JSON Schema.
    const proto = protoOf(type);
    protos[topic] = proto;
    const protobuf = confluentProtobufSerializer(client, proto, { fileName: `${topic}.proto` });
    await client.register(`${topic}-json-value`, { schemaType: 'JSON', schema: JSON.stringify(jsonSchemaOf(type)) });
    writers.set(topic, {
      avro: new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true }),
      protobuf: (value) => protobuf.serialize(`${topic}-proto`, `demo.${name}`, withoutNulls(value) as Record<string, unknown>),
      json: new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true }),
    });
  }
  const heads = { 'listing-events': createEnvelopeHeadEncoder('listing-events'), 'bid-events': createEnvelopeHeadEncoder('bid-events') };
  const events: Encoded[] = [];
  for (const [i, event] of demo.entries()) {
    const w = writers.get(event.topic) as NonNullable<ReturnType<typeof writers.get>>;
    events.push({
      topic: event.topic,
      keyField: 'listing_id',
      head: heads[event.topic](i % 6, String(i), event.key, 1_700_000_000_000 + i),
      json: Buffer.from(JSON.stringify(event.value)),
      avro: await w.avro.serialize(event.topic, event.value),
      protobuf: await w.protobuf(event.value),
      jsonSchema: await w.json.serialize(`${event.topic}-json`, event.value),
    });
  }
  return { events, protos, client };
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

/** CPU µs per event of one awaited call per event (Confluent's deserializers are async). */
async function passAsync(events: readonly Encoded[], decode: (e: Encoded) => Promise<unknown>): Promise<number> {
  const started = cpuMicros();
  for (const e of events) if ((await decode(e)) === null) throw new Error('nothing decoded');
  return (cpuMicros() - started) / events.length;
}

const { events, protos, client } = await encodeAll();
const jsonConvert = createEventConverter();
const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: toSnakeCase });
const converter = (format: 'AVRO' | 'PROTOBUF' | 'JSON_SCHEMA') => ({
  'listing-events': createWireConverter({ decoders, topic: 'listing-events', format, convertJson: jsonConvert }),
  'bid-events': createWireConverter({ decoders, topic: 'bid-events', format, convertJson: jsonConvert }),
});
const paths = {
  JSON: (e: Encoded) => jsonConvert(e.json, e.head, e.keyField),
  AVRO: ((c) => (e: Encoded) => c[e.topic](e.avro, e.head, e.keyField))(converter('AVRO')),
  PROTOBUF: ((c) => (e: Encoded) => c[e.topic](e.protobuf, e.head, e.keyField))(converter('PROTOBUF')),
  JSON_SCHEMA: ((c) => (e: Encoded) => c[e.topic](e.jsonSchema, e.head, e.keyField))(converter('JSON_SCHEMA')),
};
await decoders.load(events.flatMap((e) => [e.avro.readUInt32BE(1), e.protobuf.readUInt32BE(1), e.jsonSchema.readUInt32BE(1)]));

// The same envelope every way: a check that each wire path maps the demo events as the JSON path does.
const mismatches = { AVRO: 0, PROTOBUF: 0, JSON_SCHEMA: 0 };
for (const e of events) {
  const a = paths.JSON(e);
  if (!a.ok) throw new Error(`a demo event did not convert as JSON: ${JSON.stringify(a)}`);
  for (const format of ['AVRO', 'PROTOBUF', 'JSON_SCHEMA'] as const) {
    const b = paths[format](e);
    if (!b.ok) throw new Error(`a demo event did not convert as ${format}: ${JSON.stringify(b)}`);
    if (JSON.stringify(JSON.parse(a.bytes.toString())) !== JSON.stringify(JSON.parse(b.bytes.toString())) || a.routeValue !== b.routeValue) {
      if (mismatches[format]++ === 0 && process.env['BENCH_SHOW_MISMATCH'] === '1') console.log(format, a.bytes.toString(), '\n', b.bytes.toString());
    }
  }
}

// For decision 0018: the object step of our Protobuf path alone, and Confluent's own deserializers.
const protobufjsType = (topic: 'listing-events' | 'bid-events', name: string): protobuf.Type => {
  const root = new protobuf.Root();
  protobuf.parse(protos[topic] as string, root, { keepCase: true });
  return root.lookupType(`demo.${name}`);
};
const protobufjsTypes = { 'listing-events': protobufjsType('listing-events', 'ListingEvent'), 'bid-events': protobufjsType('bid-events', 'BidEvent') };
const confluentProtobuf = new ProtobufDeserializer(client, SerdeType.VALUE, {});
const confluentJson = new JsonDeserializer(client, SerdeType.VALUE, { validate: true });

const runs: Record<keyof typeof paths, number[]> = { JSON: [], AVRO: [], PROTOBUF: [], JSON_SCHEMA: [] };
const formats = Object.keys(paths) as (keyof typeof paths)[];
for (const format of formats) pass(events, paths[format]); // warm-up, each
for (let round = 0; round < ROUNDS; round++) for (const format of formats) runs[format].push(pass(events, paths[format]));
const reference: Record<string, number[]> = { 'protobufjs decode only': [], 'Confluent ProtobufDeserializer': [], 'Confluent JsonDeserializer (validate)': [] };
const referenceRounds = Math.max(1, Math.min(3, ROUNDS));
/** protobufjs's decode alone, to its message objects: the part of our Protobuf path a bytes-straight-to-JSON writer could not drop. */
function passProtobufjsOnly(): number {
  const started = cpuMicros();
  let fields = 0;
  for (const e of events) fields += Object.keys(protobufjsTypes[e.topic].decode(e.protobuf.subarray(6))).length; // [0] is one byte, 0
  if (fields === 0) throw new Error('nothing decoded');
  return (cpuMicros() - started) / events.length;
}
passProtobufjsOnly();
await passAsync(events, (e) => confluentProtobuf.deserialize(`${e.topic}-proto`, e.protobuf)); // warm-up (and its caches)
await passAsync(events, (e) => confluentJson.deserialize(`${e.topic}-json`, e.jsonSchema));
for (let round = 0; round < referenceRounds; round++) {
  (reference['protobufjs decode only'] as number[]).push(passProtobufjsOnly());
  (reference['Confluent ProtobufDeserializer'] as number[]).push(await passAsync(events, (e) => confluentProtobuf.deserialize(`${e.topic}-proto`, e.protobuf)));
  (reference['Confluent JsonDeserializer (validate)'] as number[]).push(await passAsync(events, (e) => confluentJson.deserialize(`${e.topic}-json`, e.jsonSchema)));
}

const meanBytes = (pick: (e: Encoded) => Buffer) => events.reduce((n, e) => n + pick(e).length, 0) / events.length;
const json = median(runs.JSON);
const labels: Record<keyof typeof paths, [string, (e: Encoded) => Buffer]> = {
  JSON: ['JSON (byte-level snake_case rewrite, the baseline)', (e) => e.json],
  AVRO: ['Avro (wire format → JSON bytes in one pass)', (e) => e.avro],
  PROTOBUF: ['Protobuf (wire format → protobufjs message → JSON text)', (e) => e.protobuf],
  JSON_SCHEMA: ['JSON Schema (wire format, ajv validation, then the JSON path)', (e) => e.jsonSchema],
};
console.log(`${EVENTS} demo events (${events.filter((e) => e.topic === 'listing-events').length} listing, ${events.filter((e) => e.topic === 'bid-events').length} bid), ${ROUNDS} interleaved rounds, Node ${process.version}`);
console.log(`payloads equal to the JSON path's: Avro ${events.length - mismatches.AVRO}, Protobuf ${events.length - mismatches.PROTOBUF}, JSON Schema ${events.length - mismatches.JSON_SCHEMA} of ${events.length}`);
console.log('');
console.log('| path | mean value bytes | CPU µs/event median | min | max | × JSON |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const format of formats) {
  const [label, pick] = labels[format];
  const r = runs[format];
  console.log(`| ${label} | ${meanBytes(pick).toFixed(0)} | ${median(r).toFixed(2)} | ${Math.min(...r).toFixed(2)} | ${Math.max(...r).toFixed(2)} | ${(median(r) / json).toFixed(2)} |`);
}
console.log('');
console.log(`Reference, decode only (no envelope), ${referenceRounds} rounds after the ones above:`);
console.log('');
console.log('| decoder | CPU µs/event median | × JSON path |');
console.log('| --- | ---: | ---: |');
for (const [name, r] of Object.entries(reference)) if (r.length > 0) console.log(`| ${name} | ${median(r).toFixed(2)} | ${(median(r) / json).toFixed(2)} |`);
if (mismatches.AVRO + mismatches.PROTOBUF + mismatches.JSON_SCHEMA > 0) process.exitCode = 1;
