import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockClient } from '@confluentinc/schemaregistry';
import { createWirestreamSchema } from '@wirestream/schema';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSdlAgainstSchemas, createDirectorySubjects, createRegistrySubjects, loadSchemaDirectory, type SubjectSchemas } from './index.js';

// The shape of the demo's bid-events value schema (apps/demo/schemas/bid-events-value), field names in camelCase.
const money = { type: 'record', name: 'Money', fields: [{ name: 'amountCents', type: 'long' }, { name: 'currencyCode', type: 'string' }] };
const bidPlaced = {
  type: 'record',
  name: 'BidPlaced',
  namespace: 'wirestream.demo.auction',
  fields: [
    { name: 'listingId', type: 'string' },
    { name: 'bidderId', type: 'string' },
    { name: 'amount', type: money },
    { name: 'status', type: { type: 'enum', name: 'BidStatus', symbols: ['PLACED', 'OUTBID', 'WON'] } },
    { name: 'note', type: ['null', 'string'], default: null },
    { name: 'previousBidderIds', type: { type: 'array', items: 'string' } },
    { name: 'previousAmount', type: ['null', 'Money'], default: null },
  ],
};

const sdl = (body: string, topic = '@topic(name: "bid-events", key: "listing_id", format: AVRO)') =>
  createWirestreamSchema(`${body}\ntype Subscription { bidPlaced(listing_id: ID): BidEvent ${topic} }\n`);

const GOOD = `
enum BidStatus { PLACED OUTBID WON }
type Money { amount_cents: Float! currency_code: String! }
type BidEvent {
  listing_id: ID!
  bidder_id: ID!
  amount: Money!
  status: BidStatus!
  note: String
  previous_bidder_ids: [String!]!
  previous_amount: Money
}`;

async function registryWith(subject: string, ...schemas: unknown[]): Promise<SubjectSchemas> {
  const client = new MockClient();
  for (const schema of schemas) await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(schema) }, false);
  return createRegistrySubjects(client, 'Schema Registry mock');
}

const messages = (findings: readonly { message: string }[]) => findings.map((f) => f.message);

