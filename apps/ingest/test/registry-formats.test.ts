// Integration: a PROTOBUF topic and a JSON_SCHEMA topic (Confluent wire format) through createIngest,
// a real Kafka broker (shared per run, ../global-setup.ts) and a real redis-server. Every good message
// is written by Confluent's own ProtobufSerializer / JsonSerializer, its schema registered in
// Confluent's MockClient (the vendor's in-memory registry): the bytes are what Confluent producers
// write. Malformed ones are dead-lettered with a reason naming the topic and the id; good ones are
// published once each, in order, around them.
import { JsonSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { Kafka, logLevel } from 'kafkajs';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createRegistryClient, createRegistrySource, createSchemaDecoders, type SchemaSource } from '@wirestream/registry';
import { createWirestreamSchema } from '@wirestream/schema';
import { createEnvelopeBatchAssembler, decodeEnvelope, type Envelope } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { toSnakeCase } from '@wirestream/transform';
import { confluentProtobufSerializer, createTopics, freePort, uniqueName, waitFor } from '@wirestream/testkit';
import { createIngest, DEAD_LETTER_HEADERS, kafkaLogCreator } from '../src/index.js';
import { useKafkaRedis } from './support/kafka-redis.js';

const servers = useKafkaRedis('formats-test');

const CHANNEL_PREFIX = 'ws';
const ARRIVAL_TIMEOUT_MS = 20_000; // 20 seconds: includes the first group join of a test

const BID_PROTO = `
syntax = "proto3";
package demo.auction;
import "google/protobuf/timestamp.proto";
enum BidStatus { BID_STATUS_UNSPECIFIED = 0; PLACED = 1; OUTBID = 2; }
message BidPlaced {
  string listing_id = 1;
  int64 amount_cents = 2;
  google.protobuf.Timestamp placed_at = 3;
  BidStatus status = 4;
  repeated string tags = 5;
}
`;

const LISTING_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'ListingUpdated',
  type: 'object',
  properties: { listingId: { type: 'string' }, title: { type: 'string', minLength: 1 }, priceCents: { type: 'integer', minimum: 0 } },
  required: ['listingId', 'title'],
};

const sdl = (bidTopic: string, listingTopic: string) => `
type BidEvent { listing_id: ID! amount_cents: String! placed_at: String status: String! tags: [String!]! }
type ListingEvent { listing_id: ID! title: String! price_cents: Int }
type Subscription {
  bidPlaced(listing_id: ID): BidEvent @topic(name: "${bidTopic}", key: "listing_id", shards: 4, format: PROTOBUF, keyFormat: PROTOBUF)
  listingUpdated(listing_id: ID): ListingEvent @topic(name: "${listingTopic}", key: "listing_id", shards: 4, format: JSON_SCHEMA)
}`;

