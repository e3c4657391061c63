// The ingest fast path of src/json-bytes-rewriter.ts in WebAssembly (AssemblyScript; decision 0032).
//
// Same job, same output byte for byte: rewrite the object keys of UTF-8 JSON to snake_case in one
// validating pass, copying everything else, dropping whitespace. What it does not do itself it hands
// back to the JavaScript rewriter, which stays the reference:
//   - FALLBACK: anything that is an error (invalid JSON, too deep) or might be one (two keys of one
//     object with equal output hashes: a collision or a duplicate), a key stack or an output region
//     too small. JavaScript then rewrites the same input and throws its exact error, or succeeds.
//   - MISS: keys that must be converted and are not memoized. Their offsets are listed (up to the
//     miss list's size); JavaScript converts them, inserts them with `insertKey` and calls again.
// The memo is a bounded open-addressing table keyed by the FNV-1a hash of a key's raw bytes (escapes
// included); when its entries or its arena are full it is emptied (and refilled by the next misses).
//
// Memory is laid out by the JavaScript side (`configure`, `setBuffers`): no allocator, no runtime.

const QUOTE: u32 = 0x22;
const BACKSLASH: u32 = 0x5c;
const FNV_OFFSET: u32 = 0x811c9dc5;
const FNV_PRIME: u32 = 0x01000193;

const FALLBACK: i32 = -1;
const MISS: i32 = -2;

/**
 * Bytes per memo entry: inOff, inLen, outOff, outLen, inHash, outHash, changed, next (u32 each).
 * `next` is the number (index + 1) of the memoized key that followed this one last time: the guess
 * for the next such key, as in the JavaScript rewriter (payloads of one kind list their keys in one
 * order). A guess is only trusted when the input's bytes are the entry's, followed by a quote.
 */
const ENTRY_BYTES: u32 = 32;
/** Bytes per open key: start, end (input offsets), output hash. */
const KEY_BYTES: u32 = 12;
/** Bytes per nesting level: isObject (u8), changed (u8), padding, first key's index (u32). */
const LEVEL_BYTES: u32 = 8;
/** Past this many keys in one object with a changed key, JavaScript checks the collisions. */
const PAIRWISE_LIMIT: u32 = 64;

// Key rule: 0 snake (a key without upper-case or non-ASCII letters and without escapes is kept),
// 1 lodash (every key through the memo), 2 none (every key without escapes is kept).
let mode: u32 = 0;
let maxDepth: u32 = 0;
let slots: usize = 0;
let slotMask: u32 = 0;
let entries: usize = 0;
let maxEntries: u32 = 0;
let entryCount: u32 = 0;
let arena: usize = 0;
let arenaCap: u32 = 0;
let arenaUsed: u32 = 0;
let keys: usize = 0;
let keyCap: u32 = 0;
let levels: usize = 0;
let misses: usize = 0;
let missCap: u32 = 0;
let missCount: u32 = 0;
let capture: usize = 0;
let input: usize = 0;
let output: usize = 0;
let outputCap: u32 = 0;
let captureStart: i32 = -1;
let captureEnd: i32 = -1;
/** The number of the last memoized key seen (in this or an earlier call), 0 for none. */
let previous: u32 = 0;

export function configure(
  keyMode: u32, depth: u32,
  slotsAt: usize, slotCount: u32, entriesAt: usize, entryLimit: u32, arenaAt: usize, arenaBytes: u32,
  keysAt: usize, keyLimit: u32, levelsAt: usize, missesAt: usize, missLimit: u32, captureAt: usize,
): void {
  mode = keyMode;
  maxDepth = depth;
  slots = slotsAt;
  slotMask = slotCount - 1;
  entries = entriesAt;
  maxEntries = entryLimit;
  arena = arenaAt;
  arenaCap = arenaBytes;
  keys = keysAt;
  keyCap = keyLimit;
  levels = levelsAt;
  misses = missesAt;
  missCap = missLimit;
  capture = captureAt;
  clearMemo();
}

/** Where the input is copied and the output written (moved by JavaScript when an input is larger). */
export function setBuffers(inputAt: usize, outputAt: usize, outputBytes: u32): void {
  input = inputAt;
  output = outputAt;
  outputCap = outputBytes;
}

export function getCaptureStart(): i32 {
  return captureStart;
}

export function getCaptureEnd(): i32 {
  return captureEnd;
}

export function getMissCount(): u32 {
  return missCount;
}

export function getEntryCount(): u32 {
  return entryCount;
}

