// Integration: createIngest in-process against a real Kafka broker (one per run, see
// ../global-setup.ts) and a real redis-server. Every test has its own topics, consumer group,
// Redis connections and in-memory log, and watches the Redis channels the way the gateway does.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { ConfigResourceTypes, Kafka, logLevel, type Message } from 'kafkajs';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { auctionSchemaPath, createWirestreamSchema } from '@wirestream/schema';
import {
  channelName,
  createEnvelopeBatchAssembler,
  encodeEnvelopeBatch,
  decodeEnvelope,
  isEnvelopeBatchPart,
  parseEnvelopeBatchPart,
  historyBatchArgs,
  historyEntryId,
  historyEpochKey,
  historyPartitionsKey,
  historyStreamKey,
  parseHistoryEntries,
  shardOf,
  type HistoryEntry,
  type Envelope,
} from '@wirestream/wire';
import { createLogger, createMemorySink, createMetricsRegistry } from '@wirestream/telemetry';
import {
  createTopics,
  startRedis,
  uniqueName,
  waitFor,
} from '@wirestream/testkit';
// The public entry, like any embedder of ingest.
import {
  createEventConverter,
  createIngest,
  createIngestMetrics,
  DEAD_LETTER_HEADERS,
  kafkaLogCreator,
  type EventConverter,
  type Ingest,
  type IngestOptions,
} from '../src/index.js';
import { useKafkaRedis } from './support/kafka-redis.js';

const servers = useKafkaRedis('ingest-test');
const PARTITIONS = 3;
const SHARDS = 16; // the example schema's @topic default
const CHANNEL_PREFIX = 'ws';
/** Produced messages get CreateTime BASE_TS + n, so each envelope's `ts` can be checked exactly. */
// A minute before the run, not a fixed date: the test broker keeps 24 h (log.retention.hours), so
// records stamped with an older CreateTime can be deleted by retention in the middle of a test.
const BASE_TS = Date.now() - 60_000;
const ARRIVAL_TIMEOUT_MS = 20_000; // 20 seconds: includes the first group join of a test

const convert = createEventConverter();

interface Received {
  readonly channel: string;
  readonly text: string;
  readonly envelope: Envelope;
}

interface PipelineSetup {
  /** Where the test's subscriber connects. @default the file's redis-server */
  redisUrl?: string;
  /** Where ingest's publisher connects (a {@link TcpGate} for fault tests). @default redisUrl */
  publisherUrl?: string;
  options?: IngestOptions;
  /** Replaces ingest's event converter (poison-message tests). */
  convert?: EventConverter;
}

/**
 * Unique topics (a copy of the example schema bound to them, 3 partitions each), a unique group,
 * a subscriber on every channel of both topics, an ingest publisher configured like main.ts, and
 * a log sink. Ingests started with `startIngest` and all connections are closed when the test ends.
 */
async function createPipeline({ redisUrl = servers.redisServer.url, publisherUrl = redisUrl, options = {}, convert }: PipelineSetup = {}) {
  const suffix = uniqueName('ingest-test');
  // Own history keys (epoch included): tests share the file's redis-server.
  const historyPrefix = `wsh-${suffix}`;
  const listingTopic = `listing-events-${suffix}`;
  const bidTopic = `bid-events-${suffix}`;
  const groupId = `group-${suffix}`;
  const topicOf = (event: DemoEvent): string => (event.topic === 'listing-events' ? listingTopic : bidTopic);
  const sink = createMemorySink();
  const logger = createLogger({ name: 'ingest-test', destination: sink });
  const schema = createWirestreamSchema(
    readFileSync(auctionSchemaPath, 'utf8')
      .replace('"listing-events"', JSON.stringify(listingTopic))
      .replace('"bid-events"', JSON.stringify(bidTopic)),
  );
  expect(schema.topics).toEqual([bidTopic, listingTopic]);
  await createTopics(servers.admin, [listingTopic, bidTopic].map((topic) => ({ topic, numPartitions: PARTITIONS })));

  // kafkajs logs of the ingest's clients go to the test's sink, as in main.ts (no console noise).
  const kafka = new Kafka({ clientId: 'ingest-test', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
  const publisher = new Redis(publisherUrl, {
    // As in main.ts: fail fast while Redis is away; ingest pauses and redoes the chunk itself.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    connectionName: 'ingest-test-publisher',
  });
  publisher.on('error', (err: Error) => logger.debug({ err }, 'publisher error'));
  const subscriber = new Redis(redisUrl, { connectionName: 'ingest-test-subscriber' });
  subscriber.on('error', (err: Error) => logger.debug({ err }, 'subscriber error'));
  const received: Received[] = [];
  // As the gateway's broker does: batch parts re-assembled into their chunk's envelopes, in offset order.
  const assembler = createEnvelopeBatchAssembler({
    emit: (channel, text) => received.push({ channel, text, envelope: decodeEnvelope(text) }),
    listens: () => true,
    onMalformed: (channel, _text, err) => {
      throw new Error(`a malformed batch part on ${channel}`, { cause: err });
    },
  });
  /** Every message as Redis delivered it (batch parts before re-assembly). */
  const raw: { channel: string; text: string }[] = [];
  subscriber.on('pmessage', (_pattern: string, channel: string, text: string) => {
    raw.push({ channel, text });
    assembler.message(channel, channel, text);
  });
  await subscriber.psubscribe(`${CHANNEL_PREFIX}:${listingTopic}:*`, `${CHANNEL_PREFIX}:${bidTopic}:*`);

  const ingests: Ingest[] = [];
  onTestFinished(async () => {
    // stop() is bounded even while Redis is unreachable (stopGraceMs), so ingests go first.
    for (const ingest of ingests.reverse()) await ingest.stop();
    publisher.disconnect();
    subscriber.disconnect();
  });

  let produced = 0;
  const timestamps = new Map<string, number>();
  const registry = createMetricsRegistry({ service: 'ingest-test', processMetrics: false });
  const metrics = createIngestMetrics(registry, schema.topics);

  return {
    listingTopic,
    bidTopic,
    topics: [listingTopic, bidTopic] as const,
    groupId,
    sink,
    received,
    raw,
    topicOf,
    timestamps,
    registry,

    historyPrefix,

    /** A new ingest in the test's group (stopped at the end of the test unless stopped before). */
    async startIngest(overrides: IngestOptions = {}): Promise<Ingest> {
      const deps = { kafka, redis: publisher, schema, logger, metrics, ...(convert ? { convert } : {}) };
      const ingest = createIngest(deps, { groupId, channelPrefix: CHANNEL_PREFIX, historyPrefix, ...options, ...overrides });
      ingests.push(ingest);
      await ingest.start();
      return ingest;
    },

    /** Stops an ingest started here (and forgets it, so the test end does not stop it twice). */
    async stopIngest(ingest: Ingest): Promise<void> {
      ingests.splice(ingests.indexOf(ingest), 1);
      await ingest.stop();
    },

    /** Sends demo events as the demo producer does: camelCase JSON keyed by listing id, one send per topic. */
    async produce(events: readonly DemoEvent[]): Promise<void> {
      for (const source of ['listing-events', 'bid-events'] as const) {
        const messages: Message[] = [];
        for (const event of events) {
          if (event.topic !== source) continue;
          const ts = BASE_TS + produced++;
          timestamps.set(eventIdOf(event), ts);
          messages.push({ key: event.key, value: JSON.stringify(event.value), timestamp: String(ts) });
        }
        if (messages.length > 0) await servers.producer.send({ topic: source === 'listing-events' ? listingTopic : bidTopic, acks: -1, messages });
      }
    },
  };
}

type Pipeline = Awaited<ReturnType<typeof createPipeline>>;

function eventIdOf(event: DemoEvent): string {
  return event.value['eventId'] as string;
}

function demoEvents(count: number, seed: number): DemoEvent[] {
  const generator = createAuctionEventGenerator({ seed, listings: 8 });
  return Array.from({ length: count }, () => generator.next());
}

function receivedIds(pipeline: Pipeline): Set<string> {
  return new Set(pipeline.received.map((r) => r.envelope.payload['event_id'] as string));
}

function allKeys(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) allKeys(item, into);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      into.push(key);
      allKeys(child, into);
    }
  }
  return into;
}