async function createPipeline(source?: (client: MockClient) => SchemaSource) {
  const suffix = uniqueName('formats');
  const bidTopic = `bid-proto-${suffix}`;
  const listingTopic = `listing-jsonschema-${suffix}`;
  await createTopics(servers.admin, [bidTopic, listingTopic].map((topic) => ({ topic, numPartitions: 2 })));
  const client = new MockClient();
  const sink = createMemorySink();
  const logger = createLogger({ name: 'formats-test', destination: sink });
  const kafka = new Kafka({ clientId: 'formats-test', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
  const publisher = new Redis(servers.redisServer.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectionName: 'formats-test-publisher' });
  const subscriber = new Redis(servers.redisServer.url, { connectionName: 'formats-test-subscriber' });
  const received: Envelope[] = [];
  const assembler = createEnvelopeBatchAssembler({
    emit: (_channel, text) => received.push(decodeEnvelope(text)),
    listens: () => true,
    onMalformed: (channel, _text, err) => {
      throw new Error(`a malformed batch part on ${channel}`, { cause: err });
    },
  });
  subscriber.on('pmessage', (_pattern: string, channel: string, text: string) => assembler.message(channel, channel, text));
  await subscriber.psubscribe(`${CHANNEL_PREFIX}:${bidTopic}:*`, `${CHANNEL_PREFIX}:${listingTopic}:*`);
  const ingest = createIngest(
    { kafka, redis: publisher, schema: createWirestreamSchema(sdl(bidTopic, listingTopic)), logger, schemaDecoders: createSchemaDecoders({ source: source?.(client) ?? createRegistrySource(client, 'Schema Registry (MockClient)'), fieldName: toSnakeCase }) },
    { groupId: `group-${suffix}`, channelPrefix: CHANNEL_PREFIX, historyPrefix: `wsh-${suffix}`, retryBackoffMs: 50 },
  );
  onTestFinished(async () => {
    await ingest.stop();
    publisher.disconnect();
    subscriber.disconnect();
  });
  return { bidTopic, listingTopic, client, ingest, received, sink, of: (topic: string) => received.filter((e) => e.topic === topic) };
}

describe('PROTOBUF and JSON_SCHEMA topics (Confluent wire format)', () => {
  it('publishes the good messages once each and dead-letters the malformed ones with a reason naming the topic and the id', async () => {
    const p = await createPipeline();
    const values = confluentProtobufSerializer(p.client, BID_PROTO);
    const keys = confluentProtobufSerializer(p.client, 'syntax = "proto3"; package demo.auction; message BidKey { string listing_id = 1; }', { serdeType: 'KEY', fileName: 'key.proto' });
    const listings = new JsonSerializer(p.client, SerdeType.VALUE, { useLatestVersion: true });
    await p.client.register(`${p.listingTopic}-value`, { schemaType: 'JSON', schema: JSON.stringify(LISTING_SCHEMA) });
    await p.ingest.start();

    const bid = (n: number) =>
      values.serialize(p.bidTopic, 'demo.auction.BidPlaced', { listingId: 'lst-1', amountCents: 9_007_199_254_740_990n + BigInt(n), placedAt: { seconds: 1_764_617_400n + BigInt(n), nanos: 0 }, status: 1 + (n % 2), tags: [`t${n}`] });
    const key = await keys.serialize(p.bidTopic, 'demo.auction.BidKey', { listingId: 'lst-1' });
    const goodBid = await bid(0);
    const bidId = goodBid.readUInt32BE(1);
    const unknownId = Buffer.from(goodBid);
    unknownId.writeUInt32BE(4242, 1);
    // A good body behind the id of an Avro schema: a producer of another format on this topic.
    const avroId = await p.client.register('other-avro-value', { schemaType: 'AVRO', schema: '{"type":"record","name":"R","fields":[]}' });
    const avroValue = Buffer.from(goodBid);
    avroValue.writeUInt32BE(avroId, 1);
    const badBids = [
      { value: Buffer.concat([Buffer.from([1]), goodBid.subarray(1)]), code: 'NOT_WIRE_FORMAT', detail: `topic ${p.bidTopic} is read as a registry format (@topic(format: PROTOBUF)), but the value starts with byte 1, not the wire format's magic byte 0` },
      { value: unknownId, code: 'UNKNOWN_SCHEMA_ID', detail: `topic ${p.bidTopic}: schema id 4242 is not in the Schema Registry (MockClient)` },
      { value: goodBid.subarray(0, goodBid.length - 3), code: 'UNDECODABLE', detail: `topic ${p.bidTopic}: the value does not decode with PROTOBUF schema id ${bidId}: ` },
      { value: Buffer.concat([goodBid.subarray(0, 5), Buffer.from([0x02, 0x0e]), goodBid.subarray(6)]), code: 'UNDECODABLE', detail: `topic ${p.bidTopic}: the value does not decode with PROTOBUF schema id ${bidId}: message index 7 is out of range: the schema has 1 top-level messages` },
      { value: avroValue, code: 'UNSUPPORTED_SCHEMA', detail: `topic ${p.bidTopic} is @topic(format: PROTOBUF), but schema id ${avroId} is a AVRO schema` },
      // A string that is not UTF-8 (byte 0xff inside "lst-1"): undecodable, as in Avro and JSON Schema, not published with U+FFFD.
      { value: invalidUtf8(goodBid, 'lst-1', 6), code: 'UNDECODABLE', detail: `topic ${p.bidTopic}: the value does not decode with PROTOBUF schema id ${bidId}: a string field is not valid UTF-8` },
    ];

    const bidMessages: { key: Buffer; value: Buffer }[] = [];
    for (let n = 0; n < badBids.length; n++) bidMessages.push({ key, value: await bid(n + 1) }, { key, value: (badBids[n] as { value: Buffer }).value });
    bidMessages.push({ key: Buffer.from('lst-1'), value: await bid(99) }); // a key that is not in the wire format
    await servers.producer.send({ topic: p.bidTopic, acks: -1, messages: bidMessages });

    const listing = (value: unknown) => listings.serialize(p.listingTopic, value);
    const goodListing = await listing({ listingId: 'lst-1', title: 'Lamp', priceCents: 100 });
    const listingId = goodListing.readUInt32BE(1);
    const badListings = [
      { value: await listing({ listingId: 'lst-1', title: '' }), code: 'SCHEMA_VIOLATION', detail: `topic ${p.listingTopic}: the value does not conform to JSON Schema id ${listingId}: at /title: must NOT have fewer than 1 characters (schema rule #/properties/title/minLength)` },
      { value: await listing({ listingId: 'lst-1', title: 'Lamp', priceCents: -5 }), code: 'SCHEMA_VIOLATION', detail: `topic ${p.listingTopic}: the value does not conform to JSON Schema id ${listingId}: at /priceCents: must be >= 0` },
      { value: await listing({ listingId: 'lst-1' }), code: 'SCHEMA_VIOLATION', detail: `at /: must have required property 'title'` },
      { value: Buffer.concat([goodListing.subarray(0, 5), Buffer.from('{"listingId": "lst-1", "title": ')]), code: 'UNDECODABLE', detail: `topic ${p.listingTopic}: the value does not conform to JSON Schema id ${listingId}: the body is not valid JSON: ` },
      { value: invalidUtf8(goodListing, 'Lamp', 5), code: 'UNDECODABLE', detail: `topic ${p.listingTopic}: the value does not conform to JSON Schema id ${listingId}: the body is not valid UTF-8` },
      { value: Buffer.from(JSON.stringify({ listingId: 'lst-1', title: 'Lamp' })), code: 'NOT_WIRE_FORMAT', detail: `topic ${p.listingTopic} is read as a registry format (@topic(format: JSON_SCHEMA)), but the value starts with byte 123` },
      { value: (() => { const b = Buffer.from(goodListing); b.writeUInt32BE(9999, 1); return b; })(), code: 'UNKNOWN_SCHEMA_ID', detail: `topic ${p.listingTopic}: schema id 9999 is not in the Schema Registry (MockClient)` },
    ];
    const listingMessages: { key: string; value: Buffer }[] = [];
    for (let n = 0; n < badListings.length; n++) listingMessages.push({ key: 'lst-1', value: await listing({ listingId: 'lst-1', title: `Lamp ${n}`, priceCents: n }) }, { key: 'lst-1', value: (badListings[n] as { value: Buffer }).value });
    await servers.producer.send({ topic: p.listingTopic, acks: -1, messages: listingMessages });

    const deadBids = badBids.length + 1;
    await waitFor(() => p.of(p.bidTopic).length === badBids.length && p.of(p.listingTopic).length === badListings.length && p.ingest.stats.deadLettered === deadBids + badListings.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `${badBids.length + badListings.length} envelopes and ${deadBids + badListings.length} dead letters`,
    });

    // One key per topic, one partition each: the good envelopes come in offset order, once each.
    const bids = p.of(p.bidTopic);
    expect(bids.map((e) => e.payload['amount_cents'])).toEqual(badBids.map((_, n) => n + 1).map((n) => String(9_007_199_254_740_990n + BigInt(n))));
    expect(bids[0]).toMatchObject({ key: '{"listing_id":"lst-1"}', payload: { listing_id: 'lst-1', placed_at: '2025-12-01T19:30:01Z', status: 'OUTBID', tags: ['t1'] } });
    const listingEnvelopes = p.of(p.listingTopic);
    expect(listingEnvelopes.map((e) => e.payload)).toEqual(badListings.map((_, n) => ({ listing_id: 'lst-1', title: `Lamp ${n}`, price_cents: n })));
    expect(listingEnvelopes[0]?.key).toBe('lst-1');
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more arrives
    expect(p.received.length).toBe(badBids.length + badListings.length);
    expect(p.ingest.stats).toMatchObject({ published: badBids.length + badListings.length, deadLettered: deadBids + badListings.length });
    // Every schema was read: a partition may pause only while the registry is slow (over 1 s, which a
    // loaded test run can take even in process), never because a schema could not be read.
    expect(p.sink.lines.filter((l) => /could not be read/.test(String(l['msg'])))).toEqual([]);

    // The plain-text key hashes to another partition than the others (whose dead letters keep their order): looked up apart.
    const deadBidLetters = await readDeadLetters(`${p.bidTopic}.dlq`, deadBids);
    const keyDetail = `topic ${p.bidTopic}: the key is read as a registry format (@topic(keyFormat: PROTOBUF)), but the key starts with byte 108, not the wire format's magic byte 0`;
    const keyLetters = deadBidLetters.filter((d) => d.headers[DEAD_LETTER_HEADERS.detail] === keyDetail);
    expect(keyLetters.map((d) => d.headers[DEAD_LETTER_HEADERS.reason])).toEqual(['NOT_WIRE_FORMAT']);
    const valueLetters = deadBidLetters.filter((d) => !keyLetters.includes(d));
    expect(valueLetters.map((d) => d.headers[DEAD_LETTER_HEADERS.reason])).toEqual(badBids.map((b) => b.code));
    badBids.forEach((bad, i) => {
      expect(valueLetters[i]?.headers[DEAD_LETTER_HEADERS.detail]).toContain(bad.detail);
      expect(valueLetters[i]?.value).toEqual(bad.value); // untouched
    });
    const deadListingLetters = await readDeadLetters(`${p.listingTopic}.dlq`, badListings.length);
    expect(deadListingLetters.map((d) => d.headers[DEAD_LETTER_HEADERS.reason])).toEqual(badListings.map((b) => b.code));
    badListings.forEach((bad, i) => expect(deadListingLetters[i]?.headers[DEAD_LETTER_HEADERS.detail]).toContain(bad.detail));
  });
});