function clearMemo(): void {
  memory.fill(slots, 0, (<usize>slotMask + 1) << 2);
  entryCount = 0;
  arenaUsed = 0;
  previous = 0;
}

function hashBytes(at: usize, length: u32): u32 {
  let hash = FNV_OFFSET;
  for (let k: u32 = 0; k < length; k++) hash = (hash ^ <u32>load<u8>(at + k)) * FNV_PRIME;
  return hash;
}

function bytesEqual(a: usize, b: usize, length: u32): bool {
  // Up to 16 bytes (most keys): one comparison of two vectors, the bytes past `length` masked off
  // (both sides are followed by other regions: the reads stay in memory).
  if (length <= 16) return ((i8x16.bitmask(i8x16.eq(v128.load(a), v128.load(b))) | (0xffff << length)) & 0xffff) == 0xffff;
  let k: u32 = 0;
  for (; k + 8 <= length; k += 8) if (load<u64>(a + k) != load<u64>(b + k)) return false;
  for (; k < length; k++) if (load<u8>(a + k) != load<u8>(b + k)) return false;
  return true;
}

/** The memo entry of the raw key input[start, end), or 0. */
function find(start: u32, end: u32, hash: u32): usize {
  const length = end - start;
  let slot = hash & slotMask;
  let n = load<u32>(slots + (<usize>slot << 2));
  while (n != 0) {
    const entry = entries + <usize>(n - 1) * ENTRY_BYTES;
    if (load<u32>(entry, 16) == hash && load<u32>(entry, 4) == length && bytesEqual(arena + load<u32>(entry), input + start, length)) {
      return entry;
    }
    slot = (slot + 1) & slotMask;
    n = load<u32>(slots + (<usize>slot << 2));
  }
  return 0;
}

/**
 * Memoizes the key input[start, end) (raw, as in the JSON text) as the `outLength` bytes at `outAt`
 * (JSON string content, escaped where needed). Returns false when the key cannot be kept at all.
 */
export function insertKey(start: u32, end: u32, outAt: usize, outLength: u32): bool {
  const inLength = end - start;
  if (inLength + outLength > arenaCap || maxEntries == 0) return false;
  const hash = hashBytes(input + start, inLength);
  if (find(start, end, hash) != 0) return true; // listed twice in one call
  if (entryCount >= maxEntries || arenaUsed + inLength + outLength > arenaCap) clearMemo();
  const inOff = arenaUsed;
  memory.copy(arena + inOff, input + start, inLength);
  const outOff = inOff + inLength;
  memory.copy(arena + outOff, outAt, outLength);
  arenaUsed = outOff + outLength;
  const entry = entries + <usize>entryCount * ENTRY_BYTES;
  store<u32>(entry, inOff, 0);
  store<u32>(entry, inLength, 4);
  store<u32>(entry, outOff, 8);
  store<u32>(entry, outLength, 12);
  store<u32>(entry, hash, 16);
  store<u32>(entry, hashBytes(arena + outOff, outLength), 20);
  store<u32>(entry, inLength == outLength && bytesEqual(arena + inOff, arena + outOff, inLength) ? 0 : 1, 24);
  store<u32>(entry, 0, 28);
  entryCount++;
  let slot = hash & slotMask;
  while (load<u32>(slots + (<usize>slot << 2)) != 0) slot = (slot + 1) & slotMask;
  store<u32>(slots + (<usize>slot << 2), entryCount);
  return true;
}

/**
 * Copies `length` bytes sixteen at a time: may read and write up to fifteen bytes past both ends, which
 * the layout allows (the output region keeps slack past every write; inputs and the arena are
 * followed by other regions). memory.copy is a call into the engine: dearer for a key or a number.
 */
// @ts-ignore: decorator
@inline
function copyShort(to: usize, from: usize, length: u32): void {
  for (let k: u32 = 0; k < length; k += 16) v128.store(to + k, v128.load(from + k));
}

// @ts-ignore: decorator
@inline
function skipWhitespace(i: u32, length: u32): u32 {
  while (i < length) {
    const c = <u32>load<u8>(input + i);
    if (c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09) i++;
    else break;
  }
  return i;
}