/** Every received envelope is the converted event it claims to be, on its topic, key, timestamp and shard channel. */
function expectEnvelopesMatch(pipeline: Pipeline, events: readonly DemoEvent[]): void {
  const byId = new Map(events.map((e) => [eventIdOf(e), e]));
  for (const { channel, envelope } of pipeline.received) {
    const event = byId.get(envelope.payload['event_id'] as string);
    if (event === undefined) throw new Error(`an envelope for an event that was not produced: ${JSON.stringify(envelope)}`);
    const converted = convert(Buffer.from(JSON.stringify(event.value)));
    if (!converted.ok) throw new Error(`a demo event did not convert: ${converted.reason.message}`);
    expect(envelope).toEqual({
      v: 1,
      topic: pipeline.topicOf(event),
      partition: envelope.partition,
      offset: envelope.offset,
      key: event.key,
      ts: pipeline.timestamps.get(eventIdOf(event)),
      payload: JSON.parse(converted.bytes.toString()) as unknown,
    });
    expect(envelope.partition).toBeGreaterThanOrEqual(0);
    expect(envelope.partition).toBeLessThan(PARTITIONS);
    expect(allKeys(envelope.payload).filter((key) => /[A-Z]/.test(key))).toEqual([]);
    expect(envelope.payload['listing_id']).toBe(event.key);
    expect(channel).toBe(channelName(CHANNEL_PREFIX, envelope.topic, shardOf(event.key, SHARDS)));
  }
}

/** Offsets received per partition of `topic`, in arrival order. */
function offsetsByPartition(received: readonly Received[], topic: string): Map<number, bigint[]> {
  const result = new Map<number, bigint[]>();
  for (const { envelope } of received) {
    if (envelope.topic !== topic) continue;
    const list = result.get(envelope.partition) ?? [];
    list.push(BigInt(envelope.offset));
    result.set(envelope.partition, list);
  }
  return result;
}

/** The topic's log end offset (high watermark) per partition, as strings. */
async function highWatermarks(topic: string): Promise<Map<number, string>> {
  return new Map((await servers.admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]));
}

/** The group's committed offset per partition of `topic` ('-1' where nothing was committed). */
async function committedOffsets(groupId: string, topic: string): Promise<Map<number, string>> {
  const [entry] = await servers.admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
}

/** Waits until the group (default: the pipeline's) has committed every partition of every topic up to its high watermark. */
async function waitForCommittedToEnd(pipeline: Pipeline, groupId = pipeline.groupId): Promise<void> {
  await waitFor(
    async () => {
      for (const topic of pipeline.topics) {
        const [ends, committed] = await Promise.all([highWatermarks(topic), committedOffsets(groupId, topic)]);
        for (const [partition, high] of ends) {
          // A partition that never got a message has nothing to commit.
          expect(committed.get(partition), `${topic}[${partition}]`).toBe(high === '0' ? '-1' : high);
        }
      }
      return true;
    },
    { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'committed offsets to reach the high watermarks' },
  );
}

/** Each partition of each topic was published exactly once per offset from `from` (default: the start) to its end. */
async function expectEveryOffsetOnce(pipeline: Pipeline, received: readonly Received[], from = new Map<string, bigint>()) {
  for (const topic of pipeline.topics) {
    const got = offsetsByPartition(received, topic);
    for (const [partition, high] of await highWatermarks(topic)) {
      const start = from.get(`${topic}:${partition}`) ?? 0n;
      const expected = Array.from({ length: Number(BigInt(high) - start) }, (_, i) => start + BigInt(i));
      // Arrival order, not sorted: within a partition ingest publishes in offset order.
      expect(got.get(partition) ?? [], `${topic}[${partition}]`).toEqual(expected);
    }
  }
}

