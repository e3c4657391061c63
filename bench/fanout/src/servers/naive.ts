/**
 * Baseline 1, "naive": what the field's team ran. graphql-ws `useServer` on `ws`,
 * graphql-redis-subscriptions (`RedisPubSub` on ioredis) with `withFilter`, and lodash deep key
 * conversion (cloneDeep + mapKeys/mapValues + snakeCase) in the resolver. Every subscriber
 * parses and validates its own document (with locations), and every event is executed and
 * `JSON.stringify`-ed once per subscriber.
 *
 * Env: PORT, REDIS_URL (a private test Redis), optional HOST, SCHEMA_PATH, REDIS_CHANNEL_PREFIX.
 * HTTP: GET /healthz, GET /stats, GET /debug/memory[?gc=1] (same contract as our gateway).
 */
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { RedisPubSub } from 'graphql-redis-subscriptions';
import { withFilter } from 'graphql-subscriptions';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import cloneDeep from 'lodash/cloneDeep.js';
import isPlainObject from 'lodash/isPlainObject.js';
import mapKeys from 'lodash/mapKeys.js';
import mapValues from 'lodash/mapValues.js';
import { filterClauses, matchesFilter, subscriptionChannels } from '@wirestream/schema';
import snakeCase from 'lodash/snakeCase.js';
import {
  createLiveCounter,
  executableSchema,
  memoryReport,
  readServerConfig,
  subscribeWithPositions,
  type EnvelopeEvent,
} from './common.js';

const config = readServerConfig();

/** The field's deep key conversion: clone, then rebuild every object with converted keys. */
function lodashSnakeKeys(value: unknown): unknown {
  const deep = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(deep);
    if (isPlainObject(v)) return mapValues(mapKeys(v as object, (_value, key) => snakeCase(key)), deep);
    return v;
  };
  return deep(cloneDeep(value));
}

const pubsub = new RedisPubSub({
  publisher: new Redis(config.redisUrl),
  subscriber: new Redis(config.redisUrl),
});
const live = createLiveCounter();

const { schema } = executableSchema(config.schemaPath, (route) => {
  const filtered = withFilter<EnvelopeEvent, Record<string, unknown>>(
    (_root: unknown, args: Record<string, unknown> | undefined) =>
      pubsub.asyncIterator<EnvelopeEvent>(subscriptionChannels(config.channelPrefix, route, args ?? {})),
    (event: EnvelopeEvent | undefined, args: Record<string, unknown> | undefined) => event !== undefined && matchesFilter(filterClauses(route, args ?? {}), event.payload),
  );
  return {
    subscribe: async (root: unknown, args: Record<string, unknown>, context: unknown, info: unknown) =>
      live.track((await filtered(root as EnvelopeEvent, args, context, info)) as AsyncIterator<unknown>),
    resolve: (event: EnvelopeEvent) => lodashSnakeKeys(event.payload),
  };
});

const httpServer = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const reply = (status: number, type: string, body: string): void => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
  };
  if (url.pathname === '/healthz') return reply(200, 'text/plain', 'ok');
  if (url.pathname === '/stats') {
    return reply(200, 'application/json', JSON.stringify({ connections: wss.clients.size, subscriptions: live.live }));
  }
  if (url.pathname === '/debug/memory') return reply(200, 'application/json', memoryReport(url.searchParams.get('gc') === '1'));
  return reply(404, 'text/plain', 'not found');
});
const wss = new WebSocketServer({ server: httpServer, path: '/graphql' });
useServer({ schema, subscribe: subscribeWithPositions }, wss);

httpServer.listen(config.port, config.host, () => {
  process.stdout.write(`naive baseline listening on ${config.host}:${config.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
