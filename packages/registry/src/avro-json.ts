import avsc from 'avsc';
import { EXACT_LONG, JSON_LOGICAL_TYPES } from './avro-logical-types.js';

/** Renames a record field for the payload (the key style: snake_case by default). */
export type FieldNamer = (name: string) => string;

/** One writer's schema compiled: Avro body bytes → payload JSON text. */
export interface AvroJsonDecoder {
  /** Whether the schema is a record, the only kind of schema whose values can be event payloads (keys may be of any type). */
  readonly isRecord: boolean;
  /** Top-level field names of the payload, as published (after the key style). */
  readonly fields: readonly string[];
  /**
   * Decodes `body` (the bytes after the wire-format header) into the payload's JSON text and the
   * value of the payload field `routeField` (as published) as a string, if it has one. Throws on
   * bytes that do not decode with this schema (truncated, trailing bytes, a bad union branch).
   */
  decode(body: Buffer, routeField: string | undefined): { readonly json: string; readonly routeValue: string | undefined };
  /** Decodes a key: the text of a string (or of a number), else the JSON text of the value. */
  decodeKey(body: Buffer): string;
}

/** A schema that cannot be turned into payloads (the messages that use it are dead-lettered). */
export class AvroSchemaError extends Error {
  override readonly name = 'AvroSchemaError';
}

type Writer = (value: unknown) => string;

/**
 * Compiles an Avro schema (the writer's, as registered) for decoding into JSON. Unions are read
 * wrapped (avsc's `{branch: value}`, the only form that decodes every union) and written as the
 * plain value; records as objects whose field names go through `fieldName`; see docs/schema.md for
 * the whole mapping.
 */
export function compileAvroDecoder(schemaText: string, fieldName: FieldNamer): AvroJsonDecoder {
  let type: avsc.Type;
  try {
    type = avsc.Type.forSchema(JSON.parse(schemaText) as avsc.Schema, {
      wrapUnions: true,
      logicalTypes: JSON_LOGICAL_TYPES,
      // A plain long decodes exactly (a string past 2^53); a long with a logical type is the logical type's.
      typeHook: (schema) => (schema === 'long' || (isObject(schema) && schema['type'] === 'long' && schema['logicalType'] === undefined) ? EXACT_LONG : undefined),
    });
  } catch (err) {
    throw new AvroSchemaError(`not a valid Avro schema: ${(err as Error).message}`);
  }
  const write = compileWriter(type, fieldName, new Map());
  const isRecord = type.typeName === 'record' || type.typeName === 'error';
  const fields = isRecord ? (type as avsc.types.RecordType).fields.map((f) => fieldName(f.name)) : [];
  // Published name → [original name, text of its value], for the route field.
  const routeFields = new Map(isRecord ? (type as avsc.types.RecordType).fields.map((f) => [fieldName(f.name), [f.name, compileText(f.type)] as const] as const) : []);
  const keyText = compileText(type);
  return {
    isRecord,
    fields,
    decode(body, routeField) {
      const value = type.fromBuffer(body) as Record<string, unknown>;
      const json = write(value);
      if (routeField === undefined) return { json, routeValue: undefined };
      const field = routeFields.get(routeField);
      return { json, routeValue: field === undefined ? undefined : field[1](value[field[0]]) };
    },
    decodeKey(body) {
      const value: unknown = type.fromBuffer(body);
      return keyText(value) ?? write(value);
    },
  };
}

type Text = (value: unknown) => string | undefined;

/**
 * Text of a route value or a key, by its type: a string or an enum as is, a number as written, a
 * union's branch unwrapped; undefined for records, arrays, maps and bytes (a key is then its JSON).
 */
function compileText(type: avsc.Type): Text {
  const name = type.typeName;
  if (name === 'union:wrapped') {
    const byBranch = new Map((type as avsc.types.WrappedUnionType).types.map((t) => [t.branchName as string, compileText(t)] as const));
    return (value) => {
      if (value === null) return undefined;
      const wrapped = value as Record<string, unknown>;
      for (const branch in wrapped) return byBranch.get(branch)?.(wrapped[branch]);
      return undefined;
    };
  }
  if (name === 'record' || name === 'error' || name === 'array' || name === 'map' || name === 'bytes' || name === 'fixed' || name === 'null') return () => undefined;
  return (value) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

const quote = JSON.stringify as (value: string) => string;

/** A JSON number, or a string for what JSON has no number for (NaN, ±Infinity, as Protobuf's JSON mapping does). */
function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : quote(String(value));
}