describe('PROTOBUF and JSON_SCHEMA topics while the registry is down', () => {
  it('pauses the partitions whose value and key ids are not loaded, dead-letters nothing, and resumes', async () => {
    // Phase 1: Confluent's real HTTP client against a port nobody listens on. Phase 2: the registry (MockClient) answers.
    const down = createRegistrySource(await createRegistryClient({ urls: [`http://127.0.0.1:${await freePort()}`], timeoutMs: 500 }), 'Schema Registry (down)');
    let reachable = false;
    let failures = 0;
    const p = await createPipeline((client) => {
      const up = createRegistrySource(client, 'Schema Registry (MockClient)');
      return { description: 'Schema Registry', schemaById: (id) => (reachable ? up.schemaById(id) : down.schemaById(id).finally(() => failures++)), schemaByVersion: (s, v) => up.schemaByVersion(s, v) };
    });
    const values = confluentProtobufSerializer(p.client, BID_PROTO);
    const keys = confluentProtobufSerializer(p.client, 'syntax = "proto3"; package demo.auction; message BidKey { string listing_id = 1; }', { serdeType: 'KEY', fileName: 'key.proto' });
    const listings = new JsonSerializer(p.client, SerdeType.VALUE, { useLatestVersion: true });
    await p.client.register(`${p.listingTopic}-value`, { schemaType: 'JSON', schema: JSON.stringify(LISTING_SCHEMA) });
    await p.ingest.start();
    const key = await keys.serialize(p.bidTopic, 'demo.auction.BidKey', { listingId: 'lst-2' });
    const bids = await Promise.all([1, 2, 3].map(async (n) => ({ key, value: await values.serialize(p.bidTopic, 'demo.auction.BidPlaced', { listingId: 'lst-2', amountCents: BigInt(n), status: 1 }) })));
    const listingValues = await Promise.all([1, 2].map(async (n) => ({ key: 'lst-2', value: await listings.serialize(p.listingTopic, { listingId: 'lst-2', title: `Desk ${n}` }) })));
    await servers.producer.send({ topic: p.bidTopic, acks: -1, messages: bids });
    await servers.producer.send({ topic: p.listingTopic, acks: -1, messages: listingValues });
    await waitFor(() => p.ingest.stats.schemaPauses >= 2 && failures >= 3, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'both partitions paused and the lookups retried' });
    expect(p.received).toEqual([]);
    expect(p.ingest.stats.deadLettered).toBe(0);

    reachable = true;
    await waitFor(() => p.received.length === 5, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: '5 envelopes after the registry is back' });
    expect(p.of(p.bidTopic).map((e) => e.payload['amount_cents'])).toEqual(['1', '2', '3']);
    expect(p.of(p.listingTopic).map((e) => e.payload['title'])).toEqual(['Desk 1', 'Desk 2']);
    expect(p.ingest.stats).toMatchObject({ published: 5, deadLettered: 0 });
    expect(p.sink.lines.some((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('schemas loaded from Schema Registry: resumed'))).toBe(true);
  });
});

