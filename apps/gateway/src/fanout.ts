import { execute, type ExecutionResult } from 'graphql';
import { createLazyContext, disposeLazyContext, type LazyFactories } from '@wirestream/context';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import { decodeEnvelope, type Envelope, type WirestreamSchema } from '@wirestream/schema';
import type { GatewayMetrics } from './metrics.js';
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
  /** Payloads (execution results as JSON) of this event-loop turn, in event order, not yet written. */
  pending: string[];
  /** Kafka timestamps of `pending`, for the event-to-wire histogram. */
  pendingTs: number[];
  /** Sum of the subscribers' frame-head lengths, for bytes-out without a per-subscriber loop. */
  headBytes: number;
  /** Resolver context of this operation (lazy: members are built on first use), if factories were given. */
  readonly context: object | undefined;
}

/** What every group context offers before any lazy member is built. */
export interface GroupContextBase {
  /** The operation's dedup key (document, variables, arguments and scope). */
  readonly dedupKey: string;
  readonly fieldName: string;
  readonly topic: string;
}

export interface FanoutDeps<C> {
  readonly schema: WirestreamSchema;
  /** A connection dedicated to SUBSCRIBE (ioredis puts it in subscriber mode). */
  readonly redis: Redis;
  readonly logger: Logger;
  /**
   * Writes `head + payload + '}'` for each payload, in order, as one text frame each; the
   * transport should write them together (uWS: inside one `cork`, one syscall). Must not throw
   * for a closed connection.
   */
  readonly sendFrames: (conn: C, head: string, payloads: readonly string[]) => void;
  /** Prometheus series; optional so tests and benchmarks can run without a registry. */
  readonly metrics?: GatewayMetrics;
  /**
   * Backends a custom resolver may need (clients, DataLoaders), built lazily per operation group
   * on first use and disposed with the group. Defined once per server: connections hold nothing.
   */
  readonly contextFactories?: LazyFactories<object, GroupContextBase>;
}

export interface FanoutStats {
  eventsIn: number;
  /** Envelopes dropped because their position was already delivered (ingest re-publishes after a crash or rebalance). */
  duplicates: number;
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
  const { schema, redis, logger, sendFrames, metrics, contextFactories } = deps;
  const groups = new Map<string, Group<C>>();
  const channelGroups = new Map<string, Set<Group<C>>>();
  /** Channels whose SUBSCRIBE Redis acknowledged (and that are still wanted). */
  const confirmed = new Set<string>();
  const stats: FanoutStats = { eventsIn: 0, duplicates: 0, badEnvelopes: 0, executions: 0, framesOut: 0 };
  /**
   * Highest offset delivered, per topic, indexed by partition. Ingest publishes each partition in offset
   * order and is at-least-once, so anything at or below the mark is a re-publish: dropping it
   * turns at-least-once upstream into no duplicates downstream. Bounded by the partition count.
   */
  const delivered = new Map<string, string[]>();
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
      const context = contextFactories
        ? createLazyContext(contextFactories, { dedupKey: op.dedupKey, fieldName: op.route.fieldName, topic: op.route.topic })
        : undefined;
      group = { op, subscribers: new Set(), pending: [], pendingTs: [], headBytes: 0, context };
      groups.set(op.dedupKey, group);
      for (const channel of op.channels) addChannel(channel, group);
    }
    const subscriber: Subscriber<C> = { conn, id, head: `{"id":${JSON.stringify(id)},"type":"next","payload":`, group };
    group.subscribers.add(subscriber);
    group.headBytes += subscriber.head.length;
    subscribers++;
    return subscriber;
  }

  function unsubscribe(subscriber: Subscriber<C>): void {
    const { group } = subscriber;
    if (!group.subscribers.delete(subscriber)) return;
    group.headBytes -= subscriber.head.length;
    subscribers--;
    if (group.subscribers.size > 0) return;
    groups.delete(group.op.dedupKey);
    for (const channel of group.op.channels) removeChannel(channel, group);
    if (group.context) {
      disposeLazyContext(group.context).catch((err: unknown) => logger.warn({ err }, 'disposing an operation context failed'));
    }
  }

  /*
   * Frames are written once per event-loop turn, not once per event: ioredis hands over a whole
   * socket read of messages at once, and writing every event of that burst to a socket in one
   * corked write turns N syscalls per socket into one. Ordering holds: a group's payloads are
   * queued in event order and written in that order.
   */
  let dirty: Group<C>[] = [];
  let flushScheduled = false;

  function deliver(group: Group<C>, json: string, ts: number): void {
    if (group.pending.length === 0) dirty.push(group);
    group.pending.push(json);
    group.pendingTs.push(ts);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  }

  function flush(): void {
    flushScheduled = false;
    const groups = dirty;
    dirty = [];
    for (const group of groups) {
      const payloads = group.pending;
      const timestamps = group.pendingTs;
      group.pending = [];
      group.pendingTs = [];
      // Deliberately imperative: the per-subscriber loop is the only O(N) part of an event.
      for (const subscriber of group.subscribers) sendFrames(subscriber.conn, subscriber.head, payloads);
      const frames = group.subscribers.size * payloads.length;
      stats.framesOut += frames;
      if (metrics) {
        // Per group and payload, never per subscriber: the cost of metrics stays O(operations).
        const now = Date.now();
        let bytes = group.headBytes * payloads.length;
        for (let i = 0; i < payloads.length; i++) {
          bytes += (Buffer.byteLength(payloads[i] as string) + 1) * group.subscribers.size;
          metrics.eventToWireSeconds.observe(Math.max(0, now - (timestamps[i] as number)) / 1_000);
        }
        metrics.framesOut.inc(frames);
        metrics.bytesOut.inc(bytes);
      }
    }
  }

  function handleMessage(channel: string, text: string): void {
    const set = channelGroups.get(channel);
    if (!set) return;
    stats.eventsIn++;
    metrics?.eventsIn.inc();
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(text);
    } catch (err) {
      stats.badEnvelopes++;
      logger.warn({ err, channel }, 'dropped a malformed envelope from Redis');
      return;
    }
    let marks = delivered.get(envelope.topic);
    if (!marks) delivered.set(envelope.topic, (marks = []));
    const mark = marks[envelope.partition];
    if (mark !== undefined && !offsetAfter(envelope.offset, mark)) {
      stats.duplicates++;
      return;
    }
    marks[envelope.partition] = envelope.offset;
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
        contextValue: group.context,
      });
      // Default resolvers are synchronous; a custom async resolver still works, just later.
      if (isPromise(result)) {
        result.then(
          (r) => deliver(group, serialize(r, extensions), envelope.ts),
          (err: unknown) => logger.error({ err }, 'subscription execution failed'),
        );
      } else {
        deliver(group, serialize(result, extensions), envelope.ts);
      }
    }
  }

  redis.on('message', handleMessage);
  if (metrics) redis.on('reconnecting', () => metrics.redisReconnects.inc());

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

/** `a > b` for int64 offsets as decimal strings without leading zeros, with no BigInt allocation. */
function offsetAfter(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

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
