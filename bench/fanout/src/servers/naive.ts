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
import { createLiveCounter, debugReply, executableSchema, readServerConfig, subscribeWithPositions, type EnvelopeEvent } from './common.js';

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
  const reply = debugReply(url.pathname, url.searchParams.get('gc') === '1', () => ({ connections: wss.clients.size, subscriptions: live.live }));
  res.writeHead(reply.status, { 'content-type': reply.type, 'cache-control': 'no-store' }).end(reply.body);
});
const wss = new WebSocketServer({ server: httpServer, path: '/graphql' });
useServer({ schema, subscribe: subscribeWithPositions }, wss);

httpServer.listen(config.port, config.host, () => {
  process.stdout.write(`naive baseline listening on ${config.host}:${config.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