describe('checkSdlAgainstSchemas over Confluent’s MockClient (TopicNameStrategy: <topic>-value)', () => {
  it('an SDL that selects what the latest schema has: nothing to say', async () => {
    const result = await checkSdlAgainstSchemas(sdl(GOOD), await registryWith('bid-events-value', bidPlaced), { keyStyle: 'snake' });
    expect(result).toEqual({ errors: [], warnings: [], checked: ['bid-events-value v1 (id 1)'] });
  });

  it('a field the latest schema does not have: an error naming topic, subject and field', async () => {
    const registry = await registryWith('bid-events-value', bidPlaced);
    const result = await checkSdlAgainstSchemas(sdl(GOOD.replace('note: String', 'note: String\n  seller_note: String')), registry, { keyStyle: 'snake' });
    expect(messages(result.errors)).toEqual([
      'topic bid-events, subject bid-events-value, field BidEvent.seller_note: not in the registry\'s latest schema (version 1, id 1), whose record BidPlaced publishes listing_id, bidder_id, amount, status, note, previous_bidder_ids, previous_amount: remove the field from the SDL, or register a schema version that has it',
    ]);
    expect(result.errors[0]).toMatchObject({ topic: 'bid-events', subject: 'bid-events-value', field: 'BidEvent.seller_note' });
  });

  it('a @lookup field is resolved from its source, not read from the event: not compared (decision 0042)', async () => {
    const registry = await registryWith('bid-events-value', bidPlaced);
    const withLookup = `${GOOD.replace('note: String', 'note: String\n  bidder: Bidder @lookup(source: "bidders", key: "id: bidder_id")')}\ntype Bidder { id: ID! name: String }`;
    const result = await checkSdlAgainstSchemas(sdl(withLookup), registry, { keyStyle: 'snake' });
    expect(result).toEqual({ errors: [], warnings: [], checked: ['bid-events-value v1 (id 1)'] });
  });

  it('compares every version (decision 0035): a field of an older version stays selectable, one a version lacks must be nullable, one in no version is an error', async () => {
    const v2 = { ...bidPlaced, fields: [...bidPlaced.fields.filter((f) => f.name !== 'note'), { name: 'closesAt', type: ['null', 'string'], default: null }] };
    const registry = await registryWith('bid-events-value', bidPlaced, v2);
    const result = await checkSdlAgainstSchemas(sdl(GOOD), registry, { keyStyle: 'snake' });
    expect(result.checked).toEqual(['bid-events-value v1 (id 1)', 'bid-events-value v2 (id 2)']);
    expect(result.errors).toEqual([]);
    expect(messages(result.warnings)).toEqual([
      "topic bid-events, subject bid-events-value, field BidEvent: the registry's record BidPlaced (versions 1, 2, latest id 2) also has closes_at, which BidEvent does not declare (published, but no client can select them)",
    ]);
    const strict = await checkSdlAgainstSchemas(sdl(GOOD.replace('note: String', 'note: String!\n  closes_at: String!\n  seller_note: String')), registry, { keyStyle: 'snake' });
    expect(messages(strict.errors)).toEqual([expect.stringMatching(/^topic bid-events, subject bid-events-value, field BidEvent\.seller_note: not in any registered version of the subject \(versions 1, 2, latest id 2\), whose record BidPlaced publishes/)]);
    expect(messages(strict.warnings)).toEqual([
      'topic bid-events, subject bid-events-value, field BidEvent.note: non-null in the SDL (String!) but version 2 of the subject (versions 1, 2, latest id 2) lacks it: their events, still in the topic, fail to render that field; make it nullable',
      'topic bid-events, subject bid-events-value, field BidEvent.closes_at: non-null in the SDL (String!) but version 1 of the subject (versions 1, 2, latest id 2) lacks it: their events, still in the topic, fail to render that field; make it nullable',
    ]);
  });

  it('compatible differences are warnings: nullable in the registry but non-null in the SDL, Int for a long, enum symbols the SDL lacks', async () => {
    const sdlText = GOOD.replace('note: String', 'note: String!').replace('amount_cents: Float!', 'amount_cents: Int!').replace('enum BidStatus { PLACED OUTBID WON }', 'enum BidStatus { PLACED OUTBID }');
    const result = await checkSdlAgainstSchemas(sdl(sdlText), await registryWith('bid-events-value', bidPlaced), { keyStyle: 'snake' });
    expect(result.errors).toEqual([]);
    expect(messages(result.warnings)).toEqual([
      'topic bid-events, subject bid-events-value, field Money.amount_cents: Int! in the SDL for the registry\'s long (version 1, id 1): GraphQL Int holds 32 bits, a long may not (past 2^53 it is published as a string): declare Float, String or a custom scalar',
      "topic bid-events, subject bid-events-value, field BidEvent.status: the registry's enum BidStatus (version 1, id 1) has WON, which enum BidStatus lacks: such events fail to render the field",
      'topic bid-events, subject bid-events-value, field BidEvent.note: non-null in the SDL (String!) but nullable in the registry (version 1, id 1): an event with null there fails to render that field; make it nullable',
    ]);
  });

  it('shapes that cannot render are errors: an object for a scalar, a scalar for a list, Boolean for a string', async () => {
    const sdlText = GOOD.replace('bidder_id: ID!', 'bidder_id: Money!').replace('previous_bidder_ids: [String!]!', 'previous_bidder_ids: String').replace('note: String', 'note: Boolean');
    const result = await checkSdlAgainstSchemas(sdl(sdlText), await registryWith('bid-events-value', bidPlaced), { keyStyle: 'snake' });
    expect(messages(result.errors)).toEqual([
      'topic bid-events, subject bid-events-value, field Money: Money is an object type, but the registry\'s latest schema (version 1, id 1) has string there',
      "topic bid-events, subject bid-events-value, field BidEvent.note: Boolean in the SDL cannot hold the registry's string (version 1, id 1, published as string)",
      'topic bid-events, subject bid-events-value, field BidEvent.previous_bidder_ids: String in the SDL, but array<string> (a list) in the registry (version 1, id 1)',
    ]);
  });

  it('a subject the registry does not have is an error; @topic(subject:) names another one', async () => {
    const registry = await registryWith('wirestream.demo.auction.BidPlaced', bidPlaced);
    const missing = await checkSdlAgainstSchemas(sdl(GOOD), registry, { keyStyle: 'snake' });
    expect(messages(missing.errors)).toEqual([
      "topic bid-events, subject bid-events-value: Schema Registry mock has no such subject: register the topic's value schema there, or name its subject with @topic(subject: …)",
    ]);
    const named = await checkSdlAgainstSchemas(sdl(GOOD, '@topic(name: "bid-events", key: "listing_id", format: AVRO, subject: "wirestream.demo.auction.BidPlaced")'), registry, { keyStyle: 'snake' });
    expect(named.errors).toEqual([]);
    expect(named.checked).toEqual(['wirestream.demo.auction.BidPlaced v1 (id 1)']);
  });

  it('names fields by the key style: with none the SDL says listingId, with lodash previous_bidder_ids stays, JSON topics are not checked', async () => {
    const registry = await registryWith('bid-events-value', bidPlaced);
    const none = await checkSdlAgainstSchemas(sdl(GOOD), registry, { keyStyle: 'none' });
    expect(none.errors.map((e) => e.field)).toEqual(['BidEvent.listing_id', 'BidEvent.bidder_id', 'Money.amount_cents', 'Money.currency_code', 'BidEvent.previous_bidder_ids', 'BidEvent.previous_amount']);
    const camel = GOOD.replace(/([a-z])_([a-z])/g, (_m, a: string, b: string) => a + b.toUpperCase());
    const camelSchema = createWirestreamSchema(`${camel}\ntype Subscription { bidPlaced(listingId: ID): BidEvent @topic(name: "bid-events", key: "listingId", format: AVRO) }\n`);
    const asWritten = await checkSdlAgainstSchemas(camelSchema, registry, { keyStyle: 'none' });
    expect(asWritten.errors).toEqual([]);
    expect((await checkSdlAgainstSchemas(sdl(GOOD), registry, { keyStyle: 'lodash' })).errors).toEqual([]);
    const json = await checkSdlAgainstSchemas(sdl(GOOD, '@topic(name: "bid-events", key: "listing_id")'), registry, { keyStyle: 'snake' });
    expect(json).toEqual({ errors: [], warnings: [], checked: [] });
  });

  it('a subject whose latest schema is not Avro, for a format: AVRO topic, is an error', async () => {
    const client = new MockClient();
    await client.register('bid-events-value', { schemaType: 'JSON', schema: JSON.stringify({ type: 'object', properties: { listing_id: { type: 'string' } } }) }, false);
    const result = await checkSdlAgainstSchemas(sdl(GOOD), createRegistrySubjects(client), { keyStyle: 'snake' });
    expect(messages(result.errors)).toEqual(['topic bid-events, subject bid-events-value: the latest schema (version 1, id 1) is JSON, but @topic says format: AVRO']);
  });
});

