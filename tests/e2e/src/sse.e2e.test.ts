// GraphQL over SSE end to end: Kafka → ingest (process) → Redis → gateway (process) → the official
// graphql-sse client next to a graphql-ws client, every event once; then a raw stream that
// disconnects and resumes with Last-Event-ID on a three-partition topic: exactly what it missed, once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import WebSocket from 'ws';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import { createTopics, freePort, sharedKafkaFromEnv, startApp, startKafka, startRedis, uniqueName, waitFor, type AppProcess, type KafkaBroker, type RedisServer } from '@wirestream/testkit';

const PARTITIONS = 3;
const QUERY = 'subscription { changed { id n } }';

interface Changed {
  id: string;
  n: number;
}
type Result = { data?: { changed?: Changed } | null; extensions?: Record<string, unknown> };

let ownKafka: KafkaBroker | undefined;
let redis: RedisServer;
let producer: Producer;
let ingest: AppProcess;
let gateway: AppProcess;
let dir: string;
let topic: string;
let httpBase: string;
let sent = 0;
const disposers: (() => unknown)[] = [];

/** Produces `count` events round-robin over the partitions; returns their `n`s. */
async function produce(count: number): Promise<number[]> {
  const ns = Array.from({ length: count }, () => sent++);
  await producer.send({ topic, acks: -1, messages: ns.map((n) => ({ key: `k${n}`, partition: n % PARTITIONS, value: JSON.stringify({ id: `k${n}`, n }) })) });
  return ns;
}

const nsOf = (results: readonly Result[]): number[] => results.flatMap((r) => (r.data?.changed ? [r.data.changed.n] : []));
const sorted = (ns: readonly number[]): number[] => [...ns].sort((a, b) => a - b);

beforeAll(async () => {
  const shared = sharedKafkaFromEnv();
  if (!shared) ownKafka = await startKafka();
  const brokers = shared?.brokers ?? ownKafka?.brokers ?? [];
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'wirestream-sse-'));
  topic = uniqueName('sse-events');
  const schemaPath = join(dir, 'schema.graphql');
  writeFileSync(schemaPath, `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${topic}", key: "id") }\n`);
  const kafka = new Kafka({ clientId: 'sse-e2e', brokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic, numPartitions: PARTITIONS }]);
  await admin.disconnect();
  producer = kafka.producer();
  await producer.connect();
  const port = await freePort();
  httpBase = `http://127.0.0.1:${port}`;
  const common = { REDIS_URL: redis.url, SCHEMA_PATH: schemaPath, LOG_LEVEL: 'info' };
  ingest = startApp('ingest', { ...common, KAFKA_BROKERS: brokers.join(','), KAFKA_GROUP_ID: uniqueName('ingest'), INGEST_HTTP_PORT: '0' });
  gateway = startApp('gateway', { ...common, GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: String(port), GATEWAY_AUTH_MODE: 'anonymous' });
  await ingest.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group');
  await waitFor(async () => (await fetch(`${httpBase}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 30_000, message: 'gateway ready' });
});

afterAll(async () => {
  for (const dispose of disposers) await Promise.resolve(dispose());
  await producer?.disconnect();
  await Promise.all([ingest?.stop(), gateway?.stop()]);
  await redis?.stop();
  await ownKafka?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function stats(): Promise<Record<string, number>> {
  return (await (await fetch(`${httpBase}/stats`)).json()) as Record<string, number>;
}

describe('GraphQL over SSE, end to end', () => {
  it('the official graphql-sse client gets every event once, the same as a graphql-ws client, from one execution', async () => {
    const sse: SseClient = createSseClient({ url: `${httpBase}/graphql`, retryAttempts: 0 });
    const ws: WsClient = createWsClient({ url: `ws://127.0.0.1:${httpBase.split(':')[2]}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    disposers.push(() => sse.dispose(), () => ws.dispose());
    const bySse: Result[] = [];
    const byWs: Result[] = [];
    const errors: unknown[] = [];
    disposers.push(sse.subscribe<Result['data']>({ query: QUERY }, { next: (r) => void bySse.push(r as Result), error: (e) => void errors.push(e), complete: () => {} }));
    disposers.push(ws.subscribe({ query: QUERY }, { next: (r) => void byWs.push(r as Result), error: (e) => void errors.push(e), complete: () => {} }));
    await waitFor(async () => (await stats())['subscriptions'] === 2 && (await stats())['groups'] === 1, { message: 'both subscribed, one operation group' });
    const ns = await produce(60);
    await waitFor(() => nsOf(bySse).length >= 60 && nsOf(byWs).length >= 60, { timeoutMs: 60_000, message: '60 events on each' });
    expect(errors).toEqual([]);
    expect(sorted(nsOf(bySse))).toEqual(ns);
    // The SSE stream's first result is its starting point (data-less, extensions.start), then the same events.
    expect(bySse[0]?.data).toBeUndefined();
    expect(bySse[0]?.extensions?.["start"]).toBeDefined();
    expect(bySse.slice(1)).toEqual(byWs);
    sse.dispose();
    void ws.dispose();
  });

  it('a stream that reconnects with Last-Event-ID gets exactly the events it missed, once, then live', async () => {
    await waitFor(async () => (await stats())['subscriptions'] === 0, { message: 'previous clients gone' });
    const first = await openStream({});
    await waitFor(async () => (await stats())['subscriptions'] === 1, { message: 'stream subscribed' });
    const seen = await produce(30);
    await waitFor(() => nsOf(first.results).length === 30, { timeoutMs: 60_000, message: 'first 30' });
    const cursor = first.lastId();
    expect(cursor).toMatch(/^w1\.[0-9a-f-]+\.0:\d+,1:\d+,2:\d+$/);
    first.abort();
    await waitFor(async () => (await stats())['subscriptions'] === 0, { message: 'first stream gone' });
    const missed = await produce(30);
    // Whether ingest wrote them to history before the stream comes back or they arrive live after, each comes once.
    const resumed = await openStream({ 'last-event-id': cursor });
    const live = await produce(15);
    await waitFor(() => nsOf(resumed.results).length >= 45, { timeoutMs: 60_000, message: '30 missed + 15 live' });
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would arrive now
    expect((resumed.results[0]?.extensions as { recovery?: { recovered: boolean } }).recovery?.recovered).toBe(true);
    expect(sorted(nsOf(resumed.results))).toEqual([...missed, ...live]);
    expect(nsOf(first.results).sort((a, b) => a - b)).toEqual(seen);
    resumed.abort();
  });
});

/** A raw event stream (what EventSource does), keeping results and the last `id:`. */
async function openStream(headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await fetch(`${httpBase}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: QUERY }),
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const results: Result[] = [];
  let lastId: string | undefined;
  void (async () => {
    let buffer = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          for (const line of buffer.slice(0, cut).split('\n')) {
            if (line.startsWith('id: ')) lastId = line.slice(4);
            else if (line.startsWith('data: ')) results.push(JSON.parse(line.slice(6)) as Result);
          }
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch {
      // aborted
    }
  })();
  return { results, lastId: () => lastId as string, abort: () => controller.abort() };
}