/** The value of an unlabelled-by-topic series (sum over its label sets) in Prometheus text. */
function metricValue(text: string, name: string): number {
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
}

/** The events of a history stream as a gateway reads them: either entry form, offsets strictly rising. */
async function historyEvents(reader: Redis, key: string): Promise<HistoryEntry[]> {
  const events: HistoryEntry[] = [];
  let after: string | undefined;
  for (const [id, fields] of await reader.xrange(key, '-', '+')) {
    for (const event of parseHistoryEntries(id, fields, after)) {
      events.push(event);
      after = event.offset;
    }
  }
  return events;
}

/** Offsets in the history stream of each partition of `topic`. */
async function historyOffsets(reader: Redis, pipeline: Pipeline, topic: string): Promise<Map<number, string[]>> {
  const result = new Map<number, string[]>();
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const events = await historyEvents(reader, historyStreamKey(pipeline.historyPrefix, topic, partition));
    result.set(partition, events.map((e) => e.offset));
  }
  return result;
}

interface DeadLetterRead {
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
}

/** Reads `count` dead letters from the start of `topic` (waits for them). */
async function readDeadLetters(topic: string, count: number): Promise<DeadLetterRead[]> {
  const reader = new Kafka({ clientId: 'dlq-reader', brokers: servers.brokers, logLevel: logLevel.ERROR }).consumer({
    groupId: uniqueName('dlq-reader'),
    maxWaitTimeInMs: 250,
  });
  const dead: DeadLetterRead[] = [];
  await reader.connect();
  try {
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        dead.push({ value: message.value, headers });
        return Promise.resolve();
      },
    });
    await waitFor(() => dead.length >= count, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: `${count} dead letters in ${topic}` });
    return dead;
  } finally {
    await reader.disconnect();
  }
}

/**
 * A TCP forwarder in front of Redis for the ingest's publisher. `hold()` cuts its connections and
 * refuses new ones; `release()` lets them through again. A fault test needs it on top of stopping
 * Redis: after a restart, the test's subscriber must be subscribed again before ingest may publish
 * (Redis pub/sub drops messages nobody listens to), and the order in which two ioredis
 * connections reconnect is otherwise up to their timers.
 */
async function startTcpGate(targetPort: number) {
  let held = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    client.on('error', () => {});
    if (held) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    upstream.on('error', () => {});
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const gate = {
    url: `redis://127.0.0.1:${port}`,
    hold(): void {
      held = true;
      for (const socket of open) socket.destroy();
    },
    release(): void {
      held = false;
    },
    async close(): Promise<void> {
      gate.hold();
      server.close();
      await once(server, 'close');
    },
  };
  onTestFinished(() => gate.close());
  return gate;
}

describe('publishing', () => {
  it('publishes every event once as a v1 envelope on its shard channel, snake_cased, in offset order', async () => {
    const pipeline = await createPipeline();
    const ingest = await pipeline.startIngest();
    const events = demoEvents(60, 7);
    await pipeline.produce(events);

    await waitFor(() => pipeline.received.length >= events.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `${events.length} envelopes`,
    });
    expectEnvelopesMatch(pipeline, events);
    expect(receivedIds(pipeline)).toEqual(new Set(events.map(eventIdOf)));
    await expectEveryOffsetOnce(pipeline, pipeline.received);

    // Per key (listing), events arrive in the order they were produced.
    for (const topic of pipeline.topics) {
      const source = events.filter((e) => pipeline.topicOf(e) === topic);
      for (const key of new Set(source.map((e) => e.key))) {
        const arrived = pipeline.received
          .filter((r) => r.envelope.topic === topic && r.envelope.key === key)
          .map((r) => r.envelope.payload['event_id']);
        expect(arrived, `${topic} ${key}`).toEqual(source.filter((e) => e.key === key).map(eventIdOf));
      }
    }

    expect(ingest.stats).toMatchObject({ consumed: events.length, published: events.length, deadLettered: 0 });
    expect(ingest.isReady()).toBe(true);
    expect(pipeline.sink.lines.some((l) => l['msg'] === 'joined consumer group' && l['groupId'] === pipeline.groupId)).toBe(true);
  });

  it('batch form: one message per key shard per chunk, holding the events of that shard in the chunk', async () => {
    const batch = await createPipeline({ options: { publishChunkSize: 20 } });
    await batch.startIngest();
    const events = demoEvents(60, 21);
    await batch.produce(events);
    await waitForCommittedToEnd(batch);
    await waitFor(() => batch.received.length === events.length, { message: 'every event re-assembled' });
    await expectEveryOffsetOnce(batch, batch.received);
    expect(batch.raw.length).toBeLessThan(events.length);
    let envelopes = 0;
    for (const { channel, text } of batch.raw) {
      const part = parseEnvelopeBatchPart(text);
      envelopes += part.envelopes.length;
      part.envelopes.forEach((envelope, j) => {
        const e = decodeEnvelope(envelope);
        // Each on the channel of its key's shard, which the head lists among the chunk's shards.
        const shard = shardOf(e.key ?? '', 16);
        expect(channel).toBe(channelName(CHANNEL_PREFIX, e.topic, shard));
        expect(part.shards).toContain(shard);
        expect(e.partition).toBe(part.partition);
        // …and with its routing key as a gateway compares it (decision 0039): the key field's value.
        expect(part.routedOn).toBe('listing_id');
        expect(part.routingKeys?.[j]).toBe(e.payload['listing_id']);
      });
    }
    expect(envelopes).toBe(events.length);
    expect(batch.raw.every((r) => isEnvelopeBatchPart(r.text))).toBe(true);
  });

  it('commits after publishing: the group ends at the high watermark of every partition', async () => {
    const pipeline = await createPipeline();
    const ingest = await pipeline.startIngest();
    const events = demoEvents(40, 8);
    await pipeline.produce(events);

    await waitForCommittedToEnd(pipeline);
    // Commits only follow acknowledged publishes, so every committed event has been delivered.
    expect(ingest.stats.published).toBe(events.length);
    await waitFor(() => pipeline.received.length === events.length, { message: 'every committed event on Redis' });
    expect(ingest.stats.commits).toBeGreaterThan(0);
    // The Prometheus view agrees with the stats: everything published, no lag left.
    const text = await pipeline.registry.metrics();
    const sum = (name: string) =>
      [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
    expect(sum('wirestream_ingest_published_total')).toBe(events.length);
    expect(sum('wirestream_ingest_consumed_total')).toBe(events.length);
    expect(sum('wirestream_ingest_consumer_lag')).toBe(0);
    expect(text).toMatch(/wirestream_ingest_redis_publish_seconds_count\{service="ingest-test"\} [1-9]/);
    for (const topic of pipeline.topics) {
      // Every partition got events (fixed seed), so the check above compared real offsets.
      expect([...(await highWatermarks(topic)).values()].every((high) => high !== '0'), topic).toBe(true);
    }
  });
});

