// The projector's byte path in WebAssembly (AssemblyScript; decision 0043): an envelope's UTF-8 text
// checked in one pass, then an operation's `data` JSON written from its payload bytes by a plan
// (src/core/operations/byte-plan.ts writes plans; src/core/operations/byte-projector.ts drives this).
//
// It is exact or it declines. `scan` accepts only a text that is one valid JSON object in the
// layout ingest writes (members, then `"payload":{…}` last; no escaped key at the top; the head
// ASCII): anything else is handed back and `decodeEnvelope` parses it (and throws its own error).
// `project` copies a value's text only where `JSON.stringify` of what `JSON.parse` gives would be
// those same bytes (a string without escapes other than those JSON.stringify writes, an integer or
// a short decimal in shortest form, true, false, null), and declines everything else (a value of
// another kind, a null where the type says non-null, an escaped key, `1.50`, `1e3`, `\u00e9`…):
// then the JavaScript projector (and graphql-js behind it) decides, as if this did not exist.
//
// Memory is laid out by the JavaScript side (`setRegions`): no allocator, no runtime. Reads go up
// to 15 bytes past the input (16-byte loads); the layout leaves room for that.

const QUOTE: u32 = 0x22;
const BACKSLASH: u32 = 0x5c;

/** Not JSON, or not ingest's layout: `decodeEnvelope` reads it. */
const DECLINE: i32 = -1;
/** A filter clause does not hold: the group gets nothing. */
const NO_MATCH: i32 = -2;
/** The output region is too small: JavaScript grows it and calls again. */
const OVERFLOW: i32 = -3;

// Plan node kinds (as projector.ts numbers them); ROOT is the Subscription's selection.
const STRING: u32 = 0;
const INT: u32 = 1;
const FLOAT: u32 = 2;
const BOOLEAN: u32 = 3;
const ID: u32 = 4;
const OBJECT: u32 = 6;
const LIST: u32 = 7;
const ROOT: u32 = 9;
/** Bytes per field of an OBJECT or ROOT node: key text (offset, length), property (offset, length), value node, flags. */
const FIELD_BYTES: u32 = 24;
/** Field flag: writes its constant (`__typename`), read from the property's offset and length. */
const CONSTANT: u32 = 1;
/** Bytes per recorded top-level member of the payload: key start, key end, value start. */
const MEMBER_BYTES: u32 = 12;

let input: usize = 0;
let length: u32 = 0;
let output: usize = 0;
let outputCap: u32 = 0;
let levels: usize = 0;
let maxDepth: u32 = 0;
let members: usize = 0;
let memberCap: u32 = 0;
let scratch: usize = 0;
let scratchEnd: usize = 0;
/** Per input offset of a `{` or `[`: the offset after its closing bracket (u32 each; written by `scan`). */
let jumps: usize = 0;
/** Per nesting level while scanning: the offset of the container's opening bracket (u32 each). */
let opens: usize = 0;

// What `scan` found.
let headEnd: u32 = 0;
/** The offset of the envelope's closing brace. */
let lastClose: u32 = 0;
let payloadAt: u32 = 0;
let memberCount: u32 = 0;
/** A top-level key of the payload has an escape, or there were more members than recorded. */
let membersUnusable: bool = false;

// While projecting: the output offset, the scratch in use, and why it stopped.
let o: u32 = 0;
let scratchTop: usize = 0;
let failure: i32 = 0;

export function setRegions(
  levelsAt: usize, opensAt: usize, depth: u32, membersAt: usize, memberLimit: u32, scratchAt: usize, scratchBytes: u32,
  inputAt: usize, jumpsAt: usize, outputAt: usize, outputBytes: u32,
): void {
  levels = levelsAt;
  opens = opensAt;
  jumps = jumpsAt;
  maxDepth = depth;
  members = membersAt;
  memberCap = memberLimit;
  scratch = scratchAt;
  scratchEnd = scratchAt + scratchBytes;
  input = inputAt;
  output = outputAt;
  outputCap = outputBytes;
}

