/**
 * Wiring: the core (protocol, hub) between a broker and a transport. No logic of its own beyond
 * merging options with GATEWAY_DEFAULTS once and assembling `/stats`.
 */
import type { LazyFactories } from '@wirestream/context';
import type { EntityLoader } from '@wirestream/lookups';
import type { PreparedPlugin } from '@wirestream/plugin';
import type { WirestreamSchema } from '@wirestream/schema';
import type { Logger, Registry, Tracer } from '@wirestream/telemetry';
import { createAuthenticator, type Authenticator } from './auth/authenticator.js';
import type { Broker, HistoryReader, SnapshotReader } from './broker/broker.js';
import { createHub, type HubSnapshot } from './core/hub.js';
import { attachLookups } from './lookups/attach-lookups.js';
import type { GroupContextBase } from './core/delivery/groups.js';
import type { DocumentLimits } from './core/operations/document-limits.js';
import type { GatewayMetrics } from './core/metrics.js';
import { createOperationCompiler } from './core/operations/operations.js';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL } from 'graphql-ws';
import { createLegacyProtocol, LEGACY_GRAPHQL_WS_PROTOCOL } from './core/protocols/legacy-protocol.js';
import { createProtocol } from './core/protocols/protocol.js';
import { createRateLimiter } from './core/protocols/rate-limit.js';
import { createSseSessions } from './core/protocols/sse-session.js';
import { GATEWAY_DEFAULTS } from './defaults.js';
import { createAdmission } from './transport/admission.js';
import { backpressureLimits } from './transport/backpressure.js';
import type { CompressionMode } from './transport/compression.js';
import { registerConsoleRoutes, type ConsoleSite } from './transport/console.js';
import { registerHttpRoutes, registerNotFound } from './transport/http-routes.js';
import { type Socket } from './transport/socket.js';
import { registerSseRoutes, type SseServer } from './transport/sse-server.js';
import type { TicketStore } from './transport/sse-tickets.js';
import { createSseWriter, withSseStreams, type SseHttpStream } from './transport/sse-writer.js';
import { createUwsServer } from './transport/uws-server.js';
import { createUwsWriter } from './transport/uws-writer.js';
import { createFrameScratch } from './transport/payload-bytes.js';

export interface GatewayDeps {
  readonly schema: WirestreamSchema;
  /** The bus the envelopes come from (Redis pub/sub in production: `createRedisBroker`). */
  readonly broker: Broker;
  /** History for resume, back-fill after a reconnect, and the epoch (`createRedisHistory`). Without it the gateway is live-only. */
  readonly history?: HistoryReader;
  /** Snapshots of `@topic(snapshot: true)` topics (`createRedisSnapshots`): without it `extensions.snapshot` is refused. */
  readonly snapshots?: SnapshotReader;
  /** Where SSE tickets live: Redis in production (broker/redis-tickets.ts, shared by the fleet); default this gateway's memory. */
  readonly tickets?: TicketStore;
  readonly logger: Logger;
  /** Verifies `connection_init` (JWT) and decides scopes. @default anonymous: everyone may subscribe to everything */
  readonly authenticator?: Authenticator;
  /** Prometheus registry served on `GET /metrics`, and the gateway's series in it. */
  readonly metrics?: { readonly registry: Registry; readonly series: GatewayMetrics };
  /** Backends a custom resolver may need, built lazily per operation group on first use and disposed with it. */
  readonly contextFactories?: LazyFactories<object, GroupContextBase>;
  /**
   * A GATEWAY_PLUGIN module, checked and prepared (`loadGatewayPlugin`, or `validatePlugin` then
   * `preparePlugin` from @wirestream/plugin): its `resolvers` are merged onto `schema` in place, its `context` factories join `contextFactories`, its hooks run
   * on every transport (onSubscribe) and once per event (onEvent).
   */
  readonly plugin?: PreparedPlugin;
  /**
   * Loaders of the look-up sources the schema's `@lookup` fields name (`createLookupLoaders`):
   * required when the schema has such fields. @default undefined (none)
   */
  readonly lookups?: ReadonlyMap<string, EntityLoader>;
  /** OpenTelemetry tracer (`startTracing` in @wirestream/telemetry): spans for events ingest traced (decision 0020). @default undefined (none) */
  readonly tracer?: Tracer;
}

