import avsc from 'avsc';
import { compileByteWriter, routeCapturingWriter, writeAscii, writeText, type ByteWriter, type Out, type Reader } from './avro-bytes.js';
import type { FieldNamer, WireDecoder } from './wire-decoder.js';
import { EXACT_LONG, JSON_LOGICAL_TYPES } from './avro-logical-types.js';
import { AvroSchemaError } from './schema-errors.js';

/** One Avro writer's schema compiled: Avro body bytes → payload JSON text. */
export type AvroJsonDecoder = WireDecoder;

export { AvroSchemaError } from './schema-errors.js';

/**
 * Compiles an Avro schema (the writer's, as registered) for decoding into JSON: one byte writer per
 * type (avro-bytes.ts), straight from the Avro body to JSON bytes, no objects in between. Unions are
 * written as the plain value of their branch; records as objects whose field names go through
 * `fieldName`; see docs/schema.md for the whole mapping. Throws {@link AvroSchemaError} for a
 * schema it cannot use.
 */
export function compileAvroDecoder(schemaText: string, fieldName: FieldNamer, references: readonly string[] = []): AvroJsonDecoder {
  let type: avsc.Type;
  const options = {
    wrapUnions: true,
    logicalTypes: JSON_LOGICAL_TYPES,
    // A plain long decodes exactly (a string past 2^53); a long with a logical type is the logical type's.
    typeHook: (schema: avsc.Schema) => (schema === 'long' || (isObject(schema) && schema['type'] === 'long' && schema['logicalType'] === undefined) ? EXACT_LONG : undefined),
    // Schema references: the named types of the referenced schemas (read first, in dependency order) are known by name.
    registry: {} as Record<string, avsc.Type>,
  };
  try {
    for (const [i, text] of references.entries()) {
      try {
        avsc.Type.forSchema(JSON.parse(text) as avsc.Schema, options);
      } catch (err) {
        throw new Error(`its reference #${i + 1} is not a valid Avro schema: ${(err as Error).message}`, { cause: err });
      }
    }
    type = avsc.Type.forSchema(JSON.parse(schemaText) as avsc.Schema, options);
  } catch (err) {
    throw new AvroSchemaError(`not a valid Avro schema: ${(err as Error).message}`);
  }
  checkFieldNames(type, fieldName, new Set());
  const seen = new Map<avsc.Type, ByteWriter>();
  let write: ByteWriter;
  try {
    write = compileByteWriter(type, fieldName, seen);
  } catch (err) {
    throw new AvroSchemaError((err as Error).message);
  }
  const isRecord = type.typeName === 'record' || type.typeName === 'error';
  const fields = isRecord ? (type as avsc.types.RecordType).fields.map((f) => fieldName(f.name)) : [];
  // One capturing writer per route field (a topic has one), compiled on first use.
  const routeWriters = new Map<string, ReturnType<typeof routeCapturingWriter>>();
  // Reused by every message (the result is copied out): one allocation per message, the result.
  const out: Out = { buf: Buffer.allocUnsafe(16_384), pos: 0 };

  function routeWriterOf(routeField: string | undefined): ReturnType<typeof routeCapturingWriter> {
    if (routeField === undefined || !isRecord) return undefined;
    if (!routeWriters.has(routeField)) routeWriters.set(routeField, routeCapturingWriter(type as avsc.types.RecordType, fieldName, routeField, seen));
    return routeWriters.get(routeField);
  }

  function decodeEnvelope(body: Buffer, head: string, suffix: string, routeField: string | undefined): { bytes: Buffer; routeValue: string | undefined } {
    const reader: Reader = { buf: body, pos: 0 };
    out.pos = 0;
    if (head !== '') writeText(out, head);
    const routeWriter = routeWriterOf(routeField);
    let routeValue: string | undefined;
    if (routeWriter === undefined) write(reader, out);
    else routeValue = routeWriter(reader, out);
    if (reader.pos < body.length) throw new Error('trailing data');
    if (suffix !== '') writeAscii(out, suffix);
    return { bytes: Buffer.from(out.buf.subarray(0, out.pos)), routeValue };
  }

  return {
    isRecord,
    fields,
    decode(body, routeField) {
      const { bytes, routeValue } = decodeEnvelope(body, '', '', routeField);
      return { json: bytes.toString('utf8'), routeValue };
    },
    decodeEnvelope,
    decodeKey(body) {
      const json = decodeEnvelope(body, '', '', undefined).bytes.toString('utf8');
      const value: unknown = JSON.parse(json);
      return typeof value === 'string' ? value : json;
    },
  };
}

/** Two fields of one record published under one name would make duplicate JSON keys: refused. */
function checkFieldNames(type: avsc.Type, fieldName: FieldNamer, checked: Set<avsc.Type>): void {
  if (checked.has(type)) return;
  checked.add(type);
  const name = type.typeName;
  if (name === 'record' || name === 'error') {
    const record = type as avsc.types.RecordType;
    const originals = record.fields.map((f) => f.name);
    const published = originals.map(fieldName);
    const clash = published.findIndex((n, i) => published.indexOf(n) !== i);
    if (clash >= 0) {
      const first = published.indexOf(published[clash] as string);
      throw new AvroSchemaError(
        `record ${record.name ?? '(anonymous)'}: fields ${originals[first]} and ${originals[clash]} are both published as ${published[clash]}: rename one, or choose another INGEST_KEY_STYLE`,
      );
    }
    for (const field of record.fields) checkFieldNames(field.type, fieldName, checked);
  } else if (name === 'array') checkFieldNames((type as avsc.types.ArrayType).itemsType, fieldName, checked);
  else if (name === 'map') checkFieldNames((type as avsc.types.MapType).valuesType as avsc.Type, fieldName, checked);
  else if (name === 'union:wrapped') for (const branch of (type as avsc.types.WrappedUnionType).types) checkFieldNames(branch, fieldName, checked);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}
