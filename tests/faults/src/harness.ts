// The fault-test harness: the built apps as processes against a real Kafka broker and a private
// redis-server, a producer that sends a bounded stream of uniquely identified events and records
// every position Kafka acknowledged, and graphql-ws clients that record every position delivered.
// A test injects one fault mid-stream and asserts, per client, 0 missing and 0 duplicates.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, type Admin, type Message, type Producer } from 'kafkajs';
import WebSocket from 'ws';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { auctionSchemaPath } from '@wirestream/schema';
import { createTopics, freePort, startRedis, uniqueName, waitFor, type RedisServer, startApp, type AppProcess } from '@wirestream/testkit';

/** Partitions of each test topic: enough for a rebalance to move some between replicas. */
export const PARTITIONS = 3;
/** Shards of the example schema's @topic (channels a gateway subscribes per topic). */
const SHARDS = 16;
const SUBSCRIPTION = 'subscription { listingUpdated { event_id } }';

/** `partition:offset` of the listing topic: what every count below is keyed by. */
export type Position = string;

export interface FaultHarnessOptions {
  /** Bootstrap servers of the broker the apps and the producer use. */
  readonly brokers: readonly string[];
  /** Changes the test schema (the auction schema on the test's topics), e.g. to add a `@lookup` field. @default none */
  readonly schema?: (sdl: string) => string;
}

export interface StreamOptions {
  /** Events to send in total. @default 2_000 */
  readonly events?: number;
  /** Events per second (sent in ticks of 100 ms). @default 150 */
  readonly perSecond?: number;
  /** Distinct listing ids (each with its seller) the events use. @default 24 */
  readonly listings?: number;
}

/** The background producer of one test. */
export interface EventStream {
  /** Positions Kafka acknowledged (acks = all). A send that failed is retried, never counted twice. */
  readonly acked: Set<Position>;
  /** Events acknowledged so far. */
  produced(): number;
  /** Resolves once `n` events are acknowledged. */
  waitForProduced(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once every event is acknowledged; rejects if sending stopped working for good. */
  readonly done: Promise<void>;
  /** Milliseconds Kafka refused sends (a broker restart), summed. */
  failedSendMs(): number;
}

/** A graphql-ws client subscribed to every listing event, recording what it receives. */
export interface RecordingClient {
  readonly name: string;
  /** Every `extensions.position` received, in arrival order (duplicates kept). */
  readonly positions: Position[];
  readonly errors: unknown[];
  /** Every result received, when connected with `keepResults`. */
  readonly results: FormattedExecutionResult<Record<string, unknown>, unknown>[];
  completed: boolean;
}

/** How `connectClients` subscribes. */
export interface ClientOptions {
  /** @default 'subscription { listingUpdated { event_id } }' */
  readonly query?: string;
  /** Keep every result in `results` (memory: a test's few thousand events). @default false */
  readonly keepResults?: boolean;
  /** Printed before each client's number in the counts. @default 'client' */
  readonly name?: string;
}

export interface DeliveryCount {
  readonly client: string;
  readonly produced: number;
  /** Distinct acknowledged positions received. */
  readonly delivered: number;
  readonly missing: number;
  readonly duplicates: number;
  /** Positions received that the producer never saw acknowledged (a send retried after a lost ack). */
  readonly extra: number;
}

export interface Gateway {
  readonly app: AppProcess;
  readonly wsUrl: string;
  readonly httpBase: string;
}

export interface FaultHarness {
  readonly listingTopic: string;
  readonly redis: RedisServer;
  readonly groupId: string;
  /** Starts an ingest replica in the test's group; waits until it joined unless told not to. */
  startIngest(options?: { waitForJoin?: boolean; env?: Record<string, string> }): Promise<AppProcess>;
  /** Starts a gateway on a free port and waits for /readyz. */
  startGateway(env?: Record<string, string>): Promise<Gateway>;
  /** Connects `count` clients to `gateway` and waits until the gateway confirmed their Redis channels. */
  connectClients(gateway: Gateway, count: number, options?: ClientOptions): Promise<RecordingClient[]>;
  /** Starts sending the bounded stream in the background. */
  startStream(options?: StreamOptions): EventStream;
  /** Waits until every client received every acknowledged position (or the deadline), then counts. */
  settle(clients: readonly RecordingClient[], stream: EventStream, timeoutMs?: number): Promise<DeliveryCount[]>;
  /** The gateway's GET /stats (eventsIn, duplicates dropped, backfilled, …), for the test log. */
  gatewayStats(gateway: Gateway): Promise<Record<string, unknown>>;
  /** Stops every process, client and connection this harness started. Idempotent. */
  close(): Promise<void>;
}

/** Counts one client's deliveries against what the producer got acknowledged. */
export function countDelivery(client: RecordingClient, acked: ReadonlySet<Position>): DeliveryCount {
  const seen = new Set<Position>();
  let duplicates = 0;
  let extra = 0;
  for (const position of client.positions) {
    if (seen.has(position)) duplicates++;
    else {
      seen.add(position);
      if (!acked.has(position)) extra++;
    }
  }
  let missing = 0;
  for (const position of acked) if (!seen.has(position)) missing++;
  return { client: client.name, produced: acked.size, delivered: seen.size - extra, missing, duplicates, extra };
}

export async function createFaultHarness({ brokers, schema = (sdl) => sdl }: FaultHarnessOptions): Promise<FaultHarness> {
  const suffix = uniqueName('faults');
  const listingTopic = `listing-events-${suffix}`;
  const bidTopic = `bid-events-${suffix}`;
  const groupId = `ingest-${suffix}`;
  const workDir = mkdtempSync(join(tmpdir(), 'wirestream-faults-'));
  const schemaPath = join(workDir, 'schema.graphql');
  writeFileSync(
    schemaPath,
    schema(
      readFileSync(auctionSchemaPath, 'utf8')
        .replace('"listing-events"', JSON.stringify(listingTopic))
        .replace('"bid-events"', JSON.stringify(bidTopic)),
    ),
  );
  const redis = await startRedis();
  // Retries sized for a broker restart (several seconds away); the stream retries on top of that.
  const kafka = new Kafka({ clientId: 'faults', brokers: [...brokers], logLevel: logLevel.NOTHING, retry: { retries: 8, maxRetryTime: 2_000 } });
  const admin: Admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [listingTopic, bidTopic].map((topic) => ({ topic, numPartitions: PARTITIONS })));
  const producer: Producer = kafka.producer();
  await producer.connect();

