import { decodeKey, rawKeyOutput, SLAB_BYTES, writeUtf8 } from './key-bytes.js';
import { keyConverter, type KeyStyle } from './key-style.js';
import type { JsonBytesRewriter } from './rewriter-types.js';
import { TransformError } from './transform-error.js';
import { createWasmJsonBytesRewriter } from './wasm-json-rewriter.js';

/** A memoized key: its raw bytes as they appear in JSON (escapes included) and what replaces them. */
interface KeyEntry {
  readonly input: Uint8Array;
  readonly inputHash: number;
  /** Converted key, as JSON string content (escaped where needed), without the quotes. */
  readonly output: Uint8Array;
  readonly outputHash: number;
  /** Whether `output` differs from `input`. */
  readonly changed: boolean;
  /**
   * The memoized key that followed this one last time (at any depth, plain keys skipped): the
   * rewriter's guess for the next such key. Payloads of one kind list their keys in one order.
   */
  next: KeyEntry | undefined;
}

/**
 * One generation of the memo: an open-addressing table of entry numbers keyed by the FNV-1a hash of
 * the raw key bytes. Cheaper than a `Map` keyed by hash, and no string is ever made for a lookup.
 */
interface Generation {
  readonly slots: Int32Array;
  readonly entries: KeyEntry[];
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
/** Past this many keys in one object, collision checks use a hash set instead of all pairs. */
const PAIRWISE_LIMIT = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function createGeneration(capacity: number): Generation {
  let size = 16;
  while (size < capacity * 2) size *= 2; // load factor ≤ 0.5 keeps probes short
  return { slots: new Int32Array(size), entries: [] };
}

function find(generation: Generation, src: Uint8Array, start: number, end: number, hash: number): KeyEntry | undefined {
  const { slots, entries } = generation;
  const mask = slots.length - 1;
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const n = slots[slot] as number;
    if (n === 0) return undefined;
    const entry = entries[n - 1] as KeyEntry;
    if (entry.inputHash === hash && bytesEqual(entry.input, src, start, end)) return entry;
  }
}

function insert(generation: Generation, entry: KeyEntry): void {
  const { slots, entries } = generation;
  const mask = slots.length - 1;
  let slot = entry.inputHash & mask;
  while (slots[slot] !== 0) slot = (slot + 1) & mask;
  entries.push(entry);
  slots[slot] = entries.length;
}

/**
 * Which implementation runs: `wasm` (the default) is assembly/json-rewriter.ts, which hands errors,
 * possible collisions and oversized inputs to the `js` one; `js` alone is the reference (tests, and
 * a memo too small to be worth the module).
 */
export type RewriterEngine = 'wasm' | 'js';

/**
 * The rewriter of `keyStyle` within `maxDepth`, memoizing at most `maxCacheEntries` keys in all (the
 * WebAssembly memo three quarters, the JavaScript fallback's the rest).
 */
export function createJsonBytesRewriter(
  maxDepth: number, maxCacheEntries: number, keyStyle: KeyStyle = 'snake', engine: RewriterEngine = 'wasm',
): JsonBytesRewriter {
  if (engine === 'js' || maxCacheEntries < 4) return createJsRewriter(maxDepth, maxCacheEntries, keyStyle);
  const fallbackEntries = Math.floor(maxCacheEntries / 4);
  const fallback = createJsRewriter(maxDepth, fallbackEntries, keyStyle);
  return createWasmJsonBytesRewriter(maxDepth, maxCacheEntries - fallbackEntries, keyStyle, keyConverter(keyStyle), fallback);
}

