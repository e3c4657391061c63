/**
 * The hub: local subscribers and the path of their events, composed from parts that each own their
 * state (centrifuge's `hub.go`, whose sub-structures own theirs): the registry of groups, channels
 * and topics (groups.ts), the inbound queue and its slices (inbound.ts, scheduler.ts), the fan-out
 * and the delivered marks (fanout.ts, positions.ts), the flush (flush.ts), the epoch (epoch.ts),
 * tracing (trip-tracing.ts), back-fill (backfill.ts), and the catch-up of a resume, a start or a
 * snapshot (resume.ts, start.ts, snapshot.ts, catchup.ts). Each part is handed to the functions
 * that need it; the others ask its module.
 */
import type { LazyFactories } from '@wirestream/context';
import type { WirestreamSchema } from '@wirestream/schema';
import type { Logger, Tracer } from '@wirestream/telemetry';
import type { Broker, HistoryReader, SnapshotReader } from '../broker/broker.js';
import { GATEWAY_DEFAULTS } from '../defaults.js';
import { createBackfill, onBrokerLost, onBrokerReady } from './recovery/backfill.js';
import { createAsyncRenders } from './delivery/async-renders.js';
import type { ConnectionWriter } from './connection-writer.js';
import { createConflationState, createConflator, type Conflator } from './delivery/conflation.js';
import { createEpoch, currentEpoch, knownEpoch } from './delivery/epoch.js';
import { createFanout } from './delivery/fanout.js';
import { createFlusher } from './delivery/flush.js';
import { confirmedChannels, createRegistry, joinGroup, leaveGroup, type GroupContextBase, type Registry, type Subscriber } from './delivery/groups.js';
import { createInbound, inboundStats, onBrokerMessage, runSlice, type FlowLimits, type Inbound } from './delivery/inbound.js';
import type { GatewayMetrics } from './metrics.js';
import type { CompiledSubscription } from './operations/operations.js';
import { createRenderer, type EventHook } from './delivery/render.js';
import type { CatchupContext } from './recovery/replay.js';
import { catchUp } from './recovery/resume.js';
import type { ResumeRequest } from './recovery/resume-request.js';
import { replayFromTime } from './recovery/since.js';
import type { SinceRequest } from './recovery/since-request.js';
import { createScheduler } from './delivery/scheduler.js';
import { sendSnapshot } from './recovery/snapshot.js';
import type { SnapshotAsk } from './recovery/snapshot-request.js';
import { announceStart, holdPositions, positionsNow } from './recovery/start.js';
import { releaseCatchup } from './delivery/catchup.js';
import { createHubStats, type HubStats } from './delivery/stats.js';
import { createTracing } from './delivery/trip-tracing.js';

export interface HubDeps<C> {
  readonly schema: WirestreamSchema;
  readonly broker: Broker;
  readonly logger: Logger;
  readonly writer: ConnectionWriter<C>;
  /** Prometheus series; optional so tests and benchmarks can run without a registry. */
  readonly metrics?: GatewayMetrics | undefined;
  /**
   * Backends a custom resolver may need (clients, DataLoaders), built lazily per group on first use
   * and disposed with the group. Defined once per server: connections hold nothing.
   */
  readonly contextFactories?: LazyFactories<object, GroupContextBase> | undefined;
  /**
   * History (what ingest writes next to each publish): enables resume, back-fill after a broker
   * reconnect, and the epoch in positions. Without it the gateway is live-only.
   */
  readonly history?: HistoryReader | undefined;
  /**
   * Snapshots of `@topic(snapshot: true)` topics: a subscription that asks (`extensions.snapshot`)
   * receives each key's current value first, then the live stream (snapshot.ts). Without it such a
   * request is refused.
   */
  readonly snapshots?: SnapshotReader | undefined;
  /** Time slices and the inbound bound (inbound.ts). @default GATEWAY_DEFAULTS.sliceMs, .flushDelayMs, .maxInboundBytes */
  readonly flow?: FlowLimits | undefined;
  /**
   * GATEWAY_CONFLATE_MAX_KEYS: distinct keys a conflating subscriber may have waiting before the
   * slow-consumer close applies (conflation.ts). @default GATEWAY_DEFAULTS.conflateMaxKeys
   */
  readonly conflateMaxKeys?: number | undefined;
  /** GATEWAY_MAX_RATE_CEILING: the highest `extensions.maxRate` (frames per second); a higher one is lowered to it. @default GATEWAY_DEFAULTS.maxRateCeiling */
  readonly maxRateCeiling?: number | undefined;
  /**
   * Renders that return a promise (a custom resolver, a look-up) in flight at once; at the bound
   * no new message is taken and reading from Redis pauses (async-renders.ts).
   * @default GATEWAY_DEFAULTS.maxRendersInFlight
   */
  readonly maxRendersInFlight?: number | undefined;
  /** A plugin's onEvent (GATEWAY_PLUGIN): once per event before any group renders it, keep, drop or rewrite (render.ts). @default undefined */
  readonly onEvent?: EventHook | undefined;
  /** OpenTelemetry tracer: spans for events whose envelope carries a sampled trace (trip-tracing.ts). @default undefined (none) */
  readonly tracer?: Tracer | undefined;
}

