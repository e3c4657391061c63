import { isUtf8 } from 'node:buffer';
import type avsc from 'avsc';
import { readExactLong, type AvroLong } from './avro-long.js';
import type { FieldNamer } from './wire-decoder.js';

/**
 * Avro binary → JSON bytes in one pass, with no intermediate objects: the ingest hot path. Each
 * Avro type of the writer's schema is compiled once into a function that reads its value from the
 * body and appends its JSON to a reused output buffer; strings are copied as UTF-8 bytes (escaped
 * only when they hold a quote, a backslash or a control character), field names are pre-encoded.
 * The mapping is the one of docs/schema.md, the same as avro-json.ts's writers (its tests run both).
 */

/** Where reading is: the body and the offset (the same shape as avsc's Tap, so its readers can share it). */
export interface Reader {
  buf: Buffer;
  pos: number;
}

/** The output: a buffer reused across messages (grown when needed) and the bytes used so far. */
export interface Out {
  buf: Buffer;
  pos: number;
}

export type ByteWriter = (reader: Reader, out: Out) => void;

export class TruncatedError extends Error {
  constructor() {
    super('truncated buffer');
  }
}

function ensure(out: Out, bytes: number): void {
  if (out.pos + bytes <= out.buf.length) return;
  const grown = Buffer.allocUnsafe(Math.max(out.buf.length * 2, out.pos + bytes));
  out.buf.copy(grown, 0, 0, out.pos);
  out.buf = grown;
}

/** Appends ASCII text (numbers, literals, base64). */
export function writeAscii(out: Out, text: string): void {
  ensure(out, text.length);
  out.pos += out.buf.write(text, out.pos, 'latin1');
}

/** Appends any text as UTF-8. */
export function writeText(out: Out, text: string): void {
  ensure(out, text.length * 3);
  out.pos += out.buf.write(text, out.pos, 'utf8');
}

/** Below this, a byte loop beats Buffer#copy's native call (field-name prefixes, most strings). */
const LOOP_COPY_BYTES = 64;

function copyBytes(src: Buffer, start: number, end: number, out: Out): void {
  const length = end - start;
  ensure(out, length);
  const dst = out.buf;
  let at = out.pos;
  if (length < LOOP_COPY_BYTES) {
    // Deliberately imperative: the copies of field names and short strings are most of this path's work.
    for (let i = start; i < end; i++) dst[at++] = src[i] as number;
  } else {
    src.copy(dst, at, start, end);
    at += length;
  }
  out.pos = at;
}

function writeBytes(out: Out, bytes: Buffer): void {
  copyBytes(bytes, 0, bytes.length, out);
}

/** An Avro int/long as a number (exact within 2^53; a string beyond, for longs). */
function readLong(reader: Reader): AvroLong {
  const value = readExactLong(reader);
  if (reader.pos > reader.buf.length) throw new TruncatedError();
  return value;
}

function readInt(reader: Reader): number {
  return readLong(reader) as number;
}

/** A length-prefixed byte run (string, bytes): [start, end) in the body. */
function readSpan(reader: Reader): [number, number] {
  const length = readInt(reader);
  const start = reader.pos;
  const end = start + length;
  if (length < 0 || end > reader.buf.length) throw new TruncatedError();
  reader.pos = end;
  return [start, end];
}

function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
}

/**
 * The shortest decimal that reads back as the same 32-bit float (`3.9`, not `3.9000000953674316`;
 * `Float.MAX_VALUE` as `3.4028235e+38`, as Java's `Float.toString`): the first of 1 to 9 significant
 * digits that `Math.fround` rounds back to it (9 always do). Integers below 2^24 are exact as they are.
 */
export function floatText(value: number): string {
  if (!Number.isFinite(value)) return numberText(value);
  if (Number.isInteger(value) && Math.abs(value) < 16_777_216) return String(value);
  for (let digits = 1; digits <= 9; digits++) {
    const text = value.toPrecision(digits);
    if (Math.fround(Number(text)) === value) return String(Number(text));
  }
  return String(value);
}

