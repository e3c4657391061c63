import { AvroSerializer, JsonSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { confluentProtobufSerializer } from '@wirestream/testkit';
import { createWirestreamSchema } from '@wirestream/schema';
import { createKeyTransformer, keyConverter } from '@wirestream/transform';
import { execute, getNamedType, parse, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { selectAll } from '../test/support/cli.js';
import { checkSdlAgainstSchemas, createRegistrySource, createRegistrySubjects, createSchemaDecoders, readSubjectHistory, readWireHeader, sdlFromShape, type SdlFormat } from './index.js';

// The rule of decision 0035: the SDL the generator writes accepts every value the mapping publishes, for
// every version of the subject. Every row of docs/schema.md's mapping tables (Avro, Protobuf) is a field
// here, its extremes are values; bytes are written by Confluent's own serializers into its MockClient,
// decoded by ingest's decoders, and rendered by graphql-js (the scalars' own serialize, as the gateway
// renders leaves) through the SDL written from every version of the subject: no error, every value as
// published.

/** `{ event: payload }` as a full selection renders it: keys the payload lacks (another version's fields) render null. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
}

/** Generates the SDL from every version of `subject`, checks it, then renders each message through it. */
async function renderEvery(client: MockClient, topic: string, format: SdlFormat, messages: readonly Buffer[]): Promise<{ sdl: string; payloads: unknown[] }> {
  const subject = `${topic}-value`;
  const subjects = createRegistrySubjects(client, 'Schema Registry (MockClient)');
  const versions = await subjects.versions(subject);
  if (versions === null) throw new Error(`no subject ${subject}`);
  const top = await readSubjectHistory(versions, subjects, { fallbackName: topic });
  const sdl = sdlFromShape(top.shape, format, { topic, field: 'event', keyStyle: 'snake', subject });
  const wirestream = createWirestreamSchema(sdl);
  const check = await checkSdlAgainstSchemas(wirestream, subjects, { keyStyle: 'snake' });
  expect(check.errors).toEqual([]);
  expect(check.warnings).toEqual([]);
  const payloadType = getNamedType(wirestream.schema.getSubscriptionType()?.getFields()['event']?.type) as GraphQLObjectType;
  const document = parse(`subscription { event ${selectAll(payloadType)} }`);
  const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: keyConverter('snake') });
  const keys = createKeyTransformer({ keyStyle: 'snake' });
  const payloads: unknown[] = [];
  for (const bytes of messages) {
    const header = readWireHeader(bytes);
    if (!header.ok) throw new Error(header.message);
    await decoders.load([header.id]);
    const entry = decoders.entry(header.id);
    let json: string;
    if (entry?.kind === 'decoder') json = entry.decoder.decode(bytes.subarray(5), undefined).json;
    else if (entry?.kind === 'validator') {
      // JSON Schema: validated, then published through the JSON path (keys by the key rule, values as written).
      expect(entry.validator.validate(bytes.subarray(5))).toBeUndefined();
      json = JSON.stringify(keys.transform(JSON.parse(bytes.subarray(5).toString('utf8'))));
    } else throw new Error(`not a decoder: ${JSON.stringify(entry)}`);
    const payload = JSON.parse(json) as unknown;
    payloads.push(payload);
    const result = await execute({ schema: wirestream.schema, document, rootValue: { event: payload } });
    expect(result.errors, `${json}\n${sdl}`).toBeUndefined();
    expect(withoutNulls(result.data)).toEqual(withoutNulls({ event: payload }));
  }
  return { sdl, payloads };
}

/** `count` events, the i-th taking the i-th value of each field (cycling): every value of every row is written once at least. */
function eventsOf(rows: Readonly<Record<string, readonly unknown[]>>): Record<string, unknown>[] {
  const count = Math.max(...Object.values(rows).map((values) => values.length));
  return Array.from({ length: count }, (_, i) => Object.fromEntries(Object.entries(rows).map(([field, values]) => [field, values[i % values.length]])));
}

const FLOAT_MAX = 3.4028234663852886e38;

