/** Why a payload could not be transformed. */
export type TransformErrorCode =
  /** Objects/arrays nest deeper than `maxDepth`. */
  | 'MAX_DEPTH'
  /** Two distinct keys of one object map to the same snake_case key. */
  | 'KEY_COLLISION'
  /** The JSON text is not valid JSON (`transformJson`, `transformJsonBytes`). */
  | 'INVALID_JSON';

/**
 * Raised when a payload cannot be transformed. The payload itself is at fault, so a retry cannot
 * help (`retriable` is always false): ingest routes it to the dead-letter topic with `message`.
 */
export class TransformError extends Error {
  override readonly name = 'TransformError';
  readonly code: TransformErrorCode;
  /** Where in the payload, as a JSONPath (`$.listing.recentBids[3]`), or `$` for the root. */
  readonly path: string;
  readonly retriable = false;

  constructor(code: TransformErrorCode, path: string, message: string) {
    super(message);
    this.code = code;
    this.path = path;
  }
}
