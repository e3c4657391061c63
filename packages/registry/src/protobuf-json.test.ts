import { MockClient } from '@confluentinc/schemaregistry';
import { confluentProtobufSerializer } from '@wirestream/testkit';
import { toSnakeCase } from '@wirestream/transform';
import { describe, expect, it } from 'vitest';
import { loadCodecs, createRegistrySource, createSchemaDecoders, readWireHeader, type SchemaEntry, type WireDecoder } from './index.js';

// The decoders that need avsc/protobufjs come through the index's loader (decision 0031).
const { compileProtobufDecoder } = await loadCodecs();

// Every message here is written by Confluent's own ProtobufSerializer into Confluent's MockClient (the
// vendor's in-memory registry), so the bytes — header, message indexes, body — are what Confluent
// producers write, and the schema is what Confluent's JavaScript serializer registers (a base64
// FileDescriptorProto). The same schema as .proto text (what a registry serves, and a schema
// directory holds) must decode the same bytes the same way.
const BID_PROTO = `
syntax = "proto3";
package demo.auction;

import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";

enum BidStatus {
  BID_STATUS_UNSPECIFIED = 0;
  PLACED = 1;
  OUTBID = 2;
}

message BidPlaced {
  string listingId = 1;
  int64 amount_cents = 2;
  uint64 big_unsigned = 3;
  sint64 signed_delta = 4;
  fixed64 fixed_id = 5;
  int32 quantity = 6;
  double price = 7;
  float ratio = 8;
  bool is_proxy = 9;
  bytes photo_thumb = 10;
  BidStatus status = 11;
  google.protobuf.Timestamp placed_at = 12;
  google.protobuf.Duration time_left = 13;
  google.protobuf.Int32Value max_quantity = 14;
  google.protobuf.StringValue note = 15;
  google.protobuf.Int64Value proxy_max = 16;
  google.protobuf.Struct attributes = 17;
  google.protobuf.Any extra = 18;
  google.protobuf.Empty nothing = 19;
  map<string, int64> prices_by_currency = 20;
  map<int64, Bidder> bidders_by_id = 21;
  repeated LineItem line_items = 22;
  repeated string tags = 23;
  Bidder bidder = 24;
  optional int32 proxy_step = 25;
  oneof payment {
    string card_token = 26;
    int64 wallet_id = 27;
  }
  google.protobuf.Value anything = 28;

  message LineItem {
    string sku_code = 1;
    int32 qty = 2;
  }
}

message Bidder {
  string bidder_id = 1;
  string displayName = 2;
}
`;

function producer() {
  const client = new MockClient();
  const serializer = confluentProtobufSerializer(client, BID_PROTO);
  return { client, serializer };
}

/** The decoder the registry path compiles for the id in `bytes` (the schema exactly as Confluent's serializer registered it). */
async function registryDecoder(client: MockClient, bytes: Buffer): Promise<{ id: number; entry: SchemaEntry }> {
  const decoders = createSchemaDecoders({ source: createRegistrySource(client, 'Schema Registry (MockClient)'), fieldName: toSnakeCase });
  const header = readWireHeader(bytes);
  if (!header.ok) throw new Error(header.message);
  await decoders.load([header.id]);
  const entry = decoders.entry(header.id);
  if (entry === undefined) throw new Error('not loaded');
  return { id: header.id, entry };
}

function decoderOf(entry: SchemaEntry): WireDecoder {
  if (entry.kind !== 'decoder') throw new Error(`not a decoder: ${JSON.stringify(entry)}`);
  return entry.decoder;
}

const decodeJson = (decoder: WireDecoder, bytes: Buffer, routeField?: string) => {
  const { json, routeValue } = decoder.decode(bytes.subarray(5), routeField);
  return { value: JSON.parse(json) as Record<string, unknown>, routeValue };
};