describe('schema references (a Protobuf import of another subject, a JSON Schema $ref to another subject)', () => {
  it('resolves them through the registry, cached with the schema; a reference the registry does not have dead-letters UNSUPPORTED_SCHEMA naming it', async () => {
    const p = await createPipeline();
    // Confluent's ProtobufSerializer registers the imported file under its own name and the schema with a reference to it.
    const MONEY_PROTO = 'syntax = "proto3"; package demo.common; message Money { int64 cents = 1; string currency = 2; }';
    const values = confluentProtobufSerializer(p.client, BID_PROTO.replace('import "google/protobuf/timestamp.proto";', 'import "google/protobuf/timestamp.proto";\nimport "demo/common/money.proto";').replace('repeated string tags = 5;', 'repeated string tags = 5;\n  demo.common.Money deposit = 6;'), {
      imports: { 'demo/common/money.proto': MONEY_PROTO },
    });
    // JSON Schema: the referenced schema registered first, the listing schema naming it by the URL its $ref uses.
    await p.client.register('money-json', { schemaType: 'JSON', schema: JSON.stringify({ type: 'object', required: ['cents'], properties: { cents: { type: 'integer', minimum: 0 }, currency: { type: 'string' } } }) });
    const withRef = { ...LISTING_SCHEMA, properties: { ...LISTING_SCHEMA.properties, deposit: { $ref: 'money.json' } } };
    await p.client.register(`${p.listingTopic}-value`, { schemaType: 'JSON', schema: JSON.stringify(withRef), references: [{ name: 'money.json', subject: 'money-json', version: 1 }] });
    const listings = new JsonSerializer(p.client, SerdeType.VALUE, { useLatestVersion: true });
    // A schema whose reference names a subject the registry does not have (registered by hand: serializers refuse it).
    const brokenId = await p.client.register('broken-value', { schemaType: 'JSON', schema: JSON.stringify(withRef), references: [{ name: 'money.json', subject: 'no-such-subject', version: 3 }] });
    await p.ingest.start();

    const keys = confluentProtobufSerializer(p.client, 'syntax = "proto3"; package demo.auction; message BidKey { string listing_id = 1; }', { serdeType: 'KEY', fileName: 'key.proto' });
    const bidKey = await keys.serialize(p.bidTopic, 'demo.auction.BidKey', { listingId: 'lst-9' });
    const bids = await Promise.all([1, 2].map(async (n) => ({ key: bidKey, value: await values.serialize(p.bidTopic, 'demo.auction.BidPlaced', { listingId: 'lst-9', amountCents: BigInt(n), status: 1, deposit: { cents: BigInt(100 * n), currency: 'EUR' } }) })));
    const good = await listings.serialize(p.listingTopic, { listingId: 'lst-9', title: 'Chair', deposit: { cents: 250, currency: 'EUR' } });
    const violating = await listings.serialize(p.listingTopic, { listingId: 'lst-9', title: 'Chair', deposit: { cents: 5 } }).then((b) => {
      // Valid for the serializer; made to break the referenced schema's minimum (cents: -5) in the body: JSON text edited in place.
      return Buffer.concat([b.subarray(0, 5), Buffer.from(b.subarray(5).toString('utf8').replace('"cents":5', '"cents":-5'))]);
    });
    const broken = Buffer.from(good);
    broken.writeUInt32BE(brokenId, 1);
    await servers.producer.send({ topic: p.bidTopic, acks: -1, messages: bids });
    await servers.producer.send({ topic: p.listingTopic, acks: -1, messages: [good, violating, broken].map((value) => ({ key: 'lst-9', value })) });

    await waitFor(() => p.received.length === 3 && p.ingest.stats.deadLettered === 2, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: '3 envelopes and 2 dead letters' });
    expect(p.of(p.bidTopic).map((e) => e.payload['deposit'])).toEqual([{ cents: '100', currency: 'EUR' }, { cents: '200', currency: 'EUR' }]);
    expect(p.of(p.listingTopic).map((e) => e.payload['deposit'])).toEqual([{ cents: 250, currency: 'EUR' }]);
    const dead = await readDeadLetters(`${p.listingTopic}.dlq`, 2);
    expect(dead.map((d) => d.headers[DEAD_LETTER_HEADERS.reason])).toEqual(['SCHEMA_VIOLATION', 'UNSUPPORTED_SCHEMA']);
    expect(dead[0]?.headers[DEAD_LETTER_HEADERS.detail]).toContain('at /deposit/cents: must be >= 0');
    expect(dead[1]?.headers[DEAD_LETTER_HEADERS.detail]).toContain(`schema id ${brokenId} (JSON) from the Schema Registry (MockClient): its reference money.json names version 3 of subject no-such-subject, which the source does not have`);
  });
});

/** Reads `count` dead letters from the start of `topic` (waits for them). */
async function readDeadLetters(topic: string, count: number): Promise<{ value: Buffer | null; headers: Record<string, string> }[]> {
  const reader = new Kafka({ clientId: 'dlq-reader', brokers: servers.brokers, logLevel: logLevel.ERROR }).consumer({ groupId: uniqueName('dlq-reader'), maxWaitTimeInMs: 250 });
  const dead: { value: Buffer | null; headers: Record<string, string> }[] = [];
  await reader.connect();
  try {
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        dead.push({ value: message.value, headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])) });
        return Promise.resolve();
      },
    });
    await waitFor(() => dead.length >= count, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: `${count} dead letters in ${topic}` });
    return dead;
  } finally {
    await reader.disconnect();
  }
}

/** `bytes` with the second byte of `text` (found after `from`) replaced by 0xff, which UTF-8 never has: the same length, no longer UTF-8. */
function invalidUtf8(bytes: Buffer, text: string, from: number): Buffer {
  const copy = Buffer.from(bytes);
  const at = copy.indexOf(text, from);
  if (at < 0) throw new Error(`${text} is not in the message`);
  copy[at + 1] = 0xff;
  return copy;
}
