import avsc from 'avsc';
import { decimalText, MAX_SAFE, MIN_SAFE, readExactLong, type AvroLong, type Tap } from './avro-long.js';

/**
 * Avro logical types decoded straight into their JSON form (docs/schema.md, "JSON mapping"):
 * timestamps and dates as RFC 3339 text, decimals as exact decimal strings, uuids as text. Decode
 * only: ingest never encodes Avro. A logical type on the wrong underlying type (e.g. `date` on a
 * string) throws in its constructor, and avsc then reads the underlying type as it is (the Avro
 * spec's rule: an invalid logical type is ignored).
 */

/**
 * avsc's own `long` throws "potential precision loss" past 2^53; this one keeps every value:
 * a number while exact, else a string (JSON numbers beyond 2^53 lose digits in most parsers).
 */
export const EXACT_LONG = avsc.types.LongType.__with({
  fromBuffer: (buf: Buffer): AvroLong => {
    const n = buf.readBigInt64LE(0);
    return n <= MAX_SAFE && n >= MIN_SAFE ? Number(n) : n.toString();
  },
  toBuffer: (n: AvroLong): Buffer => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: (json: unknown): AvroLong => (typeof json === 'number' || typeof json === 'string' ? json : Number(json)),
  toJSON: (n: AvroLong): AvroLong => n,
  isValid: (n: unknown): boolean => (typeof n === 'number' && Number.isInteger(n)) || (typeof n === 'string' && /^-?[0-9]+$/.test(n)),
  compare: (a: AvroLong, b: AvroLong): number => {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  },
});

type Schema = Record<string, unknown>;

/** Base of our logical types: checks the underlying type, and encodes nothing. */
abstract class DecodeOnlyType extends avsc.types.LogicalType {
  constructor(schema: Schema, opts: unknown, underlying: readonly string[]) {
    super(schema as never, opts);
    const name = this.underlyingType.typeName;
    if (!underlying.includes(name)) throw new TypeError(`logical type ${String(schema['logicalType'])} does not apply to ${name}`);
  }
  protected override _toValue(value: unknown): unknown {
    return value;
  }
  protected override _resolve(type: avsc.Type): unknown {
    return type.typeName === this.underlyingType.typeName ? (value: unknown): unknown => this._fromValue(value) as unknown : undefined;
  }
}

// Date's range (±8.64e15 ms): beyond it a timestamp stays the number it is.
const MAX_DATE_MS = 8.64e15;

/** `2023-11-14T22:13:20.123Z`, then more fraction digits for micros/nanos; without `Z` for local timestamps. */
function rfc3339(ticks: AvroLong, perMilli: number, digits: number, zone: string): AvroLong {
  if (perMilli === 1 && typeof ticks === 'number') {
    if (Math.abs(ticks) > MAX_DATE_MS) return ticks;
    const iso = new Date(ticks).toISOString();
    return zone === 'Z' ? iso : iso.slice(0, -1);
  }
  let ms: number;
  let rest: number;
  if (typeof ticks === 'number') {
    ms = Math.floor(ticks / perMilli);
    rest = ticks - ms * perMilli;
  } else {
    const big = BigInt(ticks);
    const per = BigInt(perMilli);
    let q = big / per;
    if (big % per !== 0n && big < 0n) q -= 1n; // floor, not truncation, for instants before 1970
    ms = Number(q);
    rest = Number(big - q * per);
  }
  if (Math.abs(ms) > MAX_DATE_MS) return ticks;
  // toISOString always has 3 fraction digits: keep them, append the sub-millisecond ones.
  return `${new Date(ms).toISOString().slice(0, 23)}${String(rest).padStart(digits - 3, '0')}${zone}`;
}

function timestampType(perMilli: number, digits: number, zone: string) {
  return class extends DecodeOnlyType {
    constructor(schema: Schema, opts?: unknown) {
      super(schema, opts, ['long']);
    }
    _read(tap: Tap): AvroLong {
      return this._fromValue(readExactLong(tap));
    }
    protected override _fromValue(value: AvroLong): AvroLong {
      return rfc3339(value, perMilli, digits, zone);
    }
  };
}