describe('Protobuf → JSON: every mapped type, from bytes written by Confluent’s serializer', () => {
  it('maps 64-bit integers, enums, bytes, well-known types, maps, repeated, nested messages, oneof and optional', async () => {
    const { client, serializer } = producer();
    const bytes = await serializer.serialize('bids', 'demo.auction.BidPlaced', {
      listingId: 'lst-1',
      amountCents: 9_007_199_254_740_993n, // 2^53 + 1: not a safe JSON number
      bigUnsigned: 18_446_744_073_709_551_615n,
      signedDelta: -42n,
      fixedId: 7n,
      quantity: -3,
      price: 12.5,
      ratio: 3.9,
      isProxy: true,
      photoThumb: new Uint8Array([0xde, 0xad, 0xbe, 0xef]),
      status: 2,
      placedAt: { seconds: BigInt(Date.UTC(2026, 11, 1, 19, 30, 5) / 1000), nanos: 123_000_000 },
      timeLeft: { seconds: 1n, nanos: 500_000_000 },
      maxQuantity: 0, // protobuf-es unboxes wrappers; set to its default: present, so 0 (not null)
      proxyMax: 9_007_199_254_740_993n,
      attributes: { color: 'red', weightKg: 1.25, fragile: false, missing: null, dims: [2, { unit: 'cm' }] }, // protobuf-es takes a Struct as plain JSON
      extra: { typeUrl: 'type.googleapis.com/demo.auction.Bidder', value: new Uint8Array([0x0a, 0x03, 0x75, 0x2d, 0x31]) },
      nothing: {},
      pricesByCurrency: { EUR: 125n, usdCents: -1n },
      biddersById: { '9007199254740993': { bidderId: 'u-1', displayName: 'Ann' } },
      lineItems: [{ skuCode: 'sku-1', qty: 2 }, { skuCode: 'sku-2', qty: 0 }],
      tags: ['a', 'b'],
      bidder: { bidderId: 'u-2', displayName: 'Bo "the bidder"\n\\ é 😀 \ud800' }, // escapes, non-ASCII and a lone surrogate
      proxyStep: 0, // proto3 optional, set to its default: present, so 0
      payment: { case: 'walletId', value: 77n },
      anything: { kind: { case: 'listValue', value: { values: [{ kind: { case: 'stringValue', value: 'x' } }, { kind: { case: 'nullValue', value: 0 } }] } } },
    });
    const { entry } = await registryDecoder(client, bytes);
    const decoder = decoderOf(entry);
    expect(entry).toMatchObject({ schemaType: 'PROTOBUF' });
    const { value, routeValue } = decodeJson(decoder, bytes, 'listing_id');
    expect(routeValue).toBe('lst-1');
    expect(value).toEqual({
      listing_id: 'lst-1',
      amount_cents: '9007199254740993',
      big_unsigned: '18446744073709551615',
      signed_delta: '-42',
      fixed_id: '7',
      quantity: -3,
      price: 12.5,
      ratio: 3.9,
      is_proxy: true,
      photo_thumb: '3q2+7w==',
      status: 'OUTBID',
      placed_at: '2026-12-01T19:30:05.123Z',
      time_left: '1.500s',
      max_quantity: 0,
      note: null, // a wrapper not set: null
      proxy_max: '9007199254740993',
      attributes: { color: 'red', weightKg: 1.25, fragile: false, missing: null, dims: [2, { unit: 'cm' }] },
      extra: { type_url: 'type.googleapis.com/demo.auction.Bidder', value: 'CgN1LTE=' },
      nothing: {},
      prices_by_currency: { EUR: '125', usdCents: '-1' }, // map keys are data: kept as they are
      bidders_by_id: { '9007199254740993': { bidder_id: 'u-1', display_name: 'Ann' } },
      line_items: [
        { sku_code: 'sku-1', qty: 2 },
        { sku_code: 'sku-2', qty: 0 },
      ],
      tags: ['a', 'b'],
      bidder: { bidder_id: 'u-2', display_name: 'Bo "the bidder"\n\\ é 😀 \ufffd' }, // protobuf-es writes a lone surrogate as U+FFFD
      proxy_step: 0,
      wallet_id: '77', // the oneof member that is set, alone
      anything: ['x', null],
    });
  });

  it('writes proto3 fields left at their default with the default, unset fields with presence as null, and no member of an unset oneof', async () => {
    const { client, serializer } = producer();
    const bytes = await serializer.serialize('bids', 'demo.auction.BidPlaced', { listingId: 'lst-2' });
    const { value } = decodeJson(decoderOf((await registryDecoder(client, bytes)).entry), bytes);
    expect(value).toEqual({
      listing_id: 'lst-2',
      amount_cents: '0',
      big_unsigned: '0',
      signed_delta: '0',
      fixed_id: '0',
      quantity: 0,
      price: 0,
      ratio: 0,
      is_proxy: false,
      photo_thumb: '',
      status: 'BID_STATUS_UNSPECIFIED',
      placed_at: null,
      time_left: null,
      max_quantity: null,
      note: null,
      proxy_max: null,
      attributes: null,
      extra: null,
      nothing: null,
      prices_by_currency: {},
      bidders_by_id: {},
      line_items: [],
      tags: [],
      bidder: null,
      proxy_step: null,
      anything: null,
    });
    expect(value).not.toHaveProperty('card_token');
    expect(value).not.toHaveProperty('wallet_id');
  });

  it('picks the message by the index list: the second top-level message, a nested one', async () => {
    const { client, serializer } = producer();
    const bidder = await serializer.serialize('bids', 'demo.auction.Bidder', { bidderId: 'u-3', displayName: 'Cy' });
    const item = await serializer.serialize('bids', 'demo.auction.BidPlaced.LineItem', { skuCode: 'sku-9', qty: 5 });
    // Confluent writes [1] as count 1, index 1 (zig-zag: 02 02) and [0, 0] as 04 00 00.
    expect([...bidder.subarray(5, 7)]).toEqual([2, 2]);
    expect([...item.subarray(5, 8)]).toEqual([4, 0, 0]);
    const decoder = decoderOf((await registryDecoder(client, bidder)).entry);
    expect(decodeJson(decoder, bidder, 'bidder_id')).toEqual({ value: { bidder_id: 'u-3', display_name: 'Cy' }, routeValue: 'u-3' });
    expect(decodeJson(decoder, item).value).toEqual({ sku_code: 'sku-9', qty: 5 });
    expect(JSON.parse(decoder.decodeKey(bidder.subarray(5)))).toEqual({ bidder_id: 'u-3', display_name: 'Cy' });
  });

  it('decodes the same bytes the same way from the .proto text, as a registry serves it or a schema directory holds it', async () => {
    const { client, serializer } = producer();
    const bytes = await serializer.serialize('bids', 'demo.auction.BidPlaced', {
      listingId: 'lst-3',
      amountCents: -5n,
      status: 1,
      placedAt: { seconds: -1n, nanos: 1 },
      timeLeft: { seconds: -3n, nanos: -250_000 },
      payment: { case: 'cardToken', value: 'tok' },
      pricesByCurrency: { EUR: 1n },
    });
    const fromDescriptor = decodeJson(decoderOf((await registryDecoder(client, bytes)).entry), bytes).value;
    const fromText = decodeJson(compileProtobufDecoder(BID_PROTO, toSnakeCase), bytes).value;
    expect(fromText).toEqual(fromDescriptor);
    expect(fromText).toMatchObject({ amount_cents: '-5', status: 'PLACED', placed_at: '1969-12-31T23:59:59.000000001Z', time_left: '-3.000250s', card_token: 'tok', prices_by_currency: { EUR: '1' } });
  });

  it('throws on bytes that do not decode (the caller dead-letters them as UNDECODABLE)', async () => {
    const { client, serializer } = producer();
    const bytes = await serializer.serialize('bids', 'demo.auction.BidPlaced', { listingId: 'lst-4', tags: ['x'] });
    const decoder = decoderOf((await registryDecoder(client, bytes)).entry);
    expect(() => decoder.decode(bytes.subarray(5, bytes.length - 1), undefined)).toThrow(/index out of range|invalid|truncated/i);
    expect(() => decoder.decode(Buffer.from([0x04, 0x09, 0x00]), undefined)).toThrow('the message-index list after the header is cut short or invalid'); // count 2, index -5
    expect(() => decoder.decode(Buffer.from([0x02, 0x0a]), undefined)).toThrow('message index 5 is out of range: the schema has 2 top-level messages');
    expect(() => decoder.decode(Buffer.from([0x80]), undefined)).toThrow('message-index list');
    // A string that is not UTF-8 (0xff inside "lst-4", a tag inside "x"): undecodable, as in Avro and JSON Schema; bytes fields may hold any byte.
    const invalid = Buffer.from(bytes);
    invalid[invalid.indexOf('lst-4', 5) + 1] = 0xff;
    expect(() => decoder.decode(invalid.subarray(5), undefined)).toThrow(/^a string field is not valid UTF-8 \(at byte \d+\)$/);
    // proto2 strings too (protobufjs checks only proto3's): one rule for every format.
    const proto2Client = new MockClient();
    const proto2 = confluentProtobufSerializer(proto2Client, 'syntax = "proto2";\npackage p2;\nmessage M { optional string s = 1; }\n');
    const proto2Bytes = Buffer.from(await proto2.serialize('p2', 'p2.M', { s: 'lst-6' }));
    proto2Bytes[proto2Bytes.indexOf('lst-6', 5) + 1] = 0xff;
    const proto2Decoder = decoderOf((await registryDecoder(proto2Client, proto2Bytes)).entry);
    expect(() => proto2Decoder.decode(proto2Bytes.subarray(5), undefined)).toThrow(/^a string field is not valid UTF-8/);
    const blob = await serializer.serialize('bids', 'demo.auction.BidPlaced', { listingId: 'lst-5', photoThumb: new Uint8Array([0xff, 0xfe]) });
    expect(JSON.parse(decoder.decode(blob.subarray(5), undefined).json)).toMatchObject({ listing_id: 'lst-5', photo_thumb: '//4=' });
  });

  it('refuses a schema it cannot use, with the reason the dead letters will carry', async () => {
    const client = new MockClient();
    const referencing = await client.register('refs-value', { schemaType: 'PROTOBUF', schema: 'syntax = "proto3"; import "other.proto"; message A { Other o = 1; }' });
    const clash = await client.register('clash-value', { schemaType: 'PROTOBUF', schema: 'syntax = "proto3"; message A { string listingId = 1; string listing_id = 2; }' });
    const broken = await client.register('broken-value', { schemaType: 'PROTOBUF', schema: 'syntax = "proto3"; message A { strin x = 1; ' });
    const decoders = createSchemaDecoders({ source: createRegistrySource(client, 'Schema Registry (MockClient)'), fieldName: toSnakeCase });
    await decoders.load([referencing, clash, broken]);
    expect(decoders.entry(referencing)).toMatchObject({ kind: 'unusable', code: 'UNSUPPORTED_SCHEMA', reason: expect.stringContaining('imports other.proto, which is not a well-known type and no schema reference gives: register it as a reference of the schema') as unknown });
    expect(decoders.entry(clash)).toMatchObject({ kind: 'unusable', reason: expect.stringContaining('fields listingId and listing_id are both published as listing_id') as unknown });
    expect(decoders.entry(broken)).toMatchObject({ kind: 'unusable', reason: expect.stringMatching(/^schema id \d+ \(PROTOBUF\) from the Schema Registry \(MockClient\): not a valid Protobuf schema: /) as unknown });
  });
});

