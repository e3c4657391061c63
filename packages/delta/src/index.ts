export {
  DELTA_FOSSIL,
  DELTA_PAYLOAD_PREFIX,
  DeltaError,
  applyDeltaText,
  createDeltaReader,
  encodeDeltaPayload,
  payloadBytes,
  type DeltaReader,
} from './delta-payload.js';
