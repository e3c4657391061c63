/**
 * What the baseline servers share, so that they differ only where the stacks differ: the same SDL
 * and routing (@wirestream/schema), the same Redis channels, the same filters, the same
 * `extensions.position` on every `next` (the load client dedups by it), the same debug endpoints.
 */
import {
  createSourceEventStream,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFieldConfig,
  type GraphQLSchema,
} from 'graphql';
import { loadWirestreamSchema, auctionSchemaPath, type SubscriptionRoute, type WirestreamSchema } from '@wirestream/schema';

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly redisUrl: string;
  readonly channelPrefix: string;
  readonly schemaPath: string;
}

/** Reads the environment once, reporting every problem at once. */
export function readServerConfig(env: NodeJS.ProcessEnv = process.env): Readonly<ServerConfig> {
  const problems: string[] = [];
  const port = Number(env['PORT']);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) problems.push(`PORT must be a port number 1..65535, got ${String(env['PORT'])}`);
  const redisUrl = env['REDIS_URL'] ?? '';
  if (!/^redis:\/\/127\.0\.0\.1:\d+$/.test(redisUrl)) problems.push(`REDIS_URL must be redis://127.0.0.1:<port> (a private test Redis), got ${redisUrl}`);
  if (problems.length > 0) {
    process.stderr.write(`baseline server config:\n  - ${problems.join('\n  - ')}\n`);
    process.exit(78); // EX_CONFIG
  }
  return Object.freeze({
    host: env['HOST'] ?? '127.0.0.1',
    port,
    redisUrl,
    channelPrefix: env['REDIS_CHANNEL_PREFIX'] ?? 'ws',
    schemaPath: env['SCHEMA_PATH'] ?? auctionSchemaPath,
  });
}

/** The `/debug/memory` contract our gateway serves, so the harness reads every stack alike. */
export function memoryReport(forceGc: boolean): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (forceGc && gc) {
    gc();
    gc();
  }
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return JSON.stringify({ rss, heapUsed, heapTotal, external, arrayBuffers, gc: forceGc && gc !== undefined });
}

/** What a baseline answers an HTTP request with (its transport writes it). */
export interface DebugReply {
  readonly status: 200 | 404;
  readonly type: string;
  readonly body: string;
}

/** The HTTP endpoints of every baseline, our gateway's contract: `/healthz`, `/stats` (`stats()` as JSON), `/debug/memory[?gc=1]`. */
export function debugReply(path: string, forceGc: boolean, stats: () => object): DebugReply {
  if (path === '/healthz') return { status: 200, type: 'text/plain', body: 'ok' };
  if (path === '/stats') return { status: 200, type: 'application/json', body: JSON.stringify(stats()) };
  if (path === '/debug/memory') return { status: 200, type: 'application/json', body: memoryReport(forceGc) };
  return { status: 404, type: 'text/plain', body: 'not found' };
}

/** An event as it travels from the pubsub to execution: the decoded envelope. */
export interface EnvelopeEvent {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly ts: number;
  readonly payload: Record<string, unknown>;
}

/**
 * The example schema made executable the way a resolver-map user would: `subscribe` and
 * `resolve` set on each Subscription field. `fields(route)` builds both for one route.
 */
export function executableSchema(
  schemaPath: string,
  fields: (route: SubscriptionRoute) => Pick<GraphQLFieldConfig<EnvelopeEvent, unknown>, 'subscribe' | 'resolve'>,
): { ws: WirestreamSchema; schema: GraphQLSchema } {
  const ws = loadWirestreamSchema(schemaPath);
  const subscriptionType = ws.schema.getSubscriptionType();
  if (!subscriptionType) throw new Error('schema has no Subscription type');
  for (const [name, field] of Object.entries(subscriptionType.getFields())) {
    const route = ws.routes.get(name);
    if (!route) continue;
    const { subscribe, resolve } = fields(route);
    if (subscribe) field.subscribe = subscribe as NonNullable<typeof field.subscribe>;
    if (resolve) field.resolve = resolve as NonNullable<typeof field.resolve>;
  }
  return { ws, schema: ws.schema };
}

/**
 * graphql-js's own `subscribe` (createSourceEventStream, then `execute` once per source event
 * with the event as root value), plus `extensions.position` from the event's envelope so the load
 * client can count loss and duplicates. Still one execution per subscriber per event: that is the
 * point of the baselines.
 */
export async function subscribeWithPositions(
  args: ExecutionArgs,
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!isAsyncIterable(stream)) return stream;
  const source = stream[Symbol.asyncIterator]() as AsyncIterator<EnvelopeEvent>;
  // A plain iterator object like graphql-js's mapAsyncIterator, not an async generator: a
  // generator's return() waits for a pending next(), so an idle subscription would never let go
  // of its pubsub listener when the client leaves.
  const mapped: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      const step = await source.next();
      if (step.done) return { value: undefined, done: true };
      const event = step.value;
      const result = await execute({ ...args, rootValue: event });
      return {
        value: { ...result, extensions: { position: { topic: event.topic, partition: event.partition, offset: event.offset } } },
        done: false,
      };
    },
    async return() {
      await source.return?.();
      return { value: undefined, done: true };
    },
    async throw(error?: unknown) {
      await source.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return mapped;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] === 'function';
}

/** Counts live subscriptions (for `/stats`): wraps an iterator so `return()` decrements. */
export function createLiveCounter() {
  let live = 0;
  return {
    get live(): number {
      return live;
    },
    track<T>(iterator: AsyncIterator<T>): AsyncIterator<T> & AsyncIterable<T> {
      live++;
      let done = false;
      const finish = (): void => {
        if (!done) {
          done = true;
          live--;
        }
      };
      return {
        next: () => iterator.next(),
        return: async (value?: unknown) => {
          finish();
          return (await iterator.return?.(value)) ?? { value: undefined as T, done: true };
        },
        throw: async (error?: unknown) => {
          finish();
          if (iterator.throw) return iterator.throw(error);
          throw error;
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    },
  };
}