// One field per row of "JSON mapping (Avro)", with its extremes.
const AVRO_ROWS: readonly { field: unknown; values: readonly unknown[] }[] = [
  { field: { name: 'nothing', type: 'null' }, values: [null] },
  { field: { name: 'flag', type: 'boolean' }, values: [true, false] },
  { field: { name: 'text', type: 'string' }, values: ['Lamp', '', 'é 😀 "q"\n\\'] },
  { field: { name: 'count', type: 'int' }, values: [0, 2_147_483_647, -2_147_483_648] },
  { field: { name: 'ratio', type: 'double' }, values: [12.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_VALUE, Number.MIN_VALUE, -0] },
  { field: { name: 'small', type: 'float' }, values: [3.9, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, FLOAT_MAX, 1.401298464324817e-45] },
  { field: { name: 'total', type: 'long' }, values: [125, 2 ** 52, -(2 ** 52)] }, // Confluent's serializer (avsc) refuses longs from 2^53 − 1 on; avro-json.test.ts writes those
  { field: { name: 'blob', type: 'bytes' }, values: [Buffer.from([0xde, 0xad, 0xbe, 0xef]), Buffer.alloc(0)] },
  { field: { name: 'code', type: { type: 'fixed', name: 'Code', size: 2 } }, values: [Buffer.from([1, 2])] },
  { field: { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['OPEN', 'OUTBID'] } }, values: ['OPEN', 'OUTBID'] },
  { field: { name: 'tags', type: { type: 'array', items: 'string' } }, values: [[], ['a', 'b']] },
  { field: { name: 'pricesByCurrency', type: { type: 'map', values: 'double' } }, values: [{}, { EUR: 1.5, usdCents: Number.NaN }] },
  { field: { name: 'line', type: { type: 'record', name: 'Line', fields: [{ name: 'skuCode', type: 'string' }, { name: 'qty', type: 'int' }] } }, values: [{ skuCode: 's-1', qty: 2 }] },
  { field: { name: 'note', type: ['null', 'string'], default: null }, values: [null, 'first bid'] },
  { field: { name: 'choice', type: ['null', 'long', 'string'], default: null }, values: [null, 7, 'seven'] },
  { field: { name: 'placedAt', type: { type: 'long', logicalType: 'timestamp-millis' } }, values: [Date.UTC(2026, 11, 1, 19, 30, 5, 123), 0] },
  { field: { name: 'placedAtMicros', type: { type: 'long', logicalType: 'timestamp-micros' } }, values: [Date.UTC(2026, 11, 1) * 1000 + 456] },
  { field: { name: 'localAt', type: { type: 'long', logicalType: 'local-timestamp-millis' } }, values: [Date.UTC(2026, 11, 1, 8)] },
  { field: { name: 'day', type: { type: 'int', logicalType: 'date' } }, values: [20_423, -1] },
  { field: { name: 'closesAt', type: { type: 'int', logicalType: 'time-millis' } }, values: [66_600_250] },
  { field: { name: 'closesAtMicros', type: { type: 'long', logicalType: 'time-micros' } }, values: [66_600_250_001] },
  { field: { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } }, values: [Buffer.from([0xcf, 0xc7])] },
  { field: { name: 'bidId', type: { type: 'string', logicalType: 'uuid' } }, values: ['1b4e28ba-2fa1-11d2-883f-0016d3cca427'] },
  { field: { name: 'wait', type: { type: 'fixed', name: 'Wait', size: 12, logicalType: 'duration' } }, values: [Buffer.from([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])] },
];

