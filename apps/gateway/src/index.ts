// Public surface of the gateway app for its own tests and benchmarks; apps never import each other.
export { createGateway, type Gateway, type GatewayDeps, type GatewayOptions, type GatewayStats } from './gateway.js';
export { createOperationCompiler, type CompiledSubscription, type OperationCompiler } from './operations.js';
export { createFanout, type Fanout } from './fanout.js';
export { createProtocol, createConnection, type Connection } from './protocol.js';
export { gatewayConfigSpec } from './config.js';