describe('checkSdlAgainstSchemas over a schema directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdl-check-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads every version of the subject folder', async () => {
    mkdirSync(join(dir, 'bid-events-value'));
    writeFileSync(join(dir, 'bid-events-value', 'v1.id1.avsc'), JSON.stringify(bidPlaced));
    const v2 = { ...bidPlaced, fields: bidPlaced.fields.filter((f) => f.name !== 'status') };
    writeFileSync(join(dir, 'bid-events-value', 'v2.id7.avsc'), JSON.stringify(v2));
    const directory = loadSchemaDirectory(dir);
    const result = await checkSdlAgainstSchemas(sdl(GOOD), createDirectorySubjects(directory.files, directory.description), { keyStyle: 'snake' });
    expect(result.checked).toEqual(['bid-events-value v1 (id 1)', 'bid-events-value v2 (id 7)']);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((e) => e.field)).toEqual(['BidEvent.status']);
  });
});

// The same bid as Protobuf (proto3) and as JSON Schema: what the check compares on those topics.
const BID_PROTO = `syntax = "proto3";
package demo;
enum BidStatus { PLACED = 0; OUTBID = 1; WON = 2; }
message Money { int64 amountCents = 1; string currencyCode = 2; }
message BidPlaced {
  string listingId = 1;
  string bidderId = 2;
  Money amount = 3;
  BidStatus status = 4;
  optional string note = 5;
  repeated string previousBidderIds = 6;
  Money previousAmount = 7;
}`;
const BID_JSON_SCHEMA = {
  type: 'object',
  title: 'BidPlaced',
  required: ['listingId', 'bidderId', 'amount', 'status', 'previousBidderIds'],
  properties: {
    listingId: { type: 'string' },
    bidderId: { type: 'string' },
    amount: { $ref: '#/$defs/Money' },
    status: { enum: ['PLACED', 'OUTBID', 'WON'] },
    note: { type: 'string' },
    previousBidderIds: { type: 'array', items: { type: 'string' } },
    previousAmount: { $ref: '#/$defs/Money' },
  },
  $defs: { Money: { type: 'object', required: ['amountCents', 'currencyCode'], properties: { amountCents: { type: 'integer' }, currencyCode: { type: 'string' } } } },
};
// int64 is published as a string (Protobuf's JSON mapping): the SDL says String there; a message field may be unset (null);
// a Protobuf enum is open (a number it does not name is published as the number): a scalar, as the generator writes it.
const GOOD_PROTO = GOOD.replace('amount_cents: Float!', 'amount_cents: String!').replace('amount: Money!', 'amount: Money').replace('enum BidStatus { PLACED OUTBID WON }', 'scalar BidStatus');

