// Integration: topics in the Confluent wire format (@topic(format: AVRO)) through createIngest, a
// real Kafka broker (shared per run, ../global-setup.ts) and a real redis-server. Every message is
// written by Confluent's own AvroSerializer, its schema registered in Confluent's MockClient (the
// vendor's in-memory registry) or read from a schema directory: the bytes are what Confluent
// producers write. Nothing imitates a registry: the outage test points Confluent's real HTTP client
// at a port nobody listens on.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { Kafka, logLevel, type Message } from 'kafkajs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createRegistryClient, createRegistrySource, createSchemaDecoders, loadSchemaDirectory, type SchemaSource } from '@wirestream/registry';
import { createWirestreamSchema } from '@wirestream/schema';
import { createEnvelopeBatchAssembler, decodeEnvelope, type Envelope } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { toSnakeCase } from '@wirestream/transform';
import { createTopics, freePort, uniqueName, waitFor } from '@wirestream/testkit';
import { createIngest, DEAD_LETTER_HEADERS, kafkaLogCreator, type Ingest } from '../src/index.js';
import { useKafkaRedis } from './support/kafka-redis.js';

const servers = useKafkaRedis('wire-test');

const CHANNEL_PREFIX = 'ws';
const ARRIVAL_TIMEOUT_MS = 20_000; // 20 seconds: includes the first group join of a test
// A minute before the run, not a fixed date: the test broker keeps 24 h (log.retention.hours), so
// records stamped with an older CreateTime can be deleted by retention in the middle of a test.
const BASE_TS = Date.now() - 60_000;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** v1 of the bid schema; v2 adds a field with a default, v3 removes one (backward-compatible evolutions). */
const bidV1 = {
  type: 'record',
  name: 'BidPlaced',
  namespace: 'demo.auction',
  fields: [
    { name: 'listingId', type: 'string' },
    { name: 'bidId', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'amountCents', type: 'long' },
    { name: 'placedAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 2 } },
    { name: 'bidder', type: { type: 'record', name: 'Bidder', fields: [{ name: 'bidderId', type: 'string' }, { name: 'displayName', type: ['null', 'string'], default: null }] } },
    { name: 'status', type: { type: 'enum', name: 'BidStatus', symbols: ['PLACED', 'OUTBID'] } },
  ],
};
const bidV2 = { ...bidV1, fields: [...bidV1.fields, { name: 'proxyMaxCents', type: ['null', 'long'], default: null }] };
const bidV3 = { ...bidV2, fields: bidV2.fields.filter((f) => f.name !== 'status') };

function bidValue(n: number, listingId: string): Record<string, unknown> {
  return {
    listingId,
    bidId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    amountCents: 10_000 + n,
    placedAt: BASE_TS + n,
    price: Buffer.from([(10_000 + n) >> 8, (10_000 + n) & 0xff]), // unscaled, big-endian: 100.00 + n/100
    bidder: { bidderId: `u-${n % 3}`, displayName: n % 2 === 0 ? `User ${n % 3}` : null },
    status: n % 2 === 0 ? 'PLACED' : 'OUTBID',
    proxyMaxCents: n % 4 === 0 ? 20_000 + n : null,
  };
}

/** What ingest must publish for `bidValue(n)` written with schema `version`. */
function expectedPayload(n: number, listingId: string, version: 1 | 2 | 3): Record<string, unknown> {
  const unscaled = 10_000 + n;
  const payload: Record<string, unknown> = {
    listing_id: listingId,
    bid_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    amount_cents: 10_000 + n,
    placed_at: new Date(BASE_TS + n).toISOString(),
    price: `${Math.floor(unscaled / 100)}.${String(unscaled % 100).padStart(2, '0')}`,
    bidder: { bidder_id: `u-${n % 3}`, display_name: n % 2 === 0 ? `User ${n % 3}` : null },
    status: n % 2 === 0 ? 'PLACED' : 'OUTBID',
  };
  if (version >= 2) payload['proxy_max_cents'] = n % 4 === 0 ? 20_000 + n : null;
  if (version === 3) delete payload['status'];
  return payload;
}

const sdl = (bidTopic: string, listingTopic: string, keyFormat = 'STRING') => `
type Bidder { bidder_id: ID! display_name: String }
type BidEvent { listing_id: ID! bid_id: ID! amount_cents: Float! placed_at: String! price: String! bidder: Bidder! status: String proxy_max_cents: Float }
type ListingEvent { listing_id: ID! title: String }
type Subscription {
  bidPlaced(listing_id: ID): BidEvent @topic(name: "${bidTopic}", key: "listing_id", shards: 4, format: AVRO, keyFormat: ${keyFormat})
  listingUpdated(listing_id: ID): ListingEvent @topic(name: "${listingTopic}", key: "listing_id", shards: 4)
}`;

/** Unique topics, a subscriber on their channels, and an ingest over `source`. */
async function createWirePipeline(source: SchemaSource, keyFormat = 'STRING') {
  const suffix = uniqueName('wire');
  const bidTopic = `bid-avro-${suffix}`;
  const listingTopic = `listing-json-${suffix}`;
  const schema = createWirestreamSchema(sdl(bidTopic, listingTopic, keyFormat));
  await createTopics(servers.admin, [bidTopic, listingTopic].map((topic) => ({ topic, numPartitions: 2 })));
  const sink = createMemorySink();
  const logger = createLogger({ name: 'wire-test', destination: sink });
  const kafka = new Kafka({ clientId: 'wire-test', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
  const publisher = new Redis(servers.redisServer.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectionName: 'wire-test-publisher' });
  const subscriber = new Redis(servers.redisServer.url, { connectionName: 'wire-test-subscriber' });
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
  const schemaDecoders = createSchemaDecoders({ source, fieldName: toSnakeCase });
  const ingest: Ingest = createIngest(
    { kafka, redis: publisher, schema, logger, schemaDecoders },
    { groupId: `group-${suffix}`, channelPrefix: CHANNEL_PREFIX, historyPrefix: `wsh-${suffix}`, retryBackoffMs: 50 },
  );
  onTestFinished(async () => {
    await ingest.stop();
    publisher.disconnect();
    subscriber.disconnect();
  });
  let produced = 0;
  return {
    bidTopic,
    listingTopic,
    ingest,
    received,
    sink,
    bids: () => received.filter((e) => e.topic === bidTopic),
    async send(topic: string, messages: readonly { key: string | Buffer; value: Buffer | string }[]): Promise<void> {
      const batch: Message[] = messages.map((m) => ({ key: m.key, value: m.value, timestamp: String(BASE_TS + produced++) }));
      await servers.producer.send({ topic, acks: -1, messages: batch });
    },
  };
}

/** Confluent's serializer writing with the latest version of `<topic>-value` in `client`. */
function confluentSerializer(client: MockClient) {
  const serializer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  return (topic: string, value: unknown): Promise<Buffer> => serializer.serialize(topic, value);
}

describe('Avro topics (Confluent wire format)', () => {
  it('publishes each Avro event as the envelope of its mapped JSON payload, beside a JSON topic', async () => {
    const client = new MockClient();
    const pipeline = await createWirePipeline(createRegistrySource(client, 'Schema Registry (MockClient)'));
    const id = await client.register(`${pipeline.bidTopic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(bidV1) });
    const serialize = confluentSerializer(client);
    await pipeline.ingest.start();
    const listings = ['lst-1', 'lst-2', 'lst-3'];
    const bids = await Promise.all(Array.from({ length: 30 }, async (_, n) => ({ key: listings[n % 3] as string, value: await serialize(pipeline.bidTopic, bidValue(n, listings[n % 3] as string)) })));
    expect(bids[0]?.value.subarray(0, 5)).toEqual(Buffer.from([0, 0, 0, 0, id]));
    await pipeline.send(pipeline.bidTopic, bids);
    await pipeline.send(pipeline.listingTopic, [{ key: 'lst-1', value: JSON.stringify({ listingId: 'lst-1', title: 'Lamp' }) }]);
    await waitFor(() => pipeline.received.length === 31, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: '31 envelopes' });

    const byBid = new Map(pipeline.bids().map((e) => [e.payload['bid_id'], e]));
    for (let n = 0; n < 30; n++) {
      const listingId = listings[n % 3] as string;
      const envelope = byBid.get(`00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
      expect(envelope).toMatchObject({ v: 1, topic: pipeline.bidTopic, key: listingId });
      expect(envelope?.payload).toEqual(expectedPayload(n, listingId, 1));
    }
    expect(pipeline.received.find((e) => e.topic === pipeline.listingTopic)?.payload).toEqual({ listing_id: 'lst-1', title: 'Lamp' });
    expect(pipeline.ingest.stats).toMatchObject({ consumed: 31, published: 31, deadLettered: 0, schemaPauses: 0 });
  });

  it('follows schema evolution from a schema directory: a field added, a field removed, new ids mid-stream', async () => {
    // Ids as Confluent's registry hands them out (MockClient numbers from 1), pinned in files.
    const client = new MockClient();
    const dir = mkdtempSync(join(tmpdir(), 'wirestream-wire-'));
    dirs.push(dir);
    const subject = 'bids-value';
    mkdirSync(join(dir, subject));
    const ids: number[] = [];
    for (const [version, schema] of [bidV1, bidV2, bidV3].entries()) {
      const id = await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(schema) });
      ids.push(id);
      writeFileSync(join(dir, subject, `v${version + 1}.id${id}.avsc`), JSON.stringify(schema, null, 2));
    }
    const pipeline = await createWirePipeline(loadSchemaDirectory(dir));
    await pipeline.ingest.start();
    // Three producers, one per schema version, interleaved on one key so one partition sees the id change back and forth.
    const serializers = [1, 2, 3].map((version) => {
      const serializer = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: ids[version - 1] as number });
      return (n: number) => serializer.serialize('bids', bidValue(n, 'lst-9'));
    });
    const versionOf = (n: number): 1 | 2 | 3 => (n < 10 ? 1 : n < 20 ? 2 : n < 25 ? 3 : ((n % 3) + 1) as 1 | 2 | 3);
    const messages = await Promise.all(Array.from({ length: 40 }, async (_, n) => ({ key: 'lst-9', value: await (serializers[versionOf(n) - 1] as (n: number) => Promise<Buffer>)(n) })));
    await pipeline.send(pipeline.bidTopic, messages);
    await waitFor(() => pipeline.received.length === 40, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: '40 envelopes' });

    // One key, one partition: the envelopes come in offset order.
    const bids = pipeline.bids();
    expect(bids.map((e) => e.payload['amount_cents'])).toEqual(Array.from({ length: 40 }, (_, n) => 10_000 + n));
    const counts = { 1: 0, 2: 0, 3: 0 };
    bids.forEach((envelope, n) => {
      const version = versionOf(n);
      expect(envelope.payload).toEqual(expectedPayload(n, 'lst-9', version));
      counts[version]++;
    });
    expect(counts).toEqual({ 1: 15, 2: 15, 3: 10 });
    expect(pipeline.ingest.stats).toMatchObject({ published: 40, deadLettered: 0 });
  });

  it('dead-letters bytes it cannot read, with a reason naming the topic and the id, and keeps the partition flowing', async () => {
    const client = new MockClient();
    const pipeline = await createWirePipeline(createRegistrySource(client, 'Schema Registry (MockClient)'));
    const id = await client.register(`${pipeline.bidTopic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(bidV1) });
    const serialize = confluentSerializer(client);
    await pipeline.ingest.start();
    const good = (n: number) => serialize(pipeline.bidTopic, bidValue(n, 'lst-1'));
    const valid = await good(1);
    const unknownId = Buffer.from(valid);
    unknownId.writeUInt32BE(4242, 1);
    const bad = [
      { name: 'JSON', value: Buffer.from(JSON.stringify({ listingId: 'lst-1' })), code: 'NOT_WIRE_FORMAT', detail: `topic ${pipeline.bidTopic} is read as a registry format (@topic(format: AVRO)), but the value starts with byte 123, not the wire format's magic byte 0 (it starts with "{": JSON written to a topic declared with a registry format?)` },
      { name: 'wrong magic byte', value: Buffer.concat([Buffer.from([1]), valid.subarray(1)]), code: 'NOT_WIRE_FORMAT', detail: "value starts with byte 1, not the wire format's magic byte 0" },
      { name: 'unknown id', value: unknownId, code: 'UNKNOWN_SCHEMA_ID', detail: `topic ${pipeline.bidTopic}: schema id 4242 is not in the Schema Registry (MockClient)` },
      { name: 'truncated body', value: valid.subarray(0, valid.length - 4), code: 'UNDECODABLE', detail: `topic ${pipeline.bidTopic}: the value does not decode with AVRO schema id ${id}: truncated buffer` },
      { name: 'short header', value: Buffer.from([0, 0, 1]), code: 'NOT_WIRE_FORMAT', detail: "value is 3 bytes, shorter than the wire format's 5-byte header" },
    ];
    const messages: { key: string; value: Buffer }[] = [];
    for (let n = 0; n < bad.length; n++) messages.push({ key: 'lst-1', value: await good(100 + n) }, { key: 'lst-1', value: (bad[n] as { value: Buffer }).value });
    messages.push({ key: 'lst-1', value: await good(200) });
    await pipeline.send(pipeline.bidTopic, messages);
    await waitFor(() => pipeline.received.length === bad.length + 1 && pipeline.ingest.stats.deadLettered === bad.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `${bad.length + 1} envelopes and ${bad.length} dead letters`,
    });
    expect(pipeline.bids().map((e) => e.payload['amount_cents'])).toEqual([10_100, 10_101, 10_102, 10_103, 10_104, 10_200]);

    const dead = await readDeadLetters(`${pipeline.bidTopic}.dlq`, bad.length);
    expect(dead.map((d) => d.headers[DEAD_LETTER_HEADERS.reason])).toEqual(bad.map((b) => b.code));
    dead.forEach((letter, i) => {
      expect(letter.headers[DEAD_LETTER_HEADERS.detail]).toContain((bad[i] as { detail: string }).detail);
      expect(letter.value).toEqual((bad[i] as { value: Buffer }).value); // untouched
    });
  });

  it('decodes Avro keys (keyFormat: AVRO) into the envelope key, and dead-letters a key that is not in the wire format', async () => {
    const client = new MockClient();
    const pipeline = await createWirePipeline(createRegistrySource(client, 'Schema Registry (MockClient)'), 'AVRO');
    await client.register(`${pipeline.bidTopic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(bidV1) });
    const keyId = await client.register(`${pipeline.bidTopic}-key`, { schemaType: 'AVRO', schema: '"string"' });
    const serialize = confluentSerializer(client);
    const keySerializer = new AvroSerializer(client, SerdeType.KEY, { useLatestVersion: true });
    await pipeline.ingest.start();
    const key = await keySerializer.serialize(pipeline.bidTopic, 'lst-4');
    expect(key.readUInt32BE(1)).toBe(keyId);
    await pipeline.send(pipeline.bidTopic, [
      { key, value: await serialize(pipeline.bidTopic, bidValue(1, 'lst-4')) },
      { key: 'lst-4', value: await serialize(pipeline.bidTopic, bidValue(2, 'lst-4')) },
    ]);
    await waitFor(() => pipeline.received.length === 1 && pipeline.ingest.stats.deadLettered === 1, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'one envelope and one dead letter' });
    expect(pipeline.received[0]).toMatchObject({ key: 'lst-4', payload: expectedPayload(1, 'lst-4', 1) });
    const [dead] = await readDeadLetters(`${pipeline.bidTopic}.dlq`, 1);
    expect(dead?.headers[DEAD_LETTER_HEADERS.reason]).toBe('NOT_WIRE_FORMAT');
    expect(dead?.headers[DEAD_LETTER_HEADERS.detail]).toBe(
      `topic ${pipeline.bidTopic}: the key is read as a registry format (@topic(keyFormat: AVRO)), but the key starts with byte 108, not the wire format's magic byte 0`,
    );
  });

  it('pauses only the partitions whose schema the registry cannot give, dead-letters nothing, and resumes', async () => {
    // Phase 1: Confluent's real HTTP client against a port nobody listens on (connection refused).
    // Phase 2: the registry is reachable again (its content, in the vendor's MockClient).
    const client = new MockClient();
    const down = createRegistrySource(await createRegistryClient({ urls: [`http://127.0.0.1:${await freePort()}`], timeoutMs: 500 }), 'Schema Registry (down)');
    const up = createRegistrySource(client, 'Schema Registry (MockClient)');
    let reachable = false;
    let failures = 0;
    const source: SchemaSource = {
      description: 'Schema Registry',
      schemaById: (id) => (reachable ? up.schemaById(id) : down.schemaById(id).finally(() => failures++)),
      schemaByVersion: (subject, version) => up.schemaByVersion(subject, version),
    };
    const pipeline = await createWirePipeline(source);
    await client.register(`${pipeline.bidTopic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(bidV1) });
    const serialize = confluentSerializer(client);
    await pipeline.ingest.start();
    const bids = await Promise.all(Array.from({ length: 10 }, async (_, n) => ({ key: 'lst-5', value: await serialize(pipeline.bidTopic, bidValue(n, 'lst-5')) })));
    await pipeline.send(pipeline.bidTopic, bids);
    await waitFor(() => pipeline.ingest.stats.schemaPauses > 0 && failures >= 2, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the partition paused and the lookup retried' });

    // The JSON topic keeps flowing meanwhile.
    await pipeline.send(pipeline.listingTopic, [{ key: 'lst-5', value: JSON.stringify({ listingId: 'lst-5', title: 'Chair' }) }]);
    await waitFor(() => pipeline.received.length === 1, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the JSON event while the registry is down' });
    expect(pipeline.bids()).toEqual([]);
    expect(pipeline.ingest.stats.deadLettered).toBe(0);

    reachable = true;
    await waitFor(() => pipeline.bids().length === 10, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: '10 Avro envelopes after the registry is back' });
    expect(pipeline.bids().map((e) => e.payload['amount_cents'])).toEqual(Array.from({ length: 10 }, (_, n) => 10_000 + n));
    expect(pipeline.ingest.stats).toMatchObject({ published: 11, deadLettered: 0 });
    expect(pipeline.sink.lines.some((r) => typeof r['msg'] === 'string' && r['msg'].includes('could not be read: paused'))).toBe(true);
    expect(pipeline.sink.lines.some((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('schemas loaded from Schema Registry: resumed'))).toBe(true);
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
