import { createJsonBytesRewriter } from './json-bytes-rewriter.js';
import { createKeyCache } from './key-cache.js';
import { keyConverter, KEY_STYLES, type KeyStyle } from './key-style.js';
import { TransformError } from './transform-error.js';

/** How much of the result `transform` freezes. */
export type FreezeMode = 'none' | 'shallow' | 'deep';

export interface KeyTransformerOptions {
  /**
   * Upper bound on memoized key conversions. Business payloads have a few hundred distinct keys;
   * the bound keeps payloads whose keys are data (maps keyed by id) from growing the memo forever.
   * Past it, old entries are evicted (two generations, see the README). `0` disables the memo.
   * @default 2048
   */
  maxCacheEntries?: number;
  /**
   * Deepest nesting of objects/arrays accepted; the root object is depth 1. Deeper payloads throw a
   * `MAX_DEPTH` {@link TransformError} instead of risking a stack overflow on hostile input.
   * At most 1000.
   * @default 64
   */
  maxDepth?: number;
  /**
   * `'shallow'` freezes the returned root object/array, `'deep'` every object and array in the
   * result. Freezing replaces defensive `cloneDeep` copies for consumers that share the result.
   * @default 'none'
   */
  freeze?: FreezeMode;
  /**
   * The key rule (`INGEST_KEY_STYLE`): `'snake'`, ours ({@link toSnakeCase}); `'lodash'`, exactly
   * lodash's `snakeCase`; `'none'`, keys kept as they are (the JSON forms still validate).
   * @default 'snake'
   */
  keyStyle?: KeyStyle;
}

/** Plain functions over the transformer's state (no `this`): destructuring them is safe. */
export interface KeyTransformer {
  /**
   * Converts every object key of a JSON-like value (the output of `JSON.parse`) to snake_case,
   * recursively; values are never changed. The input is consumed: arrays are updated in place,
   * objects are kept as they are when none of their keys changes and rebuilt otherwise (deleting and
   * re-adding properties would turn them into slow dictionary-mode objects). Expects JSON-like data:
   * plain objects, arrays and primitives, with no enumerable inherited properties. Returns the
   * result, which is the input itself when no key needed a change.
   * @throws {TransformError} `MAX_DEPTH` past `maxDepth`, `KEY_COLLISION` when two keys of one object
   * convert to the same key (e.g. `fooBar` and `foo_bar`): reported, never silently overwritten.
   */
  readonly transform: <T = unknown>(value: unknown) => T;
  /**
   * The ingest fast path: UTF-8 JSON bytes (a Kafka message value) in, `prefix` + the same JSON with
   * every object key in snake_case + `suffix` out, as one Buffer ready for the Redis socket (a view
   * of a slab shared with later results: copy it to keep it for long). One
   * validating pass over the bytes: no `JSON.parse`, no `JSON.stringify`, no decoding. Values are
   * copied byte for byte (numbers past 2^53, escapes); whitespace between tokens is dropped. Same key
   * rule, depth bound and collision check as {@link KeyTransformer.transform}; `freeze` does not
   * apply. Its memo of keys (as bytes) is separate from `convertKey`'s and bounded the same way.
   * @param prefix Written before the JSON, e.g. the envelope up to `"payload":`. @default ''
   * @param suffix Written after the JSON, e.g. `}` closing the envelope. @default ''
   * @throws {TransformError} `INVALID_JSON` (with the byte offset), `MAX_DEPTH`, `KEY_COLLISION`.
   */
  readonly transformJsonBytes: (json: Uint8Array, prefix?: string, suffix?: string) => Buffer;
  /**
   * {@link KeyTransformer.transformJsonBytes}, also reading one top-level field in the same pass:
   * `field` is the converted (snake_case) key, e.g. the routing key `listing_id`. `value` is its
   * string value (unescaped) or its number as written, and `undefined` when the field is absent or
   * holds anything else (nested occurrences never count). Lets ingest route without parsing.
   */
  readonly transformJsonBytesReading: (json: Uint8Array, prefix: string, suffix: string, field: string) => { readonly bytes: Buffer; readonly value: string | undefined };
  /**
   * {@link KeyTransformer.transformJsonBytes} for a string: JSON text in, compact snake_cased JSON
   * text out. Costs a UTF-8 encode and decode more than the bytes form; prefer that one on hot paths.
   */
  readonly transformJson: (jsonText: string) => string;
  /** The key style's rule ({@link toSnakeCase} by default), memoized within `maxCacheEntries`. */
  readonly convertKey: (key: string) => string;
  /**
   * Keys currently memoized: by `convertKey`/`transform` plus, separately, by the JSON forms; each of
   * the two memos stays within `maxCacheEntries` (a process normally uses one form).
   */
  readonly cacheSize: number;
}