function createJsRewriter(maxDepth: number, maxCacheEntries: number, keyStyle: KeyStyle): JsonBytesRewriter {
  const convertKey = keyConverter(keyStyle);
  // Which keys skip the memo: `snake` leaves a key without upper-case or non-ASCII letters as it is,
  // so such "plain" keys are copied with no lookup (most keys); lodash changes plain keys too
  // (`line2` → `line_2`, `_id` → `id`): every key goes through the memo; `none` changes no key
  // (escaped keys still go through the memo, which writes them decoded and re-escaped where needed).
  const plainKeysKept = keyStyle === 'snake';
  const allKeysKept = keyStyle === 'none';
  // Per nesting level (index = depth, root container = 1).
  const levelIsObject = new Uint8Array(maxDepth + 2);
  const levelChanged = new Uint8Array(maxDepth + 2);
  const levelIndex = new Int32Array(maxDepth + 2); // array index, for error paths
  const levelKeyBase = new Int32Array(maxDepth + 2); // first key of the object in the key stack
  // The keys of all open objects, innermost last: what collision checks and error paths need.
  let keyStart = new Int32Array(256);
  let keyEnd = new Int32Array(256);
  let keyHash = new Int32Array(256); // FNV-1a of the output key bytes
  const keyEntry: (KeyEntry | undefined)[] = []; // set for keys that went through the memo
  // Output is written straight into a slab, one result after the other, and each result is a view
  // of it: no allocation and no copy per call (Buffer.allocUnsafe + a copy per event were ~1 µs of
  // ingest's ~18 µs, bench/results/ingest-profile.md). A slab lives as long as a view of it does.
  let scratch: Buffer = Buffer.allocUnsafeSlow(SLAB_BYTES);
  let slabUsed = 0;
  // Two generations, as in key-cache.ts: a lookup that hits `old` promotes the entry to `young`.
  const generationSize = Math.max(1, Math.floor(maxCacheEntries / 2));
  let young = createGeneration(generationSize);
  let old = createGeneration(1);

  function growKeys(): void {
    const grow = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    keyStart = grow(keyStart);
    keyEnd = grow(keyEnd);
    keyHash = grow(keyHash);
  }

  /**
   * A slab with room up to `needed` (an offset): the current one, or a new one into which the result
   * being written, [base, used), is copied at the same offsets (rare: keys grew the output past the
   * room reserved for it), so every offset taken so far stays valid.
   */
  function ensureScratch(base: number, used: number, needed: number): Buffer {
    if (needed <= scratch.length) return scratch;
    const bigger = Buffer.allocUnsafeSlow(Math.max(needed * 2, SLAB_BYTES));
    scratch.copy(bigger, base, base, used);
    scratch = bigger;
    return bigger;
  }

  function lookup(src: Uint8Array, start: number, end: number, hash: number): KeyEntry {
    let entry = find(young, src, start, end, hash);
    if (entry !== undefined) return entry;
    entry = find(old, src, start, end, hash) ?? createEntry(src, start, end, hash);
    if (maxCacheEntries === 0) return entry;
    if (young.entries.length >= generationSize) {
      // The generation dropped here leaves no chain of guesses behind that would keep it alive.
      for (const dropped of old.entries) dropped.next = undefined;
      old = young;
      young = createGeneration(generationSize);
    }
    insert(young, entry);
    return entry;
  }

  let captureStart = -1;
  let captureEnd = -1;
  /** The last memoized key seen (in this or an earlier call): its `next` is the guess for the next one. */
  let previousEntry: KeyEntry | undefined;

  return {
    rewrite: rewriteJsonBytes,
    get cacheSize() {
      return young.entries.length + old.entries.length;
    },
    fallbacks: 0,
    get captureStart() {
      return captureStart;
    },
    get captureEnd() {
      return captureEnd;
    },
  };

  function rewriteJsonBytes(src: Uint8Array, prefix: string, suffix: string, capture?: Uint8Array): Buffer {
    captureStart = -1;
    captureEnd = -1;
    // True between a top-level key equal to `capture` and its value (routing reads that value
    // from the output instead of parsing the payload again).
    let capturing = false;
    const length = src.length;
    // Room for the prefix, the input twice (converted keys grow: `aB` → `a_b`) and the suffix, in
    // the slab after the previous result, else at the start of a new one.
    const room = prefix.length * 3 + length * 2 + suffix.length * 3 + 16;
    if (slabUsed + room > scratch.length) {
      scratch = Buffer.allocUnsafeSlow(Math.max(room, SLAB_BYTES));
      slabUsed = 0;
    }
    const base = slabUsed;
    let dst = scratch;
    let o = prefix.length === 0 ? base : base + writeUtf8(dst, prefix, base);
    let i = skipWhitespace(src, 0, length);
    let depth = 0;
    let keyTop = 0;
    let expectKey = false;
    // Locals rather than closure variables in the loop (the key arrays are reloaded when they grow).
    const isObjectAt = levelIsObject;
    const changedAt = levelChanged;
    const indexAt = levelIndex;
    const keyBaseAt = levelKeyBase;
    let starts = keyStart;
    let ends = keyEnd;
    let hashes = keyHash;
    let previous = previousEntry;

    // Deliberately one imperative loop with an explicit stack: no recursion, no closures, no strings
    // on the common path. Each byte is read once and, unless it is whitespace, written once.
    parse: for (;;) {
      if (expectKey) {
        expectKey = false;
        if (i >= length || src[i] !== QUOTE) throw invalid(src, i, depth - 1, keyBaseAt[depth] as number, 'a "key"');
        const start = i + 1;
        const keyOut = o; // where the key goes; a key that changes is written again from here
        dst[o++] = QUOTE;
        // First the guess: the key that followed the previous memoized key last time. A hit is one
        // comparison instead of a copy, a hash, a lookup and the key written twice. The guess is
        // exactly this key when its raw bytes (escapes included) match and a quote follows them.
        let entry = previous === undefined ? undefined : previous.next;
        let end = start;
        let hash = FNV_OFFSET;
        let plain = true;
        let escaped = false;
        if (entry !== undefined) {
          const input = entry.input;
          const n = input.length;
          let k = -1;
          if (start + n < length && src[start + n] === QUOTE) for (k = 0; k < n && src[start + k] === input[k]; k++);
          if (k === n) end = start + n;
          else entry = undefined;
        }
        if (entry === undefined) {
          let j = start;
          // Copies the key while hashing it and checking whether it can change (upper-case or non-ASCII).
          for (;;) {
            if (j >= length) throw invalid(src, j, depth, keyTop, 'the end of the key');
            const k = src[j] as number;
            if (k === QUOTE) break;
            if (k < 0x20) throw invalid(src, j, depth, keyTop, 'a character (control characters must be escaped)');
            if (k === BACKSLASH) {
              escaped = true;
              const escapeEnd = skipEscape(src, j);
              if (escapeEnd < 0) throw invalid(src, j + 1, depth, keyTop, 'an escape sequence');
              for (; j < escapeEnd; j++) hash = Math.imul(hash ^ (src[j] as number), FNV_PRIME);
              continue;
            }
            if ((k >= 0x41 && k <= 0x5a) || k >= 0x80) plain = false;
            hash = Math.imul(hash ^ k, FNV_PRIME);
            dst[o++] = k;
            j++;
          }
          end = j;
        }
        if (keyTop === starts.length) {
          growKeys();
          starts = keyStart;
          ends = keyEnd;
          hashes = keyHash;
        }
        starts[keyTop] = start;
        ends[keyTop] = end;
        if (entry === undefined && !escaped && ((plain && plainKeysKept) || allKeysKept)) {
          hashes[keyTop] = hash;
          keyEntry[keyTop] = undefined; // the slot may hold an entry from an earlier key
        } else {
          if (entry === undefined) {
            entry = lookup(src, start, end, hash);
            if (previous !== undefined) previous.next = entry;
          }
          previous = entry;
          const { output } = entry;
          o = keyOut + 1;
          if (output.length > end - start) dst = ensureScratch(base, o, o + output.length + (length - end) * 2 + suffix.length * 3 + 16);
          // TypedArray#set (a memmove) measured faster than a byte loop here, short as keys are.
          dst.set(output, o);
          o += output.length;
          if (entry.changed) changedAt[depth] = 1;
          hashes[keyTop] = entry.outputHash;
          keyEntry[keyTop] = entry;
        }
        keyTop++;
        if (capture !== undefined && depth === 1 && captureStart < 0 && o - keyOut - 1 === capture.length) {
          capturing = bytesEqual(capture, dst, keyOut + 1, o);
        }
        dst[o++] = QUOTE;
        i = end + 1;
        if (i < length && src[i] !== 0x3a /* : */) i = skipWhitespace(src, i, length);
        if (i >= length || src[i] !== 0x3a) throw invalid(src, i, depth, keyTop, "':'");
        dst[o++] = 0x3a;
        i++;
        if (i < length && (src[i] as number) <= 0x20) i = skipWhitespace(src, i, length);
      }

      // A value starts at i.
      const c = i < length ? (src[i] as number) : -1;
      const captureThis = capturing;
      capturing = false;
      if (c === QUOTE) {
        dst[o++] = QUOTE;
        i++;
        if (captureThis) captureStart = o;
        for (;;) {
          if (i >= length) throw invalid(src, i, depth, keyTop, 'the end of the string');
          const k = src[i] as number;
          if (k === QUOTE) break;
          if (k < 0x20) throw invalid(src, i, depth, keyTop, 'a character (control characters must be escaped)');
          if (k === BACKSLASH) {
            const escapeEnd = skipEscape(src, i);
            if (escapeEnd < 0) throw invalid(src, i + 1, depth, keyTop, 'an escape sequence');
            while (i < escapeEnd) dst[o++] = src[i++] as number;
            continue;
          }
          dst[o++] = k;
          i++;
        }
        if (captureThis) captureEnd = o;
        dst[o++] = QUOTE;
        i++;
      } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (depth === maxDepth) throw tooDeep(src, depth, keyTop);
        depth++;
        const isObject = c === 0x7b;
        isObjectAt[depth] = isObject ? 1 : 0;
        changedAt[depth] = 0;
        indexAt[depth] = 0;
        keyBaseAt[depth] = keyTop;
        dst[o++] = c;
        i++;
        if (i < length && (src[i] as number) <= 0x20) i = skipWhitespace(src, i, length);
        const close = isObject ? 0x7d : 0x5d;
        if (i < length && src[i] === close) {
          dst[o++] = close;
          i++;
          depth--;
        } else {
          expectKey = isObject;
          continue parse;
        }
      } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
        const end = skipNumber(src, i, length);
        if (end < 0) throw invalid(src, -end - 1, depth, keyTop, 'a digit');
        if (captureThis) captureStart = o;
        while (i < end) dst[o++] = src[i++] as number;
        if (captureThis) captureEnd = o;
      } else if (c === 0x74 /* t */ && i + 4 <= length && src[i + 1] === 0x72 && src[i + 2] === 0x75 && src[i + 3] === 0x65) {
        dst[o++] = 0x74; dst[o++] = 0x72; dst[o++] = 0x75; dst[o++] = 0x65;
        i += 4;
      } else if (c === 0x66 /* f */ && i + 5 <= length && src[i + 1] === 0x61 && src[i + 2] === 0x6c && src[i + 3] === 0x73 && src[i + 4] === 0x65) {
        dst[o++] = 0x66; dst[o++] = 0x61; dst[o++] = 0x6c; dst[o++] = 0x73; dst[o++] = 0x65;
        i += 5;
      } else if (c === 0x6e /* n */ && i + 4 <= length && src[i + 1] === 0x75 && src[i + 2] === 0x6c && src[i + 3] === 0x6c) {
        dst[o++] = 0x6e; dst[o++] = 0x75; dst[o++] = 0x6c; dst[o++] = 0x6c;
        i += 4;
      } else {
        throw invalid(src, i, depth, keyTop, 'a value');
      }

      // After a value: a separator, the end of its container(s), or the end of the input.
      for (;;) {
        if (i < length && (src[i] as number) <= 0x20) i = skipWhitespace(src, i, length);
        if (depth === 0) {
          if (i !== length) throw invalid(src, i, depth, keyTop, 'the end of the JSON text');
          break parse;
        }
        const next = i < length ? (src[i] as number) : -1;
        const isObject = isObjectAt[depth] === 1;
        if (next === 0x2c /* , */) {
          dst[o++] = next;
          i++;
          if (i < length && (src[i] as number) <= 0x20) i = skipWhitespace(src, i, length);
          indexAt[depth] = (indexAt[depth] as number) + 1;
          expectKey = isObject;
          continue parse;
        }
        if (next === (isObject ? 0x7d : 0x5d)) {
          if (isObject) {
            const base = keyBaseAt[depth] as number;
            if (changedAt[depth] === 1) checkCollisions(src, base, keyTop, depth);
            keyTop = base;
          }
          dst[o++] = next;
          i++;
          depth--;
          continue;
        }
        throw invalid(src, i, depth, keyTop, isObject ? "',' or '}'" : "',' or ']'");
      }
    }

    if (suffix.length > 0) {
      dst = ensureScratch(base, o, o + suffix.length * 3);
      o += writeUtf8(dst, suffix, o);
    }
    slabUsed = o;
    previousEntry = previous;
    if (captureStart >= 0) {
      captureStart -= base;
      captureEnd -= base;
    }
    return dst.subarray(base, o);
  }

  // --- rare paths: collisions and errors -------------------------------------------------------

  /** Keys [base, top) of one object, at least one of which changed: no two may end up equal. */
  function checkCollisions(src: Uint8Array, base: number, top: number, depth: number): void {
    const count = top - base;
    if (count <= PAIRWISE_LIMIT) {
      for (let a = base; a < top; a++) {
        const hash = keyHash[a];
        for (let b = a + 1; b < top; b++) if (keyHash[b] === hash) verifyPair(src, a, b, depth);
      }
      return;
    }
    // Large objects (maps keyed by data): one pass with an open-addressing set of hashes.
    let size = 64;
    while (size < count * 2) size *= 2;
    const slots = new Int32Array(size).fill(-1);
    for (let a = base; a < top; a++) {
      const hash = keyHash[a] as number;
      for (let s = hash & (size - 1); ; s = (s + 1) & (size - 1)) {
        const b = slots[s] as number;
        if (b === -1) {
          slots[s] = a;
          break;
        }
        if (keyHash[b] === hash) verifyPair(src, b, a, depth);
      }
    }
  }

  /** Keys a and b have equal output hashes: a collision if their outputs match but their inputs do not. */
  function verifyPair(src: Uint8Array, a: number, b: number, depth: number): void {
    const outputA = keyOutput(src, a);
    const outputB = keyOutput(src, b);
    if (outputA !== outputB) return; // only the hashes collide
    const inputA = keyInput(src, a);
    const inputB = keyInput(src, b);
    if (inputA === inputB) return; // a duplicate key: allowed, as in JSON.parse
    const path = pathOf(src, depth - 1, levelKeyBase[depth] as number);
    throw new TransformError(
      'KEY_COLLISION', path,
      `keys ${JSON.stringify(inputA)} and ${JSON.stringify(inputB)} at ${path} both become ${JSON.stringify(outputA)} in snake_case; ` +
        'rename one of them in the producer (a retry will not help)',
    );
  }

  function keyInput(src: Uint8Array, index: number): string {
    return decodeKey(src, keyStart[index] as number, keyEnd[index] as number);
  }

  function keyOutput(src: Uint8Array, index: number): string {
    const entry = keyEntry[index];
    if (entry === undefined) return keyInput(src, index);
    return JSON.parse(`"${Buffer.from(entry.output).toString('utf8')}"`) as string;
  }

  /** Opening one more level below `depth` would pass the bound. */
  function tooDeep(src: Uint8Array, depth: number, keyTop: number): TransformError {
    const path = pathOf(src, depth, keyTop);
    return new TransformError(
      'MAX_DEPTH', path,
      `payload nests deeper than maxDepth (${maxDepth}) at ${path}; flatten the producer's payload or raise maxDepth (a retry will not help)`,
    );
  }

  function invalid(src: Uint8Array, at: number, depth: number, keyTop: number, expected: string): TransformError {
    const found = at >= src.length ? 'the end of the input' : JSON.stringify(Buffer.from(src.subarray(at, at + 12)).toString('utf8'));
    const path = pathOf(src, depth, keyTop);
    return new TransformError(
      'INVALID_JSON', path,
      `payload is not valid JSON: expected ${expected} at byte ${at} (${path}), found ${found} (a retry will not help)`,
    );
  }

  /**
   * JSONPath of the value being read at `depth`. The current key of an object level is the last key
   * pushed before the next level opened (or before `keyTop`, for the innermost level).
   */
  function pathOf(src: Uint8Array, depth: number, keyTop: number): string {
    let path = '$';
    for (let d = 1; d <= depth; d++) {
      if (levelIsObject[d] === 0) {
        path += `[${levelIndex[d]}]`;
        continue;
      }
      const index = (d < depth ? (levelKeyBase[d + 1] as number) : keyTop) - 1;
      if (index < (levelKeyBase[d] as number)) break;
      const key = decodeKey(src, keyStart[index] as number, keyEnd[index] as number);
      path += /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    }
    return path;
  }

  function createEntry(src: Uint8Array, start: number, end: number, inputHash: number): KeyEntry {
    const input = new Uint8Array(end - start);
    input.set(src.subarray(start, end)); // a copy: a view would keep the whole Kafka batch alive
    const output = rawKeyOutput(src, start, end, convertKey);
    let outputHash = FNV_OFFSET;
    for (let k = 0; k < output.length; k++) outputHash = Math.imul(outputHash ^ (output[k] as number), FNV_PRIME);
    return { input, inputHash, output, outputHash, changed: !bytesEqual(output, src, start, end), next: undefined };
  }
}