export interface HubSnapshot extends Readonly<HubStats> {
  readonly subscribers: number;
  readonly groups: number;
  readonly channels: number;
  readonly confirmedChannels: number;
  /** Broker messages waiting for a slice, their characters, and whether the broker is paused. */
  readonly inbound: { readonly messages: number; readonly chars: number; readonly paused: boolean };
}

/** How one subscription is served, besides its operation. */
export interface SubscribeOptions {
  /** Replay history after these positions first (resume.ts). */
  readonly resume?: ResumeRequest | undefined;
  /**
   * Replay history from this time first, then live (since.ts); ignored with `resume` (a position wins
   * over a time). The session refuses it with `snapshot`. @default undefined (none)
   */
  readonly since?: SinceRequest | undefined;
  /**
   * Latest-value conflation while its connection lags (conflation.ts): the newest payload of each key
   * waits, not every event. Its payloads are full (no delta mode). @default the field's `@topic(conflate:)`
   */
  readonly conflate?: boolean | undefined;
  /** At most this many frames per second, the newest value of each key winning between frames (implies `conflate`). @default undefined (no cap) */
  readonly maxRate?: number | undefined;
  /** Delta payloads where it holds the base (delta.ts). @default false */
  readonly delta?: boolean | undefined;
  /** Tell the client its starting point (epoch, positions) before any event (start.ts); ignored with `resume`. @default false */
  readonly start?: boolean | undefined;
  /**
   * Send each key's current value first, then the live stream (snapshot.ts); with `start`, the
   * start is the snapshot's seam, sent with its end. Ignored with `resume` (resume wins: a client
   * that reconnects continues from its positions). @default undefined (none)
   */
  readonly snapshot?: SnapshotAsk | undefined;
  /** The `type` of its data frames: graphql-transport-ws `next`, subscriptions-transport-ws `data`. @default 'next' */
  readonly frameType?: 'next' | 'data' | undefined;
}

/**
 * A subscriber held while its subscribe is decided (a plugin's async onSubscribe): it joined its
 * group and holds its live payloads in order, sending nothing, until released or dropped.
 */
export interface HeldSubscription<C> {
  readonly subscriber: Subscriber<C>;
  /** Sends what it held, in order, and makes it plainly live. */
  release(): void;
  /**
   * Where it is live after (epoch and positions), for another operation to resume from; undefined
   * without history. Read once, started when the hold began.
   */
  readonly positions: Promise<ResumeRequest | undefined>;
}

