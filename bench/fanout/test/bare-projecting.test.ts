/**
 * The bare projecting server (BARE_PROJECT=true, as the sweep's `bare-projecting` stack starts
 * it) against a real redis-server: subscribers grouped by operation, one render per operation
 * and event, each socket its operation's fields and the event's position. Runs the built server
 * (dist/servers/bare-uws.js: turbo builds before test). An integration test (it starts servers): in
 * test/, where the package's unit tests stay beside their code in src/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { execute, parse, type ExecutionResult } from 'graphql';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, shardOf } from '@wirestream/wire';
import { startRedis, waitFor, type RedisServer } from '@wirestream/testkit';
import { prepareCorpus, startServerProcess, type ManagedProcess } from '@wirestream/bench-kit';

const ws = loadWirestreamSchema(auctionSchemaPath);
const listingRoute = ws.routes.get('listingUpdated');
if (!listingRoute) throw new Error('the auction schema has no listingUpdated route');
const route = listingRoute;
const corpus = prepareCorpus({ count: 3, listings: 50, partitions: 6, shards: route.shards });

const FULL = { query: `subscription Listings0 { listingUpdated { ${FULL_SELECTION} } }`, operationName: 'Listings0' };
const ALIASED = { query: 'subscription Card { ev: listingUpdated { id: listing_id listing { title price: current_price { amount_cents } } } }' };

let redisServer: RedisServer;
let redis: Redis;
const servers: ManagedProcess[] = [];
const sockets: WebSocket[] = [];

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
}, 30_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  for (const s of servers) await s.stop();
  redis?.disconnect();
  await redisServer?.stop();
});

/** Starts the built bare server with `env` (as servers.ts does for its stacks); resolves once it listens on every shard channel. */
async function startBare(env: Record<string, string>): Promise<string> {
  const server = await startServerProcess('bare', [new URL('../dist/servers/bare-uws.js', import.meta.url).pathname], {
    env: (host, port) => ({ PORT: String(port), HOST: host, REDIS_URL: redisServer.url, ...env }),
    readyPath: '/healthz',
  });
  servers.push(server);
  const channels = Array.from({ length: route.shards }, (_, s) => channelName('ws', route.topic, s));
  await waitFor(async () => {
    const numsub = (await redis.pubsub('NUMSUB', ...channels)) as (string | number)[];
    return numsub.filter((_, i) => i % 2 === 1).every((n) => Number(n) === servers.length);
  }, { message: 'the bare server to subscribe every shard channel' });
  return server.httpBase;
}

/** A graphql-transport-ws client that subscribes with `payload` and keeps every message it gets (parsed: a frame that is not JSON fails the test). */
async function subscriber(base: string, payload: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  sockets.push(socket);
  const messages: Record<string, unknown>[] = [];
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  socket.send('{"type":"connection_init"}');
  await waitFor(() => messages.some((m) => m['type'] === 'connection_ack'), { message: 'connection_ack' });
  socket.send(JSON.stringify({ id: 's1', type: 'subscribe', payload }));
  return messages;
}

async function stats(base: string): Promise<Record<string, number>> {
  return (await (await fetch(`${base}/stats`)).json()) as Record<string, number>;
}

const payloads = corpus.events.map((_, i) => corpus.payloadOf(i));
let offset = 100;
/** Publishes the corpus as ingest writes envelopes; returns each event's position. */
async function publishAll(): Promise<{ topic: string; partition: number; offset: string }[]> {
  const positions = [];
  for (const [i, e] of corpus.events.entries()) {
    const position = { topic: route.topic, partition: e.partition, offset: String(offset++) };
    positions.push(position);
    await redis.publish(
      channelName('ws', route.topic, shardOf(e.key, route.shards)),
      `{"v":1,"topic":"${route.topic}","partition":${e.partition},"offset":"${position.offset}","key":${JSON.stringify(e.key)},"ts":1,"payload":${JSON.stringify(payloads[i])}}`,
    );
  }
  return positions;
}

const nexts = (messages: readonly Record<string, unknown>[]): Record<string, unknown>[] => messages.filter((m) => m['type'] === 'next');

describe('bare uWS projecting per distinct operation (stack bare-projecting)', () => {
  it('sends each operation its own selection of every event, rendered once per operation', async () => {
    const base = await startBare({ BARE_PROJECT: 'true', BARE_CORK_BATCH: 'true' });
    const [a, b, c] = [await subscriber(base, FULL), await subscriber(base, FULL), await subscriber(base, ALIASED)];
    const before = await waitFor(async () => {
      const s = await stats(base);
      return s['subscriptions'] === 3 ? s : undefined;
    }, { message: 'three subscriptions' });
    expect(before['operations']).toBe(2);

    const positions = await publishAll();
    await waitFor(() => [a, b, c].every((m) => nexts(m).length === corpus.events.length), { message: 'every event to every socket' });

    const expected = (op: { query: string; operationName?: string }, i: number): unknown => {
      const r = execute({ schema: ws.schema, document: parse(op.query), rootValue: { listingUpdated: payloads[i] }, operationName: op.operationName }) as ExecutionResult;
      return { data: r.data, extensions: { position: positions[i] } };
    };
    for (const [messages, op] of [[a, FULL], [b, FULL], [c, ALIASED]] as const) {
      expect(nexts(messages).map((m) => m['id'])).toEqual(['s1', 's1', 's1']);
      expect(nexts(messages).map((m) => m['payload'])).toEqual(corpus.events.map((_, i) => expected(op, i)));
    }
    expect((await stats(base))['executions']).toBe(2 * corpus.events.length);
  }, 30_000);
});

describe('bare uWS without projection (stacks bare, bare-corked)', () => {
  for (const corked of [false, true]) {
    it(`sends every socket the whole event, whatever it selected${corked ? ', corked' : ''}`, async () => {
      const base = await startBare({ BARE_CORK_BATCH: String(corked) });
      const [a, c] = [await subscriber(base, FULL), await subscriber(base, ALIASED)];
      await waitFor(async () => (await stats(base))['subscriptions'] === 2, { message: 'two subscriptions' });
      const positions = await publishAll();
      await waitFor(() => [a, c].every((m) => nexts(m).length === corpus.events.length), { message: 'every event to every socket' });
      for (const messages of [a, c]) {
        expect(nexts(messages).map((m) => m['payload'])).toEqual(corpus.events.map((_, i) => ({ data: { listingUpdated: payloads[i] }, extensions: { position: positions[i] } })));
      }
    }, 30_000);
  }
});
