import { execute, type ExecutionResult } from 'graphql';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import { decodeEnvelope, type Envelope, type WirestreamSchema } from '@wirestream/schema';
import type { CompiledSubscription, FilterClause } from './operations.js';

/** One client subscription (one graphql-ws `id` on one socket). Returned as the handle to remove it. */
export interface Subscriber<C> {
  readonly conn: C;
  readonly id: string;
  /** `{"id":<id>,"type":"next","payload":` — built once so each delivery is a concatenation. */
  readonly head: string;
  readonly group: Group<C>;
}

/** Subscribers whose operations are identical (same dedup key): one execution per event serves all. */
interface Group<C> {
  readonly op: CompiledSubscription;
  readonly subscribers: Set<Subscriber<C>>;
}

export interface FanoutDeps<C> {
  readonly schema: WirestreamSchema;
  /** A connection dedicated to SUBSCRIBE (ioredis puts it in subscriber mode). */
  readonly redis: Redis;
  readonly logger: Logger;
  /** Writes one text frame to a connection; must not throw for a live connection. */
  readonly send: (conn: C, frame: string) => void;
}

export interface FanoutStats {
  eventsIn: number;
  badEnvelopes: number;
  executions: number;
  framesOut: number;
}

/**
 * The fan-out engine. Per Redis event: parse the envelope once; for each distinct operation
 * listening on that channel whose filter matches, execute once and serialize once; then write
 * the shared JSON to each subscriber of that operation. Redis channels are reference-counted by
 * the groups that need them: subscribed on first use, unsubscribed when the last group goes.
 */
export function createFanout<C>(deps: FanoutDeps<C>) {
  const { schema, redis, logger, send } = deps;
  const groups = new Map<string, Group<C>>();
  const channelGroups = new Map<string, Set<Group<C>>>();
  /** Channels whose SUBSCRIBE Redis acknowledged (and that are still wanted). */
  const confirmed = new Set<string>();
  const stats: FanoutStats = { eventsIn: 0, badEnvelopes: 0, executions: 0, framesOut: 0 };
  let subscribers = 0;

  function addChannel(channel: string, group: Group<C>): void {
    let set = channelGroups.get(channel);
    if (!set) {
      set = new Set();
      channelGroups.set(channel, set);
      redis.subscribe(channel).then(
        () => {
          if (channelGroups.has(channel)) confirmed.add(channel);
        },
        (err: unknown) => logger.error({ err, channel }, 'Redis SUBSCRIBE failed'),
      );
    }
    set.add(group);
  }

  function removeChannel(channel: string, group: Group<C>): void {
    const set = channelGroups.get(channel);
    if (!set) return;
    set.delete(group);
    if (set.size === 0) {
      channelGroups.delete(channel);
      confirmed.delete(channel);
      redis.unsubscribe(channel).catch((err: unknown) => logger.warn({ err, channel }, 'Redis UNSUBSCRIBE failed'));
    }
  }

  function subscribe(conn: C, id: string, op: CompiledSubscription): Subscriber<C> {
    let group = groups.get(op.dedupKey);
    if (!group) {
      group = { op, subscribers: new Set() };
      groups.set(op.dedupKey, group);
      for (const channel of op.channels) addChannel(channel, group);
    }
    const subscriber: Subscriber<C> = { conn, id, head: `{"id":${JSON.stringify(id)},"type":"next","payload":`, group };
    group.subscribers.add(subscriber);
    subscribers++;
    return subscriber;
  }

  function unsubscribe(subscriber: Subscriber<C>): void {
    const { group } = subscriber;
    if (!group.subscribers.delete(subscriber)) return;
    subscribers--;
    if (group.subscribers.size > 0) return;
    groups.delete(group.op.dedupKey);
    for (const channel of group.op.channels) removeChannel(channel, group);
  }

  function deliver(group: Group<C>, json: string): void {
    // Deliberately imperative: this is the per-subscriber loop, the only O(N) part of an event.
    for (const subscriber of group.subscribers) {
      send(subscriber.conn, subscriber.head + json + '}');
      stats.framesOut++;
    }
  }

  function handleMessage(channel: string, text: string): void {
    const set = channelGroups.get(channel);
    if (!set) return;
    stats.eventsIn++;
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(text);
    } catch (err) {
      stats.badEnvelopes++;
      logger.warn({ err, channel }, 'dropped a malformed envelope from Redis');
      return;
    }
    const extensions = {
      position: { topic: envelope.topic, partition: envelope.partition, offset: envelope.offset },
    };
    for (const group of set) {
      if (!matches(group.op.filter, envelope.payload)) continue;
      stats.executions++;
      const result = execute({
        schema: schema.schema,
        document: group.op.document,
        rootValue: { [group.op.route.fieldName]: envelope.payload },
        variableValues: group.op.variables,
        operationName: group.op.operationName,
      });
      // Default resolvers are synchronous; a custom async resolver still works, just later.
      if (isPromise(result)) {
        result.then(
          (r) => deliver(group, serialize(r, extensions)),
          (err: unknown) => logger.error({ err }, 'subscription execution failed'),
        );
      } else {
        deliver(group, serialize(result, extensions));
      }
    }
  }

  redis.on('message', handleMessage);

  return {
    subscribe,
    unsubscribe,
    /** Exposed for tests and benchmarks that feed envelopes without Redis. */
    handleMessage,
    stats: (): Readonly<FanoutStats> & { subscribers: number; groups: number; channels: number; confirmedChannels: number } => ({
      ...stats,
      subscribers,
      groups: groups.size,
      channels: channelGroups.size,
      confirmedChannels: confirmed.size,
    }),
  };
}

export type Fanout<C> = ReturnType<typeof createFanout<C>>;

function matches(filter: readonly FilterClause[], payload: Record<string, unknown>): boolean {
  for (let i = 0; i < filter.length; i++) {
    const [field, expected] = filter[i] as FilterClause;
    const actual = payload[field];
    if (actual === undefined || actual === null || String(actual) !== expected) return false;
  }
  return true;
}

function serialize(result: ExecutionResult, extensions: Record<string, unknown>): string {
  return JSON.stringify(result.errors ? { errors: result.errors, data: result.data } : { data: result.data, extensions });
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