const DEFAULT_MAX_CACHE_ENTRIES = 2048;
const DEFAULT_MAX_DEPTH = 64;
/** The walk recurses once per level: far below Node's default stack, whatever the frames cost. */
const MAX_MAX_DEPTH = 1_000;

type JsonObject = Record<string, unknown>;

/**
 * Creates the camelCase → snake_case key transformer used on every ingested event (or the key
 * style's rule, see {@link KeyTransformerOptions.keyStyle}).
 * Create one per process (or per consumer) and reuse it: the memo is what makes it fast.
 */
export function createKeyTransformer(options: KeyTransformerOptions = {}): KeyTransformer {
  const {
    maxCacheEntries = DEFAULT_MAX_CACHE_ENTRIES,
    maxDepth = DEFAULT_MAX_DEPTH,
    freeze = 'none',
    keyStyle = 'snake',
  } = options;
  if (!KEY_STYLES.includes(keyStyle)) throw new RangeError(`keyStyle must be one of ${KEY_STYLES.join(', ')}, got ${String(keyStyle)}`);
  if (!Number.isSafeInteger(maxCacheEntries) || maxCacheEntries < 0) {
    throw new RangeError(`maxCacheEntries must be a non-negative integer (0 disables the memo), got ${String(maxCacheEntries)}`);
  }
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_MAX_DEPTH) {
    throw new RangeError(
      `maxDepth must be an integer in 1..${MAX_MAX_DEPTH} (the object walk recurses once per level), got ${String(maxDepth)}`,
    );
  }
  if (freeze !== 'none' && freeze !== 'shallow' && freeze !== 'deep') {
    throw new RangeError(`freeze must be 'none', 'shallow' or 'deep', got ${String(freeze)}`);
  }

  const cache = createKeyCache(maxCacheEntries, keyConverter(keyStyle));
  const convertKey = cache.convert;
  const deepFreeze = freeze === 'deep';
  // The key or index of each open container, by depth: written as the walk descends, read only to
  // name the path in an error, so the happy path builds no path strings.
  const pathSegments: (string | number)[] = [];

  function walk(value: object, depth: number): object {
    if (depth > maxDepth) {
      throw new TransformError(
        'MAX_DEPTH',
        pathOf(pathSegments, depth - 1),
        `payload nests deeper than maxDepth (${maxDepth}) at ${pathOf(pathSegments, depth - 1)}; ` +
          'flatten the producer\'s payload or raise maxDepth (a retry will not help)',
      );
    }
    return Array.isArray(value) ? walkArray(value, depth) : walkObject(value as JsonObject, depth);
  }

  function walkArray(array: unknown[], depth: number): unknown[] {
    // Deliberately imperative and in place: `map` would allocate a second array per array.
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      if (typeof item === 'object' && item !== null) {
        pathSegments[depth - 1] = i;
        const converted = walk(item, depth + 1);
        if (converted !== item) array[i] = converted;
      }
    }
    if (deepFreeze) Object.freeze(array);
    return array;
  }

  function walkObject(object: JsonObject, depth: number): JsonObject {
    // `out` is created at the first key that changes; until then the object is kept and only its
    // rebuilt children are written back. Deliberately for-in: no Object.keys array per object.
    let out: JsonObject | undefined;
    let count = 0;
    for (const key in object) {
      const original = object[key];
      let value = original;
      if (typeof value === 'object' && value !== null) {
        pathSegments[depth - 1] = key;
        value = walk(value, depth + 1);
      }
      const snake = convertKey(key);
      if (out === undefined) {
        if (snake === key) {
          if (value !== original) setOwn(object, key, value);
          count++;
          continue;
        }
        out = copyFirstKeys(object, count);
      }
      setOwn(out, snake, value);
      count++;
    }
    if (out === undefined) {
      if (deepFreeze) Object.freeze(object);
      return object;
    }
    // Distinct keys that convert to the same key leave `out` with fewer keys than `object` had:
    // counting once here is cheaper than a lookup before every assignment.
    let outCount = 0;
    for (const _ in out) outCount++;
    if (outCount !== count) throw collision(object, depth);
    if (deepFreeze) Object.freeze(out);
    return out;
  }

  function collision(object: JsonObject, depth: number): TransformError {
    const seen = new Map<string, string>();
    let first = '';
    let second = '';
    let snake = '';
    for (const key in object) {
      const converted = convertKey(key);
      const previous = seen.get(converted);
      if (previous !== undefined) {
        [first, second, snake] = [previous, key, converted];
        break;
      }
      seen.set(converted, key);
    }
    const path = pathOf(pathSegments, depth - 1);
    return new TransformError(
      'KEY_COLLISION',
      path,
      `keys ${JSON.stringify(first)} and ${JSON.stringify(second)} at ${path} both become ${JSON.stringify(snake)} in snake_case; ` +
        'rename one of them in the producer (a retry will not help)',
    );
  }

  const jsonBytes = createJsonBytesRewriter(maxDepth, maxCacheEntries, keyStyle);
  const fieldBytesCache = new Map<string, Buffer>();
  let lastField: string | undefined;
  let lastFieldBytes: Buffer | undefined;
  const rewriteJsonBytes = jsonBytes.rewrite;

  return {
    transform<T = unknown>(value: unknown): T {
      if (typeof value !== 'object' || value === null) return value as T;
      const result = walk(value, 1);
      if (freeze === 'shallow') Object.freeze(result);
      return result as T;
    },
    transformJsonBytes: (json, prefix = '', suffix = '') => rewriteJsonBytes(json, prefix, suffix),
    transformJsonBytesReading(json, prefix, suffix, field) {
      // A topic's events all route by one field: the last one's bytes, without a map lookup per event.
      let fieldBytes = field === lastField ? lastFieldBytes : fieldBytesCache.get(field);
      if (fieldBytes === undefined) {
        fieldBytes = Buffer.from(field, 'utf8');
        // A schema has a handful of routing fields: a tiny cap keeps this map from ever growing.
        if (fieldBytesCache.size < 64) fieldBytesCache.set(field, fieldBytes);
      }
      lastField = field;
      lastFieldBytes = fieldBytes;
      const bytes = rewriteJsonBytes(json, prefix, suffix, fieldBytes);
      const { captureStart, captureEnd } = jsonBytes;
      if (captureStart < 0) return { bytes, value: undefined };
      let value = bytes.toString('utf8', captureStart, captureEnd);
      // Escapes are rare in ids; only then pay for a JSON decode of the string.
      if (value.includes('\\') && bytes[captureStart - 1] === 0x22) value = JSON.parse(`"${value}"`) as string;
      return { bytes, value };
    },
    transformJson: (jsonText) => rewriteJsonBytes(Buffer.from(jsonText, 'utf8'), '', '').toString('utf8'),
    convertKey,
    get cacheSize() {
      return cache.size + jsonBytes.cacheSize;
    },
  };
}

/** The first `count` keys of `object`, unchanged (they were all snake_case already), into a new object. */
function copyFirstKeys(object: JsonObject, count: number): JsonObject {
  const out: JsonObject = {};
  if (count === 0) return out;
  let copied = 0;
  for (const key in object) {
    setOwn(out, key, object[key]);
    if (++copied === count) break;
  }
  return out;
}

/**
 * `target[key] = value`, except for `__proto__`: on a plain object that assignment would replace the
 * prototype (JSON.parse creates `__proto__` as an ordinary own property; a naive copy must not
 * turn it into a prototype). Defining the property keeps it an own data property.
 */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function pathOf(segments: readonly (string | number)[], length: number): string {
  let path = '$';
  for (let i = 0; i < length; i++) {
    const segment = segments[i];
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (segment !== undefined) path += /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
  }
  return path;
}
