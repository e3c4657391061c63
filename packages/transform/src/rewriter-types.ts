// The contract of the two JSON key rewriters: the JavaScript one (json-bytes-rewriter.ts, whose
// factory picks the engine) and the WebAssembly one (wasm-json-rewriter.ts), which hands the
// JavaScript one what it cannot do. It lives here so that neither module imports the other for it.

/**
 * The ingest fast path: rewrites the object keys of UTF-8 JSON bytes to snake_case in one
 * validating pass, copying everything else byte for byte into the output, and never building
 * objects (no `JSON.parse`, no `JSON.stringify`, no string per key). Kafka hands ingest bytes and
 * Redis wants bytes, so this path also skips decoding and re-encoding the text.
 *
 * - Strict JSON (RFC 8259) or an `INVALID_JSON` error with the offset; same depth bound, key rule
 *   and collision rule as the object transform.
 * - Values are kept exactly as written: numbers beyond 2^53, `1.0`, escape sequences. Whitespace
 *   between tokens is dropped (compact output). Duplicate keys are kept (JSON.parse keeps the last).
 * - UTF-8 is not validated inside string values: invalid sequences pass through unchanged, where
 *   `JSON.parse(buffer.toString())` would have turned them into U+FFFD.
 */
export interface JsonBytesRewriter {
  /**
   * With `capture` (a converted top-level key, as UTF-8 bytes), the output offsets of that key's
   * string or number value are left in {@link captureStart}/{@link captureEnd} (-1 when absent).
   * The result is a view of a slab that later results share (its bytes are never written again):
   * holding one keeps its slab (256 KiB) alive, so copy a result that is kept for long.
   */
  readonly rewrite: (json: Uint8Array, prefix: string, suffix: string, capture?: Uint8Array) => Buffer;
  /** Output offset where the captured value starts (inside the quotes for a string), or -1. */
  readonly captureStart: number;
  /** Output offset just past the captured value, or -1. */
  readonly captureEnd: number;
  /** Keys memoized (as bytes), at most `maxCacheEntries`. */
  readonly cacheSize: number;
  /** Inputs the WebAssembly rewriter handed to the JavaScript one (errors, rare shapes); 0 for `js`. */
  readonly fallbacks: number;
}
