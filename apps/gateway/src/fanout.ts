import { execute, type ExecutionResult } from 'graphql';
import { createLazyContext, disposeLazyContext, type LazyFactories } from '@wirestream/context';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import { decodeEnvelope, type Envelope, type WirestreamSchema } from '@wirestream/schema';
import type { HistoryReader, ResumeRequest } from './history.js';
import type { GatewayMetrics } from './metrics.js';
import type { CompiledSubscription, FilterClause } from './operations.js';

/** One client subscription (one graphql-ws `id` on one socket). Returned as the handle to remove it. */
export interface Subscriber<C> {
  readonly conn: C;
  readonly id: string;
  /** `{"id":<id>,"type":"next","payload":` — built once so each delivery is a concatenation. */
  readonly head: string;
  readonly group: Group<C>;
  /**
   * Set while a resuming subscriber is replayed from history: live payloads wait here (with their
   * positions) so history and live meet without a gap or a duplicate. Undefined otherwise.
   */
  catchup: Catchup | undefined;
}

interface Catchup {
  readonly held: Buffered[];
  /**
   * Set when the replay is done: per partition, the last offset the client already has. A live
   * event can be replayed from history before its PUBLISH arrives, so live payloads are checked
   * against it until each partition has moved past it; then the subscriber is plainly live.
   */
  covered: Map<number, string> | undefined;
}

/** A live payload held back while its subscriber catches up. */
interface Buffered {
  readonly partition: number;
  readonly offset: string;
  readonly payload: string;
}

/** Subscribers whose operations are identical (same dedup key): one execution per event serves all. */
interface Group<C> {
  readonly op: CompiledSubscription;
  readonly subscribers: Set<Subscriber<C>>;
  /** Payloads (execution results as JSON) of this event-loop turn, in event order, not yet written. */
  pending: string[];
  /** Kafka timestamps of `pending`, for the event-to-wire histogram. */
  pendingTs: number[];
  /** Positions of `pending` (partition, offset), for subscribers that are catching up. */
  pendingPartition: number[];
  pendingOffset: string[];
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
  /**
   * Redis history (what ingest writes next to each publish) on an ordinary connection: enables
   * resume, back-fill after a Redis reconnect, and the epoch in positions. Without it the gateway
   * is live-only.
   */
  readonly history?: HistoryReader;
  /** Bytes waiting in a connection's send buffer: a replay waits while it is above `replayHighWaterBytes`. */
  readonly bufferedBytes?: (conn: C) => number;
  /** @default 262_144 (256 KiB) */
  readonly replayHighWaterBytes?: number;
  /** Closes a connection (a replay that cannot make progress gives up this way). */
  readonly close?: (conn: C, code: number, reason: string) => void;
}

export interface FanoutStats {
  eventsIn: number;
  /** Events re-read from history after a Redis reconnect. */
  backfilled: number;
  /** Subscriptions that asked to resume, and those told history could not cover their gap. */
  resumes: number;
  resumesNotRecovered: number;
  /** Events sent from history to resuming subscribers. */
  replayed: number;
  /** Envelopes dropped because their position was already delivered (ingest re-publishes after a crash or rebalance). */
  duplicates: number;
  badEnvelopes: number;
  executions: number;
  framesOut: number;
}

/** Frames a resuming subscriber gets per write during a replay (then it waits for its socket to drain). */
const REPLAY_CHUNK_BYTES = 65_536; // 64 KiB
/** Replay passes at most; a pass that finds fewer entries than SMALL_PASS ends the replay. */
const MAX_REPLAY_PASSES = 5;
const SMALL_PASS = 100;

/**
 * The fan-out engine. Per Redis event: parse the envelope once; for each distinct operation
 * listening on that channel whose filter matches, execute once and serialize once; then write
 * the shared JSON to each subscriber of that operation. Redis channels are reference-counted by
 * the groups that need them: subscribed on first use, unsubscribed when the last group goes.
 */
