/**
 * The Confluent wire format: byte 0 is the magic byte 0, bytes 1–4 the schema id (big-endian,
 * unsigned here: registries hand out positive ids), then for Protobuf a list of message indexes
 * (zig-zag varints: a count, then that many indexes; a single 0 byte stands for [0]), then the body.
 * https://docs.confluent.io/platform/current/schema-registry/fundamentals/serdes-develop/index.html#wire-format
 */
export const WIRE_MAGIC_BYTE = 0;
export const WIRE_HEADER_BYTES = 5;

/** Where a value's schema id and body are, or why it is not in the wire format. */
export type WireHeader =
  | { readonly ok: true; readonly id: number; readonly bodyOffset: number }
  | { readonly ok: false; readonly code: 'NOT_WIRE_FORMAT'; readonly message: string };

/** Reads the magic byte and the schema id of `value` (a record's value or, `what`, its key): 5 bytes, no allocation. */
export function readWireHeader(value: Buffer, what: 'value' | 'key' = 'value'): WireHeader {
  if (value.length < WIRE_HEADER_BYTES) {
    return { ok: false, code: 'NOT_WIRE_FORMAT', message: `${what} is ${value.length} bytes, shorter than the wire format's 5-byte header (magic byte 0 and a 4-byte schema id)` };
  }
  if (value[0] !== WIRE_MAGIC_BYTE) {
    const hint = value[0] === 0x7b /* { */ ? ' (it starts with "{": JSON written to a topic declared with a registry format?)' : '';
    return { ok: false, code: 'NOT_WIRE_FORMAT', message: `${what} starts with byte ${value[0]}, not the wire format's magic byte 0${hint}` };
  }
  return { ok: true, id: value.readUInt32BE(1), bodyOffset: WIRE_HEADER_BYTES };
}

/**
 * The Protobuf message-index list after the header: which message of the schema file the body is
 * (`[0]` the first top-level message, `[1, 0]` the first nested message of the second). Returns
 * the indexes and where the body starts, or undefined when the list is cut short or absurd.
 */
export function readMessageIndexes(value: Buffer, offset: number): { readonly indexes: readonly number[]; readonly bodyOffset: number } | undefined {
  const count = readZigZagVarint(value, offset);
  if (count === undefined || count.value < 0 || count.value > MAX_MESSAGE_INDEXES) return undefined;
  if (count.value === 0) return { indexes: [0], bodyOffset: count.next };
  const indexes: number[] = [];
  let at = count.next;
  for (let i = 0; i < count.value; i++) {
    const index = readZigZagVarint(value, at);
    if (index === undefined || index.value < 0) return undefined;
    indexes.push(index.value);
    at = index.next;
  }
  return { indexes, bodyOffset: at };
}

/** Deeper nesting than any real .proto file has; a longer list is garbage, not a schema path. */
const MAX_MESSAGE_INDEXES = 64;

function readZigZagVarint(value: Buffer, offset: number): { value: number; next: number } | undefined {
  let result = 0;
  let shift = 0;
  for (let at = offset; at < value.length && shift < 35; at++, shift += 7) {
    const byte = value[at] as number;
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return { value: (result >>> 1) ^ -(result & 1), next: at + 1 };
  }
  return undefined;
}
