// Shared by the gateway's integration tests: a gateway on a free port over a real redis-server,
// official graphql-ws clients, raw sockets for what the client never sends, and an event publisher.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { auctionSchemaPath, createWirestreamSchema, type WirestreamSchema } from '@wirestream/schema';
import {
  channelName,
  encodeEnvelope,
  historyAppendArgs,
  historyPartitionsKey,
  historyStreamKey,
  shardOf,
} from '@wirestream/wire';
import { createLogger, createMemorySink, type MemorySink } from '@wirestream/telemetry';
import { startRedis, uniqueName, waitFor, type RedisServer } from '@wirestream/testkit';
import { createGateway, createRedisBroker, createRedisHistory, createRedisSnapshots, type Gateway, type GatewayDeps, type GatewayOptions } from '../../src/index.js';

export type ExecutionResult = FormattedExecutionResult<Record<string, unknown>, unknown>;

export const LISTING = 'subscription { listingUpdated { listing_id event_type } }';

/** A copy of the example schema reading a topic unique to the calling test file. */
export function schemaFor(listingTopic: string, editSdl: (sdl: string) => string = (sdl) => sdl): WirestreamSchema {
  const sdl = readFileSync(auctionSchemaPath, 'utf8').replace('"listing-events"', JSON.stringify(listingTopic));
  return createWirestreamSchema(editSdl(sdl));
}

export interface TestGateway {
  readonly gateway: Gateway;
  readonly url: string;
  readonly httpBase: string;
  readonly topic: string;
  readonly sink: MemorySink;
  /** Publishes a listing event as ingest would (next offset, or `atOffset` to replay one); resolves with its offset. */
  publishListing(listingId: string, eventType?: string, atOffset?: string): Promise<string>;
  /** Publishes a bid event on the (shared) bid-events topic. */
  publishBid(listingId: string, bidderId: string): Promise<void>;
  /** Publishes raw text on a channel of the topic. */
  publishRaw(text: string, shard?: number): Promise<void>;
  /** Trims the listing topic's history (partition 0) to about `maxLen` entries, as ingest's MAXLEN would. */
  trimHistory(maxLen: number): Promise<void>;
  /** The Redis server under the gateway (tests stop and restart it). */
  readonly redisServer: RedisServer;
  /** An official graphql-ws client (lazy, no retries), disposed by stop(). */
  connect(connectionParams?: Record<string, unknown>): Client;
  stop(): Promise<void>;
}