describe('restarts', () => {
  it('a new ingest in the same group resumes after the committed offsets: nothing twice, nothing missing', async () => {
    const pipeline = await createPipeline();
    const first = await pipeline.startIngest();
    const before = demoEvents(30, 9);
    await pipeline.produce(before);
    await waitForCommittedToEnd(pipeline);
    await waitFor(() => pipeline.received.length === before.length, { message: 'the first events on Redis' });
    await pipeline.stopIngest(first);
    expect(first.isReady()).toBe(false);
    expect(pipeline.sink.lines.some((l) => l['msg'] === 'ingest stopped' && l['published'] === before.length)).toBe(true);

    const resumeAt = new Map<string, bigint>();
    for (const topic of pipeline.topics) {
      for (const [partition, high] of await highWatermarks(topic)) resumeAt.set(`${topic}:${partition}`, BigInt(high));
    }
    const receivedBefore = pipeline.received.length;
    const after = demoEvents(60, 9).slice(30); // the same generator run, continued
    await pipeline.produce(after);

    const second = await pipeline.startIngest();
    await waitFor(() => pipeline.received.length >= receivedBefore + after.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `${after.length} envelopes after the restart`,
    });
    await waitForCommittedToEnd(pipeline);

    const resumed = pipeline.received.slice(receivedBefore);
    expect(new Set(resumed.map((r) => r.envelope.payload['event_id']))).toEqual(new Set(after.map(eventIdOf)));
    // Exactly the offsets past the commit, once each: a re-published committed event would show
    // up here before the new ones of its partition.
    await expectEveryOffsetOnce(pipeline, resumed, resumeAt);
    expectEnvelopesMatch(pipeline, [...before, ...after]);
    expect(second.stats).toMatchObject({ consumed: after.length, published: after.length });
  });

  it('stop() during a batch waits for its publish and commits it, so the next ingest does not publish it again', async () => {
    const gate = await startTcpGate(servers.redisServer.port);
    const pipeline = await createPipeline({ publisherUrl: gate.url });
    // A grace far above the publisher's reconnect delay (≤ 2 s): Redis comes back within it.
    const first = await pipeline.startIngest({ stopGraceMs: 20_000 });
    await waitFor(() => first.isReady(), { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the first ingest to be ready' });

    // Redis unreachable for the publisher: the next batch blocks in its publish.
    gate.hold();
    await waitFor(() => !first.isReady(), { message: 'ingest to see Redis go away' });
    const events = demoEvents(30, 10).filter((e) => e.topic === 'listing-events');
    await pipeline.produce(events);
    await waitFor(() => first.stats.consumed > 0, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'a batch in flight' });

    const stopping = pipeline.stopIngest(first);
    gate.release();
    await stopping;
    const published = first.stats.published;
    expect(published).toBeGreaterThan(0);
    await waitFor(() => pipeline.received.length === published, { message: 'the in-flight batch on Redis' });

    // The commit of the batch in flight is not lost: every partition is committed exactly past what was published.
    const lastPublished = offsetsByPartition(pipeline.received, pipeline.listingTopic);
    const committed = await committedOffsets(pipeline.groupId, pipeline.listingTopic);
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const last = lastPublished.get(partition)?.at(-1);
      expect(committed.get(partition), `partition ${partition}`).toBe(last === undefined ? '-1' : String(last + 1n));
    }

    const second = await pipeline.startIngest();
    await waitFor(() => receivedIds(pipeline).size === events.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `all ${events.length} events`,
    });
    await waitForCommittedToEnd(pipeline);
    expect(second.stats.published).toBe(events.length - published);
    expect(pipeline.received).toHaveLength(events.length);
    expectEnvelopesMatch(pipeline, events);
  });
});

