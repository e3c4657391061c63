import { readWireHeader, type SchemaDecoders, type SchemaEntry } from '@wirestream/registry';
import type { ConvertResult, EventConverter } from './event-converter.js';
import { INGEST_DEFAULTS } from './defaults.js';

export interface WireConverterOptions {
  /** Compiled schemas by id; the batch processor loads a chunk's ids before converting it (schema-gate.ts). */
  readonly decoders: SchemaDecoders;
  /** Named in every dead-letter reason, with the schema id. */
  readonly topic: string;
  /** Larger values are dead-lettered undecoded. @default INGEST_DEFAULTS.maxMessageBytes */
  readonly maxMessageBytes?: number;
}

/**
 * Kafka value in the Confluent wire format (`@topic(format: AVRO)`) → envelope bytes: the header
 * read, the body decoded with the writer's schema into the payload's JSON text (field names by the
 * key style), framed by the envelope head. Synchronous: the schema of every id in the chunk was
 * loaded before (schema-gate.ts). Every failure is a dead-letter reason naming the topic and the id.
 */
export function createWireConverter({ decoders, topic, maxMessageBytes = INGEST_DEFAULTS.maxMessageBytes }: WireConverterOptions): EventConverter {
  return (value, envelopeHead = '', routeField) => {
    if (value === null || value.length === 0) return fail('EMPTY_VALUE', 'message has no value (tombstone or empty)');
    if (value.length > maxMessageBytes) {
      return fail('TOO_LARGE', `value is ${value.length} bytes, over the limit of ${maxMessageBytes} (INGEST_MAX_MESSAGE_BYTES)`);
    }
    const header = readWireHeader(value);
    if (!header.ok) return fail(header.code, `topic ${topic} is read as a registry format (@topic(format:)), but the ${header.message}`);
    const entry = usableEntry(decoders, header.id, topic);
    if (!('decoder' in entry)) return { ok: false, reason: entry };
    if (!entry.decoder.isRecord) {
      return fail('NOT_AN_OBJECT', `topic ${topic}: schema id ${header.id} is not a record, and an event payload must be an object`);
    }
    try {
      // Straight from the Avro body into the envelope's bytes (head, payload, closing brace): one buffer.
      const { bytes, routeValue } = entry.decoder.decodeEnvelope(value.subarray(header.bodyOffset), envelopeHead, envelopeHead === '' ? '' : '}', routeField);
      return { ok: true, bytes, routeValue };
    } catch (err) {
      return fail('UNDECODABLE', `topic ${topic}: the value does not decode with schema id ${header.id}: ${(err as Error).message}`);
    }
  };
}

/** A Kafka key in the wire format (`@topic(keyFormat: AVRO)`) → the envelope's key text, or why not. */
export function createWireKeyDecoder(decoders: SchemaDecoders, topic: string): (key: Buffer) => { ok: true; key: string } | { ok: false; reason: ConvertResult & { ok: false } } {
  return (key) => {
    const header = readWireHeader(key, 'key');
    if (!header.ok) return { ok: false, reason: fail(header.code, `topic ${topic}: the key is read as a registry format (@topic(keyFormat:)), but the ${header.message}`) };
    const entry = usableEntry(decoders, header.id, topic);
    if (!('decoder' in entry)) return { ok: false, reason: { ok: false, reason: entry } };
    try {
      return { ok: true, key: entry.decoder.decodeKey(key.subarray(header.bodyOffset)) };
    } catch (err) {
      return { ok: false, reason: fail('UNDECODABLE', `topic ${topic}: the key does not decode with schema id ${header.id}: ${(err as Error).message}`) };
    }
  };
}

function usableEntry(decoders: SchemaDecoders, id: number, topic: string): Extract<SchemaEntry, { kind: 'decoder' }> | { code: 'UNKNOWN_SCHEMA_ID' | 'UNSUPPORTED_SCHEMA'; message: string } {
  const entry = decoders.entry(id);
  if (entry === undefined) {
    // The gate loaded it for this chunk; only a cache too small for the ids of the chunks in flight evicts it
    // this early. Thrown, not a reason: the message is retried (and its id loaded again), never lost as bad input.
    throw new Error(`schema id ${id} of topic ${topic} was evicted before use: raise SCHEMA_CACHE_SIZE (${decoders.size} held)`);
  }
  if (entry.kind === 'unusable') return { code: entry.code, message: `topic ${topic}: ${entry.reason}` };
  return entry;
}

function fail(code: Extract<ConvertResult, { ok: false }>['reason']['code'], message: string): Extract<ConvertResult, { ok: false }> {
  return { ok: false, reason: { code, message } };
}
