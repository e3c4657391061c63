/**
 * Just enough RFC 6455 for a load client: masked text/control frames out, unmasked frames in.
 * The mask key is 0x00000000, which RFC 6455 allows servers to accept like any other (it only
 * has to be unpredictable to defeat proxy cache poisoning, which loopback benchmarks do not
 * face): masking becomes a copy, so a frame can be built once and written to many sockets.
 */

export const OPCODE_TEXT = 0x1;
export const OPCODE_CLOSE = 0x8;
export const OPCODE_PING = 0x9;
export const OPCODE_PONG = 0xa;

/** A complete masked client frame around `payload`. */
export function clientFrame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const frame = Buffer.alloc(2 + lengthBytes + 4 + length);
  frame[0] = 0x80 | opcode; // FIN + opcode
  if (lengthBytes === 0) {
    frame[1] = 0x80 | length;
  } else if (lengthBytes === 2) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  // The 4 mask bytes stay zero (Buffer.alloc), so the payload goes in as is.
  payload.copy(frame, 2 + lengthBytes + 4);
  return frame;
}

export function clientTextFrame(text: string): Buffer {
  return clientFrame(OPCODE_TEXT, Buffer.from(text, 'utf8'));
}

/**
 * Total size (header + payload) of the server frame starting at `pos`, or, when fewer than the
 * header's bytes are available, minus the header size needed to know it.
 */
export function frameSize(buf: Buffer, pos: number, available: number): number {
  if (available < 2) return -2;
  const len7 = (buf[pos + 1] as number) & 0x7f;
  const masked = ((buf[pos + 1] as number) & 0x80) !== 0 ? 4 : 0; // servers must not mask; tolerate it
  if (len7 < 126) return 2 + masked + len7;
  if (len7 === 126) {
    if (available < 4) return -4;
    return 4 + masked + buf.readUInt16BE(pos + 2);
  }
  if (available < 10) return -10;
  return 10 + masked + buf.readUInt32BE(pos + 2) * 2 ** 32 + buf.readUInt32BE(pos + 6);
}

/** Header size of the (complete) frame at `pos`. */
export function headerSize(buf: Buffer, pos: number): number {
  const len7 = (buf[pos + 1] as number) & 0x7f;
  const masked = ((buf[pos + 1] as number) & 0x80) !== 0 ? 4 : 0;
  return (len7 < 126 ? 2 : len7 === 126 ? 4 : 10) + masked;
}

/** Parses ASCII decimal digits from `pos` up to the first non-digit; NaN when there are none. */
export function parseDigits(buf: Buffer, pos: number, end: number): number {
  let value = 0;
  let i = pos;
  for (; i < end; i++) {
    const c = buf[i] as number;
    if (c < 48 || c > 57) break;
    value = value * 10 + (c - 48);
  }
  return i === pos ? Number.NaN : value;
}

const US_PER_DAY = 86_400_000_000;

/**
 * Microseconds since midnight UTC of an ISO 8601 time `YYYY-MM-DDTHH:MM:SS[.f…]Z` whose first
 * character is at `pos`; NaN when it is not one. Any number of fraction digits (up to 6 count).
 * The date part is skipped: latencies are far below a day, and the caller wraps at midnight.
 */
export function isoTimeOfDayUs(buf: Buffer, pos: number, end: number): number {
  if (pos + 19 > end || buf[pos + 10] !== 0x54 /* T */) return Number.NaN;
  const hh = digits2(buf, pos + 11);
  const mm = digits2(buf, pos + 14);
  const ss = digits2(buf, pos + 17);
  let us = ((hh * 60 + mm) * 60 + ss) * 1_000_000;
  if (buf[pos + 19] === 0x2e /* . */) {
    let scale = 100_000;
    for (let i = pos + 20; i < end && scale >= 1; i++, scale /= 10) {
      const c = buf[i] as number;
      if (c < 48 || c > 57) break;
      us += (c - 48) * scale;
    }
  }
  return us;
}

function digits2(buf: Buffer, pos: number): number {
  return ((buf[pos] as number) - 48) * 10 + ((buf[pos + 1] as number) - 48);
}

/** `received - sent` for two times of day, wrapped across midnight, in microseconds. */
export function timeOfDayDeltaUs(receivedUs: number, sentUs: number): number {
  let delta = receivedUs - sentUs;
  if (delta < -US_PER_DAY / 2) delta += US_PER_DAY;
  else if (delta > US_PER_DAY / 2) delta -= US_PER_DAY;
  return delta;
}

export { US_PER_DAY };

/**
 * The producer-side timestamp format the benchmark writes into `occurred_at`: ISO 8601 with
 * microseconds, e.g. `2025-11-29T18:59:00.123456Z` (still a valid ISO time and GraphQL String).
 */
export function isoWithMicros(wallUs: number): string {
  const ms = Math.floor(wallUs / 1_000);
  const micros = Math.floor(wallUs - ms * 1_000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}