describe('dead letters', () => {
  it('sends every message that cannot be published to <topic>.dlq, untouched and explained, and keeps the partition flowing', async () => {
    const maxMessageBytes = 8_192;
    const pipeline = await createPipeline({ options: { maxMessageBytes } });
    const ingest = await pipeline.startIngest();

    const generator = createAuctionEventGenerator({ seed: 12, listings: 1 });
    const valid = Array.from({ length: 6 }, () => generator.listingEvent());
    for (const event of valid) expect(Buffer.byteLength(JSON.stringify(event.value))).toBeLessThan(maxMessageBytes);
    const bad: { value: string | null; reason: string }[] = [
      { value: '{"listingId": "lst-bad", oops', reason: 'INVALID_JSON' },
      { value: '[{"listingId":"lst-bad"}]', reason: 'NOT_AN_OBJECT' },
      { value: null, reason: 'EMPTY_VALUE' }, // a tombstone
      { value: JSON.stringify({ listingId: 'lst-bad', blob: 'x'.repeat(maxMessageBytes) }), reason: 'TOO_LARGE' },
      { value: '{"listingId":"lst-bad","listing_id":"lst-bad"}', reason: 'TRANSFORM_FAILED' },
    ];
    // All on partition 0, in this order: 3 valid, the 5 bad ones, 3 valid.
    const timestamps = Array.from({ length: valid.length + bad.length }, (_, i) => String(BASE_TS + 1_000 + i));
    const validMessage = (event: DemoEvent, at: number): Message => {
      pipeline.timestamps.set(eventIdOf(event), Number(timestamps[at]));
      return { partition: 0, key: event.key, value: JSON.stringify(event.value), timestamp: timestamps[at] as string };
    };
    const badMessage = (b: (typeof bad)[number], i: number): Message => ({
      partition: 0,
      key: 'lst-bad',
      value: b.value,
      timestamp: timestamps[3 + i] as string,
      headers: { 'trace-id': `trace-${i}` },
    });
    const [sent] = await servers.producer.send({
      topic: pipeline.listingTopic,
      acks: -1,
      messages: [
        ...valid.slice(0, 3).map((e, i) => validMessage(e, i)),
        ...bad.map(badMessage),
        ...valid.slice(3).map((e, i) => validMessage(e, 3 + bad.length + i)),
      ],
    });
    const base = BigInt(sent?.baseOffset ?? '-1');
    expect(base).toBe(0n);

    // The valid events on both sides of the bad ones are published, in order.
    await waitFor(() => pipeline.received.length === valid.length && ingest.stats.deadLettered === bad.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `${valid.length} envelopes and ${bad.length} dead letters`,
    });
    expect(pipeline.received.map((r) => [r.envelope.partition, r.envelope.offset])).toEqual(
      [0, 1, 2, 8, 9, 10].map((offset) => [0, String(offset)]),
    );
    expectEnvelopesMatch(pipeline, valid);

    // The dead letters: original key, value bytes, timestamp and headers, plus the reason and origin.
    const reader = new Kafka({ clientId: 'dlq-reader', brokers: servers.brokers, logLevel: logLevel.ERROR }).consumer({
      groupId: uniqueName('dlq-reader'),
      maxWaitTimeInMs: 250,
    });
    onTestFinished(() => reader.disconnect());
    const dead: { key: string | undefined; value: Buffer | null; timestamp: string; headers: Record<string, string> }[] = [];
    await reader.connect();
    await reader.subscribe({ topic: `${pipeline.listingTopic}.dlq`, fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        dead.push({
          key: message.key?.toString(),
          value: message.value,
          timestamp: message.timestamp,
          headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
        });
        return Promise.resolve();
      },
    });
    await waitFor(() => dead.length >= bad.length, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: `${bad.length} dead letters` });
    expect(dead).toHaveLength(bad.length);
    bad.forEach((b, i) => {
      const letter = dead[i];
      expect(letter?.key).toBe('lst-bad');
      expect(letter?.value === null ? null : letter?.value.toString('utf8'), b.reason).toBe(b.value);
      expect(letter?.timestamp).toBe(timestamps[3 + i]);
      expect(letter?.headers).toEqual({
        'trace-id': `trace-${i}`,
        [DEAD_LETTER_HEADERS.reason]: b.reason,
        [DEAD_LETTER_HEADERS.detail]: expect.any(String) as unknown,
        [DEAD_LETTER_HEADERS.topic]: pipeline.listingTopic,
        [DEAD_LETTER_HEADERS.partition]: '0',
        [DEAD_LETTER_HEADERS.offset]: String(3 + i),
        [DEAD_LETTER_HEADERS.timestamp]: timestamps[3 + i],
      });
    });
    expect(dead[3]?.headers[DEAD_LETTER_HEADERS.detail]).toContain(`over the limit of ${maxMessageBytes}`);

    // Dead-lettered offsets are committed like published ones: the partition is not stuck.
    await waitForCommittedToEnd(pipeline);
    expect(ingest.stats).toMatchObject({ consumed: valid.length + bad.length, published: valid.length, deadLettered: bad.length });
    const logged = pipeline.sink.lines.filter((l) => l['msg'] === 'message dead-lettered');
    expect(logged.map((l) => [l['level'], l['topic'], l['partition'], l['offset'], l['reason']])).toEqual(
      bad.map((b, i) => ['warn', pipeline.listingTopic, 0, String(3 + i), b.reason]),
    );

    // And it keeps flowing afterwards.
    const later = generator.listingEvent();
    await servers.producer.send({ topic: pipeline.listingTopic, acks: -1, messages: [validMessage(later, 0)] });
    await waitFor(() => receivedIds(pipeline).has(eventIdOf(later)), { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'a later event' });
  });
});

