import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { confluentProtobufSerializer } from '@wirestream/testkit';
import { createWirestreamSchema } from '@wirestream/schema';
import { createKeyTransformer, keyConverter } from '@wirestream/transform';
import { execute, parse, type GraphQLObjectType } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, selectAll } from '../test/support/cli.js';
import {
  checkSdlAgainstSchemas,
  createDirectorySubjects,
  createRegistrySource,
  createRegistrySubjects,
  createSchemaDecoders,
  loadSchemaDirectory,
  readSubjectHistory,
  readSubjectShape,
  readWireHeader,
  sdlFromShape,
} from './index.js';

// SDL from Protobuf and JSON Schema subjects (wirestream-schema from-registry), checked the way
// the Avro one is (schema-cli.test.ts): the output loads, passes the start-up check against the same
// subject, and events written by Confluent's own serializers (ProtobufSerializer, JsonSerializer,
// into Confluent's MockClient) and decoded by ingest's path render through it unchanged.

const ORDER_PROTO = `
syntax = "proto3";
package shop;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/duration.proto";

enum Status {
  STATUS_UNSPECIFIED = 0;
  PAID = 1;
  SHIPPED = 2;
}

message Order {
  string orderId = 1;
  int64 total_cents = 2;
  uint32 item_count = 3;
  sint32 delta = 4;
  double weight = 5;
  bool gift = 6;
  bytes thumb = 7;
  Status status = 8;
  google.protobuf.Timestamp placed_at = 9;
  google.protobuf.Duration wait = 10;
  google.protobuf.Int32Value max_items = 11;
  google.protobuf.Struct attributes = 12;
  google.protobuf.Value anything = 13;
  map<string, int64> prices = 14;
  repeated Line lines = 15;
  repeated string tags = 16;
  Customer customer = 17;
  optional int32 coupon = 18;
  oneof payment {
    string card_token = 19;
    int64 wallet_id = 20;
  }
}

message Line {
  string sku = 1;
  int32 qty = 2;
  Status status = 3;
}

message Customer {
  string customer_id = 1;
  string displayName = 2;
}
`;

const ORDER_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Listing Event',
  description: 'A listing change.',
  type: 'object',
  required: ['listingId', 'eventType', 'price', 'tags', 'revision'],
  properties: {
    listingId: { type: 'string', description: 'The listing.' },
    eventType: { type: 'string', enum: ['Created', 'Updated', 'Closed'] },
    revision: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    viewCount: { type: 'integer' },
    price: { $ref: '#/definitions/Money' },
    reservePrice: { oneOf: [{ type: 'null' }, { $ref: '#/definitions/Money' }] },
    title: { type: ['string', 'null'] },
    featured: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    photos: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, widthPx: { type: 'integer', minimum: 1, maximum: 10000 } } } },
    attributes: { type: 'object', additionalProperties: { type: 'string' } },
    extra: {},
  },
  definitions: {
    Money: { type: 'object', required: ['amountCents', 'currencyCode'], properties: { amountCents: { type: 'number' }, currencyCode: { type: 'string' } } },
  },
};

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A schema directory with one file per subject: the form the CLI reads with --schema-dir. */
function schemaDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ws-sdl-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}