function skipWhitespace(src: Uint8Array, i: number, length: number): number {
  while (i < length) {
    const c = src[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else break;
  }
  return i;
}

function bytesEqual(a: Uint8Array, src: Uint8Array, start: number, end: number): boolean {
  if (a.length !== end - start) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== src[start + k]) return false;
  return true;
}

/** Validates the escape sequence at `i` (a backslash); returns the offset after it, or -1. */
function skipEscape(src: Uint8Array, i: number): number {
  if (i + 1 >= src.length) return -1;
  const c = src[i + 1] as number;
  // " \ / b f n r t
  if (c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) return i + 2;
  if (c !== 0x75 /* u */ || i + 6 > src.length) return -1;
  for (let k = i + 2; k < i + 6; k++) {
    const h = src[k] as number;
    if (!((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) return -1;
  }
  return i + 6;
}

/** Validates the number at `i`; returns the offset after it, or -(offset of the error) - 1. */
function skipNumber(src: Uint8Array, i: number, length: number): number {
  // Reads past the end are guarded: out-of-bounds typed array reads are slow in optimized code.
  let c = i < length ? (src[i] as number) : -1;
  if (c === 0x2d /* - */) c = ++i < length ? (src[i] as number) : -1;
  if (c === 0x30 /* 0 */) i++;
  else if (c >= 0x31 && c <= 0x39) i = skipDigits(src, i + 1, length);
  else return -i - 1;
  c = i < length ? (src[i] as number) : -1;
  if (c === 0x2e /* . */) {
    const from = i + 1;
    i = skipDigits(src, from, length);
    if (i === from) return -i - 1;
    c = i < length ? (src[i] as number) : -1;
  }
  if (c === 0x65 /* e */ || c === 0x45 /* E */) {
    c = ++i < length ? (src[i] as number) : -1;
    if (c === 0x2b /* + */ || c === 0x2d /* - */) i++;
    const from = i;
    i = skipDigits(src, from, length);
    if (i === from) return -i - 1;
  }
  return i;
}

function skipDigits(src: Uint8Array, i: number, length: number): number {
  while (i < length) {
    const c = src[i] as number;
    if (c >= 0x30 && c <= 0x39) i++;
    else break;
  }
  return i;
}
