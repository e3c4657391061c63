/**
 * Baseline 2, "the card stack done the usual way": what a user would build from the docs with
 * our libraries. graphql-ws's own uWebSockets.js adapter (`makeBehavior`), one ioredis
 * subscriber whose messages are decoded once (`decodeEnvelope`) and handed to every matching
 * subscriber, and the memoized key transform (`@wirestream/transform`) in the resolver. Still
 * one execution and one `JSON.stringify` per subscriber per event, one parse + validate per
 * subscribe: that is what our fan-out engine removes.
 *
 * Env and HTTP endpoints: as the naive baseline.
 */
import uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { makeBehavior } from 'graphql-ws/use/uWebSockets';
import { filterClauses, matchesFilter, subscriptionChannels, type FilterClause } from '@wirestream/schema';
import { decodeEnvelope } from '@wirestream/wire';
import { createKeyTransformer } from '@wirestream/transform';
import { createLiveCounter, debugReply, executableSchema, readServerConfig, subscribeWithPositions, type EnvelopeEvent } from './common.js';

const config = readServerConfig();

interface Listener {
  /** The subscription's filter (the schema's contract), built once when it subscribes. */
  readonly filter: readonly FilterClause[];
  readonly push: (event: EnvelopeEvent) => void;
}

/** Channel → listeners; Redis SUBSCRIBE on first listener, UNSUBSCRIBE after the last. */
function createEnvelopeHub(redis: Redis) {
  const byChannel = new Map<string, Set<Listener>>();
  redis.on('message', (channel: string, text: string) => {
    const listeners = byChannel.get(channel);
    if (!listeners) return;
    let envelope: EnvelopeEvent;
    try {
      envelope = decodeEnvelope(text);
    } catch {
      return;
    }
    for (const listener of listeners) if (matchesFilter(listener.filter, envelope.payload)) listener.push(envelope);
  });
  return {
    listen(channels: readonly string[], listener: Listener): () => void {
      for (const channel of channels) {
        let set = byChannel.get(channel);
        if (!set) {
          set = new Set();
          byChannel.set(channel, set);
          void redis.subscribe(channel);
        }
        set.add(listener);
      }
      return () => {
        for (const channel of channels) {
          const set = byChannel.get(channel);
          if (!set) continue;
          set.delete(listener);
          if (set.size === 0) {
            byChannel.delete(channel);
            void redis.unsubscribe(channel);
          }
        }
      };
    },
  };
}

/** The usual push-to-pull adapter: an unbounded queue per subscriber. */
function createEventIterator(listen: (push: (event: EnvelopeEvent) => void) => () => void): AsyncIterableIterator<EnvelopeEvent> {
  const queue: EnvelopeEvent[] = [];
  const waiting: ((step: IteratorResult<EnvelopeEvent>) => void)[] = [];
  let done = false;
  const unlisten = listen((event) => {
    const resolve = waiting.shift();
    if (resolve) resolve({ value: event, done: false });
    else queue.push(event);
  });
  const finish = (): IteratorResult<EnvelopeEvent> => {
    if (!done) {
      done = true;
      unlisten();
      queue.length = 0;
      for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true });
    }
    return { value: undefined, done: true };
  };
  return {
    next() {
      if (done) return Promise.resolve({ value: undefined, done: true });
      const event = queue.shift();
      if (event !== undefined) return Promise.resolve({ value: event, done: false });
      return new Promise((resolve) => waiting.push(resolve));
    },
    return: () => Promise.resolve(finish()),
    throw: (error?: unknown) => {
      finish();
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

const hub = createEnvelopeHub(new Redis(config.redisUrl));
const transformer = createKeyTransformer();
const live = createLiveCounter();

const { schema } = executableSchema(config.schemaPath, (route) => ({
  subscribe: (_root: unknown, args: Record<string, unknown>) =>
    live.track(createEventIterator((push) => hub.listen(subscriptionChannels(config.channelPrefix, route, args), { filter: filterClauses(route, args), push }))),
  // Already snake_case from ingest: the memoized transform finds every key in its memo and
  // returns the payload as is, which is as cheap as a per-subscriber transform gets.
  resolve: (event: EnvelopeEvent) => transformer.transform(event.payload),
}));

let connections = 0;
const app = uWS.App();
app.ws(
  '/graphql',
  makeBehavior({ schema, subscribe: subscribeWithPositions }, {
    open: () => {
      connections++;
    },
    close: () => {
      connections--;
    },
  }),
);
app.any('/*', (res, req) => {
  // uWS's request dies when this handler returns: read it now.
  const reply = debugReply(req.getUrl(), req.getQuery('gc') === '1', () => ({ connections, subscriptions: live.live }));
  res.cork(() => res.writeStatus(reply.status === 200 ? '200 OK' : '404 Not Found').writeHeader('content-type', reply.type).writeHeader('cache-control', 'no-store').end(reply.body));
});
app.listen(config.host, config.port, (socket) => {
  if (!socket) {
    process.stderr.write(`card-stack baseline could not listen on ${config.host}:${config.port}\n`);
    process.exit(1);
  }
  process.stdout.write(`card-stack baseline listening on ${config.host}:${config.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
