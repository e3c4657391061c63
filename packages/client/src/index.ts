export {
  createWirestreamClient,
  type SubscribeOptions,
  type WirestreamClient,
  type WirestreamClientOptions,
  type WirestreamResult,
  type WirestreamSink,
  type WirestreamSubscription,
} from './client.js';
export { WirestreamProtocolError } from './errors.js';
export { createPositionTracker, type ContractExtensions, type PositionTracker, type ResumeState, type Verdict } from './position-tracker.js';
export type { Deleted, Position, Recovery, SnapshotEnd, Start } from './signals.js';
export { tokenExpiresAtMs } from './token-expiry.js';
