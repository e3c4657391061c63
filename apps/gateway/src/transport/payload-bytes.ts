/**
 * Payload bytes shared by every socket of a group write, and one scratch buffer to lay a frame out in.
 *
 * What a socket gets is a short per-socket head (graphql-transport-ws: the subscription id; SSE: the
 * cursor) around the group's payload, which is the same for every subscriber of the group. Handing
 * uWS `head + payload` as a string made V8 flatten a copy of the payload and uWS convert it to UTF-8
 * again for every socket. Instead the payloads are encoded once per group write — the hub hands
 * every subscriber of a group the same array (ConnectionWriter.sendFrames), so the array's identity
 * says when to encode again — and each frame is laid out from bytes in a scratch buffer that is
 * reused at once: uWS copies what it is given before `send`/`write` returns.
 */
const SCRATCH_BYTES = 64 * 1024;
/** A scratch buffer grown past this by one big write is dropped afterwards (not kept for good). */
const SCRATCH_KEEP_BYTES = 4 * 1024 * 1024;

export interface FrameScratch {
  /** The payloads as UTF-8, encoded once per distinct array (the last one is kept). */
  bytesOf(payloads: readonly string[]): readonly Buffer[];
  /**
   * Whether this is the first socket of a group write (`payloads` not seen just before): its frame
   * is then laid out from the text, which saves encoding the payloads into buffers of their own when
   * no second socket comes (one subscriber per group: unicast). A second socket of the same array
   * gets them encoded once ({@link bytesOf}). Marks the array seen.
   */
  firstUse(payloads: readonly string[]): boolean;
  /** Clears the frame being laid out. */
  reset(): void;
  /** Appends text as UTF-8 (`ascii`: the caller knows it is ASCII, which skips the encoder). */
  text(value: string, ascii: boolean): void;
  /** Appends bytes. */
  bytes(value: Buffer): void;
  /** Appends one byte. */
  byte(value: number): void;
  /** The frame laid out so far: a view of the scratch buffer, valid until the next append or reset. */
  frame(): Buffer;
  /** Length in bytes of the frame laid out so far. */
  readonly length: number;
  /** Lets go of a buffer one unusually big frame grew (call after the frame was handed over). */
  shrink(): void;
}

export function createFrameScratch(): FrameScratch {
  let encodedFor: readonly string[] | undefined;
  let seenFor: readonly string[] | undefined;
  let encoded: Buffer[] = [];
  let scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  let length = 0;
  /** Grows the scratch buffer to hold `extra` more bytes, keeping what is laid out already. */
  const room = (extra: number): void => {
    const needed = length + extra;
    if (needed <= scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, scratch.length * 2));
    scratch.copy(grown, 0, 0, length);
    scratch = grown;
  };
  return {
    bytesOf(payloads) {
      if (payloads !== encodedFor) {
        encoded = payloads.map((p) => Buffer.from(p, 'utf8'));
        encodedFor = payloads;
      }
      return encoded;
    },
    firstUse(payloads) {
      if (payloads === encodedFor || payloads === seenFor) return false;
      seenFor = payloads;
      return true;
    },
    reset() {
      length = 0;
    },
    text(value, ascii) {
      if (ascii) {
        room(value.length);
        length += scratch.write(value, length, 'latin1');
      } else {
        // UTF-8 takes at most 3 bytes per UTF-16 unit: when that fits, the text is not measured first
        // (Buffer.byteLength is a pass over a payload as long as the write itself).
        if (length + value.length * 3 > scratch.length) room(Buffer.byteLength(value, 'utf8'));
        length += scratch.write(value, length, 'utf8');
      }
    },
    bytes(value) {
      room(value.length);
      length += value.copy(scratch, length);
    },
    byte(value) {
      room(1);
      scratch[length++] = value;
    },
    frame: () => scratch.subarray(0, length),
    get length() {
      return length;
    },
    shrink() {
      if (scratch.length > SCRATCH_KEEP_BYTES) scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
    },
  };
}