describe('the mapping rule: the generated SDL accepts every value the mapping publishes (decision 0035)', () => {
  it('Avro: every row of the mapping table, with its extremes', async () => {
    const client = new MockClient();
    const schema = { type: 'record', name: 'Row', namespace: 'rule', fields: AVRO_ROWS.map((r) => r.field) };
    const id = await client.register('avro-rows-value', { schemaType: 'AVRO', schema: JSON.stringify(schema) });
    const serializer = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: id });
    const rows = Object.fromEntries(AVRO_ROWS.map((r) => [(r.field as { name: string }).name, r.values]));
    const messages = await Promise.all(eventsOf(rows).map((event) => serializer.serialize('avro-rows', event)));
    const { sdl, payloads } = await renderEvery(client, 'avro-rows', 'AVRO', messages);
    expect(sdl).toContain('  ratio: Double!\n  small: Double!\n');
    // A float in its shortest form (as Java's Float.toString): Float.MAX_VALUE is 3.4028235e+38, the least subnormal 1e-45.
    expect(payloads.map((p) => (p as Record<string, unknown>)['small'])).toEqual([3.9, 'NaN', 'Infinity', '-Infinity', 3.4028235e38, 1e-45, 3.9]);
  });

  it('Avro evolution over three versions, the writer id switching back and forth: fields some versions lack are nullable, numbers widen, enums gain symbols', async () => {
    const client = new MockClient();
    const base = { type: 'record', name: 'Bid', namespace: 'rule' };
    const v1 = { ...base, fields: [{ name: 'bidId', type: 'string' }, { name: 'amount', type: 'int' }, { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['OPEN'] } }, { name: 'note', type: 'string', default: '' }] };
    const v2 = { ...base, fields: [...v1.fields.slice(0, 2), { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['OPEN', 'WON'] } }, v1.fields[3], { name: 'bidder', type: { type: 'record', name: 'Bidder', fields: [{ name: 'bidderId', type: 'string' }] } }] };
    const v3 = { ...base, fields: [v1.fields[0], { name: 'amount', type: 'double' }, v2.fields[2], v2.fields[4], { name: 'rank', type: 'int', default: 0 }] };
    const ids = [];
    for (const schema of [v1, v2, v3]) ids.push(await client.register('bids-value', { schemaType: 'AVRO', schema: JSON.stringify(schema) }));
    const writers = ids.map((id) => new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: id }));
    const [w1, w2, w3] = writers as [AvroSerializer, AvroSerializer, AvroSerializer];
    const messages = [
      await w1.serialize('bids', { bidId: 'b-1', amount: 2_147_483_647, status: 'OPEN', note: 'n' }),
      await w3.serialize('bids', { bidId: 'b-2', amount: Number.NaN, status: 'WON', bidder: { bidderId: 'u-1' }, rank: 3 }),
      await w2.serialize('bids', { bidId: 'b-3', amount: -1, status: 'WON', note: '', bidder: { bidderId: 'u-2' } }),
      await w1.serialize('bids', { bidId: 'b-4', amount: 0, status: 'OPEN', note: '' }),
      await w3.serialize('bids', { bidId: 'b-5', amount: 1.5, status: 'OPEN', bidder: { bidderId: 'u-3' }, rank: 0 }),
    ];
    const { sdl } = await renderEvery(client, 'bids', 'AVRO', messages);
    expect(sdl).toContain('type Bid {\n  bid_id: String!\n  amount: Double!\n  status: Status!\n  bidder: Bidder\n  rank: Int\n  note: String\n}\n');
    expect(sdl).toContain('enum Status {\n  OPEN\n  WON\n}\n');
  });

  it('JSON Schema: every row of the SDL table, over two versions with the writer switching (a property added later is nullable)', async () => {
    const v1 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Listing',
      type: 'object',
      required: ['listingId', 'ratio', 'count', 'total', 'state', 'tags', 'price'],
      properties: {
        listingId: { type: 'string' },
        placedAt: { type: 'string', format: 'date-time' },
        flag: { type: 'boolean' },
        ratio: { type: 'number' },
        count: { type: 'integer', minimum: -2_147_483_648, maximum: 2_147_483_647 },
        total: { type: 'integer' },
        state: { enum: ['OPEN', 'CLOSED'] },
        code: { enum: [1, 2] },
        tags: { type: 'array', items: { type: 'string' } },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
        attributes: { type: 'object', additionalProperties: { type: 'string' } },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        anything: {},
        note: { type: ['string', 'null'] },
        price: { $ref: '#/definitions/Money' },
      },
      definitions: { Money: { type: 'object', required: ['cents'], properties: { cents: { type: 'integer' }, currencyCode: { type: 'string' } } } },
    };
    const v2 = { ...v1, required: [...v1.required, 'seller'], properties: { ...v1.properties, seller: { type: 'string' } } };
    const client = new MockClient();
    const id1 = await client.register('listings-value', { schemaType: 'JSON', schema: JSON.stringify(v1) });
    const id2 = await client.register('listings-value', { schemaType: 'JSON', schema: JSON.stringify(v2) });
    const w1 = new JsonSerializer(client, SerdeType.VALUE, { useSchemaId: id1 });
    const w2 = new JsonSerializer(client, SerdeType.VALUE, { useSchemaId: id2 });
    const base = { listingId: 'l-1', ratio: 0, count: 0, total: 0, state: 'OPEN', tags: [], price: { cents: 0 } };
    const messages = [
      await w1.serialize('listings', base),
      await w2.serialize('listings', {
        ...base,
        seller: 's-1',
        placedAt: '2026-12-01T19:30:05Z',
        flag: true,
        ratio: Number.MAX_VALUE,
        count: -2_147_483_648,
        total: Number.MAX_SAFE_INTEGER,
        state: 'CLOSED',
        code: 2,
        tags: ['a'],
        pair: ['x', 1.5],
        attributes: { colourName: 'red' },
        either: 'one',
        anything: [1, { a: null }],
        note: null,
        price: { cents: -1, currencyCode: 'EUR' },
      }),
      await w1.serialize('listings', { ...base, ratio: 5e-324, either: 2, anything: 'x', note: 'n' }),
    ];
    const { sdl } = await renderEvery(client, 'listings', 'JSON_SCHEMA', messages);
    expect(sdl).toContain('  ratio: Float!\n  count: Int!\n  total: Long!\n');
    expect(sdl).toContain('  seller: String\n');
  });

  it('Protobuf: every row of the mapping table, open enums, NaN and ±Infinity, over two versions with the writer switching', async () => {
    const v1 = `syntax = "proto3";
package rule;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";
enum Status { STATUS_UNSPECIFIED = 0; OPEN = 1; }
message Row {
  string text = 1; bool flag = 2;
  int32 i32 = 3; uint32 u32 = 4; sint32 s32 = 5; fixed32 f32 = 6; sfixed32 sf32 = 7;
  int64 i64 = 8; uint64 u64 = 9; sint64 s64 = 10; fixed64 f64 = 11; sfixed64 sf64 = 12;
  double ratio = 13; float small = 14; bytes blob = 15; Status status = 16;
  Inner inner = 17; repeated string tags = 18; map<string, int64> prices = 19;
  oneof payment { string card = 20; int64 wallet = 21; }
  google.protobuf.Timestamp at = 22; google.protobuf.Duration wait = 23;
  google.protobuf.DoubleValue maybe_ratio = 24; google.protobuf.Int64Value maybe_total = 25;
  google.protobuf.Struct attrs = 26; google.protobuf.Value anything = 27; google.protobuf.ListValue list = 28;
  google.protobuf.Any extra = 29; google.protobuf.Empty nothing = 30;
  repeated Status statuses = 31; optional int32 maybe = 32;
}
message Inner { string sku = 1; Status status = 2; }
`;
    // v2 adds a field and a symbol; v1's messages lack the field (proto3 publishes its default only for fields the writer's schema has).
    const v2 = v1.replace('OPEN = 1; }', 'OPEN = 1; WON = 2; }').replace('optional int32 maybe = 32;', 'optional int32 maybe = 32;\n  string added = 33;');
    const client = new MockClient();
    const p1 = confluentProtobufSerializer(client, v1);
    const first = await p1.serialize('proto-rows', 'rule.Row', { text: 'x' });
    const p2 = confluentProtobufSerializer(client, v2);
    const events = [
      { text: 'x' },
      {
        text: 'é 😀',
        flag: true,
        i32: -2_147_483_648,
        u32: 4_294_967_295,
        s32: 2_147_483_647,
        f32: 4_294_967_295,
        sf32: -1,
        i64: -9_223_372_036_854_775_808n,
        u64: 18_446_744_073_709_551_615n,
        s64: 9_223_372_036_854_775_807n,
        f64: 18_446_744_073_709_551_615n,
        sf64: -1n,
        ratio: Number.NaN,
        small: FLOAT_MAX,
        blob: new Uint8Array([0xde, 0xad]),
        status: 7, // a number the enum does not name: published as the number
        inner: { sku: 's', status: 1 },
        tags: ['a'],
        prices: { EUR: 125n },
        payment: { case: 'wallet', value: 77n },
        at: { seconds: 253_402_300_799n, nanos: 999_999_999 },
        wait: { seconds: -315_576_000_000n, nanos: 0 },
        maybeRatio: Number.POSITIVE_INFINITY,
        maybeTotal: 9_007_199_254_740_993n,
        attrs: { colour: 'red', dims: [2, { unit: 'cm' }], none: null },
        anything: { kind: { case: 'numberValue', value: -0.5 } },
        list: { values: [{ kind: { case: 'stringValue', value: 'x' } }] },
        extra: { typeUrl: 'type.googleapis.com/rule.Inner', value: new Uint8Array([0x0a, 0x01, 0x73]) },
        nothing: {},
        statuses: [0, 1, 9],
        maybe: 0,
      },
      { text: 'y', ratio: Number.NEGATIVE_INFINITY, small: Number.NaN, payment: { case: 'card', value: 'tok' }, anything: { kind: { case: 'structValue', value: { a: 1 } } } },
    ];
    const messages = [first];
    for (const event of events) messages.push(await p2.serialize('proto-rows', 'rule.Row', event));
    messages.push(await p1.serialize('proto-rows', 'rule.Row', { text: 'old again', status: 1 }));
    const { sdl, payloads } = await renderEvery(client, 'proto-rows', 'PROTOBUF', messages);
    expect(sdl).toContain('  ratio: Double!\n  small: Double!\n');
    expect(sdl).toContain('  added: String\n');
    expect(sdl).toContain('"One of STATUS_UNSPECIFIED, OPEN, WON, or a number the enum does not name (Protobuf enums are open)."\nscalar Status\n');
    const rich = payloads[2] as Record<string, unknown>;
    expect([rich['status'], rich['ratio'], rich['small'], rich['maybe_ratio'], rich['statuses']]).toEqual([7, 'NaN', 3.4028235e38, 'Infinity', ['STATUS_UNSPECIFIED', 'OPEN', 9]]);
    // google.protobuf.Struct as plain JSON, its keys as data (not the decoder's message object).
    expect(rich['attrs']).toEqual({ colour: 'red', dims: [2, { unit: 'cm' }], none: null });
    expect(payloads[0]).not.toHaveProperty('added');
  });
});
