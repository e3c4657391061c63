// The gateway's public surface, for its own integration tests and the benchmarks (apps never
// import each other). What is not exported here is private to the app.
export { createGateway, type Gateway, type GatewayDeps, type GatewayOptions, type GatewayStats } from './gateway.js';
export { GATEWAY_DEFAULTS } from './defaults.js';
export { gatewayConfigSpec } from './config.js';
// Core: the hub and the compiler on any broker and any writer (in-process benchmarks).
export { createHub, type Hub, type HubSnapshot } from './core/hub.js';
export { createProtocol, createConnectionState, type Connection, type Protocol } from './core/protocol.js';
export { createRateLimiter, type RateLimiter } from './core/rate-limit.js';
export type { Subscriber } from './core/hub-state.js';
export type { ConnectionWriter } from './core/connection-writer.js';
export { createOperationCompiler, type CompiledSubscription, type OperationCompiler, type AccessScope } from './core/operations.js';
export { checkDocumentLimits, checkDocumentNesting, resolveDocumentLimits, type DocumentLimits } from './core/document-limits.js';
export { createGatewayMetrics, type GatewayMetrics } from './core/metrics.js';
// Brokers.
export type { Broker, BrokerListener, HistoryReader } from './broker/broker.js';
export { createRedisBroker, type RedisBrokerOptions } from './broker/redis-broker.js';
export { createRedisHistory } from './broker/redis-history.js';
export { createMemoryBus, type MemoryBus, type MemoryPosition } from './broker/memory-broker.js';
// Auth.
export { createAuthenticator, type Authenticator, type AuthenticatorOptions } from './auth/authenticator.js';
