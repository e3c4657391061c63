// The public API of @wirestream/loadgen: a cheap graphql-transport-ws load client over worker processes.
export { createLoadgen, MAX_SOCKETS_PER_WORKER } from './loadgen.js';
export type { LatencySummary, Loadgen, LoadgenOptions, LoadProgress, LoadReport } from './loadgen.js';
export type { ExpectedDeliveries, JwtOptions } from './ipc.js';
export { signHs256 } from './jwt.js';
export { createBenchClock, clockWithOffset, type BenchClock } from './clock.js';
export { isoWithMicros } from './frames.js';
export {
  COMPACT_SELECTION,
  FULL_SELECTION,
  parseMix,
  variantOf,
  variantsOf,
  type ExplicitOperation,
  type MixEntry,
  type OperationKind,
  type OperationPlan,
  type OperationVariant,
  type SubscribePayload,
} from './operations.js';