/** Every setting has its default in GATEWAY_DEFAULTS (and its env var in config.ts). */
export interface GatewayOptions {
  /** WebSocket path. */
  readonly path?: string;
  /** Must match ingest's channel prefix. */
  readonly channelPrefix?: string;
  /** Largest accepted frame in bytes; a larger one closes the socket (uWS enforces it). */
  readonly maxPayloadBytes?: number;
  /**
   * Bytes queued for one slow socket; the frame that would pass it is dropped and the socket closed
   * with 1013 and a resume hint, so a slow client cannot grow server memory and loses nothing
   * (it resumes from its last position).
   */
  readonly maxBackpressureBytes?: number;
  /** Bytes uWS may hold per WebSocket before frames wait in the writer's queue (GATEWAY_SOCKET_BUFFER_BYTES, decision 0028). */
  readonly socketBufferBytes?: number;
  /** Seconds without traffic before uWS pings, then closes a silent socket. */
  readonly idleTimeoutSeconds?: number;
  /** GraphQL over SSE on `path` (graphql-sse distinct connections mode, transport/sse-server.ts). */
  readonly sseEnabled?: boolean;
  /** A comment line on every SSE stream this often (ms), so proxies keep idle streams open. */
  readonly sseHeartbeatMs?: number;
  /** Life of a single-use SSE ticket for EventSource, which cannot send `Authorization`. */
  readonly sseTicketTtlSeconds?: number;
  readonly connectionInitWaitTimeoutMs?: number;
  readonly maxSubscriptionsPerConnection?: number;
  /** Longest subscription id (characters) on every protocol; longer ones are refused with the protocol's error. */
  readonly maxSubscriptionIdLength?: number;
  /** Serve the legacy `graphql-ws` subprotocol (subscriptions-transport-ws) beside graphql-transport-ws. */
  readonly legacyProtocol?: boolean;
  /** Period of the legacy protocol's `ka` keep-alive messages (ms). */
  readonly legacyKeepAliveMs?: number;
  /** Sockets closed per event-loop turn while draining, so a drain does not stall the loop. */
  readonly drainBatchSize?: number;
  /**
   * Processing budget in ms of one slice of inbound messages before the hub yields to the event
   * loop (probes, new sockets, pings are served between slices). Smaller: lower event-loop delay
   * under bursts; larger: fewer, bigger corked writes.
   */
  readonly sliceMs?: number;
  /**
   * Longest a rendered payload waits for its write while more messages are queued (a caught-up
   * gateway writes at once); within it the wait follows the cost of the last write (flush.ts).
   * More events per corked write (one syscall per socket) is most of a busy gateway's CPU.
   */
  readonly flushDelayMs?: number;
  /**
   * Characters (≈ bytes) of queued, unprocessed envelopes above which reading from Redis pauses
   * until the queue is half empty; bounds the gateway's memory under any burst. Redis may drop a
   * subscriber paused too long: the gateway then back-fills from history (nothing is lost).
   */
  readonly maxInboundBytes?: number;
  /**
   * Renders waiting on a custom resolver or a look-up, at once; at the bound no new event is taken,
   * the inbound queue fills and reading from Redis pauses (core/delivery/async-renders.ts).
   */
  readonly maxRendersInFlight?: number;
  /**
   * permessage-deflate offered to clients: `off` or `shared` (uWS's shared compressor: no memory
   * per socket, each frame compressed alone). Costs CPU per socket per frame (compression.ts).
   */
  readonly compression?: CompressionMode;
  /**
   * Honour a subscription's `extensions.delta` ("fossil"): deltas from the previous payload of the
   * group, computed once per group and event. Off: such subscriptions receive full payloads.
   */
  readonly deltaEnabled?: boolean;
  /** Serve `GET /debug/memory`, for benchmarks that measure bytes per socket. Off in production. */
  readonly debugEndpoints?: boolean;
  /**
   * Browser origins allowed to open a socket (exact, or `https://*.example.com`); requests without
   * an Origin header (non-browser clients) are always allowed. Empty: no browser origin.
   */
  readonly allowedOrigins?: readonly string[];
  /** Open sockets per client IP address; more are refused at the upgrade with 429. */
  readonly maxConnectionsPerAddress?: number;
  /** Proxies in front of the gateway that append the client's address to `X-Forwarded-For`. */
  readonly trustedProxyHops?: number;
  /** Sustained `subscribe` messages per second per socket. */
  readonly subscribeRatePerSecond?: number;
  /** `subscribe` messages a socket may send at once (e.g. a dashboard opening its panels). */
  readonly subscribeBurst?: number;
  /** Document length cap in characters, checked before anything else. */
  readonly maxQueryLength?: number;
  /** graphql-js parser token limit. */
  readonly maxTokens?: number;
  /** Entries of a whole-topic snapshot at most, and keys a subscription may ask the snapshot of (GATEWAY_SNAPSHOT_MAX_KEYS). */
  readonly snapshotMaxKeys?: number;
  /** Distinct keys a conflating subscriber (`extensions.conflate`) may have waiting before it is closed as slow (GATEWAY_CONFLATE_MAX_KEYS). */
  readonly conflateMaxKeys?: number;
  /** The highest `extensions.maxRate` (frames per second); a higher one is lowered to it (GATEWAY_MAX_RATE_CEILING). */
  readonly maxRateCeiling?: number;
  /** Depth, aliases, fields, directives, introspection: checked before validation. */
  readonly documentLimits?: DocumentLimits;
  /** The built web console (`loadConsoleSite`), served under `/console/`. @default undefined (no console) */
  readonly console?: ConsoleSite;
}

