import { DEFAULT_CHANNEL_PREFIX, DEFAULT_HISTORY_PREFIX } from '@wirestream/wire';

/**
 * Every default of the gateway, in one place: the config spec (env vars and the README's table),
 * the factories' option destructuring and the docs all read these. Why each value is what it is
 * stays with the option it sets (TSDoc on the options interfaces).
 */
export const GATEWAY_DEFAULTS = Object.freeze({
  // ---- server ----
  host: '0.0.0.0',
  port: 4000,
  path: '/graphql',
  redisUrl: 'redis://127.0.0.1:6379',
  redisMode: 'standalone' as const,
  redisPartitionsPollMs: 2_000, // 2 seconds
  /** Must match ingest's (the shared contract's default). */
  channelPrefix: DEFAULT_CHANNEL_PREFIX,
  historyPrefix: DEFAULT_HISTORY_PREFIX,
  historyEnabled: true,
  metricsEnabled: true,
  debugEndpoints: false,
  console: false,
  logLevel: 'info' as const,

  // ---- transport: frames, backpressure, liveness, drain ----
  maxPayloadBytes: 65_536, // 64 KiB
  maxBackpressureBytes: 1_048_576, // 1 MiB
  socketBufferBytes: 8_192, // 8 KiB: bench/results/memory-return.md
  idleTimeoutSeconds: 60,
  drainBatchSize: 500, // sockets closed per event-loop turn

  // ---- GraphQL over SSE (graphql-sse distinct connections mode, on the GraphQL path) ----
  sseEnabled: true,
  sseHeartbeatMs: 12_000, // as graphql-sse's own handler; under the usual 60 s proxy idle timeouts
  sseTicketTtlSeconds: 30, // single-use tickets for EventSource (no custom headers)

  // ---- bandwidth ----
  compression: 'off' as const, // permessage-deflate: CPU per socket per frame, so opt-in
  deltaEnabled: true, // honour a subscription's extensions.delta: CPU once per group per event, only when asked

  // ---- engine: time slices and the inbound bound ----
  sliceMs: 10, // processing budget before yielding to the event loop
  flushDelayMs: 1_000, // longest a payload waits for its write while messages are queued
  maxInboundBytes: 16_777_216, // 16 MiB of queued envelopes pauses reading from Redis
  maxRendersInFlight: 1_024, // renders awaiting a resolver or look-up; at the bound reading from Redis pauses
  heapGrowingPercent: 300, // V8's old generation may grow 4× its live size before a major GC (decision 0044)

  // ---- look-ups (@lookup fields, decision 0042) ----
  lookupTimeoutMs: 2_000, // one request to a source; past it its look-ups are field errors
  lookupCacheTtlMs: 30_000, // an entity is reused this long
  lookupCacheMaxEntries: 10_000, // entities kept per source, least recently used out first
  lookupMaxBatchSize: 100, // representations in one request
  lookupMaxConcurrentRequests: 8, // requests in flight per source

  // ---- admission ----
  allowedOrigins: ['*'] as string[],
  maxConnectionsPerAddress: 1_000,
  trustedProxyHops: 0,

  // ---- protocol ----
  connectionInitWaitTimeoutMs: 3_000, // 3 s
  maxSubscriptionsPerConnection: 100,
  maxSubscriptionIdLength: 128, // characters: stored per subscription, written into each of its frames
  legacyProtocol: true, // serve subscriptions-transport-ws (graphql-ws subprotocol): a deprecated migration path
  legacyKeepAliveMs: 10_000, // 10 s: its client closes a socket silent for 30 s after a first ka
  subscribeRatePerSecond: 10,
  subscribeBurst: 50,

  // ---- documents and variables ----
  maxQueryLength: 16_384, // UTF-16 code units
  maxTokens: 2_000,
  maxCachedDocuments: 1_000,
  maxDepth: 10,
  maxAliases: 30,
  maxFields: 200,
  maxDirectives: 20,
  allowIntrospection: false,
  maxNesting: 32,
  maxVariablesDepth: 8,
  maxVariablesBytes: 8_192, // 8 KiB
  // the where argument (issue #16): a partner's "these 40 listings" is one 40-value in
  maxFilterClauses: 64,
  maxFilterDepth: 8,
  maxFilterInList: 100,
  // snapshots (issue #16): a dashboard's whole topic of 10,000 listings in one subscription
  snapshotMaxKeys: 10_000,
  conflateMaxKeys: 10_000, // distinct keys a conflating subscriber may have waiting before it is closed as slow
  maxRateCeiling: 1_000, // frames per second: the highest extensions.maxRate a subscription gets

  // ---- authentication (jwt mode) ----
  jwtAllowAnonymous: false,
  jwtScopesClaim: 'scope',
  jwtClockToleranceSec: 5,
  jwtMaxTokenBytes: 8_192, // 8 KiB
});

export type GatewayDefaults = typeof GATEWAY_DEFAULTS;