/** A string: its UTF-8 bytes copied between quotes, or escaped by JSON.stringify when it needs it. */
function writeString(reader: Reader, out: Out): void {
  const [start, end] = readSpan(reader);
  const buf = reader.buf;
  let plain = true;
  let ascii = true;
  // Deliberately imperative: once per byte of every string.
  for (let i = start; i < end; i++) {
    const c = buf[i] as number;
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      plain = false;
      break;
    }
    if (c >= 0x80) ascii = false;
  }
  if (plain && !ascii && !isUtf8(buf.subarray(start, end))) throw new Error('a string is not valid UTF-8');
  if (!plain) {
    writeText(out, JSON.stringify(buf.toString('utf8', start, end)));
    return;
  }
  ensure(out, end - start + 2);
  out.buf[out.pos++] = 0x22;
  copyBytes(buf, start, end, out);
  out.buf[out.pos++] = 0x22;
}

/** Reads a value of a primitive `type` as avsc would (for logical types, which convert it). */
function primitiveReader(type: avsc.Type): (reader: Reader) => unknown {
  switch (type.typeName) {
    case 'int':
    case 'long':
    case 'abstract:long':
      return readLong;
    case 'string':
      return (reader) => {
        const [start, end] = readSpan(reader);
        return reader.buf.toString('utf8', start, end);
      };
    case 'bytes':
      return (reader) => {
        const [start, end] = readSpan(reader);
        return Buffer.from(reader.buf.subarray(start, end));
      };
    case 'fixed': {
      const size = (type as avsc.types.FixedType).size;
      return (reader) => {
        const start = reader.pos;
        if (start + size > reader.buf.length) throw new TruncatedError();
        reader.pos += size;
        return Buffer.from(reader.buf.subarray(start, start + size));
      };
    }
    default:
      return () => {
        throw new Error(`no reader for the underlying type ${type.typeName}`);
      };
  }
}

/** Compiles the byte writer of `type`; `seen` breaks the recursion of a record that contains itself. */
export function compileByteWriter(type: avsc.Type, fieldName: FieldNamer, seen: Map<avsc.Type, ByteWriter>): ByteWriter {
  const known = seen.get(type);
  if (known !== undefined) return known;
  const name = type.typeName;
  if (name.startsWith('logical:')) {
    // Our logical types (avro-logical-types.ts) convert the underlying value into its JSON form.
    const logical = type as unknown as { underlyingType: avsc.Type; _fromValue(value: unknown): unknown };
    const read = primitiveReader(logical.underlyingType);
    return (reader, out) => {
      const value = logical._fromValue(read(reader));
      writeText(out, typeof value === 'number' ? numberText(value) : JSON.stringify(value));
    };
  }
  switch (name) {
    case 'null':
      return (_reader, out) => writeAscii(out, 'null');
    case 'boolean':
      return (reader, out) => {
        const byte = reader.buf[reader.pos++];
        if (byte === undefined) throw new TruncatedError();
        writeAscii(out, byte === 0 ? 'false' : 'true');
      };
    case 'int':
    case 'long':
    case 'abstract:long':
      return (reader, out) => {
        const value = readLong(reader);
        writeAscii(out, typeof value === 'number' ? String(value) : `"${value}"`);
      };
    case 'float':
      return (reader, out) => {
        if (reader.pos + 4 > reader.buf.length) throw new TruncatedError();
        const value = reader.buf.readFloatLE(reader.pos);
        reader.pos += 4;
        writeAscii(out, floatText(value));
      };
    case 'double':
      return (reader, out) => {
        if (reader.pos + 8 > reader.buf.length) throw new TruncatedError();
        const value = reader.buf.readDoubleLE(reader.pos);
        reader.pos += 8;
        writeAscii(out, numberText(value));
      };
    case 'string':
      return writeString;
    case 'bytes':
      return (reader, out) => {
        const [start, end] = readSpan(reader);
        writeAscii(out, `"${reader.buf.toString('base64', start, end)}"`);
      };
    case 'fixed': {
      const size = (type as avsc.types.FixedType).size;
      return (reader, out) => {
        const start = reader.pos;
        if (start + size > reader.buf.length) throw new TruncatedError();
        reader.pos += size;
        writeAscii(out, `"${reader.buf.toString('base64', start, start + size)}"`);
      };
    }
    case 'enum': {
      const symbols = (type as avsc.types.EnumType).symbols.map((s) => Buffer.from(JSON.stringify(s)));
      return (reader, out) => {
        const symbol = symbols[readInt(reader)];
        if (symbol === undefined) throw new Error(`enum ${(type as avsc.types.EnumType).name ?? ''}: index out of range`);
        writeBytes(out, symbol);
      };
    }
    case 'array':
      return blocksWriter(compileByteWriter((type as avsc.types.ArrayType).itemsType, fieldName, seen), false);
    case 'map':
      return blocksWriter(compileByteWriter((type as avsc.types.MapType).valuesType as avsc.Type, fieldName, seen), true);
    case 'record':
    case 'error':
      return recordByteWriter(type as avsc.types.RecordType, fieldName, seen);
    case 'union:wrapped': {
      const branches = (type as avsc.types.WrappedUnionType).types.map((t) => compileByteWriter(t, fieldName, seen));
      return (reader, out) => {
        const branch = branches[readInt(reader)];
        if (branch === undefined) throw new Error('union branch index out of range');
        branch(reader, out);
      };
    }
    default:
      throw new Error(`Avro type ${name} is not supported`);
  }
}