export async function startTestGateway(
  options: GatewayOptions = {},
  deps: Partial<Pick<GatewayDeps, 'authenticator' | 'metrics' | 'contextFactories' | 'tickets' | 'plugin' | 'lookups'>> = {},
  /** Adjusts the executable schema before the gateway starts (e.g. attaches a custom resolver). */
  configureSchema: (schema: WirestreamSchema) => void = () => {},
  /** Edits the example SDL before it is built (e.g. adds `@topic(headers:)`). */
  editSdl?: (sdl: string) => string,
): Promise<TestGateway> {
  const redisServer: RedisServer = await startRedis();
  const publisher = new Redis(redisServer.url);
  const subscriberConn = new Redis(redisServer.url, { maxRetriesPerRequest: null, retryStrategy: () => 100 });
  const historyRedis = new Redis(redisServer.url, { maxRetriesPerRequest: 2, retryStrategy: () => 100 });
  for (const conn of [publisher, subscriberConn, historyRedis]) conn.on('error', () => {}); // restarts are part of some tests
  const topic = uniqueName('listing-events');
  const sink = createMemorySink();
  const schema = schemaFor(topic, editSdl);
  configureSchema(schema);
  const gateway = createGateway(
    {
      schema,
      broker: createRedisBroker(subscriberConn),
      history: createRedisHistory(historyRedis, 'wsh'),
      // Read only when a subscription on a @topic(snapshot: true) topic asks (an SDL edited to declare one).
      snapshots: createRedisSnapshots(historyRedis, 'wsh'),
      logger: createLogger({ name: 'gateway-test', destination: sink }),
      ...deps,
    },
    options,
  );
  const port = await gateway.listen(0, '127.0.0.1');
  await waitFor(() => gateway.isReady(), { message: 'gateway ready (Redis connected)' });
  const url = `ws://127.0.0.1:${port}/graphql`;
  const clients: Client[] = [];
  let offset = 0;

  return {
    gateway,
    url,
    httpBase: `http://127.0.0.1:${port}`,
    topic,
    sink,
    redisServer,
    async publishListing(listingId, eventType = 'ListingUpdated', atOffset) {
      const current = atOffset ?? String(offset++);
      const payload = JSON.stringify({ event_id: `e-${current}`, event_type: eventType, listing_id: listingId, occurred_at: 'now' });
      const envelope = encodeEnvelope({ topic, partition: 0, offset: current, key: listingId, ts: Date.now() }, payload);
      const channel = channelName('ws', topic, shardOf(listingId, 16));
      // As ingest does: history first (a re-publish is rejected by the stream and ignored), then PUBLISH.
      await publisher
        .multi()
        .call('XADD', ...historyAppendArgs('wsh', topic, 0, current, channel, envelope))
        .sadd(historyPartitionsKey('wsh', topic), '0')
        .exec()
        .catch(() => undefined);
      await publisher.publish(channel, envelope);
      return current;
    },
    async trimHistory(maxLen) {
      await publisher.xtrim(historyStreamKey('wsh', topic, 0), 'MAXLEN', maxLen);
    },
    async publishBid(listingId, bidderId) {
      const current = String(offset++);
      const payload = JSON.stringify({ event_id: `b-${current}`, event_type: 'BidPlaced', listing_id: listingId, bidder_id: bidderId, bid_id: `bid-${current}` });
      const envelope = encodeEnvelope({ topic: 'bid-events', partition: 0, offset: current, key: listingId, ts: Date.now() }, payload);
      await publisher.publish(channelName('ws', 'bid-events', shardOf(listingId, 16)), envelope);
    },
    async publishRaw(text, shard = 0) {
      await publisher.publish(channelName('ws', topic, shard), text);
    },
    connect(connectionParams) {
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: true,
        ...(connectionParams ? { connectionParams } : {}),
      });
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((c) => Promise.resolve(c.dispose())));
      await gateway.drain();
      publisher.disconnect();
      subscriberConn.disconnect();
      historyRedis.disconnect();
      await redisServer.stop();
    },
  };
}

/** Subscribes and collects results and errors. */
export function collect(client: Client, query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>) {
  const results: ExecutionResult[] = [];
  const errors: unknown[] = [];
  let completed = false;
  const dispose = client.subscribe({ query, ...(variables ? { variables } : {}), ...(extensions ? { extensions } : {}) }, {
    next: (r) => results.push(r),
    error: (e: unknown) => errors.push(e),
    complete: () => (completed = true),
  });
  return { results, errors, dispose, isComplete: () => completed };
}

/** Opens a `ws` socket offering `protocols` and resolves the HTTP answer of an upgrade the server refused. */
export function refusedUpgrade(url: string, protocols: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    ws.on('open', () => reject(new Error(`upgrade accepted with subprotocol ${JSON.stringify(ws.protocol)}`)));
    ws.on('error', () => {}); // the refusal is reported through unexpected-response
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
}

/** A raw socket for protocol violations the official client never produces. */
export function rawSocket(url: string, protocol: string | string[] | null = 'graphql-transport-ws', headers?: Record<string, string>) {
  const ws = protocol === null ? new WebSocket(url, headers ? { headers } : {}) : new WebSocket(url, protocol, headers ? { headers } : {});
  const messages: unknown[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('message', (data) => messages.push(JSON.parse(rawText(data))));
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  // The failure is asserted through `opened` where a test expects it.
  opened.catch(() => {});
  return { ws, messages, closed, opened };
}

/** The text of a `ws` message (a Buffer with the default binaryType; fragments or an ArrayBuffer otherwise). */
function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}