/** The value with null-valued keys left out: a key the payload lacks renders as null. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
}

describe('wirestream-schema from-registry on a Protobuf subject', () => {
  it('writes object types, enums and nullability from the .proto, and the check passes it with no finding', async () => {
    const dir = schemaDir({ 'orders-value/v1.id1.proto': ORDER_PROTO });
    const run = await cli('from-registry', '--schema-dir', dir, '--topic', 'orders', '--field', 'orderPlaced', '--key', 'order_id');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('  orderPlaced(order_id: ID): Order @topic(name: "orders", key: "order_id", format: PROTOBUF)\n');
    expect(run.stdout).toContain(
      'type Order {\n  order_id: ID!\n  total_cents: String!\n  item_count: UInt32!\n  delta: Int!\n  weight: Double!\n  gift: Boolean!\n  thumb: String!\n  status: Status!\n' +
        '  placed_at: String\n  wait: String\n  max_items: Int\n  attributes: JSONObject\n  anything: JSON\n  prices: JSONObject!\n  lines: [Line!]!\n  tags: [String!]!\n' +
        '  customer: Customer\n  coupon: Int\n  card_token: String\n  wallet_id: String\n}\n',
    );
    // Protobuf enums are open (a number they do not name is published as the number): a scalar that lists the names, once for both fields using it.
    expect(run.stdout).toContain('"One of STATUS_UNSPECIFIED, PAID, SHIPPED, or a number the enum does not name (Protobuf enums are open)."\nscalar Status\n');
    expect(run.stdout).toContain('type Line {\n  sku: String!\n  qty: Int!\n  status: Status!\n}\n');
    expect(run.stdout).not.toContain('Status2');
    expect(run.stdout).toContain('scalar Double\n');
    expect(run.stdout).toContain('type Customer {\n  customer_id: String!\n  display_name: String!\n}\n');
    expect(run.stdout).toContain('scalar UInt32\n');
    const schema = createWirestreamSchema(run.stdout);
    expect(schema.routes.get('orderPlaced')).toMatchObject({ topic: 'orders', keyField: 'order_id', format: 'PROTOBUF' });
    const directory = loadSchemaDirectory(dir);
    const check = await checkSdlAgainstSchemas(schema, createDirectorySubjects(directory.files, directory.description), { keyStyle: 'snake' });
    expect(check).toEqual({ errors: [], warnings: [], checked: ['orders-value v1 (id 1)'] });
  });

  it('--message picks another message of the file; a message the file lacks is refused by name', async () => {
    const dir = schemaDir({ 'orders-value/v1.id1.proto': ORDER_PROTO });
    const run = await cli('from-registry', '--schema-dir', dir, '--topic', 'orders', '--field', 'lineAdded', '--message', 'shop.Line');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('  lineAdded: Line @topic(name: "orders", format: PROTOBUF)\n');
    const missing = await cli('from-registry', '--schema-dir', dir, '--topic', 'orders', '--field', 'x', '--message', 'Refund');
    expect(missing.code).toBe(78);
    expect(missing.stderr).toBe('wirestream-schema: subject orders-value (version 1, id 1): the .proto file has no message Refund: one of Order, Line, Customer (a nested message by its path, e.g. Outer.Inner, or its full name)\n');
  });

  it('nested messages (message indexes like [1, 0]): --message by simple name, path or full name; the check and ingest agree on them', async () => {
    const proto = `syntax = "proto3";
package shop;
message Money { int64 cents = 1; }
message Order {
  string order_id = 1;
  message Refund { string refund_id = 1; Money amount = 2; Reason reason = 3; Reason previous = 4; }
  enum Reason { REASON_UNSPECIFIED = 0; DAMAGED = 1; }
  Refund refund = 2;
}
`;
    const client = new MockClient();
    const serializer = confluentProtobufSerializer(client, proto);
    const bytes = await serializer.serialize('refunds', 'shop.Order.Refund', { refundId: 'r-1', amount: { cents: 5n }, reason: 1, previous: 9 });
    // Confluent writes the path of the nested message: [1, 0] (the second top-level message, its first nested one).
    expect([...bytes.subarray(5, 8)]).toEqual([4, 2, 0]); // zigzag varints: count 2, then 1 and 0
    const subjects = createRegistrySubjects(client);
    const versions = await subjects.versions('refunds-value');
    if (versions === null) throw new Error('not registered');
    const sdls = [];
    for (const message of ['Refund', 'Order.Refund', 'shop.Order.Refund']) {
      const top = await readSubjectHistory(versions, subjects, { message, fallbackName: 'refunds' });
      sdls.push(sdlFromShape(top.shape, 'PROTOBUF', { topic: 'refunds', field: 'refunded', keyStyle: 'snake' }));
    }
    expect(new Set(sdls).size).toBe(1);
    const sdl = sdls[0] as string;
    expect(sdl).toContain('type Refund {\n  refund_id: String!\n  amount: Money\n  reason: Reason!\n  previous: Reason!\n}\n');
    expect(sdl).not.toContain('Reason2');
    const wirestream = createWirestreamSchema(sdl);
    expect(await checkSdlAgainstSchemas(wirestream, subjects, { keyStyle: 'snake' })).toEqual({ errors: [], warnings: [], checked: ['refunds-value v1 (id 1)'] });
    const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: keyConverter('snake') });
    const header = readWireHeader(bytes);
    if (!header.ok) throw new Error(header.message);
    await decoders.load([header.id]);
    const entry = decoders.entry(header.id);
    if (entry?.kind !== 'decoder') throw new Error('not a decoder');
    const payload = JSON.parse(entry.decoder.decode(bytes.subarray(5), undefined).json) as Record<string, unknown>;
    expect(payload).toEqual({ refund_id: 'r-1', amount: { cents: '5' }, reason: 'DAMAGED', previous: 9 });
    const document = parse(`subscription { refunded ${selectAll(wirestream.schema.getType('Refund') as GraphQLObjectType)} }`);
    const result = await execute({ schema: wirestream.schema, document, rootValue: { refunded: payload } });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ refunded: payload });
  });

  it('events written by Confluent’s ProtobufSerializer render through the SDL written from the schema it registered (the base64 descriptor), for every key style', async () => {
    for (const keyStyle of ['snake', 'lodash', 'none'] as const) {
      const client = new MockClient();
      const serializer = confluentProtobufSerializer(client, ORDER_PROTO);
      const first = await serializer.serialize('orders', 'shop.Order', { orderId: 'o-0' });
      const subjects = createRegistrySubjects(client, 'Schema Registry (MockClient)');
      const latest = await subjects.latest('orders-value');
      if (latest === null) throw new Error('not registered');
      const key = keyConverter(keyStyle)('orderId');
      const top = await readSubjectShape(latest, subjects, { fallbackName: 'orders' });
      const sdl = sdlFromShape(top.shape, 'PROTOBUF', { topic: 'orders', field: 'orderPlaced', key, keyStyle });
      const wirestream = createWirestreamSchema(sdl);
      const check = await checkSdlAgainstSchemas(wirestream, subjects, { keyStyle });
      expect(check.errors).toEqual([]);
      expect(check.warnings).toEqual([]);
      const document = parse(`subscription { orderPlaced ${selectAll(wirestream.schema.getType('Order') as GraphQLObjectType)} }`);
      const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: keyConverter(keyStyle) });
      const header = readWireHeader(first);
      if (!header.ok) throw new Error(header.message);
      await decoders.load([header.id]);
      const entry = decoders.entry(header.id);
      if (entry?.kind !== 'decoder') throw new Error(`not a decoder: ${JSON.stringify(entry)}`);
      const events = [
        { orderId: 'o-0' },
        {
          orderId: 'o-1',
          totalCents: 9_007_199_254_740_993n,
          itemCount: 4_000_000_000,
          delta: -3,
          weight: 1.5,
          gift: true,
          thumb: new Uint8Array([1, 2, 3]),
          status: 2,
          placedAt: { seconds: 1_780_000_000n, nanos: 5_000_000 },
          wait: { seconds: 3n, nanos: 0 },
          maxItems: 0,
          attributes: { colour: 'red', sizes: [1, 2] },
          anything: { kind: { case: 'stringValue', value: 'x' } },
          prices: { EUR: 125n },
          lines: [{ sku: 's-1', qty: 2, status: 1 }],
          tags: ['a'],
          customer: { customerId: 'c-1', displayName: 'Ann' },
          coupon: 0,
          payment: { case: 'walletId', value: 77n },
        },
        { orderId: 'o-2', payment: { case: 'cardToken', value: 'tok' }, anything: { kind: { case: 'numberValue', value: 2.5 } } },
      ];
      for (const event of events) {
        const bytes = await serializer.serialize('orders', 'shop.Order', event);
        const { json, routeValue } = entry.decoder.decode(bytes.subarray(5), key);
        expect(routeValue).toBe(event.orderId);
        const payload = JSON.parse(json) as Record<string, unknown>;
        const result = await execute({ schema: wirestream.schema, document, rootValue: { orderPlaced: payload } });
        expect(result.errors, `${keyStyle} ${json}`).toBeUndefined();
        // Every published key is selected; a key not published (an unset oneof member) renders null.
        expect(withoutNulls(result.data)).toEqual(withoutNulls({ orderPlaced: payload }));
      }
    }
  });
});

describe('wirestream-schema from-registry on a JSON Schema subject', () => {
  it('writes types from properties, required → non-null, enums, $ref’d and nested objects, arrays, maps; the check passes it', async () => {
    const dir = schemaDir({ 'listing-events-value/v3.id9.json': JSON.stringify(ORDER_JSON_SCHEMA) });
    const run = await cli('from-registry', '--schema-dir', dir, '--topic', 'listing-events', '--field', 'listingUpdated', '--key', 'listing_id');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('  listingUpdated(listing_id: ID): ListingEvent @topic(name: "listing-events", key: "listing_id", format: JSON_SCHEMA)\n');
    expect(run.stdout).toContain(
      '"A listing change."\ntype ListingEvent {\n  "The listing."\n  listing_id: ID!\n  event_type: EventType!\n  revision: Int!\n  view_count: Long\n  price: Money!\n  reserve_price: Money\n' +
        '  title: String\n  featured: Boolean\n  tags: [String!]!\n  photos: [Photo!]\n  attributes: JSONObject\n  extra: JSON\n}\n',
    );
    expect(run.stdout).toContain('enum EventType {\n  Created\n  Updated\n  Closed\n}\n');
    expect(run.stdout).toContain('type Money {\n  amount_cents: Float!\n  currency_code: String!\n}\n');
    expect(run.stdout).toContain('type Photo {\n  url: String!\n  width_px: Int\n}\n');
    const schema = createWirestreamSchema(run.stdout);
    const directory = loadSchemaDirectory(dir);
    const check = await checkSdlAgainstSchemas(schema, createDirectorySubjects(directory.files, directory.description), { keyStyle: 'snake' });
    expect(check).toEqual({ errors: [], warnings: [], checked: ['listing-events-value v3 (id 9)'] });
  });

  it('events written by Confluent’s JsonSerializer, validated and published by the JSON path, render through it', async () => {
    const client = new MockClient();
    await client.register('listing-events-value', { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON_SCHEMA) });
    const serializer = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
    const subjects = createRegistrySubjects(client);
    const latest = await subjects.latest('listing-events-value');
    if (latest === null) throw new Error('not registered');
    const sdl = sdlFromShape((await readSubjectShape(latest, subjects, { fallbackName: 'listing-events' })).shape, 'JSON_SCHEMA', { topic: 'listing-events', field: 'listingUpdated', key: 'listing_id', keyStyle: 'snake' });
    const wirestream = createWirestreamSchema(sdl);
    const document = parse(`subscription { listingUpdated ${selectAll(wirestream.schema.getType('ListingEvent') as GraphQLObjectType)} }`);
    const decoders = createSchemaDecoders({ source: createRegistrySource(client), fieldName: keyConverter('snake') });
    const keys = createKeyTransformer({ keyStyle: 'snake' });
    const events = [
      { listingId: 'l-1', eventType: 'Created', revision: 0, price: { amountCents: 100, currencyCode: 'EUR' }, tags: [] },
      {
        listingId: 'l-2',
        eventType: 'Closed',
        revision: 7,
        viewCount: 12_345_678_901,
        price: { amountCents: 250.5, currencyCode: 'USD' },
        reservePrice: null,
        title: 'Lamp',
        featured: true,
        tags: ['a', 'b'],
        photos: [{ url: 'https://x/1.jpg', widthPx: 800 }, { url: 'https://x/2.jpg' }],
        attributes: { colourName: 'red' },
        extra: [1, { a: 2 }],
      },
    ];
    for (const event of events) {
      const bytes = await serializer.serialize('listing-events', event);
      const header = readWireHeader(bytes);
      if (!header.ok) throw new Error(header.message);
      await decoders.load([header.id]);
      const entry = decoders.entry(header.id);
      if (entry?.kind !== 'validator') throw new Error('not a JSON Schema');
      expect(entry.validator.validate(bytes.subarray(5))).toBeUndefined();
      const payload = keys.transform<Record<string, unknown>>(JSON.parse(bytes.subarray(5).toString('utf8')));
      const result = await execute({ schema: wirestream.schema, document, rootValue: { listingUpdated: payload } });
      expect(result.errors).toBeUndefined();
      expect(withoutNulls(result.data)).toEqual(withoutNulls({ listingUpdated: payload }));
    }
  });
});
