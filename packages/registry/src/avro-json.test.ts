import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import avsc from 'avsc';
import { keyConverter, toSnakeCase } from '@wirestream/transform';
import { describe, expect, it } from 'vitest';
import { EXACT_LONG } from './avro-logical-types.js';
import { loadCodecs, createRegistrySource, createSchemaDecoders, readWireHeader } from './index.js';

// The decoders that need avsc/protobufjs come through the index's loader (decision 0031).
const { compileAvroDecoder } = await loadCodecs();

// Every message here is written by Confluent's own AvroSerializer into Confluent's MockClient (the
// vendor's in-memory registry), so the bytes are what Confluent producers write.
const bidSchema = {
  type: 'record',
  name: 'BidPlaced',
  namespace: 'demo.auction',
  fields: [
    { name: 'listingId', type: 'string' },
    { name: 'amountCents', type: 'long' },
    { name: 'placedAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'placedAtMicros', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'localAt', type: { type: 'long', logicalType: 'local-timestamp-millis' } },
    { name: 'auctionDay', type: { type: 'int', logicalType: 'date' } },
    { name: 'closesAt', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
    { name: 'bidId', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'note', type: ['null', 'string'], default: null },
    { name: 'status', type: { type: 'enum', name: 'BidStatus', symbols: ['PLACED', 'OUTBID', 'WON'] } },
    { name: 'pricesByCurrency', type: { type: 'map', values: 'double' } },
    { name: 'photoThumb', type: 'bytes' },
    { name: 'lineItems', type: { type: 'array', items: { type: 'record', name: 'LineItem', fields: [{ name: 'skuCode', type: 'string' }, { name: 'qty', type: 'int' }] } } },
    { name: 'isProxyBid', type: 'boolean' },
    { name: 'winner', type: ['null', { type: 'record', name: 'Bidder', fields: [{ name: 'bidderId', type: 'string' }] }], default: null },
  ],
};

/** Unscaled decimal bytes (big-endian two's complement), as a producer's decimal library writes them. */
function decimalBytes(unscaled: bigint, size: number): Buffer {
  const buf = Buffer.alloc(size);
  let n = BigInt.asUintN(size * 8, unscaled);
  for (let i = size - 1; i >= 0; i--, n >>= 8n) buf[i] = Number(n & 0xffn);
  return buf;
}

async function confluentProducer(subject: string, schema: unknown) {
  const client = new MockClient();
  const id = await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(schema) });
  const serializer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  return { client, id, serialize: (topic: string, value: unknown) => serializer.serialize(topic, value) };
}