export interface Hub<C> {
  /**
   * Adds a subscriber (joining or opening its group), served as `options` say. Generic: one hub
   * serves several connection types (WebSocket, SSE), and each caller gets its own type back.
   */
  subscribe<T extends C>(conn: T, id: string, op: CompiledSubscription, options?: SubscribeOptions): Subscriber<T>;
  /** Adds a held subscriber (see {@link HeldSubscription}); `unsubscribe` drops it with what it held. */
  hold<T extends C>(conn: T, id: string, op: CompiledSubscription, frameType?: 'next' | 'data'): HeldSubscription<T>;
  /**
   * The topic's positions now (epoch, history's newest offset per partition), for a subscription
   * decided later to resume from; undefined without history (or when it cannot be read).
   */
  positions(topic: string): Promise<ResumeRequest | undefined>;
  /** Removes a subscriber; its group and channels go with the last one. Idempotent. */
  unsubscribe(subscriber: Subscriber<C>): void;
  stats(): HubSnapshot;
  /** Whether it can serve `snapshot` (it has a snapshot reader). */
  readonly snapshots: boolean;
}

/** The parts the hub's own functions need: the registry, the queue (for /stats), the catch-ups. */
interface HubParts<C> {
  readonly logger: Logger;
  readonly writer: ConnectionWriter<C>;
  readonly stats: HubStats;
  readonly registry: Registry<C>;
  readonly inbound: Inbound;
  readonly catchups: CatchupContext<C>;
  readonly maxRateCeiling: number;
  readonly conflator: Conflator<C>;
}

/**
 * Per broker event: parse the envelope once; for each group listening on that channel whose filter
 * matches, execute once and serialize once; then write the shared JSON to each subscriber.
 */
export function createHub<C>(deps: HubDeps<C>): Hub<C> {
  const { schema, broker, logger, writer, metrics, history, snapshots } = deps;
  const flow = deps.flow ?? { sliceMs: GATEWAY_DEFAULTS.sliceMs, flushDelayMs: GATEWAY_DEFAULTS.flushDelayMs, maxInboundBytes: GATEWAY_DEFAULTS.maxInboundBytes };
  const stats = createHubStats();
  const scheduler = createScheduler();
  const epoch = createEpoch(history, logger);
  const registry = createRegistry<C>(broker, history, logger, deps.contextFactories);
  const renderer = createRenderer(schema, stats, deps.onEvent === undefined ? undefined : { onEvent: deps.onEvent, logger });
  const tracing = createTracing<C>(deps.tracer);
  const conflator = createConflator<C>({ writer, stats, metrics, epoch, maxKeys: deps.conflateMaxKeys ?? GATEWAY_DEFAULTS.conflateMaxKeys });
  const flusher = createFlusher<C>({ writer, metrics, stats, epoch, scheduler, tracing, flushDelayMs: flow.flushDelayMs });
  const maxInFlight = deps.maxRendersInFlight ?? GATEWAY_DEFAULTS.maxRendersInFlight;
  const asyncRenders = createAsyncRenders<C>({ flusher, scheduler, logger, stats, maxInFlight });
  const fanout = createFanout<C>({ logger, metrics, stats, registry, epoch, renderer, tracing, flusher, asyncRenders });
  const inbound = createInbound({ broker, logger, metrics, stats, flow, scheduler });
  const backfill = createBackfill<C>({ history, logger, stats, epoch, registry, inbound, fanout, asyncRenders });
  const slice = { inbound, fanout, flusher, asyncRenders };
  scheduler.run = () => runSlice(slice);
  const parts: HubParts<C> = { logger, writer, stats, registry, inbound, catchups: { writer, history, snapshots, stats, epoch, renderer, registry, metrics },
    maxRateCeiling: deps.maxRateCeiling ?? GATEWAY_DEFAULTS.maxRateCeiling,
    conflator,
  };
  broker.attach({
    message: (channel, text, route) => onBrokerMessage(inbound, channel, text, route),
    lost: () => onBrokerLost(backfill),
    ready: () => void onBrokerReady(backfill).catch((err: unknown) => logger.error({ err }, 'handling Redis reconnect failed')),
  });
  if (history && broker.isReady()) knownEpoch(epoch).catch((err: unknown) => logger.warn({ err }, 'could not load the history epoch'));
  return {
    // A hub serves several connection types (WebSocket, SSE): each caller gets its own type back.
    subscribe: <T extends C>(conn: T, id: string, op: CompiledSubscription, options: SubscribeOptions = {}) =>
      addSubscriber(parts, conn, id, op, options) as Subscriber<T>,
    hold: <T extends C>(conn: T, id: string, op: CompiledSubscription, frameType: 'next' | 'data' = 'next') => holdSubscriber(parts, conn, id, op, frameType) as unknown as HeldSubscription<T>,
    positions: (topic) =>
      positionsNow(parts.catchups, topic).catch((err: unknown) => {
        logger.warn({ err }, 'reading the positions of a topic failed: a subscription decided later starts live');
        return undefined;
      }),
    unsubscribe: (subscriber) => leaveGroup(registry, subscriber),
    stats: () => snapshot(parts),
    snapshots: snapshots !== undefined,
  };
}