describe('Redis outage', () => {
  it('commits nothing while Redis is down, then publishes every event once Redis is back (at least once)', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const gate = await startTcpGate(redis.port);
    const pipeline = await createPipeline({ redisUrl: redis.url, publisherUrl: gate.url });
    const ingest = await pipeline.startIngest();
    const events = demoEvents(40, 13);
    const [before, during] = [events.slice(0, 20), events.slice(20)];
    await pipeline.produce(before);
    await waitForCommittedToEnd(pipeline);
    const committedBefore = await Promise.all(pipeline.topics.map((t) => committedOffsets(pipeline.groupId, t)));

    gate.hold();
    await redis.stop();
    await waitFor(() => !ingest.isReady(), { message: 'ingest to see Redis go away' });
    await pipeline.produce(during);
    await waitFor(() => ingest.stats.consumed > before.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: 'ingest to consume events while Redis is down',
    });
    // Consumed, not published, not committed: the batch waits for Redis, consumption is paused.
    expect(ingest.stats.published).toBe(before.length);
    expect(await Promise.all(pipeline.topics.map((t) => committedOffsets(pipeline.groupId, t)))).toEqual(committedBefore);
    await waitFor(() => ingest.stats.pauses > 0, { message: 'ingest to pause consumption' });
    expect(ingest.notReadyReason()).toBe('consumption paused: redis unavailable');
    expect(metricValue(await pipeline.registry.metrics(), 'wirestream_ingest_paused')).toBe(1);

    await redis.start(); // same port, empty
    const probe = new Redis(redis.url);
    onTestFinished(() => probe.disconnect());
    await waitFor(async () => Number(await probe.call('PUBSUB', 'NUMPAT')) === 2, {
      message: "the test's subscriber to be subscribed again",
    });
    gate.release();

    await waitFor(() => receivedIds(pipeline).size === events.length, {
      timeoutMs: ARRIVAL_TIMEOUT_MS,
      message: `all ${events.length} events after Redis came back`,
    });
    await waitForCommittedToEnd(pipeline);
    expect(ingest.isReady()).toBe(true);
    expectEnvelopesMatch(pipeline, events);
    // At least once: a duplicate is allowed (a publish whose reply was lost), a gap is not.
    const unique = new Map(pipeline.received.map((r) => [`${r.envelope.topic}:${r.envelope.partition}:${r.envelope.offset}`, r]));
    for (const r of pipeline.received) {
      expect(r.text).toBe(unique.get(`${r.envelope.topic}:${r.envelope.partition}:${r.envelope.offset}`)?.text);
    }
    await expectEveryOffsetOnce(pipeline, [...unique.values()]);

    // Resumed and counted; the restarted (empty) Redis got a new epoch and the events published after it.
    const text = await pipeline.registry.metrics();
    expect(metricValue(text, 'wirestream_ingest_paused')).toBe(0);
    expect(metricValue(text, 'wirestream_ingest_pauses_total')).toBe(ingest.stats.pauses);
    expect(await probe.get(historyEpochKey(pipeline.historyPrefix))).toMatch(/^[0-9a-f-]{36}$/);
    // The new Redis's history holds exactly what was redone after the outage: the committed offset onwards.
    for (const [i, topic] of pipeline.topics.entries()) {
      const history = await historyOffsets(probe, pipeline, topic);
      for (const [partition, high] of await highWatermarks(topic)) {
        const from = Math.max(0, Number(committedBefore[i]?.get(partition) ?? '0'));
        const expected = Array.from({ length: Number(high) - from }, (_, k) => String(from + k));
        expect(history.get(partition), `${topic}[${partition}]`).toEqual(expected);
      }
    }
  });

  it('stop() while Redis is down returns within its grace, commits nothing, and the next ingest publishes everything', async () => {
    const gate = await startTcpGate(servers.redisServer.port);
    const pipeline = await createPipeline({ publisherUrl: gate.url });
    const first = await pipeline.startIngest({ stopGraceMs: 1_000 });
    await waitFor(() => first.isReady(), { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the first ingest to be ready' });
    gate.hold();
    const events = demoEvents(30, 14);
    await pipeline.produce(events);
    await waitFor(() => first.stats.pauses > 0, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'ingest to pause on the unreachable Redis' });

    // Before: stop() waited for the publish forever. Bounded now (generous: a busy machine).
    const started = Date.now();
    await pipeline.stopIngest(first);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(first.stats.published).toBe(0);
    for (const topic of pipeline.topics) {
      expect([...(await committedOffsets(pipeline.groupId, topic)).values()].every((o) => o === '-1'), topic).toBe(true);
    }
    expect(pipeline.sink.lines.some((l) => l['msg'] === 'gave up an undelivered chunk uncommitted; the next owner redoes it')).toBe(true);

    gate.release();
    const second = await pipeline.startIngest();
    await waitFor(() => receivedIds(pipeline).size === events.length, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: `all ${events.length} events` });
    await waitForCommittedToEnd(pipeline);
    expect(second.stats.published).toBeGreaterThanOrEqual(events.length);
    // Every offset, in order, as a gateway delivers it (a position at or below one it has is a
    // re-publish, dropped): the first ingest's membership can expire only after the second joined,
    // and that rebalance may make the second redo a chunk it had published but not committed
    // (at least once, decision 0037), as CI saw once ([0, 1, 0, 1] on one partition).
    await expectEveryOffsetOnce(pipeline, dropRepublished(pipeline.received));
  });
});

/** What a gateway keeps of what ingest published: per topic and partition, each offset above the highest so far. */
function dropRepublished(received: readonly Received[]): Received[] {
  const highest = new Map<string, bigint>();
  return received.filter((r) => {
    const at = `${r.envelope.topic}:${r.envelope.partition}`;
    const offset = BigInt(r.envelope.offset);
    if (offset <= (highest.get(at) ?? -1n)) return false;
    highest.set(at, offset);
    return true;
  });
}

describe('Redis that does not answer', () => {
  it('is treated as down: the chunk times out, consumption pauses, and resumes once Redis answers again', async () => {
    const redis = await startRedis();
    onTestFinished(async () => {
      if (redis.pid !== undefined) process.kill(redis.pid, 'SIGCONT');
      await redis.stop();
    });
    const pipeline = await createPipeline({ redisUrl: redis.url, options: { redisTimeoutMs: 1_000 } });
    const ingest = await pipeline.startIngest();
    await waitFor(() => ingest.isReady(), { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'ingest to be ready' });

    // Frozen, not gone: connections stay open and nothing answers.
    process.kill(redis.pid as number, 'SIGSTOP');
    const events = demoEvents(30, 20);
    await pipeline.produce(events);
    await waitFor(() => ingest.stats.pauses > 0, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'ingest to pause on the frozen Redis' });
    expect(pipeline.sink.lines.some((l) => /did not answer the pipeline/.test(String((l['err'] as { message?: string } | undefined)?.message)))).toBe(true);
    for (const topic of pipeline.topics) {
      expect([...(await committedOffsets(pipeline.groupId, topic)).values()].every((o) => o === '-1'), topic).toBe(true);
    }

    process.kill(redis.pid as number, 'SIGCONT');
    await waitFor(() => receivedIds(pipeline).size === events.length, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: `all ${events.length} events` });
    await waitForCommittedToEnd(pipeline);
    await waitFor(() => ingest.isReady(), { message: 'ingest to resume' });
  });
});

