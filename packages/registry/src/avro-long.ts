/**
 * The exact `long` reader and the decimal text of Avro's logical types, without avsc: the byte
 * decoders (avro-bytes.ts, also used for Protobuf floats) need them, and the package's index exports
 * them, while avsc itself is loaded only with the first Avro schema (codecs.ts, decision 0031).
 */

/** What our `long` decodes to: a number while it is exact (|n| ≤ 2^53 − 1), its decimal text beyond. */
export type AvroLong = number | string;

export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
export const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** avsc's reading position (its `Tap`): the buffer and the offset, which a read advances. */
export interface Tap {
  readonly buf: Buffer;
  pos: number;
}

/**
 * An Avro `long` (zig-zag varint) read exactly: in a double while it has at most 49 bits (7 bytes),
 * else as a BigInt. Used by the long-based logical types, whose underlying type is avsc's `long`
 * (which throws past 2^53: timestamp-nanos of today are ~2^60). A truncated value leaves `pos`
 * past the end, which avsc reports as "truncated buffer".
 */
export function readExactLong(tap: Tap): AvroLong {
  const buf = tap.buf;
  let pos = tap.pos;
  let n = 0;
  let scale = 1;
  let byte: number;
  let bytes = 0;
  // Deliberately imperative: one call per long-based logical value.
  do {
    byte = buf[pos++] ?? 0;
    n += (byte & 0x7f) * scale;
    scale *= 128;
    bytes++;
  } while ((byte & 0x80) !== 0 && bytes < 7);
  if ((byte & 0x80) === 0) {
    tap.pos = pos > buf.length ? buf.length + 1 : pos;
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }
  let big = BigInt(n);
  let shift = 49n;
  do {
    byte = buf[pos++] ?? 0;
    big |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
  } while ((byte & 0x80) !== 0 && shift < 70n);
  tap.pos = pos > buf.length ? buf.length + 1 : pos;
  const value = (big >> 1n) ^ -(big & 1n);
  return value <= MAX_SAFE && value >= MIN_SAFE ? Number(value) : value.toString();
}

/** Big-endian two's complement `bytes` and a scale → decimal text. */
export function decimalText(bytes: Buffer, scale: number): string {
  if (bytes.length === 0) return '0';
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  if (((bytes[0] as number) & 0x80) !== 0) n -= 1n << BigInt(bytes.length * 8);
  const negative = n < 0n;
  let digits = (negative ? -n : n).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return negative ? `-${digits}` : digits;
}