export interface GatewayStats extends Omit<HubSnapshot, 'subscribers'> {
  /** WebSockets and SSE streams. */
  connections: number;
  sseStreams: number;
  subscriptions: number;
  cachedDocuments: number;
  ready: boolean;
  draining: boolean;
}

export interface Gateway {
  /** Listens on `host:port` (port 0 picks a free one); resolves the bound port. */
  listen(port: number, host?: string): Promise<number>;
  /** True when the broker is connected and the gateway is not draining. */
  isReady(): boolean;
  stats(): GatewayStats;
  /** Graceful shutdown: readiness fails, the listener closes, sockets close with 1001 in batches. */
  drain(): Promise<void>;
}

export function createGateway(deps: GatewayDeps, options: GatewayOptions = {}): Gateway {
  const { schema, broker, history, snapshots, logger, metrics, tracer, plugin } = deps;
  // Before anything compiles an operation: a field with a plugin resolver is rendered by execute.
  if (schema.lookups.length > 0) attachLookups(schema, deps.lookups ?? new Map());
  if (plugin?.resolvers !== undefined) {
    if (plugin.applyResolvers === undefined) throw new TypeError('GATEWAY_PLUGIN: a plugin with resolvers must be prepared first (preparePlugin from @wirestream/plugin, or loadGatewayPlugin)');
    plugin.applyResolvers(schema.schema);
  }
  const contextFactories = plugin?.context ? { ...deps.contextFactories, ...plugin.context } : deps.contextFactories;
  const onSubscribe = plugin?.onSubscribe;
  const authenticator = deps.authenticator ?? createAuthenticator({ mode: 'anonymous' });
  const o = { ...GATEWAY_DEFAULTS, ...options };
  const backpressure = backpressureLimits(o.maxBackpressureBytes, o.socketBufferBytes);
  const subscribeRateLimiter = createRateLimiter({ ratePerSecond: o.subscribeRatePerSecond, burst: o.subscribeBurst });
  const compiler = createOperationCompiler(schema, {
    channelPrefix: o.channelPrefix,
    maxQueryLength: o.maxQueryLength,
    maxTokens: o.maxTokens,
    ...(o.documentLimits ? { documentLimits: o.documentLimits } : {}),
  });

  const slowConsumer = (): void => metrics?.series.slowConsumers.inc();
  // One payload encoding and one scratch buffer for both writers: a group with WebSocket and SSE
  // subscribers encodes its payloads once (writes are synchronous, so the scratch is never shared mid-frame).
  const frameScratch = createFrameScratch();
  const writer = createUwsWriter(backpressure, slowConsumer, o.compression !== 'off', frameScratch);
  let sse: SseServer | undefined;
  const sseWriter = createSseWriter(backpressure, slowConsumer, (stream) => sse?.ended(stream), frameScratch);
  const flow = { sliceMs: o.sliceMs, flushDelayMs: o.flushDelayMs, maxInboundBytes: o.maxInboundBytes };
  // One hub for every transport: an SSE stream is one more subscriber of its operation group.
  const hub = createHub<Socket | SseHttpStream>({ schema, broker, history, snapshots, logger, writer: withSseStreams(writer, sseWriter), metrics: metrics?.series, contextFactories, flow, tracer, conflateMaxKeys: o.conflateMaxKeys, maxRateCeiling: o.maxRateCeiling, maxRendersInFlight: o.maxRendersInFlight, onEvent: plugin?.onEvent });
  const protocolDeps = { schema, compiler, hub, writer, authenticator, subscribeRateLimiter, logger, onSubscribe };
  const protocolOptions = {
    connectionInitWaitTimeoutMs: o.connectionInitWaitTimeoutMs,
    maxSubscriptionsPerConnection: o.maxSubscriptionsPerConnection,
    maxSubscriptionIdLength: o.maxSubscriptionIdLength,
    allowDelta: o.deltaEnabled,
    snapshotMaxKeys: o.snapshotMaxKeys,
  };
  const protocols = {
    [GRAPHQL_TRANSPORT_WS_PROTOCOL]: createProtocol<Socket>(protocolDeps, protocolOptions),
    ...(o.legacyProtocol ? { [LEGACY_GRAPHQL_WS_PROTOCOL]: createLegacyProtocol<Socket>(protocolDeps, protocolOptions) } : {}),
  };
  const counter = metrics?.series.clientMessagesIn;
  const messagesIn = counter && { [GRAPHQL_TRANSPORT_WS_PROTOCOL]: counter.labels(GRAPHQL_TRANSPORT_WS_PROTOCOL), [LEGACY_GRAPHQL_WS_PROTOCOL]: counter.labels(LEGACY_GRAPHQL_WS_PROTOCOL) };
  const admission = createAdmission(o);
  const server = createUwsServer(
    { protocols, messagesIn, admission, subscribeRateLimiter, logger, writable: writer.writable },
    { ...o, keepAliveMs: o.legacyKeepAliveMs, backpressure, sweepExpired: authenticator.mode === 'jwt' },
  );

  if (o.sseEnabled) {
    const sseOnSubscribe = onSubscribe === undefined ? undefined : { hook: onSubscribe, logger };
    const sessions = createSseSessions<SseHttpStream>({ schema, compiler, hub, authenticator, snapshotMaxKeys: o.snapshotMaxKeys, onSubscribe: sseOnSubscribe });
    sse = registerSseRoutes(
      server.app,
      { sessions, writer: sseWriter, admission, authenticator, isDraining: () => server.isDraining(), logger, ...(deps.tickets ? { tickets: deps.tickets } : {}) },
      { path: o.path, maxBodyBytes: o.maxPayloadBytes, heartbeatMs: o.sseHeartbeatMs, ticketTtlSeconds: o.sseTicketTtlSeconds, allowedOrigins: o.allowedOrigins, drainBatchSize: o.drainBatchSize },
    );
  }
  const sseStreams = (): number => sse?.streams() ?? 0;
  const isReady = (): boolean => !server.isDraining() && broker.isReady();
  const stats = (): GatewayStats => {
    const { subscribers, ...h } = hub.stats();
    return { connections: server.connections() + sseStreams(), sseStreams: sseStreams(), subscriptions: subscribers, ...h, cachedDocuments: compiler.cachedDocuments, ready: isReady(), draining: server.isDraining() };
  };
  metrics?.series.observeGauges(() => {
    const h = hub.stats();
    // SSE streams count as connections, under their own protocol label.
    const connectionsByProtocol = { ...server.connectionsByProtocol(), 'graphql-sse': sseStreams() };
    return { connections: server.connections() + sseStreams(), connectionsByProtocol, subscriptions: h.subscribers, operations: h.groups, inboundChars: h.inbound.chars };
  });
  registerHttpRoutes(server.app, {
    isReady,
    notReadyReason: () => (server.isDraining() ? 'draining' : broker.status()),
    stats,
    registry: metrics?.registry,
    debugEndpoints: o.debugEndpoints,
  });
  if (o.console) registerConsoleRoutes(server.app, o.console, { graphqlPath: o.path, metricsPath: metrics ? '/metrics' : null, sdl: schema.sdl });
  registerNotFound(server.app, o.path);

  return {
    isReady,
    stats,
    listen: (port, host = GATEWAY_DEFAULTS.host) => server.listen(port, host),
    drain: async () => {
      await Promise.all([server.drain(), sse?.drain()]);
    },
  };
}