/** The offset after the escape sequence at `i` (a backslash), or 0 when it is not one (never a valid end). */
function skipEscape(i: u32, length: u32): u32 {
  if (i + 1 >= length) return 0;
  const c = <u32>load<u8>(input + i + 1);
  if (c == 0x22 || c == 0x5c || c == 0x2f || c == 0x62 || c == 0x66 || c == 0x6e || c == 0x72 || c == 0x74) return i + 2;
  if (c != 0x75 || i + 6 > length) return 0;
  for (let k = i + 2; k < i + 6; k++) {
    const h = <u32>load<u8>(input + k);
    if (!((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) return 0;
  }
  return i + 6;
}

function skipDigits(i: u32, length: u32): u32 {
  while (i < length) {
    const c = <u32>load<u8>(input + i);
    if (c >= 0x30 && c <= 0x39) i++;
    else break;
  }
  return i;
}

/** The offset after the number at `i`, or 0 when it is not one. */
function skipNumber(i: u32, length: u32): u32 {
  let c: u32 = i < length ? <u32>load<u8>(input + i) : 0;
  if (c == 0x2d) {
    i++;
    c = i < length ? <u32>load<u8>(input + i) : 0;
  }
  if (c == 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) i = skipDigits(i + 1, length);
  else return 0;
  c = i < length ? <u32>load<u8>(input + i) : 0;
  if (c == 0x2e) {
    const from = i + 1;
    i = skipDigits(from, length);
    if (i == from) return 0;
    c = i < length ? <u32>load<u8>(input + i) : 0;
  }
  if (c == 0x65 || c == 0x45) {
    i++;
    c = i < length ? <u32>load<u8>(input + i) : 0;
    if (c == 0x2b || c == 0x2d) i++;
    const from = i;
    i = skipDigits(from, length);
    if (i == from) return 0;
  }
  return i;
}

/**
 * Copies the string content from input[i] (after the opening quote) to output[o], sixteen bytes at
 * a time: each block is stored whole (the output keeps slack past every write) and the copy moves on
 * to its first quote, backslash or control character, the end of the input counting as one. Returns
 * the input offset of the closing quote (the output offset in `copiedTo`), or 0 when the string is
 * invalid or open. Reads up to fifteen bytes past the input, which the layout allows.
 */
let copiedTo: u32 = 0;
// @ts-ignore: decorator
@inline
function copyString(i: u32, o: u32, length: u32): u32 {
  for (;;) {
    const x = v128.load(input + i);
    v128.store(output + o, x);
    let stops = specialBytes(x);
    const left = length - i;
    if (left < 16) stops |= 1 << left;
    if (stops == 0) {
      i += 16;
      o += 16;
      continue;
    }
    const at = ctz(stops);
    i += at;
    o += at;
    if (i >= length) return 0;
    const k = <u32>load<u8>(input + i);
    if (k == QUOTE) break;
    if (k < 0x20) return 0;
    const end = skipEscape(i, length); // a backslash
    if (end == 0) return 0;
    while (i < end) store<u8>(output + o++, load<u8>(input + i++));
  }
  copiedTo = o;
  return i;
}

/** Bit n set when byte n of `x` is a quote, a backslash or a control character. */
// @ts-ignore: decorator
@inline
function specialBytes(x: v128): u32 {
  const quote = i8x16.eq(x, i8x16.splat(<i8>QUOTE));
  const backslash = i8x16.eq(x, i8x16.splat(<i8>BACKSLASH));
  const control = i8x16.lt_u(x, i8x16.splat(0x20));
  return i8x16.bitmask(v128.or(v128.or(quote, backslash), control));
}

/**
 * Writes a memoized key's converted bytes at output[o, …) and marks the object at `depth` changed
 * when they differ from the input's. Returns the output offset after them, or 0 when the output
 * region could not also hold the rest of the input (input[end, length), twice) after them.
 */
// @ts-ignore: decorator
@inline
function writeEntry(entry: usize, o: u32, end: u32, length: u32, depth: u32): u32 {
  const outLength = load<u32>(entry, 12);
  if (<u64>o + outLength + (<u64>(length - end) << 1) + 16 > <u64>outputCap) return 0;
  copyShort(output + o, arena + load<u32>(entry, 8), outLength);
  if (load<u32>(entry, 24) != 0) store<u8>(levels + <usize>depth * LEVEL_BYTES, 1, 1);
  return o + outLength;
}

/** What {@link afterKey} leaves besides its result: the output offset, and whether the value is captured. */
let keyEnd: u32 = 0;
let keyCaptured = false;

/**
 * After a key written at output[keyOut, …) (its opening quote there, its content up to `keyEnd`'s
 * start, which the caller set in `o`): the closing quote, the colon, and the whitespace around it.
 * Returns the input offset of the value, or 0 when no colon follows.
 */
// @ts-ignore: decorator
@inline
function afterKey(keyOut: u32, end: u32, length: u32, captureLength: i32, depth: u32): u32 {
  let o = keyEnd;
  keyCaptured = captureLength >= 0 && depth == 1 && captureStart < 0 && o - keyOut - 1 == <u32>captureLength &&
    bytesEqual(capture, output + keyOut + 1, <u32>captureLength);
  store<u8>(output + o++, QUOTE);
  let i = skipWhitespace(end + 1, length);
  if (i >= length || <u32>load<u8>(input + i) != 0x3a) return 0;
  store<u8>(output + o++, 0x3a);
  keyEnd = o;
  return skipWhitespace(i + 1, length);
}

/** Keys [base, top) of one object, one of which changed: true when two output hashes are equal. */
function mayCollide(base: u32, top: u32): bool {
  if (top - base > PAIRWISE_LIMIT) return true;
  for (let a = base; a < top; a++) {
    const hash = load<u32>(keys + <usize>a * KEY_BYTES, 8);
    for (let b = a + 1; b < top; b++) if (load<u32>(keys + <usize>b * KEY_BYTES, 8) == hash) return true;
  }
  return false;
}

function recordMiss(start: u32, end: u32): void {
  if (missCount < missCap) {
    store<u32>(misses + <usize>missCount * 8, start);
    store<u32>(misses + <usize>missCount * 8, end, 4);
  }
  missCount++;
}

/**
 * Rewrites input[0, length) into output[0, …): the output's length, FALLBACK or MISS. `captureLength`
 * ≥ 0: the top-level key whose value's output offsets go to captureStart/captureEnd (its converted
 * bytes are at `capture`). Deliberately one loop with an explicit stack, as the JavaScript rewriter
 * (whose structure it follows); longer than the house's ~150 lines for the same reason.
 */
export function rewrite(length: u32, captureLength: i32): i32 {
  captureStart = -1;
  captureEnd = -1;
  missCount = 0;
  let capturing = false;
  let i = skipWhitespace(0, length);
  let o: u32 = 0;
  let depth: u32 = 0;
  let keyTop: u32 = 0;
  let expectKey = false;
  // A key's bytes are never written before it is known to fit: the output region holds twice the
  // input, and converted keys may grow it past that only by their own growth (checked below).
  for (;;) {
    if (expectKey) {
      expectKey = false;
      if (i >= length || <u32>load<u8>(input + i) != QUOTE) return FALLBACK;
      const start = i + 1;
      const keyOut = o;
      store<u8>(output + o++, QUOTE);
      // First the guess: one comparison instead of a copy, a hash and a lookup.
      if (previous != 0) {
        const guess = load<u32>(entries + <usize>(previous - 1) * ENTRY_BYTES, 28);
        if (guess != 0 && guess <= entryCount) {
          const entry = entries + <usize>(guess - 1) * ENTRY_BYTES;
          const inLength = load<u32>(entry, 4);
          const end = start + inLength;
          if (end < length && <u32>load<u8>(input + end) == QUOTE && bytesEqual(arena + load<u32>(entry), input + start, inLength)) {
            if (keyTop == keyCap) return FALLBACK;
            o = writeEntry(entry, o, end, length, depth);
            if (o == 0) return FALLBACK;
            const key = keys + <usize>keyTop * KEY_BYTES;
            store<u32>(key, start);
            store<u32>(key, end, 4);
            store<u32>(key, load<u32>(entry, 20), 8);
            keyTop++;
            previous = guess;
            keyEnd = o;
            i = afterKey(keyOut, end, length, captureLength, depth);
            if (i == 0) return FALLBACK;
            o = keyEnd;
            capturing = keyCaptured;
            continue; // expectKey is false: the value is read next
          }
        }
      }
      let j = start;
      let hash = FNV_OFFSET;
      let plain = true;
      let escaped = false;
      for (;;) {
        if (j >= length) return FALLBACK;
        const k = <u32>load<u8>(input + j);
        if (k == QUOTE) break;
        if (k < 0x20) return FALLBACK;
        if (k == BACKSLASH) {
          escaped = true;
          const escapeEnd = skipEscape(j, length);
          if (escapeEnd == 0) return FALLBACK;
          for (; j < escapeEnd; j++) hash = (hash ^ <u32>load<u8>(input + j)) * FNV_PRIME;
          continue;
        }
        if ((k >= 0x41 && k <= 0x5a) || k >= 0x80) plain = false;
        hash = (hash ^ k) * FNV_PRIME;
        store<u8>(output + o++, <u8>k);
        j++;
      }
      const end = j;
      if (keyTop == keyCap) return FALLBACK;
      const key = keys + <usize>keyTop * KEY_BYTES;
      store<u32>(key, start);
      store<u32>(key, end, 4);
      if (!escaped && ((plain && mode == 0) || mode == 2)) {
        store<u32>(key, hash, 8);
      } else {
        const entry = find(start, end, hash);
        if (entry == 0) {
          previous = 0; // no chain through a key the memo does not hold yet
          recordMiss(start, end);
          store<u32>(key, hash, 8);
          o = keyOut + 1; // keep scanning to list every miss of this input; the output is thrown away
        } else {
          o = writeEntry(entry, keyOut + 1, end, length, depth);
          if (o == 0) return FALLBACK;
          store<u32>(key, load<u32>(entry, 20), 8);
          const number = <u32>((entry - entries) / ENTRY_BYTES) + 1;
          if (previous != 0) store<u32>(entries + <usize>(previous - 1) * ENTRY_BYTES, number, 28);
          previous = number;
        }
      }
      keyTop++;
      keyEnd = o;
      i = afterKey(keyOut, end, length, captureLength, depth);
      if (i == 0) return FALLBACK;
      o = keyEnd;
      capturing = keyCaptured;
    }

    // A value starts at i.
    const c: u32 = i < length ? <u32>load<u8>(input + i) : 0;
    const captureThis = capturing;
    capturing = false;
    if (c == QUOTE) {
      store<u8>(output + o++, QUOTE);
      if (captureThis) captureStart = <i32>o;
      const close = copyString(i + 1, o, length);
      if (close == 0) return FALLBACK;
      o = copiedTo;
      if (captureThis) captureEnd = <i32>o;
      store<u8>(output + o++, QUOTE);
      i = close + 1;
    } else if (c == 0x7b || c == 0x5b) {
      if (depth == maxDepth) return FALLBACK;
      depth++;
      const isObject = c == 0x7b;
      const level = levels + <usize>depth * LEVEL_BYTES;
      store<u8>(level, isObject ? 1 : 0);
      store<u8>(level, 0, 1);
      store<u32>(level, keyTop, 4);
      store<u8>(output + o++, <u8>c);
      i = skipWhitespace(i + 1, length);
      const closeByte: u32 = isObject ? 0x7d : 0x5d;
      if (i < length && <u32>load<u8>(input + i) == closeByte) {
        store<u8>(output + o++, <u8>closeByte);
        i++;
        depth--;
      } else {
        expectKey = isObject;
        continue; // the container's first key or value
      }
    } else if (c == 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = skipNumber(i, length);
      if (end == 0) return FALLBACK;
      if (captureThis) captureStart = <i32>o;
      copyShort(output + o, input + i, end - i);
      o += end - i;
      i = end;
      if (captureThis) captureEnd = <i32>o;
    } else if (c == 0x74 && i + 4 <= length && load<u32>(input + i) == 0x65757274 /* true */) {
      store<u32>(output + o, 0x65757274);
      o += 4;
      i += 4;
    } else if (c == 0x66 && i + 5 <= length && load<u32>(input + i + 1) == 0x65736c61 /* alse */) {
      store<u8>(output + o, 0x66);
      store<u32>(output + o + 1, 0x65736c61);
      o += 5;
      i += 5;
    } else if (c == 0x6e && i + 4 <= length && load<u32>(input + i) == 0x6c6c756e /* null */) {
      store<u32>(output + o, 0x6c6c756e);
      o += 4;
      i += 4;
    } else {
      return FALLBACK;
    }

    // After a value: a separator, the end of its container(s), or the end of the input.
    let finished = false;
    for (;;) {
      i = skipWhitespace(i, length);
      if (depth == 0) {
        if (i != length) return FALLBACK;
        finished = true;
        break;
      }
      const next: u32 = i < length ? <u32>load<u8>(input + i) : 0;
      const level = levels + <usize>depth * LEVEL_BYTES;
      const isObject = load<u8>(level) == 1;
      if (next == 0x2c) {
        store<u8>(output + o++, 0x2c);
        i = skipWhitespace(i + 1, length);
        expectKey = isObject;
        break;
      }
      if (next == (isObject ? 0x7d : 0x5d)) {
        if (isObject) {
          const base = load<u32>(level, 4);
          if (load<u8>(level, 1) == 1 && mayCollide(base, keyTop)) return FALLBACK;
          keyTop = base;
        }
        store<u8>(output + o++, <u8>next);
        i++;
        depth--;
        continue;
      }
      return FALLBACK;
    }
    if (finished) break;
  }
  if (missCount > 0) return MISS;
  return <i32>o;
}