describe('history', () => {
  it('one entry per chunk, id = its last offset, every event with its offset, channel and bytes; the partitions set and the epoch; trims by MINID ~', async () => {
    const historyLength = 50;
    const publishChunkSize = 7;
    const pipeline = await createPipeline({ options: { historyLength, publishChunkSize } });
    const ingest = await pipeline.startIngest();
    const reader = new Redis(servers.redisServer.url);
    onTestFinished(() => reader.disconnect());
    const events = demoEvents(60, 15);
    await pipeline.produce(events);
    await waitForCommittedToEnd(pipeline);
    await waitFor(() => pipeline.received.length === events.length, { message: 'every event on Redis' });

    const published = new Map(pipeline.received.map((r) => [`${r.envelope.topic}:${r.envelope.partition}:${r.envelope.offset}`, r]));
    let batchEntries = 0;
    for (const topic of pipeline.topics) {
      const highs = await highWatermarks(topic);
      // The partitions set lists every partition with history (what a gateway's back-fill reads).
      expect(new Set(await reader.smembers(historyPartitionsKey(pipeline.historyPrefix, topic)))).toEqual(
        new Set([...highs].filter(([, high]) => high !== '0').map(([partition]) => String(partition))),
      );
      for (const [partition, high] of highs) {
        const key = historyStreamKey(pipeline.historyPrefix, topic, partition);
        const entries = await reader.xrange(key, '-', '+');
        for (const [id, fields] of entries) {
          const inEntry = parseHistoryEntries(id, fields);
          expect(inEntry.length, `${topic}[${partition}] ${id}`).toBeGreaterThan(0);
          expect(inEntry.length).toBeLessThanOrEqual(publishChunkSize);
          if (inEntry.length > 1) batchEntries++;
          // Exactly what the shared contract appends (no trim yet: id and fields only), byte for byte.
          const sent = inEntry.map((e) => published.get(`${topic}:${partition}:${e.offset}`));
          if (sent.some((x) => x === undefined)) throw new Error(`a history entry for an offset that was not published: ${topic}[${partition}] ${id}`);
          const parts = encodeEnvelopeBatch(
            partition,
            inEntry.map((e) => e.offset),
            sent.map((x) => Number(x?.channel.slice(x.channel.lastIndexOf(':') + 1))),
            sent.map((x) => Buffer.from(x?.text ?? '')),
            undefined,
            { on: 'listing_id', keys: sent.map((x) => x?.envelope.payload['listing_id'] as string) },
          );
          const named = parts.map((part) => ({ channel: channelName(CHANNEL_PREFIX, topic, part.shard), bytes: part.bytes.toString('utf8') }));
          expect([key, id, ...fields]).toEqual(historyBatchArgs(key, inEntry.at(-1)?.offset ?? '', named));
        }
        expect((await historyEvents(reader, key)).map((e) => e.offset), `${topic}[${partition}]`).toEqual(Array.from({ length: Number(high) }, (_, offset) => String(offset)));
      }
    }
    // 60 events over 6 partitions in chunks of at most 7: most entries hold several events.
    expect(batchEntries).toBeGreaterThan(0);
    const epoch = await reader.get(historyEpochKey(pipeline.historyPrefix));
    expect(epoch).toMatch(/^[0-9a-f-]{36}$/);
    expect(pipeline.sink.lines.some((l) => l['msg'] === 'history epoch' && l['epoch'] === epoch && l['created'] === true)).toBe(true);

    // Far more than historyLength on one partition: trimmed by offset (whole entries), newest kept.
    const generator = createAuctionEventGenerator({ seed: 16, listings: 4 });
    const many: Message[] = Array.from({ length: 400 }, () => {
      const event = generator.listingEvent();
      return { partition: 0, key: event.key, value: JSON.stringify(event.value) };
    });
    await servers.producer.send({ topic: pipeline.listingTopic, acks: -1, messages: many });
    await waitForCommittedToEnd(pipeline);
    const high = Number((await highWatermarks(pipeline.listingTopic)).get(0));
    const key = historyStreamKey(pipeline.historyPrefix, pipeline.listingTopic, 0);
    const kept = (await historyEvents(reader, key)).map((e) => Number(e.offset));
    expect(kept.length).toBeGreaterThanOrEqual(historyLength);
    expect(kept.length).toBeLessThan(historyLength + 2 * publishChunkSize);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => high - kept.length + i));
    const info = (await reader.call('XINFO', 'STREAM', key)) as unknown[];
    const field = (name: string) => info[info.indexOf(name) + 1];
    expect(field('last-generated-id')).toBe(historyEntryId(String(high - 1)));
    // What a gateway reads to detect a gap history no longer covers: something was trimmed, and the oldest kept event.
    expect(Number(field('entries-added'))).toBeGreaterThan(Number(field('length')));
    const [firstId, firstFields] = field('first-entry') as [string, string[]];
    expect(parseHistoryEntries(firstId, firstFields)[0]?.offset).toBe(String(kept[0]));
    expect(ingest.stats.pauses).toBe(0);
  });

  it('a re-publish of offsets already in history (another owner redoing them) is not a failure', async () => {
    const pipeline = await createPipeline();
    await pipeline.startIngest();
    const events = demoEvents(40, 17);
    await pipeline.produce(events);
    await waitForCommittedToEnd(pipeline);
    await waitFor(() => pipeline.received.length === events.length, { message: 'the first publish' });

    // A second group reads the same offsets again, in other chunks: an XADD whose chunk ends at or
    // below the stream's top is refused as already stored; one that ends above it is stored again
    // whole, and readers skip the offsets they passed.
    const groupId = `${pipeline.groupId}-again`;
    const again = await pipeline.startIngest({ groupId, publishChunkSize: 3 });
    await waitForCommittedToEnd(pipeline, groupId);
    await waitFor(() => pipeline.received.length === 2 * events.length, { message: 'the re-publish' });
    expect(again.stats).toMatchObject({ published: events.length, pauses: 0 });
    const reader = new Redis(servers.redisServer.url);
    onTestFinished(() => reader.disconnect());
    for (const topic of pipeline.topics) {
      for (const [partition, high] of await highWatermarks(topic)) {
        const offsets = (await historyEvents(reader, historyStreamKey(pipeline.historyPrefix, topic, partition))).map((e) => e.offset);
        expect(offsets, `${topic}[${partition}]`).toEqual(Array.from({ length: Number(high) }, (_, offset) => String(offset)));
      }
    }
  });

  it('historyLength 0 writes no history', async () => {
    const pipeline = await createPipeline({ options: { historyLength: 0 } });
    await pipeline.startIngest();
    const events = demoEvents(10, 18);
    await pipeline.produce(events);
    await waitForCommittedToEnd(pipeline);
    const reader = new Redis(servers.redisServer.url);
    onTestFinished(() => reader.disconnect());
    expect(await reader.keys(`${pipeline.historyPrefix}:*`)).toEqual([]);
    expect(pipeline.received).toHaveLength(events.length);
  });
});