/** Arrays and maps are written in blocks: a count (negative: followed by the block's byte size), items, until a 0 count. */
function blocksWriter(item: ByteWriter, isMap: boolean): ByteWriter {
  return (reader, out) => {
    writeAscii(out, isMap ? '{' : '[');
    let first = true;
    for (;;) {
      let count = readInt(reader);
      if (count === 0) break;
      if (count < 0) {
        count = -count;
        readLong(reader); // the block's size in bytes, for skipping: not needed when reading every item
      }
      for (let i = 0; i < count; i++) {
        if (!first) writeAscii(out, ',');
        first = false;
        // Map keys are data, written as they are (not through the key style).
        if (isMap) {
          writeString(reader, out);
          writeAscii(out, ':');
        }
        item(reader, out);
      }
    }
    writeAscii(out, isMap ? '}' : ']');
  };
}

function recordByteWriter(type: avsc.types.RecordType, fieldName: FieldNamer, seen: Map<avsc.Type, ByteWriter>): ByteWriter {
  const prefixes = type.fields.map((f, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(fieldName(f.name))}:`));
  const writers: ByteWriter[] = [];
  // Registered before its fields are compiled, so a field of this record's own type finds it.
  const writer: ByteWriter = (reader, out) => {
    if (writers.length === 0) {
      writeAscii(out, '{}');
      return;
    }
    // Deliberately imperative: once per field of every decoded record.
    for (let i = 0; i < writers.length; i++) {
      writeBytes(out, prefixes[i] as Buffer);
      (writers[i] as ByteWriter)(reader, out);
    }
    writeAscii(out, '}');
  };
  seen.set(type, writer);
  for (const field of type.fields) writers.push(compileByteWriter(field.type, fieldName, seen));
  return writer;
}

/**
 * The top-level record's writer that also reports the JSON text of one of its fields (the route
 * field), read back from the bytes it wrote: a string's text, a number as written, else undefined.
 */
export function routeCapturingWriter(type: avsc.types.RecordType, fieldName: FieldNamer, routeField: string, seen: Map<avsc.Type, ByteWriter>): ((reader: Reader, out: Out) => string | undefined) | undefined {
  const index = type.fields.findIndex((f) => fieldName(f.name) === routeField);
  if (index < 0) return undefined;
  const prefixes = type.fields.map((f, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(fieldName(f.name))}:`));
  const writers = type.fields.map((f) => compileByteWriter(f.type, fieldName, seen));
  return (reader, out) => {
    let route: string | undefined;
    for (let i = 0; i < writers.length; i++) {
      writeBytes(out, prefixes[i] as Buffer);
      const from = out.pos;
      (writers[i] as ByteWriter)(reader, out);
      if (i === index) route = routeTextOf(out.buf, from, out.pos);
    }
    writeAscii(out, '}');
    return route;
  };
}

/** The route text of JSON bytes [from, to): a string's value, a number's digits; objects, arrays and null have none. */
function routeTextOf(buf: Buffer, from: number, to: number): string | undefined {
  const first = buf[from];
  if (first === 0x22) {
    const inner = buf.toString('utf8', from + 1, to - 1);
    return inner.includes('\\') ? (JSON.parse(buf.toString('utf8', from, to)) as string) : inner;
  }
  if (first === 0x2d || (first !== undefined && first >= 0x30 && first <= 0x39)) return buf.toString('latin1', from, to);
  return undefined;
}