/** Bytes before the separator of the payload member: the head's JSON is those and a `}`. */
export function getHeadEnd(): u32 {
  return headEnd;
}

// @ts-ignore: decorator
@inline
function byteAt(i: u32): u32 {
  return i < length ? <u32>load<u8>(input + i) : 0;
}

// @ts-ignore: decorator
@inline
function skipWhitespace(i: u32): u32 {
  while (i < length) {
    const c = <u32>load<u8>(input + i);
    if (c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09) i++;
    else break;
  }
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

/** The offset of the first quote, backslash or control byte at or after `i` (`length` when none). */
// @ts-ignore: decorator
@inline
function nextSpecial(i: u32): u32 {
  for (;;) {
    if (i >= length) return length;
    let stops = specialBytes(v128.load(input + i));
    const left = length - i;
    if (left < 16) stops |= 1 << left;
    if (stops != 0) return i + ctz(stops);
    i += 16;
  }
  return 0; // not reached: the loop above returns
}

/** The offset after the escape sequence at `i` (a backslash), or 0 when it is not one. */
function skipEscape(i: u32): u32 {
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

/** The offset of the closing quote of the string whose content starts at `i`, or 0 when it is invalid or open. */
function checkString(i: u32): u32 {
  for (;;) {
    i = nextSpecial(i);
    if (i >= length) return 0;
    const c = <u32>load<u8>(input + i);
    if (c == QUOTE) return i;
    if (c < 0x20) return 0;
    i = skipEscape(i);
    if (i == 0) return 0;
  }
  return 0; // not reached: the loop above returns
}

function skipDigits(i: u32): u32 {
  while (i < length) {
    const c = <u32>load<u8>(input + i);
    if (c >= 0x30 && c <= 0x39) i++;
    else break;
  }
  return i;
}

/** The offset after the number at `i`, or 0 when it is not one. */
function checkNumber(i: u32): u32 {
  let c = byteAt(i);
  if (c == 0x2d) c = byteAt(++i);
  if (c == 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) i = skipDigits(i + 1);
  else return 0;
  c = byteAt(i);
  if (c == 0x2e) {
    const from = i + 1;
    i = skipDigits(from);
    if (i == from) return 0;
    c = byteAt(i);
  }
  if (c == 0x65 || c == 0x45) {
    c = byteAt(++i);
    if (c == 0x2b || c == 0x2d) i++;
    const from = i;
    i = skipDigits(from);
    if (i == from) return 0;
  }
  return i;
}

/** Whether the `length` bytes at `a` and `b` are equal. */
function bytesEqual(a: usize, b: usize, n: u32): bool {
  let k: u32 = 0;
  for (; k + 8 <= n; k += 8) if (load<u64>(a + k) != load<u64>(b + k)) return false;
  for (; k < n; k++) if (load<u8>(a + k) != load<u8>(b + k)) return false;
  return true;
}

/** `payload` as a little-endian u32 (`payl`) and the rest (`oad`). */
const PAYL: u32 = 0x6c796170;

/**
 * Checks the whole text (the envelope's UTF-8 bytes at the input region) as JSON and finds its
 * payload. 1 when it is one valid object in ingest's layout (then `getHeadEnd`, and `project` may
 * run); DECLINE otherwise (invalid, too deep, another layout: `decodeEnvelope` decides).
 */
export function scan(textLength: u32): i32 {
  length = textLength;
  headEnd = 0;
  lastClose = 0;
  payloadAt = 0;
  memberCount = 0;
  membersUnusable = false;
  let payloads: u32 = 0;
  let payloadEnd: u32 = 0;
  let lastComma: u32 = 0;
  let i = skipWhitespace(0);
  if (byteAt(i) != 0x7b) return DECLINE;
  let depth: u32 = 0;
  let expectKey = false;
  // The value at `i` is the top-level object; then every value in turn. Depth 1 is the envelope, 2 its members' values.
  for (;;) {
    if (expectKey) {
      expectKey = false;
      if (byteAt(i) != QUOTE) return DECLINE;
      const start = i + 1;
      const close = checkString(start);
      if (close == 0) return DECLINE;
      const escaped = nextSpecial(start) != close;
      i = skipWhitespace(close + 1);
      if (byteAt(i) != 0x3a) return DECLINE;
      i = skipWhitespace(i + 1);
      if (depth == 1) {
        // An escaped key at the top might spell "payload": only decodeEnvelope may read such a text.
        if (escaped) return DECLINE;
        if (close - start == 7 && load<u32>(input + start) == PAYL && load<u16>(input + start + 4) == 0x616f && load<u8>(input + start + 6) == 0x64) {
          payloads++;
          if (lastComma == 0 || byteAt(i) != 0x7b) return DECLINE; // the payload first, or not an object
          headEnd = lastComma;
          payloadAt = i;
        }
      } else if (depth == 2 && payloadAt != 0 && payloadEnd == 0 && load<u8>(levels + 2) == 1) {
        // A member of the payload object (its top level): recorded for the filters.
        if (escaped || memberCount == memberCap) membersUnusable = true;
        else {
          const member = members + <usize>memberCount * MEMBER_BYTES;
          store<u32>(member, start);
          store<u32>(member, close, 4);
          store<u32>(member, i, 8);
          memberCount++;
        }
      }
    }

    // A value starts at i.
    const c = byteAt(i);
    if (c == QUOTE) {
      const close = checkString(i + 1);
      if (close == 0) return DECLINE;
      i = close + 1;
    } else if (c == 0x7b || c == 0x5b) {
      if (depth == maxDepth) return DECLINE;
      depth++;
      const isObject = c == 0x7b;
      store<u8>(levels + depth, isObject ? 1 : 0);
      const open = i;
      store<u32>(opens + <usize>depth * 4, open);
      i = skipWhitespace(i + 1);
      if (byteAt(i) == (isObject ? 0x7d : 0x5d)) {
        i++;
        store<u32>(jumps + <usize>open * 4, i);
        depth--;
        if (depth == 1 && payloadAt != 0 && payloadEnd == 0) payloadEnd = i;
      } else {
        expectKey = isObject;
        continue;
      }
    } else if (c == 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = checkNumber(i);
      if (i == 0) return DECLINE;
    } else if (c == 0x74 && i + 4 <= length && load<u32>(input + i) == 0x65757274 /* true */) {
      i += 4;
    } else if (c == 0x66 && i + 5 <= length && load<u32>(input + i + 1) == 0x65736c61 /* alse */) {
      i += 5;
    } else if (c == 0x6e && i + 4 <= length && load<u32>(input + i) == 0x6c6c756e /* null */) {
      i += 4;
    } else {
      return DECLINE;
    }

    // After a value: a separator, the end of its container(s), or the end of the text.
    for (;;) {
      i = skipWhitespace(i);
      if (depth == 0) {
        if (i != length) return DECLINE;
        // The payload member last: its value closes right before the envelope does.
        if (payloads != 1 || skipWhitespace(payloadEnd) != lastClose) return DECLINE;
        return 1;
      }
      const next = byteAt(i);
      const isObject = load<u8>(levels + depth) == 1;
      if (next == 0x2c) {
        if (depth == 1) lastComma = i;
        i = skipWhitespace(i + 1);
        expectKey = isObject;
        break;
      }
      if (next == (isObject ? 0x7d : 0x5d)) {
        if (depth == 1) lastClose = i;
        i++;
        store<u32>(jumps + <usize>load<u32>(opens + <usize>depth * 4) * 4, i);
        depth--;
        if (depth == 1 && payloadAt != 0 && payloadEnd == 0) payloadEnd = i;
        continue;
      }
      return DECLINE;
    }
  }
  return DECLINE; // not reached: the loop above returns
}
/** Whether a byte ≥ 0x80 is in the head (then its byte offsets are not the text's character offsets). */
export function headIsAscii(): bool {
  let k: u32 = 0;
  for (; k + 16 <= headEnd; k += 16) if (i8x16.bitmask(v128.load(input + k)) != 0) return false;
  for (; k < headEnd; k++) if (load<u8>(input + k) >= 0x80) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Projecting. The input was checked by `scan`: the walks below trust its structure.

/** The offset after the (checked) value at `i`. */
function skipValue(i: u32): u32 {
  const c = <u32>load<u8>(input + i);
  if (c == QUOTE) return skipString(i + 1) + 1;
  if (c == 0x7b || c == 0x5b) return load<u32>(jumps + <usize>i * 4);
  if (c == 0x74 || c == 0x6e) return i + 4;
  if (c == 0x66) return i + 5;
  // A number.
  for (;;) {
    const k = <u32>load<u8>(input + i);
    if ((k >= 0x30 && k <= 0x39) || k == 0x2d || k == 0x2b || k == 0x2e || k == 0x65 || k == 0x45) i++;
    else return i;
  }
  return 0; // not reached: the loop above returns
}

/** The offset of the closing quote of the (checked) string whose content starts at `i`. */
function skipString(i: u32): u32 {
  for (;;) {
    i = nextSpecial(i);
    if (<u32>load<u8>(input + i) == QUOTE) return i;
    i += <u32>load<u8>(input + i + 1) == 0x75 ? 6 : 2;
  }
  return 0; // not reached: the loop above returns
}

// @ts-ignore: decorator
@inline
function fail(code: i32): u32 {
  failure = code;
  return 0;
}

/** Writes `n` bytes from `from`; false (and OVERFLOW) when the output region cannot hold them. */
// @ts-ignore: decorator
@inline
function write(from: usize, n: u32): bool {
  if (o + n > outputCap) {
    failure = OVERFLOW;
    return false;
  }
  // Sixteen bytes at a time, the last block stored whole: the output keeps 64 bytes of slack past
  // its end, and a call into the engine (memory.copy) costs more than these short copies.
  for (let k: u32 = 0; k < n; k += 16) v128.store(output + o + k, v128.load(from + k));
  o += n;
  return true;
}

// @ts-ignore: decorator
@inline
function writeByte(c: u32): bool {
  if (o >= outputCap) {
    failure = OVERFLOW;
    return false;
  }
  store<u8>(output + o++, <u8>c);
  return true;
}

/** Writes `null`; false (and OVERFLOW) when the output region cannot hold it. */
// @ts-ignore: decorator
@inline
function writeNull(): bool {
  if (o + 4 > outputCap) {
    failure = OVERFLOW;
    return false;
  }
  store<u32>(output + o, 0x6c6c756e /* null */);
  o += 4;
  return true;
}

/**
 * The offset of the closing quote of the string whose content starts at `i` when JSON.stringify
 * would write its value as these same bytes: every escape is one it writes (`\"`, `\\`, `\b`, `\f`,
 * `\n`, `\r`, `\t`, and `\u00xx` in lower-case hex for the other control characters); 0 otherwise.
 */
function canonicalString(i: u32): u32 {
  for (;;) {
    i = nextSpecial(i);
    const c = <u32>load<u8>(input + i);
    if (c == QUOTE) return i;
    const e = <u32>load<u8>(input + i + 1);
    if (e == 0x22 || e == 0x5c || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) {
      i += 2;
      continue;
    }
    if (e != 0x75 || load<u16>(input + i + 2) != 0x3030) return 0; // `\/`, or `\u` beyond U+00FF
    const h = <u32>load<u8>(input + i + 4);
    const l = <u32>load<u8>(input + i + 5);
    if (h != 0x30 && h != 0x31) return 0;
    const low: i32 = l >= 0x30 && l <= 0x39 ? <i32>l - 0x30 : l >= 0x61 && l <= 0x66 ? <i32>l - 0x57 : -1;
    if (low < 0) return 0;
    const code = (h == 0x31 ? 16 : 0) + low;
    if (code == 8 || code == 9 || code == 10 || code == 12 || code == 13) return 0; // written `\b` … `\r`
    i += 6;
  }
  return 0; // not reached: the loop above returns
}

/**
 * The end of the number at `i` when it is written as JavaScript prints it (`String(Number(text))`):
 * an integer of at most 15 digits, or (`decimals`) a decimal without exponent, of at most 15
 * significant digits, no trailing zero and not below 1e-6; never `-0`. 0 otherwise. An Int also
 * needs int32 range (`int32`).
 */
function canonicalNumber(i: u32, decimals: bool, int32: bool): u32 {
  const start = i;
  let negative = false;
  if (<u32>load<u8>(input + i) == 0x2d) {
    negative = true;
    i++;
  }
  const intStart = i;
  i = skipDigits(i);
  const intDigits = i - intStart;
  const leadingZero = <u32>load<u8>(input + intStart) == 0x30;
  let c = byteAt(i);
  if (c == 0x65 || c == 0x45) return 0;
  if (c != 0x2e) {
    if (intDigits > 15 || (negative && leadingZero)) return 0; // `-0` prints `0`
    if (int32) {
      if (intDigits > 10) return 0;
      let value: i64 = 0;
      for (let k = intStart; k < i; k++) value = value * 10 + <i64>(<u32>load<u8>(input + k) - 0x30);
      if (negative ? value > 2147483648 : value > 2147483647) return 0;
    }
    return i;
  }
  if (!decimals) return 0;
  const fracStart = i + 1;
  i = skipDigits(fracStart);
  c = byteAt(i);
  if (c == 0x65 || c == 0x45) return 0;
  if (<u32>load<u8>(input + i - 1) == 0x30) return 0; // `1.50` prints `1.5`
  let significant = leadingZero ? 0 : intDigits;
  if (leadingZero) {
    // 0.000123: the zeros after the point are not significant, and more than five print as 1.23e-7.
    let k = fracStart;
    while (k < i && <u32>load<u8>(input + k) == 0x30) k++;
    if (k - fracStart > 5) return 0;
    significant = i - k;
  } else significant += i - fracStart;
  if (significant > 15) return 0;
  if (start == i) return 0;
  return i;
}

/** Writes the value at `i` by `node`; returns the input offset after it, or 0 (see `failure`). */
function writeValue(plan: usize, node: usize, i: u32): u32 {
  const head = load<u32>(node);
  const kind = head & 0xff;
  const c = <u32>load<u8>(input + i);
  if (c == 0x6e) {
    // null
    if ((head & 0x100) != 0) return fail(DECLINE); // non-null: graphql-js reports it
    return writeNull() ? i + 4 : 0;
  }
  if (kind == STRING || kind == ID) {
    if (c != QUOTE) return fail(DECLINE); // String coerces, ID prints numbers as strings: graphql-js decides
    const close = canonicalString(i + 1);
    if (close == 0) return fail(DECLINE);
    return write(input + i, close + 1 - i) ? close + 1 : 0;
  }
  if (kind == INT || kind == FLOAT) {
    if (c != 0x2d && (c < 0x30 || c > 0x39)) return fail(DECLINE);
    const end = canonicalNumber(i, kind == FLOAT, kind == INT);
    if (end == 0) return fail(DECLINE);
    return write(input + i, end - i) ? end : 0;
  }
  if (kind == BOOLEAN) {
    if (c == 0x74) return write(input + i, 4) ? i + 4 : 0;
    if (c == 0x66) return write(input + i, 5) ? i + 5 : 0;
    return fail(DECLINE);
  }
  if (kind == OBJECT) {
    if (c != 0x7b) return fail(DECLINE);
    return writeObject(plan, node, i);
  }
  if (kind == LIST) {
    if (c != 0x5b) return fail(DECLINE);
    const item = plan + load<u32>(node, 4);
    if (!writeByte(0x5b)) return 0;
    i = skipWhitespace(i + 1);
    if (<u32>load<u8>(input + i) == 0x5d) return writeByte(0x5d) ? i + 1 : 0;
    for (;;) {
      i = writeValue(plan, item, i);
      if (i == 0) return 0;
      i = skipWhitespace(i);
      const next = <u32>load<u8>(input + i);
      if (!writeByte(next)) return 0; // `,` or `]`, as the output has them
      i = skipWhitespace(i + 1);
      if (next == 0x5d) return i;
    }
  }
  return fail(DECLINE);
}

/** A key's hash as byte-plan.ts computes it: its length and three of its bytes. */
// @ts-ignore: decorator
@inline
function keyHash(at: usize, n: u32): u32 {
  let h = n * 0x9e3779b1;
  if (n > 0) {
    h ^= <u32>load<u8>(at) * 0x85ebca6b;
    h ^= <u32>load<u8>(at + n - 1) * 0xc2b2ae35;
    h ^= <u32>load<u8>(at + (n >> 1)) * 0x27d4eb2f;
  }
  return h ^ (h >> 15);
}

/**
 * Writes the object at `i` by `node`: its members are walked once, each key looked up in the node's
 * table (the last of equal keys wins, as `JSON.parse` has it), then the node's fields are written in
 * their order. Returns the input offset after the object, or 0.
 */
function writeObject(plan: usize, node: usize, i: u32): u32 {
  const count = load<u32>(node, 4);
  const mask = load<u32>(node, 8);
  const table = plan + load<u32>(node, 12);
  const slotCount = load<u32>(node, 16);
  const fields = node + 20;
  const slots = scratchTop;
  if (slots + <usize>slotCount * 4 > scratchEnd) return fail(DECLINE);
  scratchTop += <usize>slotCount * 4;
  for (let k: u32 = 0; k < slotCount; k++) store<u32>(slots + <usize>k * 4, 0);
  i = skipWhitespace(i + 1);
  if (<u32>load<u8>(input + i) == 0x7d) i++;
  else {
    for (;;) {
      const start = i + 1;
      const close = nextSpecial(start);
      if (<u32>load<u8>(input + close) != QUOTE) {
        scratchTop = slots;
        return fail(DECLINE); // an escaped key: JSON.parse decodes it, this does not
      }
      const n = close - start;
      let h = keyHash(input + start, n) & mask;
      i = skipWhitespace(skipWhitespace(close + 1) + 1);
      for (;;) {
        const entry = load<u32>(table + <usize>h * 4);
        if (entry == 0) break;
        // The first field that reads this property: its slot is every such field's.
        const field = fields + <usize>(entry - 1) * FIELD_BYTES;
        if (load<u32>(field, 12) == n && bytesEqual(plan + load<u32>(field, 8), input + start, n)) {
          store<u32>(slots + <usize>(load<u32>(field, 20) >> 8) * 4, i);
          break;
        }
        h = (h + 1) & mask;
      }
      i = skipWhitespace(skipValue(i));
      if (<u32>load<u8>(input + i) == 0x7d) {
        i++;
        break;
      }
      i = skipWhitespace(i + 1);
    }
  }
  const end = i;
  if (!writeByte(0x7b)) return 0;
  for (let f: u32 = 0; f < count; f++) {
    const field = fields + <usize>f * FIELD_BYTES;
    if (!write(plan + load<u32>(field), load<u32>(field, 4))) return 0;
    if ((load<u32>(field, 20) & CONSTANT) != 0) {
      if (!write(plan + load<u32>(field, 8), load<u32>(field, 12))) return 0;
      continue;
    }
    const value = plan + load<u32>(field, 16);
    const at = load<u32>(slots + <usize>(load<u32>(field, 20) >> 8) * 4);
    if (at == 0) {
      // Missing: the default resolver gives undefined, which graphql-js completes as null.
      if ((load<u32>(value) & 0x100) != 0) return fail(DECLINE);
      if (!writeNull()) return 0;
      continue;
    }
    if (writeValue(plan, value, at) == 0) return 0;
  }
  scratchTop = slots;
  return writeByte(0x7d) ? end : 0;
}

/**
 * Whether the payload's member `name` holds, as text, `expected` (what `matchesFilter` compares:
 * a string itself, a number its decimal text, true and false their names; null or missing never).
 * DECLINE where this cannot tell (an escaped string, a number not in shortest form, an object).
 */
function clauseHolds(name: usize, nameLength: u32, expected: usize, expectedLength: u32): i32 {
  let at: u32 = 0;
  for (let m: u32 = 0; m < memberCount; m++) {
    const member = members + <usize>m * MEMBER_BYTES;
    const start = load<u32>(member);
    if (load<u32>(member, 4) - start == nameLength && bytesEqual(input + start, name, nameLength)) at = load<u32>(member, 8);
  }
  if (at == 0) return NO_MATCH;
  const c = <u32>load<u8>(input + at);
  let from = at;
  let end: u32 = 0;
  if (c == QUOTE) {
    from = at + 1;
    end = nextSpecial(from);
    if (<u32>load<u8>(input + end) != QUOTE) return DECLINE;
  } else if (c == 0x6e) return NO_MATCH;
  else if (c == 0x74) end = at + 4;
  else if (c == 0x66) end = at + 5;
  else if (c == 0x2d || (c >= 0x30 && c <= 0x39)) {
    end = canonicalNumber(at, false, false);
    if (end == 0) return DECLINE;
  } else return DECLINE;
  return end - from == expectedLength && bytesEqual(input + from, expected, expectedLength) ? 1 : NO_MATCH;
}

/**
 * Writes the ROOT node's lead (`{"data":`) and the `data` JSON of the scanned payload by the plan at `plan` after
 * checking `clauseCount` filter clauses at `clauses` (name offset, name length, expected offset,
 * expected length: absolute, u32 each). Returns the bytes written at the output region, NO_MATCH,
 * DECLINE (JavaScript renders this one) or OVERFLOW.
 */
export function project(plan: usize, clauses: usize, clauseCount: u32): i32 {
  if (clauseCount > 0) {
    if (membersUnusable) return DECLINE;
    for (let k: u32 = 0; k < clauseCount; k++) {
      const clause = clauses + <usize>k * 16;
      const holds = clauseHolds(load<u32>(clause), load<u32>(clause, 4), load<u32>(clause, 8), load<u32>(clause, 12));
      if (holds != 1) return holds;
    }
  }
  o = 0;
  failure = 0;
  scratchTop = scratch;
  const count = load<u32>(plan, 4);
  if (!write(plan + load<u32>(plan, 8), load<u32>(plan, 12)) || !writeByte(0x7b)) return failure;
  for (let f: u32 = 0; f < count; f++) {
    const field = plan + 16 + <usize>f * FIELD_BYTES;
    if (!write(plan + load<u32>(field), load<u32>(field, 4))) return failure;
    if ((load<u32>(field, 20) & CONSTANT) != 0) {
      if (!write(plan + load<u32>(field, 8), load<u32>(field, 12))) return failure;
    } else if (writeValue(plan, plan + load<u32>(field, 16), payloadAt) == 0) return failure;
  }
  if (!writeByte(0x7d)) return failure;
  return <i32>o;
}