function addSubscriber<C>(parts: HubParts<C>, conn: C, id: string, op: CompiledSubscription, options: SubscribeOptions): Subscriber<C> {
  const { resume, frameType = 'next' } = options;
  const maxRate = options.maxRate === undefined ? undefined : Math.min(options.maxRate, parts.maxRateCeiling);
  // `@topic(conflate: true)` is the field's default; `extensions.conflate: false` opts out.
  const conflate = (options.conflate ?? op.route.conflate === true) || maxRate !== undefined;
  const delta = options.delta === true && !conflate;
  const start = resume === undefined && options.start === true;
  const since = resume === undefined ? options.since : undefined;
  const snapshotAsk = resume === undefined && since === undefined ? options.snapshot : undefined;
  const catchup = resume !== undefined || start || since !== undefined || snapshotAsk !== undefined;
  const subscriber = joinGroup(parts.registry, conn, id, op, {
    frameType,
    delta,
    catchup,
    conflation: conflate ? createConflationState(parts.conflator, maxRate) : undefined,
  });
  const { catchups, logger, writer } = parts;
  if (resume) {
    parts.stats.resumes++;
    catchUp(catchups, subscriber, resume).catch((err: unknown) => {
      logger.error({ err }, 'resume from history failed');
      writer.close(conn, 1011, 'resume from history failed: reconnect and resume again');
    });
  } else if (since) {
    replayFromTime(catchups, subscriber, since, start).catch((err: unknown) => {
      logger.error({ err }, 'replay from a time failed');
      writer.close(conn, 1011, 'replay from history failed: reconnect and subscribe again');
    });
  } else if (snapshotAsk) {
    sendSnapshot(catchups, subscriber, snapshotAsk, start).catch((err: unknown) => {
      logger.error({ err }, 'reading the snapshot of a subscription failed');
      writer.close(conn, 1011, 'could not read the snapshot: reconnect and subscribe again');
    });
  } else if (start) {
    announceStart(catchups, subscriber).catch((err: unknown) => {
      logger.error({ err }, 'reading the starting point of a subscription failed');
      writer.close(conn, 1011, 'could not read the starting point from history: reconnect and subscribe again');
    });
  }
  return subscriber;
}

function holdSubscriber<C>(parts: HubParts<C>, conn: C, id: string, op: CompiledSubscription, frameType: 'next' | 'data'): HeldSubscription<C> {
  const { catchups, logger, writer } = parts;
  const subscriber = joinGroup(parts.registry, conn, id, op, { frameType, delta: false, catchup: true, conflation: undefined });
  const positions = holdPositions(catchups, subscriber).catch((err: unknown) => {
    logger.warn({ err }, 'reading the position of a held subscription failed: an operation narrowed meanwhile starts live');
    return undefined;
  });
  return {
    subscriber,
    positions,
    release: () => releaseCatchup(writer, subscriber, new Map(), currentEpoch(catchups.epoch)),
  };
}

function snapshot<C>(parts: HubParts<C>): HubSnapshot {
  const { registry } = parts;
  return {
    ...parts.stats,
    subscribers: registry.subscribers,
    groups: registry.groups.size,
    channels: registry.channels.size,
    confirmedChannels: confirmedChannels(registry),
    inbound: inboundStats(parts.inbound),
  };
}