/** A writer per Avro type; `seen` breaks the recursion of a record that contains itself. */
function compileWriter(type: avsc.Type, fieldName: FieldNamer, seen: Map<avsc.Type, Writer>): Writer {
  const known = seen.get(type);
  if (known !== undefined) return known;
  const name = type.typeName;
  if (name.startsWith('logical:')) {
    // Our logical types decode into their JSON form already (string, number or a small object);
    // one whose constructor refused its underlying type is not a LogicalType and is read as that type.
    return (value) => (typeof value === 'number' ? numberText(value) : JSON.stringify(value));
  }
  switch (name) {
    case 'null':
      return () => 'null';
    case 'boolean':
      return (value) => (value === true ? 'true' : 'false');
    case 'int':
    case 'float':
    case 'double':
      return (value) => numberText(value as number);
    case 'abstract:long':
      // A number while exact, its digits as a JSON string beyond 2^53 (EXACT_LONG).
      return (value) => (typeof value === 'number' ? String(value) : `"${value as string}"`);
    case 'long':
      return (value) => String(value);
    case 'string':
    case 'enum':
      return (value) => quote(value as string);
    case 'bytes':
    case 'fixed':
      return (value) => `"${(value as Buffer).toString('base64')}"`;
    case 'array':
      return arrayWriter(type as avsc.types.ArrayType, fieldName, seen);
    case 'map':
      return mapWriter(type as avsc.types.MapType, fieldName, seen);
    case 'record':
    case 'error':
      return recordWriter(type as avsc.types.RecordType, fieldName, seen);
    case 'union:wrapped':
      return unionWriter(type as avsc.types.WrappedUnionType, fieldName, seen);
    default:
      throw new AvroSchemaError(`Avro type ${name} is not supported`);
  }
}

function arrayWriter(type: avsc.types.ArrayType, fieldName: FieldNamer, seen: Map<avsc.Type, Writer>): Writer {
  const item = compileWriter(type.itemsType, fieldName, seen);
  return (value) => {
    const items = value as unknown[];
    let out = '[';
    // Deliberately imperative: once per element of every decoded array.
    for (let i = 0; i < items.length; i++) out += (i === 0 ? '' : ',') + item(items[i]);
    return `${out}]`;
  };
}

/** Map keys are data (ids, currency codes), not field names: published as they are. */
function mapWriter(type: avsc.types.MapType, fieldName: FieldNamer, seen: Map<avsc.Type, Writer>): Writer {
  const entry = compileWriter(type.valuesType as avsc.Type, fieldName, seen);
  return (value) => {
    const map = value as Record<string, unknown>;
    let out = '{';
    let first = true;
    for (const key in map) {
      out += `${first ? '' : ','}${quote(key)}:${entry(map[key])}`;
      first = false;
    }
    return `${out}}`;
  };
}

function recordWriter(type: avsc.types.RecordType, fieldName: FieldNamer, seen: Map<avsc.Type, Writer>): Writer {
  const originals = type.fields.map((f) => f.name);
  const published = originals.map(fieldName);
  const clash = published.findIndex((n, i) => published.indexOf(n) !== i);
  if (clash >= 0) {
    const first = published.indexOf(published[clash] as string);
    throw new AvroSchemaError(
      `record ${type.name ?? '(anonymous)'}: fields ${originals[first]} and ${originals[clash]} are both published as ${published[clash]}: rename one, or choose another INGEST_KEY_STYLE`,
    );
  }
  const prefixes = published.map((n, i) => `${i === 0 ? '{' : ','}${quote(n)}:`);
  const writers: Writer[] = [];
  // Registered before its fields are compiled, so a field of this record's own type finds it.
  const writer: Writer = (value) => {
    const record = value as Record<string, unknown>;
    let out = '';
    // Deliberately imperative: once per field of every decoded record.
    for (let i = 0; i < writers.length; i++) out += (prefixes[i] as string) + (writers[i] as Writer)(record[originals[i] as string]);
    return writers.length === 0 ? '{}' : `${out}}`;
  };
  seen.set(type, writer);
  for (const field of type.fields) writers.push(compileWriter(field.type, fieldName, seen));
  return writer;
}

/** avsc's wrapped union value is null or `{branchName: value}`; JSON gets the value alone. */
function unionWriter(type: avsc.types.WrappedUnionType, fieldName: FieldNamer, seen: Map<avsc.Type, Writer>): Writer {
  const byBranch = new Map<string, Writer>();
  for (const branch of type.types) {
    if (branch.typeName !== 'null') byBranch.set(branch.branchName as string, compileWriter(branch, fieldName, seen));
  }
  return (value) => {
    if (value === null) return 'null';
    const wrapped = value as Record<string, unknown>;
    for (const branch in wrapped) return (byBranch.get(branch) as Writer)(wrapped[branch]);
    return 'null';
  };
}