describe('poison messages', () => {
  it('retries a message whose processing throws, then dead-letters it with the error; a transient throw just retries', async () => {
    const real = createEventConverter();
    const calls = { always: 0, once: 0 };
    const convert: EventConverter = (value, head, field) => {
      const text = value?.toString('utf8') ?? '';
      if (text.includes('poison-always')) {
        calls.always++;
        throw new Error('converter bug: poison-always');
      }
      if (text.includes('poison-once') && calls.once++ === 0) throw new Error('a transient failure');
      return real(value, head, field);
    };
    const pipeline = await createPipeline({ convert, options: { maxRetries: 3, retryBackoffMs: 10 } });
    const ingest = await pipeline.startIngest();
    const messages: Message[] = ['ok-1', 'poison-always', 'poison-once', 'ok-2'].map((marker) => ({
      partition: 0,
      key: 'lst-p',
      value: JSON.stringify({ listingId: 'lst-p', marker }),
    }));
    await servers.producer.send({ topic: pipeline.listingTopic, acks: -1, messages });

    const dead = await readDeadLetters(`${pipeline.listingTopic}.dlq`, 1);
    expect(dead[0]?.value?.toString('utf8')).toBe(messages[1]?.value);
    expect(dead[0]?.headers).toMatchObject({
      [DEAD_LETTER_HEADERS.reason]: 'PROCESSING_FAILED',
      [DEAD_LETTER_HEADERS.topic]: pipeline.listingTopic,
      [DEAD_LETTER_HEADERS.partition]: '0',
      [DEAD_LETTER_HEADERS.offset]: '1',
    });
    expect(dead[0]?.headers[DEAD_LETTER_HEADERS.detail]).toBe('processing threw 4 times; last error: converter bug: poison-always');
    await waitForCommittedToEnd(pipeline);
    expect(calls.always).toBe(4);
    expect(pipeline.received.map((r) => r.envelope.offset)).toEqual(['0', '2', '3']);
    expect(ingest.stats).toMatchObject({ consumed: 4, published: 3, deadLettered: 1 });
    expect(metricValue(await pipeline.registry.metrics(), 'wirestream_ingest_processing_retries_total')).toBe(4);
  });

  it('does not commit while the dead-letter topic refuses the write, and commits once it is accepted', async () => {
    const pipeline = await createPipeline();
    const dlq = `${pipeline.listingTopic}.dlq`;
    const ingest = await pipeline.startIngest();
    // Lowered behind ingest's back after its start (which sizes its dead-letter topics): a topic that
    // refuses anything over 100 bytes takes not even a dead letter cut to its headers.
    await servers.admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: dlq, configEntries: [{ name: 'max.message.bytes', value: '100' }] }],
    });
    const good = demoEvents(40, 19).filter((e) => e.topic === 'listing-events').slice(0, 2);
    await servers.producer.send({
      topic: pipeline.listingTopic,
      acks: -1,
      messages: [
        { partition: 0, key: good[0]?.key ?? null, value: JSON.stringify(good[0]?.value) },
        { partition: 0, key: 'lst-bad', value: `{"listingId": "lst-bad", ${'x'.repeat(200)}` },
        { partition: 0, key: good[1]?.key ?? null, value: JSON.stringify(good[1]?.value) },
      ],
    });
    await waitFor(() => ingest.stats.pauses > 0, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'ingest to pause on the refused dead letter' });
    expect(ingest.notReadyReason()).toBe('consumption paused: dead-letter topic unavailable');
    expect((await committedOffsets(pipeline.groupId, pipeline.listingTopic)).get(0)).toBe('-1');
    expect(pipeline.received).toEqual([]); // dead letters go first: the chunk's publishes wait with them

    await servers.admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: dlq, configEntries: [{ name: 'max.message.bytes', value: '1048588' }] }],
    });
    await waitForCommittedToEnd(pipeline);
    expect(pipeline.received.map((r) => r.envelope.offset)).toEqual(['0', '2']);
    expect(await readDeadLetters(dlq, 1)).toHaveLength(1);
    expect(ingest.stats).toMatchObject({ published: 2, deadLettered: 1 });
    await waitFor(() => ingest.isReady(), { message: 'ingest to resume' });
  });
});