export function createFanout<C>(deps: FanoutDeps<C>) {
  const { schema, redis, logger, sendFrames, metrics, contextFactories, history, bufferedBytes, close } = deps;
  const replayHighWaterBytes = deps.replayHighWaterBytes ?? 262_144; // 256 KiB
  // A chunk on top of the high-water mark must stay under the slow-consumer limit.
  const replayChunkBytes = Math.min(REPLAY_CHUNK_BYTES, replayHighWaterBytes);
  const groups = new Map<string, Group<C>>();
  const channelGroups = new Map<string, Set<Group<C>>>();
  /** Channels whose SUBSCRIBE Redis acknowledged (and that are still wanted). */
  const confirmed = new Set<string>();
  const stats: FanoutStats = {
    eventsIn: 0,
    backfilled: 0,
    resumes: 0,
    resumesNotRecovered: 0,
    replayed: 0,
    duplicates: 0,
    badEnvelopes: 0,
    executions: 0,
    framesOut: 0,
  };
  /** Channel → resolves once Redis acknowledged its SUBSCRIBE (live events flow from then on). */
  const channelReady = new Map<string, Promise<void>>();
  /**
   * Per topic with listeners: history's newest offset per partition when the topic gained its first
   * group. A back-fill starts at the later of this and the delivered mark, so it replays only what
   * was published while someone listened.
   */
  const floors = new Map<string, Promise<Map<number, string>>>();
  /** Groups per topic: a topic whose last group leaves forgets its floor (it gets a fresh one on return). */
  const topicGroups = new Map<string, number>();
  /** Current history epoch; part of every position, so a client can tell positions of a lost history apart. */
  let epoch: string | undefined;
  /** While re-reading history after a Redis reconnect, live messages queue here, then follow in order. */
  let inbound: [channel: string, text: string][] | undefined;
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
      // The floor is read before SUBSCRIBE so that everything after it is either live or in history.
      const ready = topicFloor(group.op.route.topic)
        .then(() => redis.subscribe(channel))
        .then(
          () => {
            if (channelGroups.has(channel)) confirmed.add(channel);
          },
          (err: unknown) => logger.error({ err, channel }, 'Redis SUBSCRIBE failed'),
        );
      channelReady.set(channel, ready);
    }
    set.add(group);
  }

  function topicFloor(topic: string): Promise<Map<number, string>> {
    let floor = floors.get(topic);
    if (!floor) {
      floor = history
        ? history.partitions(topic).then((partitions) => history.tops(topic, partitions))
        : Promise.resolve(new Map<number, string>());
      // Without history (or with Redis down) the floor is empty: a back-fill then starts at the delivered marks.
      floor = floor.catch((err: unknown) => {
        logger.warn({ err, topic }, 'could not read the history floor of a topic');
        return new Map<number, string>();
      });
      floors.set(topic, floor);
    }
    return floor;
  }

  function removeChannel(channel: string, group: Group<C>): void {
    const set = channelGroups.get(channel);
    if (!set) return;
    set.delete(group);
    if (set.size === 0) {
      channelGroups.delete(channel);
      channelReady.delete(channel);
      confirmed.delete(channel);
      redis.unsubscribe(channel).catch((err: unknown) => logger.warn({ err, channel }, 'Redis UNSUBSCRIBE failed'));
    }
  }

  function subscribe(conn: C, id: string, op: CompiledSubscription, resume?: ResumeRequest): Subscriber<C> {
    let group = groups.get(op.dedupKey);
    if (!group) {
      const context = contextFactories
        ? createLazyContext(contextFactories, { dedupKey: op.dedupKey, fieldName: op.route.fieldName, topic: op.route.topic })
        : undefined;
      group = { op, subscribers: new Set(), pending: [], pendingTs: [], pendingPartition: [], pendingOffset: [], headBytes: 0, context };
      topicGroups.set(op.route.topic, (topicGroups.get(op.route.topic) ?? 0) + 1);
      groups.set(op.dedupKey, group);
      for (const channel of op.channels) addChannel(channel, group);
    }
    const subscriber: Subscriber<C> = {
      conn,
      id,
      head: `{"id":${JSON.stringify(id)},"type":"next","payload":`,
      group,
      catchup: resume ? { held: [], covered: undefined } : undefined,
    };
    group.subscribers.add(subscriber);
    group.headBytes += subscriber.head.length;
    subscribers++;
    if (resume) {
      stats.resumes++;
      catchUp(subscriber, resume).catch((err: unknown) => {
        logger.error({ err }, 'resume from history failed');
        close?.(conn, 1011, 'resume from history failed: reconnect and resume again');
      });
    }
    return subscriber;
  }

  function unsubscribe(subscriber: Subscriber<C>): void {
    const { group } = subscriber;
    if (!group.subscribers.delete(subscriber)) return;
    group.headBytes -= subscriber.head.length;
    subscribers--;
    if (group.subscribers.size > 0) return;
    groups.delete(group.op.dedupKey);
    const { topic } = group.op.route;
    const left = (topicGroups.get(topic) ?? 1) - 1;
    if (left > 0) topicGroups.set(topic, left);
    else {
      topicGroups.delete(topic);
      floors.delete(topic);
    }
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

  function deliver(group: Group<C>, json: string, envelope: Envelope): void {
    if (group.pending.length === 0) dirty.push(group);
    group.pending.push(json);
    group.pendingTs.push(envelope.ts);
    group.pendingPartition.push(envelope.partition);
    group.pendingOffset.push(envelope.offset);
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
      const partitions = group.pendingPartition;
      const offsets = group.pendingOffset;
      group.pending = [];
      group.pendingTs = [];
      group.pendingPartition = [];
      group.pendingOffset = [];
      // Deliberately imperative: the per-subscriber loop is the only O(N) part of an event.
      for (const subscriber of group.subscribers) {
        if (subscriber.catchup === undefined) {
          sendFrames(subscriber.conn, subscriber.head, payloads);
          continue;
        }
        const { held } = subscriber.catchup;
        for (let i = 0; i < payloads.length; i++) held.push({ partition: partitions[i] as number, offset: offsets[i] as string, payload: payloads[i] as string });
        if (subscriber.catchup.covered) sendUncovered(subscriber, subscriber.catchup);
      }
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
    if (inbound) {
      inbound.push([channel, text]);
      return;
    }
    processMessage(channel, text);
  }

  function processMessage(channel: string, text: string): void {
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
    const extensions = positionOf(envelope);
    for (const group of set) {
      const result = render(group, envelope, extensions);
      if (result === undefined) continue;
      // Default resolvers are synchronous; a custom async resolver still works, just later.
      if (typeof result === 'string') deliver(group, result, envelope);
      else result.then((json) => deliver(group, json, envelope), (err: unknown) => logger.error({ err }, 'subscription execution failed'));
    }
  }

  function positionOf(envelope: Envelope): Record<string, unknown> {
    const position: Record<string, unknown> = { topic: envelope.topic, partition: envelope.partition, offset: envelope.offset };
    if (epoch !== undefined) position['epoch'] = epoch;
    return { position };
  }

  /** The group's payload for one event: executed and serialized once; undefined when its filter does not match. */
  function render(group: Group<C>, envelope: Envelope, extensions: Record<string, unknown>): string | Promise<string> | undefined {
    if (!matches(group.op.filter, envelope.payload)) return undefined;
    stats.executions++;
    const result = execute({
      schema: schema.schema,
      document: group.op.document,
      rootValue: { [group.op.route.fieldName]: envelope.payload },
      variableValues: group.op.variables,
      operationName: group.op.operationName,
      contextValue: group.context,
    });
    return isPromise(result) ? result.then((r) => serialize(r, extensions)) : serialize(result, extensions);
  }

  /**
   * Replays history to a resuming subscriber, then releases the live payloads it held back.
   * Live events were buffered from the moment it subscribed, and its channels were confirmed
   * before history is read, so every event is in history, in the buffer, or both (then sent once).
   */
  async function catchUp(subscriber: Subscriber<C>, resume: ResumeRequest): Promise<void> {
    const { group, conn } = subscriber;
    const { topic } = group.op.route;
    const alive = (): boolean => group.subscribers.has(subscriber);
    await Promise.all(group.op.channels.map((c) => channelReady.get(c)));
    if (!history) {
      signalRecovery(subscriber, { recovered: false, reason: 'this gateway keeps no history' });
      return release(subscriber, new Map(), undefined);
    }
    if (epoch === undefined) epoch = await history.loadEpoch();
    if (!alive()) return;

    // Positions of another epoch mean nothing here: such a client gets what history has, from its start.
    const sameEpoch = resume.epoch === epoch;
    const partitions = new Set([...(await history.partitions(topic)), ...resume.positions.keys()]);
    const gaps: number[] = [];
    if (sameEpoch) {
      for (const p of partitions) {
        const after = resume.positions.get(p);
        if (after !== undefined && (await history.lostAfter(topic, p, after))) gaps.push(p);
      }
    }
    if (!alive()) return;
    if (!sameEpoch) signalRecovery(subscriber, { recovered: false, reason: 'epoch changed: the history your positions belong to was lost' });
    else if (gaps.length > 0) signalRecovery(subscriber, { recovered: false, reason: 'history no longer covers the gap (retention)', partitions: gaps });
    else signalRecovery(subscriber, { recovered: true });

    const sent = new Map<number, string>();
    const from = (p: number): string | undefined => sent.get(p) ?? (sameEpoch ? resume.positions.get(p) : undefined);
    // Live events keep arriving while history replays, and they are in history too: replay again from
    // where the last pass ended until a pass finds little, so what is held back (in memory, then sent
    // at once) stays small.
    for (let pass = 0; pass < MAX_REPLAY_PASSES; pass++) {
      let found = 0;
      for (const p of partitions) {
        const replayed = await replayPartition(subscriber, topic, p, from(p), sent, alive);
        if (replayed === undefined) return;
        found += replayed;
      }
      dropCovered(subscriber, sent);
      if (found < SMALL_PASS) break;
    }
    release(subscriber, sent, sameEpoch ? resume : undefined);
  }

  /**
   * Sends a partition's history after `after` to a catching-up subscriber in chunks of about
   * `replayChunkBytes`, waiting whenever its socket buffer is above the high-water mark, so a replay
   * never trips the slow-consumer limit of a client that reads. Returns the entries read, or
   * undefined if the subscriber left or stalled.
   */
  async function replayPartition(
    subscriber: Subscriber<C>,
    topic: string,
    p: number,
    after: string | undefined,
    sent: Map<number, string>,
    alive: () => boolean,
  ): Promise<number | undefined> {
    if (!history) return 0;
    const { group, conn } = subscriber;
    let read = 0;
    let chunk: string[] = [];
    let chunkBytes = 0;
    const flushChunk = async (): Promise<boolean> => {
      if (chunk.length === 0) return true;
      sendFrames(conn, subscriber.head, chunk);
      stats.replayed += chunk.length;
      chunk = [];
      chunkBytes = 0;
      return writable(conn, alive);
    };
    for await (const page of history.read(topic, p, after)) {
      if (!alive()) return undefined;
      for (const entry of page) {
        read++;
        let envelope: Envelope;
        try {
          envelope = decodeEnvelope(entry.envelope);
        } catch {
          continue; // a malformed entry was never delivered live either
        }
        const rendered = render(group, envelope, positionOf(envelope));
        const json = typeof rendered === 'string' || rendered === undefined ? rendered : await rendered;
        sent.set(p, entry.offset);
        if (json === undefined) continue;
        chunk.push(json);
        chunkBytes += json.length + subscriber.head.length;
        if (chunkBytes >= replayChunkBytes && !(await flushChunk())) return undefined;
      }
    }
    return (await flushChunk()) ? read : undefined;
  }

  /** Forgets held live payloads the replay already sent (they would be filtered out later anyway). */
  function dropCovered(subscriber: Subscriber<C>, sent: ReadonlyMap<number, string>): void {
    const held = subscriber.catchup?.held;
    if (!held || held.length === 0) return;
    let kept = 0;
    for (const item of held) {
      const have = sent.get(item.partition);
      if (have === undefined || offsetAfter(item.offset, have)) held[kept++] = item;
    }
    held.length = kept;
  }

  /** The answer to a resume, as a data-less `next` (graphql-ws has no other message for it). */
  function signalRecovery(subscriber: Subscriber<C>, recovery: { recovered: boolean; reason?: string; partitions?: number[] }): void {
    if (!recovery.recovered) stats.resumesNotRecovered++;
    sendFrames(subscriber.conn, subscriber.head, [JSON.stringify({ extensions: { recovery: { ...recovery, epoch } } })]);
  }

  /** Waits while the socket's send buffer is above the high-water mark; false if the subscriber left or stalled. */
  async function writable(conn: C, alive: () => boolean): Promise<boolean> {
    if (!bufferedBytes) return true;
    const deadline = Date.now() + 30_000; // 30 s
    while (bufferedBytes(conn) > replayHighWaterBytes) {
      if (!alive()) return false;
      if (Date.now() > deadline) {
        close?.(conn, 1013, 'slow consumer during resume: reconnect and resume from your last position');
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return alive();
  }

  /** Ends a replay: from now on held payloads are sent as they come, minus what the client already has. */
  function release(subscriber: Subscriber<C>, sent: ReadonlyMap<number, string>, resume: ResumeRequest | undefined): void {
    const catchup = subscriber.catchup;
    if (!catchup) return;
    const covered = new Map(resume?.positions);
    for (const [p, offset] of sent) covered.set(p, offset);
    catchup.covered = covered;
    sendUncovered(subscriber, catchup);
  }

  /** Sends the held payloads the client does not have yet, in order; plain live delivery once every partition moved on. */
  function sendUncovered(subscriber: Subscriber<C>, catchup: Catchup): void {
    const covered = catchup.covered as Map<number, string>;
    const payloads: string[] = [];
    for (const item of catchup.held) {
      const have = covered.get(item.partition);
      if (have !== undefined && !offsetAfter(item.offset, have)) continue;
      // Per partition, offsets only grow: past the covered one, nothing more to check there.
      covered.delete(item.partition);
      payloads.push(item.payload);
    }
    catchup.held.length = 0;
    if (covered.size === 0) subscriber.catchup = undefined;
    if (payloads.length > 0) sendFrames(subscriber.conn, subscriber.head, payloads);
  }

  /**
   * After a Redis reconnect: pub/sub dropped whatever was published while we were away. Re-read it
   * from history for every topic someone listens to, from the last delivered position (or the topic's
   * floor), through the same path as live messages (duplicates fall out by position). Live messages
   * arriving meanwhile wait in `inbound` and follow in order.
   */
  async function backfill(): Promise<void> {
    if (!history) return;
    for (const topic of [...topicGroups.keys()]) {
      const floor = await topicFloor(topic);
      const marks = delivered.get(topic) ?? [];
      for (const p of await history.partitions(topic)) {
        const mark = marks[p];
        const low = floor.get(p);
        const after = mark === undefined ? low : low === undefined || offsetAfter(mark, low) ? mark : low;
        for await (const page of history.read(topic, p, after)) {
          for (const entry of page) {
            stats.backfilled++;
            processMessage(entry.channel, entry.envelope);
          }
        }
      }
    }
  }

  async function onRedisReady(): Promise<void> {
    if (history) {
      const previous = epoch;
      epoch = await history.loadEpoch();
      if (previous !== undefined && previous !== epoch) logger.warn({ previous, epoch }, 'history epoch changed: Redis lost its history');
    }
    if (!inbound) return;
    const started = Date.now();
    const backfilledBefore = stats.backfilled;
    try {
      await backfill();
    } catch (err) {
      logger.error({ err }, 'back-fill from history failed: events published while Redis was unreachable may be missing');
    }
    const queued = inbound;
    inbound = undefined;
    for (const [channel, text] of queued) processMessage(channel, text);
    logger.info({ backfilled: stats.backfilled - backfilledBefore, queued: queued.length, ms: Date.now() - started }, 'back-filled from history after Redis reconnect');
  }

  redis.on('message', handleMessage);
  if (metrics) redis.on('reconnecting', () => metrics.redisReconnects.inc());
  let wasReady = redis.status === 'ready';
  // Pub/sub is at-most-once: from the moment the connection drops, anything published is only in history.
  redis.on('close', () => {
    if (wasReady && history) inbound ??= [];
  });
  redis.on('ready', () => {
    wasReady = true;
    onRedisReady().catch((err: unknown) => logger.error({ err }, 'handling Redis reconnect failed'));
  });
  if (history && wasReady) {
    history.loadEpoch().then(
      (e) => (epoch ??= e),
      (err: unknown) => logger.warn({ err }, 'could not load the history epoch'),
    );
  }

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
