/** Both rewriters hand out results as views of slabs of this size (a larger input gets a slab of its own size). */
export const SLAB_BYTES = 256 * 1024;

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

type Utf8Write = (this: Buffer, text: string, offset: number, length: number) => number;
/** Node's own UTF-8 writer behind Buffer#write (protobufjs writes strings with it too), where present. */
const utf8Write = (Buffer.prototype as unknown as { readonly utf8Write?: Utf8Write }).utf8Write;

/**
 * `buffer.write(text, at)` as UTF-8, returning the bytes written, without Buffer#write's argument
 * handling (the rewriters write an envelope head and a closing brace around every event; for them
 * that handling cost more than the writing). The caller has checked the room.
 */
export function writeUtf8(buffer: Buffer, text: string, at: number): number {
  if (text.length === 1) {
    const code = text.charCodeAt(0);
    if (code < 0x80) {
      buffer[at] = code;
      return 1;
    }
  }
  return utf8Write === undefined ? buffer.write(text, at) : utf8Write.call(buffer, text, at, buffer.length - at);
}