describe('proto2 [default = …]: an unset optional field publishes its declared default (Protobuf’s JSON mapping)', () => {
  const PROTO2 = `
syntax = "proto2";
package legacy;

enum Tier { BASIC = 0; GOLD = 1; PLATINUM = 2; }

message Account {
  required string account_id = 1;
  optional int32 retries = 2 [default = 7];
  optional string region = 3 [default = "eu-west"];
  optional Tier tier = 4 [default = GOLD];
  optional int64 credit_cents = 5 [default = -12345678901234];
  optional bool active = 6 [default = true];
  optional double ratio = 7 [default = 2.5];
  optional float weight = 8 [default = 3.9];
  optional int32 no_default = 9;
  optional string no_default_text = 10;
}
`;

  it('from the descriptor Confluent’s serializer registered and from the .proto text: defaults when unset, the value when set (even to 0), null without a default', async () => {
    const client = new MockClient();
    const serializer = confluentProtobufSerializer(client, PROTO2);
    const unset = await serializer.serialize('accounts', 'legacy.Account', { accountId: 'a-1' });
    const set = await serializer.serialize('accounts', 'legacy.Account', { accountId: 'a-2', retries: 0, region: '', tier: 0, creditCents: 5n, active: false, ratio: 0, weight: 1.5, noDefault: 3, noDefaultText: 'x' });
    const registered = decoderOf((await registryDecoder(client, unset)).entry);
    const fromText = compileProtobufDecoder(PROTO2, toSnakeCase);
    // protobufjs's parser rounds a 64-bit default past 2^53; ours keeps the digits as written. (Only from the
    // text: the test kit makes the registered descriptor with protobufjs, and protobuf-es refuses the rounded value.)
    const withBig = PROTO2.replace('optional int32 no_default = 9;', 'optional int32 no_default = 9;\n  optional uint64 big_default = 11 [default = 18446744073709551615];');
    expect(decodeJson(compileProtobufDecoder(withBig, toSnakeCase), unset).value['big_default']).toBe('18446744073709551615');
    for (const decoder of [registered, fromText]) {
      expect(decodeJson(decoder, unset).value).toEqual({
        account_id: 'a-1',
        retries: 7,
        region: 'eu-west',
        tier: 'GOLD',
        credit_cents: '-12345678901234',
        active: true,
        ratio: 2.5,
        weight: 3.9,
        no_default: null,
        no_default_text: null,
      });
      expect(decodeJson(decoder, set).value).toEqual({
        account_id: 'a-2',
        retries: 0,
        region: '',
        tier: 'BASIC',
        credit_cents: '5',
        active: false,
        ratio: 0,
        weight: 1.5,
        no_default: 3,
        no_default_text: 'x',
      });
    }
  });
});
