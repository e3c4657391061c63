// The gateway's public surface, for its own integration tests (apps never import each other).
// What is not exported here is private to the app; in-process benches import `./internals`.
export { createGateway, type Gateway, type GatewayDeps, type GatewayOptions, type GatewayStats } from './gateway.js';
export { gatewayConfigSpec } from './config.js';
// Core: the protocol and the hub on any broker and any writer (unit tests, in-process benchmarks).
export { createHub, type Hub } from './core/hub.js';
export type { FlowLimits } from './core/delivery/inbound.js';
export type { ConnectionWriter } from './core/connection-writer.js';
export { createProtocol, createConnectionState, type Connection, type Protocol } from './core/protocols/protocol.js';
export { createLegacyProtocol, parseLegacyMessage, LEGACY_GRAPHQL_WS_PROTOCOL } from './core/protocols/legacy-protocol.js';
export { createRateLimiter } from './core/protocols/rate-limit.js';
export { parseSnapshotRequest, resolveSnapshotAsk, type SnapshotAsk, type SnapshotLimits } from './core/recovery/snapshot-request.js';
export type { SnapshotSignal } from './core/recovery/snapshot.js';
export { createOperationCompiler, type CompiledSubscription } from './core/operations/operations.js';
export { compileProjector, type Projector, type ProjectableOperation } from './core/operations/projector.js';
export { normalizeWhere, whereKey, type WhereNode } from './core/operations/where.js';
export { compileWhere, type WherePredicate } from './core/operations/where-compile.js';
export type { DocumentLimits } from './core/operations/document-limits.js';
export { createGatewayMetrics, type GatewayMetrics } from './core/metrics.js';
// Brokers and history.
export type { Broker, HistoryReader, SnapshotReader } from './broker/broker.js';
export { createRedisBroker } from './broker/redis-broker.js';
export { createRedisHistory } from './broker/redis-history.js';
export { createRedisSnapshots } from './broker/redis-snapshots.js';
export { createRedisTicketStore, type RedisTicketStore, type RedisTicketStoreOptions } from './broker/redis-tickets.js';
export { newTicket, TICKET_PATTERN, type TicketStore } from './transport/sse-tickets.js';
export { createRedisClusterBroker } from './broker/redis-cluster-broker.js';
export { connectRedis, type RedisConnectOptions, type RedisConnections } from './broker/redis-connect.js';
export { createMemoryBus, type MemoryBus, type MemoryBusOptions } from './broker/memory-broker.js';
// Auth.
export { createAuthenticator, type Authenticator } from './auth/authenticator.js';
export { loadGatewayPlugin } from './plugin-loader.js';
export { createLookupLoaders, type LookupLoaderDeps, type LookupSettings } from './lookups/lookup-loaders.js';
export { parseLookupHeaders, readLookupTls, type LookupTlsSettings } from './lookups/lookup-settings.js';
export { createLookupMetrics, type LookupObservers } from './lookups/lookup-metrics.js';
export { createLookupTracers, type LookupTracers } from './lookups/lookup-tracing.js';
