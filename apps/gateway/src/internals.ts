// The gateway's core for in-process benches (bench/fanout, bench/validation): the hub on the
// in-process bus, the operation compiler, the metrics and the document limits, without a server.
// Not the app's API (`@wirestream/gateway` is): it changes with the core, and lint lets only
// benches import it (eslint.config.js).
export { createHub, type Hub } from './core/hub.js';
export type { ConnectionWriter } from './core/connection-writer.js';
export { createOperationCompiler, type CompiledSubscription } from './core/operations/operations.js';
export { createByteProjector, projectBytes, scanEnvelope } from './core/operations/byte-projector.js';
export { checkDocumentLimits, checkDocumentNesting, resolveDocumentLimits } from './core/operations/document-limits.js';
export { createGatewayMetrics } from './core/metrics.js';
export { createMemoryBus } from './broker/memory-broker.js';