async function registryOf(subjects: Record<string, { schemaType: 'AVRO' | 'PROTOBUF' | 'JSON'; schema: string }>): Promise<SubjectSchemas> {
  const client = new MockClient();
  for (const [subject, info] of Object.entries(subjects)) await client.register(subject, info, false);
  return createRegistrySubjects(client, 'Schema Registry mock');
}

describe('checkSdlAgainstSchemas on PROTOBUF and JSON_SCHEMA topics', () => {
  const protoTopic = '@topic(name: "bid-events", key: "listing_id", format: PROTOBUF)';
  const jsonTopic = '@topic(name: "bid-events", key: "listing_id", format: JSON_SCHEMA)';

  it('an SDL that selects what the .proto has: nothing to say; a missing field, a non-null message and Int for int64 are told apart', async () => {
    const registry = await registryOf({ 'bid-events-value': { schemaType: 'PROTOBUF', schema: BID_PROTO } });
    expect(await checkSdlAgainstSchemas(sdl(GOOD_PROTO, protoTopic), registry, { keyStyle: 'snake' })).toEqual({ errors: [], warnings: [], checked: ['bid-events-value v1 (id 1)'] });
    const bad = await checkSdlAgainstSchemas(sdl(GOOD_PROTO.replace('note: String', 'note: String!\n  seller_note: String').replace('amount_cents: String!', 'amount_cents: Int!'), protoTopic), registry, { keyStyle: 'snake' });
    expect(messages(bad.errors)).toEqual([
      "topic bid-events, subject bid-events-value, field Money.amount_cents: Int! in the SDL cannot hold the registry's int64 (version 1, id 1, published as string)",
      "topic bid-events, subject bid-events-value, field BidEvent.seller_note: not in the registry's latest schema (version 1, id 1), whose record BidPlaced publishes listing_id, bidder_id, amount, status, note, previous_bidder_ids, previous_amount: remove the field from the SDL, or register a schema version that has it",
    ]);
    expect(messages(bad.warnings)).toEqual([
      'topic bid-events, subject bid-events-value, field BidEvent.note: non-null in the SDL (String!) but nullable in the registry (version 1, id 1): an event with null there fails to render that field; make it nullable',
    ]);
    const closedEnum = await checkSdlAgainstSchemas(sdl(GOOD_PROTO.replace('scalar BidStatus', 'enum BidStatus { PLACED OUTBID WON }'), protoTopic), registry, { keyStyle: 'snake' });
    expect(messages(closedEnum.warnings)).toEqual([
      "topic bid-events, subject bid-events-value, field BidEvent.status: enum BidStatus in the SDL for the registry's open enum BidStatus (version 1, id 1): a number the enum does not name is published as the number, which fails to render; declare a scalar (as wirestream-schema from-registry writes it)",
    ]);
  });

  it('JSON Schema: required → non-null, $defs followed; a missing field is an error, Int for an unbounded integer a warning; a subject of another type an error', async () => {
    const registry = await registryOf({ 'bid-events-value': { schemaType: 'JSON', schema: JSON.stringify(BID_JSON_SCHEMA) } });
    const good = GOOD.replace('amount_cents: Float!', 'amount_cents: Int!');
    const result = await checkSdlAgainstSchemas(sdl(good.replace('status: BidStatus!', 'status: BidStatus!\n  seller_note: String'), jsonTopic), registry, { keyStyle: 'snake' });
    expect(messages(result.errors)).toEqual([expect.stringMatching(/^topic bid-events, subject bid-events-value, field BidEvent.seller_note: not in the registry's latest schema \(version 1, id 1\)/)]);
    expect(messages(result.warnings)).toEqual([expect.stringMatching(/^topic bid-events, subject bid-events-value, field Money.amount_cents: Int! in the SDL for the registry's integer \(version 1, id 1\): GraphQL Int holds 32 bits/)]);
    const wrongType = await checkSdlAgainstSchemas(sdl(GOOD_PROTO, protoTopic), registry, { keyStyle: 'snake' });
    expect(messages(wrongType.errors)).toEqual(['topic bid-events, subject bid-events-value: the latest schema (version 1, id 1) is JSON, but @topic says format: PROTOBUF']);
  });

  it('a snapshot topic’s key schema (its key field comes from the Kafka key in deleted events): a string fits, a record is a warning, a type the field cannot hold an error', async () => {
    const snapshot = (keyFormat: string) => `@topic(name: "bid-events", key: "listing_id", format: PROTOBUF, keyFormat: ${keyFormat}, snapshot: true)`;
    const value = { schemaType: 'PROTOBUF' as const, schema: BID_PROTO };
    const stringKey = await registryOf({ 'bid-events-value': value, 'bid-events-key': { schemaType: 'AVRO', schema: '"string"' } });
    expect(await checkSdlAgainstSchemas(sdl(GOOD_PROTO, snapshot('AVRO')), stringKey, { keyStyle: 'snake' })).toEqual({ errors: [], warnings: [], checked: ['bid-events-value v1 (id 1)', 'bid-events-key v1 (id 2)'] });
    const boolKey = await registryOf({ 'bid-events-value': value, 'bid-events-key': { schemaType: 'AVRO', schema: '"boolean"' } });
    expect(messages((await checkSdlAgainstSchemas(sdl(GOOD_PROTO, snapshot('AVRO')), boolKey, { keyStyle: 'snake' })).errors)).toEqual([
      'topic bid-events, subject bid-events-key, field BidEvent.listing_id: ID! in the SDL cannot hold the key\'s boolean (version 1, id 2), which deleted events carry as listing_id',
    ]);
    const messageKey = await registryOf({ 'bid-events-value': value, 'bid-events-key': { schemaType: 'PROTOBUF', schema: 'syntax = "proto3"; message BidKey { string listing_id = 1; }' } });
    const withMessageKey = await checkSdlAgainstSchemas(sdl(GOOD_PROTO, snapshot('PROTOBUF')), messageKey, { keyStyle: 'snake' });
    expect(withMessageKey.errors).toEqual([]);
    expect(messages(withMessageKey.warnings)).toEqual([expect.stringMatching(/^topic bid-events, subject bid-events-key, field BidEvent.listing_id: the key's latest schema \(version 1, id 2\) is record BidKey: a tombstone's deleted event carries its JSON text as listing_id/)]);
    const avroIsNotProtobuf = await checkSdlAgainstSchemas(sdl(GOOD_PROTO, snapshot('PROTOBUF')), stringKey, { keyStyle: 'snake' });
    expect(messages(avroIsNotProtobuf.errors)).toEqual(['topic bid-events, subject bid-events-key, field BidEvent.listing_id: the key\'s latest schema (version 1, id 2) is AVRO, but @topic says keyFormat: PROTOBUF']);
  });
});