  const apps: AppProcess[] = [];
  const clients: Client[] = [];
  let stopStreams = false;
  let closing: Promise<void> | undefined;

  const common = { REDIS_URL: redis.url, SCHEMA_PATH: schemaPath, LOG_LEVEL: 'info' };

  async function startIngest({ waitForJoin = true, env = {} }: { waitForJoin?: boolean; env?: Record<string, string> } = {}) {
    const app = startApp('ingest', { ...common, KAFKA_BROKERS: brokers.join(','), KAFKA_GROUP_ID: groupId, INGEST_HTTP_PORT: '0', ...env });
    apps.push(app);
    if (waitForJoin) await app.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group');
    return app;
  }

  async function startGateway(env: Record<string, string> = {}): Promise<Gateway> {
    const port = await freePort();
    const app = startApp('gateway', { ...common, GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: String(port), GATEWAY_AUTH_MODE: 'anonymous', ...env });
    apps.push(app);
    const httpBase = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (app.child.exitCode !== null) throw new Error(`gateway exited with ${app.child.exitCode}: ${app.stderr()}`);
        return (await fetch(`${httpBase}/readyz`).catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 30_000, message: 'gateway /readyz to answer 200' },
    );
    return { app, wsUrl: `ws://127.0.0.1:${port}/graphql`, httpBase };
  }

  async function connectClients(gateway: Gateway, count: number, { query = SUBSCRIPTION, keepResults = false, name = 'client' }: ClientOptions = {}): Promise<RecordingClient[]> {
    const recording: RecordingClient[] = [];
    for (let i = 1; i <= count; i++) {
      const client = createClient({ url: gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
      clients.push(client);
      const record: RecordingClient = { name: `${name} ${i}`, positions: [], errors: [], results: [], completed: false };
      client.subscribe(
        { query },
        {
          next: (result) => {
            if (keepResults) record.results.push(result);
            const position = (result.extensions as { position?: { partition: number; offset: string } } | undefined)?.position;
            if (position === undefined) record.errors.push(new Error(`a next without extensions.position: ${JSON.stringify(result)}`));
            else record.positions.push(`${position.partition}:${position.offset}`);
          },
          error: (error: unknown) => record.errors.push(error),
          complete: () => {
            record.completed = true;
          },
        },
      );
      recording.push(record);
    }
    // The stream must not start before the gateway listens on Redis: pub/sub drops unheard messages.
    await waitFor(
      async () => {
        const stats = (await (await fetch(`${gateway.httpBase}/stats`)).json()) as Record<string, number>;
        return stats['channels'] === SHARDS && stats['confirmedChannels'] === SHARDS;
      },
      { timeoutMs: 30_000, message: `the gateway to confirm the ${SHARDS} channels of ${count} clients` },
    );
    return recording;
  }

  function startStream({ events = 2_000, perSecond = 150, listings = 24 }: StreamOptions = {}): EventStream {
    const acked = new Set<Position>();
    const generator = createAuctionEventGenerator({ seed: 42, listings });
    let failedMs = 0;
    const perTick = Math.max(1, Math.round(perSecond / 10));

    /** Sends one tick's messages until Kafka acknowledges them, recording their positions. */
    async function sendTick(messages: Message[]): Promise<void> {
      for (;;) {
        if (stopStreams) throw new Error('the harness closed while the stream was still sending');
        const started = Date.now();
        try {
          const results = await producer.send({ topic: listingTopic, acks: -1, messages });
          for (const { partition, baseOffset } of results) {
            const count = messages.filter((m) => m.partition === partition).length;
            for (let k = 0; k < count; k++) acked.add(`${partition}:${BigInt(baseOffset ?? '-1') + BigInt(k)}`);
          }
          return;
        } catch {
          // The broker is away (a restart): the same events again, until they are in.
          failedMs += Date.now() - started;
          await sleep(250);
          failedMs += 250;
        }
      }
    }

    const done = (async () => {
      let sent = 0;
      let nextTick = Date.now();
      while (sent < events) {
        const messages: Message[] = [];
        for (let k = 0; k < perTick && sent < events; k++, sent++) {
          const event = generator.listingEvent();
          // Round-robin partitions: each partition's offsets are then known from the ack alone.
          messages.push({ partition: sent % PARTITIONS, key: event.key, value: JSON.stringify(event.value) });
        }
        await sendTick(messages);
        nextTick += 100;
        await sleep(Math.max(0, nextTick - Date.now()));
      }
    })();
    done.catch(() => {}); // observed by the test through `done`

    return {
      acked,
      done,
      produced: () => acked.size,
      failedSendMs: () => failedMs,
      waitForProduced: (n, timeoutMs = 60_000) =>
        waitFor(() => acked.size >= n, { timeoutMs, message: `${n} events acknowledged by Kafka` }).then(() => undefined),
    };
  }

  async function settle(recording: readonly RecordingClient[], stream: EventStream, timeoutMs = 60_000): Promise<DeliveryCount[]> {
    await stream.done;
    try {
      await waitFor(() => recording.every((c) => countDelivery(c, stream.acked).missing === 0), {
        timeoutMs,
        message: 'every client to receive every acknowledged position',
      });
      // Anything still in flight would show up as a duplicate now.
      await sleep(1_000);
    } catch {
      // Counted below: the assertion names what is missing.
    }
    return recording.map((c) => countDelivery(c, stream.acked));
  }

  async function close(): Promise<void> {
    closing ??= (async () => {
      stopStreams = true;
      await Promise.all(clients.map((c) => Promise.resolve(c.dispose())));
      await Promise.all(apps.map((a) => a.stop('SIGTERM')));
      await producer.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
      await redis.stop();
      rmSync(workDir, { recursive: true, force: true });
    })();
    return closing;
  }

  async function gatewayStats(gateway: Gateway): Promise<Record<string, unknown>> {
    return (await (await fetch(`${gateway.httpBase}/stats`)).json()) as Record<string, unknown>;
  }

  return { listingTopic, redis, groupId, startIngest, startGateway, connectClients, startStream, settle, gatewayStats, close };
}

/** One line per client for the test log (and the report), then what the gateway counted. */
export function describeCounts(test: string, counts: readonly DeliveryCount[], startedAt: number, gatewayStats?: Record<string, unknown>): string {
  const seconds = ((Date.now() - startedAt) / 1_000).toFixed(1);
  const lines = counts.map(
    (c) => `[faults] ${test} ${c.client}: produced ${c.produced}, delivered ${c.delivered}, missing ${c.missing}, duplicates ${c.duplicates}, extra ${c.extra} (${seconds} s)`,
  );
  if (gatewayStats !== undefined) {
    const { eventsIn, duplicates, backfilled, replayed } = gatewayStats;
    lines.push(`[faults] ${test} gateway: eventsIn ${String(eventsIn)}, duplicate positions dropped ${String(duplicates)}, backfilled ${String(backfilled)}, replayed ${String(replayed)}`);
  }
  return lines.join('\n');
}