describe('Avro → JSON: every mapped type, from bytes written by Confluent’s serializer', () => {
  it('maps logical types, unions, enums, maps, bytes, arrays and records, field names snake_cased', async () => {
    const producer = await confluentProducer('bids-value', bidSchema);
    const bytes = await producer.serialize('bids', {
      listingId: 'lst-1',
      amountCents: 125_00,
      placedAt: Date.UTC(2026, 11, 1, 19, 30, 5, 123),
      placedAtMicros: Date.UTC(2026, 11, 1, 19, 30, 5, 123) * 1000 + 456,
      localAt: Date.UTC(2026, 11, 1, 8, 0, 0, 0),
      auctionDay: 20_788, // days since 1970-01-01
      closesAt: (18 * 3600 + 30 * 60) * 1000 + 250,
      price: decimalBytes(-123_45n, 3),
      bidId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
      note: 'first bid',
      status: 'OUTBID',
      pricesByCurrency: { EUR: 125, usdCents: 13_000.5 },
      photoThumb: Buffer.from([0xde, 0xad, 0xbe, 0xef]),
      lineItems: [{ skuCode: 'A-1', qty: 2 }],
      isProxyBid: true,
      winner: { bidderId: 'u-9' },
    });
    expect(readWireHeader(bytes)).toEqual({ ok: true, id: producer.id, bodyOffset: 5 });
    const decoder = compileAvroDecoder(JSON.stringify(bidSchema), toSnakeCase);
    const { json, routeValue } = decoder.decode(bytes.subarray(5), 'listing_id');
    expect(routeValue).toBe('lst-1');
    expect(JSON.parse(json)).toEqual({
      listing_id: 'lst-1',
      amount_cents: 12500,
      placed_at: '2026-12-01T19:30:05.123Z',
      placed_at_micros: '2026-12-01T19:30:05.123456Z',
      local_at: '2026-12-01T08:00:00.000',
      auction_day: '2026-12-01',
      closes_at: '18:30:00.250',
      price: '-123.45',
      bid_id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
      note: 'first bid',
      status: 'OUTBID',
      // Map keys are data, kept as they are; record fields follow the key rule.
      prices_by_currency: { EUR: 125, usdCents: 13000.5 },
      photo_thumb: '3q2+7w==',
      line_items: [{ sku_code: 'A-1', qty: 2 }],
      is_proxy_bid: true,
      winner: { bidder_id: 'u-9' },
    });
    // The text is what JSON.stringify of that object would be: one compact line.
    expect(json).toBe(JSON.stringify(JSON.parse(json)));
  });

  it('the rarer types: duration, uuid on fixed, time-micros, NaN and ±Infinity, instants before 1970, a logical type on the wrong type', async () => {
    const schema = {
      type: 'record',
      name: 'Rare',
      fields: [
        { name: 'span', type: { type: 'fixed', name: 'Span', size: 12, logicalType: 'duration' } },
        { name: 'uid', type: { type: 'fixed', name: 'Uid', size: 16, logicalType: 'uuid' } },
        { name: 'at', type: { type: 'long', logicalType: 'time-micros' } },
        { name: 'ratios', type: { type: 'array', items: 'double' } },
        { name: 'before', type: { type: 'long', logicalType: 'timestamp-micros' } },
        { name: 'notADate', type: { type: 'string', logicalType: 'date' } },
        { name: 'amount', type: { type: 'fixed', name: 'Amount', size: 4, logicalType: 'decimal', precision: 9, scale: 3 } },
        { name: 'rating', type: { type: 'array', items: 'float' } },
      ],
    };
    const producer = await confluentProducer('rare-value', schema);
    const span = Buffer.alloc(12);
    span.writeUInt32LE(1, 0);
    span.writeUInt32LE(2, 4);
    span.writeUInt32LE(3, 8);
    const bytes = await producer.serialize('rare', {
      span,
      uid: Buffer.from('1b4e28ba2fa111d2883f0016d3cca427', 'hex'),
      at: (1 * 3600 + 2 * 60 + 3) * 1_000_000 + 4_005,
      ratios: [0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
      before: -1, // one microsecond before the epoch
      notADate: 'tomorrow',
      amount: decimalBytes(1_234_567n, 4),
      rating: [3.9, 0.1, 16_777_217, 1e-7],
    });
    expect(JSON.parse(compileAvroDecoder(JSON.stringify(schema), toSnakeCase).decode(bytes.subarray(5), undefined).json)).toEqual({
      span: { months: 1, days: 2, milliseconds: 3 },
      uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
      at: '01:02:03.004005',
      ratios: [0.5, 'NaN', 'Infinity', '-Infinity'],
      before: '1969-12-31T23:59:59.999999Z',
      not_a_date: 'tomorrow',
      amount: '1234.567',
      // The shortest decimal of each 32-bit float (16777217 is not a float: it rounds to 16777216).
      rating: [3.9, 0.1, 16_777_216, 1e-7],
    });
  });

  it('a null union branch is null, and field names can be kept as they are (key style none)', async () => {
    const schema = { type: 'record', name: 'R', fields: [{ name: 'noteText', type: ['null', 'string'], default: null }, { name: 'n', type: ['null', 'long', 'string'] }] };
    const producer = await confluentProducer('r-value', schema);
    const decoder = compileAvroDecoder(JSON.stringify(schema), (name) => name);
    const decode = async (value: unknown) => decoder.decode((await producer.serialize('r', value)).subarray(5), undefined).json;
    expect(await decode({ noteText: null, n: 7 })).toBe('{"noteText":null,"n":7}');
    expect(await decode({ noteText: 'x', n: 'seven' })).toBe('{"noteText":"x","n":"seven"}');
  });

  it('int64 beyond 2^53 is a string; within, a number (Confluent’s serializer refuses unsafe longs, so avsc writes this one)', () => {
    const schema = { type: 'record', name: 'Counter', fields: [{ name: 'total', type: 'long' }, { name: 'nanos', type: { type: 'long', logicalType: 'timestamp-nanos' } }] };
    const writer = avsc.Type.forSchema(schema as avsc.Schema, { typeHook: (s) => (s === 'long' || (typeof s === 'object' && (s as { type?: unknown }).type === 'long') ? EXACT_LONG : undefined) });
    const decoder = compileAvroDecoder(JSON.stringify(schema), toSnakeCase);
    const big = writer.toBuffer({ total: '9007199254740993', nanos: '1764617405123456789' });
    expect(decoder.decode(big, undefined).json).toBe('{"total":"9007199254740993","nanos":"2025-12-01T19:30:05.123456789Z"}');
    const small = writer.toBuffer({ total: -9_007_199_254_740_991, nanos: 5 });
    expect(decoder.decode(small, undefined).json).toBe('{"total":-9007199254740991,"nanos":"1970-01-01T00:00:00.000000005Z"}');
  });

  it('names record fields by the key style (INGEST_KEY_STYLE): lodash and none, map keys untouched by both', async () => {
    const schema = {
      type: 'record',
      name: 'Address',
      fields: [
        { name: 'address2Line', type: 'string' },
        { name: '_id', type: 'string' },
        { name: 'pricesByCurrency', type: { type: 'map', values: 'int' } },
        { name: 'lines', type: { type: 'array', items: { type: 'record', name: 'Line', fields: [{ name: 'streetLine1', type: 'string' }] } } },
      ],
    };
    const producer = await confluentProducer('addresses-value', schema);
    const bytes = await producer.serialize('addresses', { address2Line: 'Flat 2', _id: 'a-1', pricesByCurrency: { usdCents: 1 }, lines: [{ streetLine1: 'Main St' }] });
    const body = bytes.subarray(5);
    const lodash = compileAvroDecoder(JSON.stringify(schema), keyConverter('lodash'));
    expect(lodash.fields).toEqual(['address_2_line', 'id', 'prices_by_currency', 'lines']);
    expect(lodash.decode(body, 'id')).toEqual({ json: '{"address_2_line":"Flat 2","id":"a-1","prices_by_currency":{"usdCents":1},"lines":[{"street_line_1":"Main St"}]}', routeValue: 'a-1' });
    const none = compileAvroDecoder(JSON.stringify(schema), keyConverter('none'));
    expect(none.decode(body, undefined).json).toBe('{"address2Line":"Flat 2","_id":"a-1","pricesByCurrency":{"usdCents":1},"lines":[{"streetLine1":"Main St"}]}');
    expect(compileAvroDecoder(JSON.stringify(schema), keyConverter('snake')).decode(body, undefined).json).toBe(
      '{"address2_line":"Flat 2","_id":"a-1","prices_by_currency":{"usdCents":1},"lines":[{"street_line1":"Main St"}]}',
    );
  });

  it('refuses bytes that do not decode: truncated, or with trailing bytes', async () => {
    const producer = await confluentProducer('bids-value', bidSchema);
    const decoder = compileAvroDecoder(JSON.stringify(bidSchema), toSnakeCase);
    const body = (
      await producer.serialize('bids', {
        listingId: 'l', amountCents: 1, placedAt: 0, placedAtMicros: 0, localAt: 0, auctionDay: 0, closesAt: 0, price: Buffer.from([1]), bidId: 'x', note: null,
        status: 'WON', pricesByCurrency: {}, photoThumb: Buffer.alloc(0), lineItems: [], isProxyBid: false, winner: null,
      })
    ).subarray(5);
    expect(() => decoder.decode(body.subarray(0, body.length - 3), undefined)).toThrow(/truncated/);
    expect(() => decoder.decode(Buffer.concat([body, Buffer.from([1, 2])]), undefined)).toThrow(/trailing/);
  });

  it('keys may be of any type; a string key is its text', async () => {
    const producer = await confluentProducer('k-key', 'string');
    const decoder = compileAvroDecoder('"string"', toSnakeCase);
    expect(decoder.isRecord).toBe(false);
    const key = await new AvroSerializer(producer.client, SerdeType.KEY, { useLatestVersion: true }).serialize('k', 'lst-7');
    expect(decoder.decodeKey(key.subarray(5))).toBe('lst-7');
    const recordKey = { type: 'record', name: 'K', fields: [{ name: 'tenantId', type: 'string' }] };
    expect(compileAvroDecoder(JSON.stringify(recordKey), toSnakeCase).decodeKey(Buffer.from([2, 0x61]))).toBe('{"tenant_id":"a"}');
  });

  it('refuses schemas it cannot publish: two fields with one published name, not Avro', () => {
    const clash = { type: 'record', name: 'C', fields: [{ name: 'userId', type: 'string' }, { name: 'user_id', type: 'string' }] };
    expect(() => compileAvroDecoder(JSON.stringify(clash), toSnakeCase)).toThrow('record C: fields userId and user_id are both published as user_id');
    expect(() => compileAvroDecoder('{"type": "recrd"}', toSnakeCase)).toThrow(/^not a valid Avro schema: /);
  });
});

describe('createSchemaDecoders over Confluent’s MockClient', () => {
  it('looks an id up once, shares it, and marks ids the registry does not have', async () => {
    const producer = await confluentProducer('bids-value', bidSchema);
    let lookups = 0;
    const registry = createRegistrySource(producer.client, 'Schema Registry mock://');
    const counting = { ...registry, schemaById: (id: number) => (lookups++, registry.schemaById(id)) };
    const decoders = createSchemaDecoders({ source: counting, fieldName: toSnakeCase });
    expect(decoders.entry(producer.id)).toBeUndefined();
    await Promise.all([decoders.load([producer.id, producer.id]), decoders.load([producer.id, 999])]);
    expect(lookups).toBe(2);
    expect(decoders.entry(producer.id)?.kind).toBe('decoder');
    expect(decoders.entry(999)).toEqual({ kind: 'unusable', id: 999, code: 'UNKNOWN_SCHEMA_ID', reason: 'schema id 999 is not in the Schema Registry mock://' });
  });

  it('is bounded: the least recently used schema goes first', async () => {
    const client = new MockClient();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push(await client.register(`s${i}-value`, { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: `R${i}`, fields: [] }) }));
    const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: toSnakeCase, maxSchemas: 2 });
    await decoders.load([ids[0] as number, ids[1] as number]);
    decoders.entry(ids[0] as number); // used: ids[1] is now the least recently used
    await decoders.load([ids[2] as number]);
    expect(decoders.size).toBe(2);
    expect(decoders.entry(ids[1] as number)).toBeUndefined();
    expect(decoders.entry(ids[0] as number)?.kind).toBe('decoder');
  });

  it('rejects when the source cannot answer, and keeps what it did answer', async () => {
    const producer = await confluentProducer('bids-value', bidSchema);
    const registry = createRegistrySource(producer.client);
    const flaky = { ...registry, description: 'flaky', schemaById: (id: number) => (id === 5 ? Promise.reject(new Error('ECONNREFUSED')) : registry.schemaById(id)) };
    const decoders = createSchemaDecoders({ source: flaky, fieldName: toSnakeCase });
    await expect(decoders.load([producer.id, 5])).rejects.toThrow('ECONNREFUSED');
    expect(decoders.entry(producer.id)?.kind).toBe('decoder');
    expect(decoders.entry(5)).toBeUndefined();
  });

  it('believes an unknown id missing for missingTtlMs, then asks again', async () => {
    const client = new MockClient();
    let clock = 0;
    const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: toSnakeCase, missingTtlMs: 1_000, now: () => clock });
    await decoders.load([1]);
    expect(decoders.entry(1)?.kind).toBe('unusable');
    const id = await client.register('late-value', { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'Late', fields: [] }) });
    expect(id).toBe(1);
    clock = 1_000;
    expect(decoders.entry(1)).toBeUndefined();
    await decoders.load([1]);
    expect(decoders.entry(1)?.kind).toBe('decoder');
  });
});
