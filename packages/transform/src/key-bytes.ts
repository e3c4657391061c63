/** A key style's rule on decoded keys (see key-style.ts). */
export type RawKeyConverter = (key: string) => string;

/** The key's value as a string (escapes decoded, UTF-8 decoded). */
export function decodeKey(src: Uint8Array, start: number, end: number): string {
  const raw = Buffer.from(src.buffer, src.byteOffset + start, end - start).toString('utf8');
  return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/**
 * What replaces the raw key src[start, end) (as written in JSON, escapes included): the converted
 * key as JSON string content, re-escaped where the raw key had escapes, without the quotes.
 */
export function rawKeyOutput(src: Uint8Array, start: number, end: number, convert: RawKeyConverter): Buffer {
  const key = decodeKey(src, start, end);
  const converted = convert(key);
  let escaped = false;
  for (let k = start; k < end && !escaped; k++) escaped = src[k] === 0x5c;
  return Buffer.from(escaped ? JSON.stringify(converted).slice(1, -1) : converted, 'utf8');
}
