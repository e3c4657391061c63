import { readWireHeader, type SchemaDecoders, type SchemaEntry, type SchemaType } from '@wirestream/registry';
import type { TopicFormat, KeyFormat } from '@wirestream/schema';
import { createEventConverter, type ConvertResult, type EventConverter } from './event-converter.js';
import { INGEST_DEFAULTS } from './defaults.js';

/** A registry format: the ones `@topic(format:)` / `keyFormat:` take besides JSON and STRING. */
export type WireFormat = Exclude<TopicFormat | KeyFormat, 'JSON' | 'STRING'>;

/** The registry's `schemaType` each format must find behind an id (a JSON Schema is registered as `JSON`). */
const SCHEMA_TYPE_OF: Readonly<Record<WireFormat, SchemaType>> = { AVRO: 'AVRO', PROTOBUF: 'PROTOBUF', JSON_SCHEMA: 'JSON' };

export interface WireConverterOptions {
  /** The topic's `@topic(format:)`: an id whose schema is of another type is dead-lettered (a producer writing to the wrong topic). @default 'AVRO' */
  readonly format?: WireFormat;
  /** For JSON_SCHEMA: the JSON topics' converter, which the validated body goes through as it is. @default createEventConverter({ maxMessageBytes }) */
  readonly convertJson?: EventConverter;
  /** Compiled schemas by id; the batch processor loads a chunk's ids before converting it (schema-gate.ts). */
  readonly decoders: SchemaDecoders;
  /** Named in every dead-letter reason, with the schema id. */
  readonly topic: string;
  /** Larger values are dead-lettered undecoded. @default INGEST_DEFAULTS.maxMessageBytes */
  readonly maxMessageBytes?: number;
}

/**
 * Kafka value in the Confluent wire format (`@topic(format: AVRO | PROTOBUF | JSON_SCHEMA)`) → envelope
 * bytes: the header read; an Avro or Protobuf body decoded with the writer's schema into the
 * payload's JSON text (field names by the key style), framed by the envelope head; a JSON Schema
 * body validated against its schema, then converted by the JSON path from the bytes where it lies
 * (no copy). Synchronous: the schema of every id in the chunk was loaded before (schema-gate.ts).
 * Every failure is a dead-letter reason naming the topic and the id.
 */
export function createWireConverter(options: WireConverterOptions): EventConverter {
  const { decoders, topic, maxMessageBytes = INGEST_DEFAULTS.maxMessageBytes, format = 'AVRO' } = options;
  const convertJson = options.convertJson ?? createEventConverter({ maxMessageBytes });
  return (value, envelopeHead = '', routeField) => {
    if (value === null || value.length === 0) return fail('EMPTY_VALUE', 'message has no value (tombstone or empty)');
    if (value.length > maxMessageBytes) {
      return fail('TOO_LARGE', `value is ${value.length} bytes, over the limit of ${maxMessageBytes} (INGEST_MAX_MESSAGE_BYTES)`);
    }
    const header = readWireHeader(value);
    if (!header.ok) return fail(header.code, `topic ${topic} is read as a registry format (@topic(format: ${format})), but the ${header.message}`);
    const entry = usableEntry(decoders, header.id, topic, format, 'format');
    if ('code' in entry) return { ok: false, reason: entry };
    const body = value.subarray(header.bodyOffset);
    if (entry.kind === 'validator') {
      const invalid = entry.validator.validate(body);
      if (invalid !== undefined) {
        return fail(invalid.notJson ? 'UNDECODABLE' : 'SCHEMA_VIOLATION', `topic ${topic}: the value does not conform to JSON Schema id ${header.id}: ${invalid.message}`);
      }
      const converted = convertJson(body, envelopeHead, routeField);
      if (converted.ok) return converted;
      return fail(converted.reason.code, `topic ${topic}, JSON Schema id ${header.id}: ${converted.reason.message}`);
    }
    if (!entry.decoder.isRecord) {
      return fail('NOT_AN_OBJECT', `topic ${topic}: schema id ${header.id} is not a record, and an event payload must be an object`);
    }
    try {
      // Straight from the body into the envelope's bytes (head, payload, closing brace): one buffer.
      const { bytes, routeValue } = entry.decoder.decodeEnvelope(body, envelopeHead, envelopeHead === '' ? '' : '}', routeField);
      return { ok: true, bytes, routeValue };
    } catch (err) {
      return fail('UNDECODABLE', `topic ${topic}: the value does not decode with ${entry.schemaType} schema id ${header.id}: ${(err as Error).message}`);
    }
  };
}

/** A Kafka key in the wire format (`@topic(keyFormat: AVRO | PROTOBUF | JSON_SCHEMA)`) → the envelope's key text, or why not. */
export function createWireKeyDecoder(
  decoders: SchemaDecoders,
  topic: string,
  format: WireFormat = 'AVRO',
): (key: Buffer) => { ok: true; key: string } | { ok: false; reason: ConvertResult & { ok: false } } {
  return (key) => {
    const header = readWireHeader(key, 'key');
    if (!header.ok) return { ok: false, reason: fail(header.code, `topic ${topic}: the key is read as a registry format (@topic(keyFormat: ${format})), but the ${header.message}`) };
    const entry = usableEntry(decoders, header.id, topic, format, 'keyFormat');
    if ('code' in entry) return { ok: false, reason: { ok: false, reason: entry } };
    const body = key.subarray(header.bodyOffset);
    if (entry.kind === 'validator') {
      const invalid = entry.validator.validate(body);
      if (invalid !== undefined) {
        return { ok: false, reason: fail(invalid.notJson ? 'UNDECODABLE' : 'SCHEMA_VIOLATION', `topic ${topic}: the key does not conform to JSON Schema id ${header.id}: ${invalid.message}`) };
      }
      return { ok: true, key: entry.validator.keyText(body) };
    }
    try {
      return { ok: true, key: entry.decoder.decodeKey(body) };
    } catch (err) {
      return { ok: false, reason: fail('UNDECODABLE', `topic ${topic}: the key does not decode with ${entry.schemaType} schema id ${header.id}: ${(err as Error).message}`) };
    }
  };
}

type UsableEntry = Exclude<SchemaEntry, { kind: 'unusable' }>;

function usableEntry(decoders: SchemaDecoders, id: number, topic: string, format: WireFormat, setting: 'format' | 'keyFormat'): UsableEntry | { code: 'UNKNOWN_SCHEMA_ID' | 'UNSUPPORTED_SCHEMA'; message: string } {
  const entry = decoders.entry(id);
  if (entry === undefined) {
    // The gate loaded it for this chunk; only a cache too small for the ids of the chunks in flight evicts it
    // this early. Thrown, not a reason: the message is retried (and its id loaded again), never lost as bad input.
    throw new Error(`schema id ${id} of topic ${topic} was evicted before use: raise SCHEMA_CACHE_SIZE (${decoders.size} held)`);
  }
  if (entry.kind === 'unusable') return { code: entry.code, message: `topic ${topic}: ${entry.reason}` };
  if (entry.schemaType !== SCHEMA_TYPE_OF[format]) {
    return {
      code: 'UNSUPPORTED_SCHEMA',
      message: `topic ${topic} is @topic(${setting}: ${format}), but schema id ${id} is a ${entry.schemaType} schema: a producer of another format writes to this topic, or the SDL names the wrong format`,
    };
  }
  return entry;
}

function fail(code: Extract<ConvertResult, { ok: false }>['reason']['code'], message: string): Extract<ConvertResult, { ok: false }> {
  return { ok: false, reason: { code, message } };
}
