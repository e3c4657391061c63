/**
 * What the gateway sent does not follow the client contract (docs/architecture.md, "Positions,
 * resume and the recovery signal"): e.g. an `extensions.position` whose offset is not a decimal
 * string. The subscription ends with it (through the sink's `error`); resubscribing cannot help
 * until the server is fixed, so `retriable` is false.
 */
export class WirestreamProtocolError extends Error {
  override readonly name = 'WirestreamProtocolError';
  readonly retriable = false;
}
