import { compileJsonSchemaValidator, JsonSchemaError, type JsonSchemaValidator } from './json-schema.js';
import { AvroSchemaError, ProtobufSchemaError } from './schema-errors.js';
import { referenceTexts, resolveReferences, SchemaReferenceError, type ResolvedReference } from './schema-references.js';
import type { RegisteredSchema, SchemaSource } from './schema-source.js';
import type { FieldNamer, WireDecoder } from './wire-decoder.js';

/** What a schema id stands for once looked up. */
export type SchemaEntry =
  /** An Avro or Protobuf schema: the body is decoded into the payload's JSON. */
  | { readonly kind: 'decoder'; readonly id: number; readonly schemaType: 'AVRO' | 'PROTOBUF'; readonly decoder: WireDecoder }
  /** A JSON Schema: the body is JSON already, validated before it goes on. */
  | { readonly kind: 'validator'; readonly id: number; readonly schemaType: 'JSON'; readonly validator: JsonSchemaValidator }
  /** The source has no such id, or its schema cannot be decoded: messages that use it are dead-lettered with `reason`. */
  | { readonly kind: 'unusable'; readonly id: number; readonly code: 'UNKNOWN_SCHEMA_ID' | 'UNSUPPORTED_SCHEMA'; readonly reason: string };

export interface SchemaDecodersOptions {
  readonly source: SchemaSource;
  /** Record field names → payload keys (the key style). */
  readonly fieldName: FieldNamer;
  /** Schemas kept compiled, shared by all partitions and topics; the least recently used goes first. @default 1_000 */
  readonly maxSchemas?: number;
  /** How long an id the source does not have is believed missing before it is asked again. @default 30_000 */
  readonly missingTtlMs?: number;
  /** Clock, for tests of expiry. @default Date.now */
  readonly now?: () => number;
}

/**
 * Compiled decoders by schema id: a bounded cache shared by all partitions, filled ahead of the
 * synchronous hot path. `entry(id)` is what a message needs (undefined: not looked up yet); `load(ids)`
 * looks the missing ones up, each once even when several partitions ask at the same time.
 */
export interface SchemaDecoders {
  readonly source: SchemaSource;
  /** The entry of `id`, or undefined when it must be loaded first. Marks it recently used. */
  entry(id: number): SchemaEntry | undefined;
  /**
   * Looks up every id of `ids` without an entry. Rejects when the source could not answer for one
   * of them (the others that it answered are kept): the caller waits and tries again.
   */
  load(ids: Iterable<number>): Promise<void>;
  /** Entries held. */
  readonly size: number;
}

interface Held {
  readonly entry: SchemaEntry;
  /** When an `unusable` entry for a missing id is to be looked up again. */
  readonly expiresAt: number;
  lastUsed: number;
}

export function createSchemaDecoders(options: SchemaDecodersOptions): SchemaDecoders {
  const { source, fieldName, maxSchemas = 1_000, missingTtlMs = 30_000, now = Date.now } = options;
  if (!Number.isInteger(maxSchemas) || maxSchemas < 1) throw new RangeError(`maxSchemas must be a positive integer, got ${maxSchemas}`);
  const held = new Map<number, Held>();
  const loading = new Map<number, Promise<void>>();
  let uses = 0;

  function entry(id: number): SchemaEntry | undefined {
    const found = held.get(id);
    if (found === undefined) return undefined;
    if (found.expiresAt <= now()) {
      held.delete(id);
      return undefined;
    }
    // A counter, not a re-insertion: one store per message on the hot path; eviction scans (rare).
    found.lastUsed = ++uses;
    return found.entry;
  }

  function hold(entryOfId: SchemaEntry, expiresAt: number): void {
    if (held.size >= maxSchemas) {
      let oldest: number | undefined;
      let oldestUse = Infinity;
      for (const [id, h] of held) {
        if (h.lastUsed < oldestUse) {
          oldestUse = h.lastUsed;
          oldest = id;
        }
      }
      if (oldest !== undefined) held.delete(oldest);
    }
    held.set(entryOfId.id, { entry: entryOfId, expiresAt, lastUsed: ++uses });
  }

  async function lookUp(id: number): Promise<void> {
    const schema = await source.schemaById(id);
    if (schema === null) {
      hold({ kind: 'unusable', id, code: 'UNKNOWN_SCHEMA_ID', reason: `schema id ${id} is not in the ${source.description}` }, now() + missingTtlMs);
      return;
    }
    try {
      // References are looked up once, with the schema, and compiled into its entry (a source that does not answer rejects: retried).
      const references = await resolveReferences(schema.references, (subject, version) => source.schemaByVersion(subject, version));
      hold(await compile(schema, fieldName, references), Infinity);
    } catch (err) {
      if (!(err instanceof AvroSchemaError || err instanceof ProtobufSchemaError || err instanceof JsonSchemaError || err instanceof SchemaReferenceError)) throw err;
      hold({ kind: 'unusable', id, code: 'UNSUPPORTED_SCHEMA', reason: `schema id ${id} (${schema.schemaType}) from the ${source.description}: ${err.message}` }, Infinity);
    }
  }

  async function load(ids: Iterable<number>): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const id of new Set(ids)) {
      if (entry(id) !== undefined) continue;
      let pending = loading.get(id);
      if (pending === undefined) {
        pending = lookUp(id).finally(() => loading.delete(id));
        loading.set(id, pending);
      }
      waits.push(pending);
    }
    const results = await Promise.allSettled(waits);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  return {
    source,
    entry,
    load,
    get size() {
      return held.size;
    },
  };
}

/**
 * One registered schema compiled, by its type. avsc and protobufjs are imported with the first schema
 * of their type (RSS that a process without wire-format topics should not carry: decision 0031,
 * bench/results/idle-rss.md); ajv is loaded by json-schema.ts with the first JSON Schema.
 */
async function compile(schema: RegisteredSchema, fieldName: FieldNamer, references: readonly ResolvedReference[]): Promise<SchemaEntry> {
  const { id } = schema;
  const other = references.find((r) => r.schemaType !== schema.schemaType);
  if (other !== undefined) throw new SchemaReferenceError(`its reference ${other.name} (subject ${other.subject} version ${other.version}) is ${other.schemaType}, not ${schema.schemaType}`);
  switch (schema.schemaType) {
    case 'AVRO': {
      const { compileAvroDecoder } = await import('./avro-json.js');
      return { kind: 'decoder', id, schemaType: 'AVRO', decoder: compileAvroDecoder(schema.schema, fieldName, references.map((r) => r.schema)) };
    }
    case 'PROTOBUF': {
      const { compileProtobufDecoder } = await import('./protobuf-json.js');
      return { kind: 'decoder', id, schemaType: 'PROTOBUF', decoder: compileProtobufDecoder(schema.schema, fieldName, referenceTexts(references)) };
    }
    case 'JSON':
      return { kind: 'validator', id, schemaType: 'JSON', validator: compileJsonSchemaValidator(schema.schema, referenceTexts(references)) };
  }
}