const MS_PER_DAY = 86_400_000;

class DateType extends DecodeOnlyType {
  constructor(schema: Schema, opts?: unknown) {
    super(schema, opts, ['int']);
  }
  protected override _fromValue(days: number): string | number {
    const ms = days * MS_PER_DAY;
    return Math.abs(ms) > MAX_DATE_MS ? days : new Date(ms).toISOString().slice(0, 10);
  }
}

/** `HH:MM:SS.fff` (millis) or `HH:MM:SS.ffffff` (micros) of a time of day. */
function timeType(perMilli: number, digits: number, underlying: string[]) {
  return class extends DecodeOnlyType {
    constructor(schema: Schema, opts?: unknown) {
      super(schema, opts, underlying);
    }
    _read(tap: Tap): AvroLong {
      return this._fromValue(underlying[0] === 'long' ? readExactLong(tap) : (this.underlyingType as unknown as { _read(tap: Tap): number })._read(tap));
    }
    protected override _fromValue(ticks: AvroLong): AvroLong {
      if (typeof ticks !== 'number' || ticks < 0 || ticks >= MS_PER_DAY * perMilli) return ticks;
      const ms = Math.floor(ticks / perMilli);
      const rest = ticks - ms * perMilli;
      const hms = new Date(ms).toISOString().slice(11, 23);
      return perMilli === 1 ? hms : `${hms}${String(rest).padStart(digits - 3, '0')}`;
    }
  };
}

/** An exact decimal string (`-12.30` for unscaled -1230 at scale 2): JSON numbers would round it. */
class DecimalType extends DecodeOnlyType {
  private readonly scale: number;
  constructor(schema: Schema, opts?: unknown) {
    super(schema, opts, ['bytes', 'fixed']);
    const scale = schema['scale'] ?? 0;
    const precision = schema['precision'];
    if (typeof precision !== 'number' || !Number.isInteger(precision) || precision < 1) throw new TypeError('decimal needs a positive integer precision');
    if (typeof scale !== 'number' || !Number.isInteger(scale) || scale < 0 || scale > precision) throw new TypeError('decimal scale must be from 0 to its precision');
    this.scale = scale;
  }
  protected override _fromValue(bytes: Buffer): string {
    return decimalText(bytes, this.scale);
  }
}

/** `uuid` on a string is the string; on `fixed(16)` (Avro 1.12) the canonical 8-4-4-4-12 form. */
class UuidType extends DecodeOnlyType {
  constructor(schema: Schema, opts?: unknown) {
    super(schema, opts, ['string', 'fixed']);
  }
  protected override _fromValue(value: string | Buffer): string {
    if (typeof value === 'string') return value;
    const hex = value.toString('hex');
    return hex.length !== 32 ? hex : `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

/** `duration` on `fixed(12)`: three little-endian unsigned ints. */
class DurationType extends DecodeOnlyType {
  constructor(schema: Schema, opts?: unknown) {
    super(schema, opts, ['fixed']);
  }
  protected override _fromValue(value: Buffer): unknown {
    if (value.length !== 12) return value;
    return { months: value.readUInt32LE(0), days: value.readUInt32LE(4), milliseconds: value.readUInt32LE(8) };
  }
}

/** The `logicalTypes` option of avsc's `Type.forSchema` for decoding into JSON. */
export const JSON_LOGICAL_TYPES = Object.freeze({
  'timestamp-millis': timestampType(1, 3, 'Z'),
  'timestamp-micros': timestampType(1_000, 6, 'Z'),
  'timestamp-nanos': timestampType(1_000_000, 9, 'Z'),
  'local-timestamp-millis': timestampType(1, 3, ''),
  'local-timestamp-micros': timestampType(1_000, 6, ''),
  'local-timestamp-nanos': timestampType(1_000_000, 9, ''),
  date: DateType,
  'time-millis': timeType(1, 3, ['int']),
  'time-micros': timeType(1_000, 6, ['long']),
  decimal: DecimalType,
  uuid: UuidType,
  duration: DurationType,
}) as unknown as Record<string, new (schema: avsc.Schema, opts?: unknown) => avsc.types.LogicalType>;
