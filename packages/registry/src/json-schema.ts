import { isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2019.js';

// ajv is loaded with the first JSON Schema (~100 ms of require at start otherwise, for every ingest).
const require = createRequire(import.meta.url);
let ajv: { Ajv2019: typeof import('ajv/dist/2019.js').Ajv2019; Ajv2020: typeof import('ajv/dist/2020.js').Ajv2020; draft06: object; draft07: object } | undefined;
function loadAjv(): NonNullable<typeof ajv> {
  ajv ??= {
    Ajv2019: (require('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js')).Ajv2019,
    Ajv2020: (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020,
    // ajv ships the older drafts' meta-schemas as JSON files; Confluent's JsonDeserializer adds them the same way.
    draft06: require('ajv/dist/refs/json-schema-draft-06.json') as object,
    draft07: require('ajv/dist/refs/json-schema-draft-07.json') as object,
  };
  return ajv;
}

/** A JSON Schema that cannot be compiled (the messages that use it are dead-lettered). */
export class JsonSchemaError extends Error {
  override readonly name = 'JsonSchemaError';
}

/** Why a body does not pass: it is not JSON at all, or it breaks a rule of the schema. */
export interface JsonSchemaFailure {
  readonly notJson: boolean;
  readonly message: string;
}

/** One registered JSON Schema compiled: does a body conform, and if not, where it fails. */
export interface JsonSchemaValidator {
  /**
   * Parses and validates `body` (the JSON text after the 5-byte header). Undefined when it conforms;
   * else why not: not JSON (`notJson`), or the first failing path (a JSON Pointer into the value) and the rule it breaks.
   */
  validate(body: Buffer): JsonSchemaFailure | undefined;
  /** A key's text: a string's own text, else the body's JSON text as written (call after `validate`). */
  keyText(body: Buffer): string;
}

const OPTIONS = {
  // Registered schemas carry keywords of their own tools (confluent:tags, javaType, …): ignored, not refused.
  strict: false,
  // Confluent's deserializer does not add format validators either: "format" is an annotation here.
  validateFormats: false,
  // The first failure names the path; collecting every error costs time on the hot path for a reason no one reads twice.
  allErrors: false,
  logger: false,
} as const;

/**
 * Compiles a JSON Schema as Confluent's `JsonDeserializer` does (ajv; draft 2020-12 when `$schema`
 * says so, else the 2019-09 validator with the draft-06 and -07 meta-schemas), once per schema id.
 * Throws {@link JsonSchemaError} for a schema ajv refuses.
 */
export function compileJsonSchemaValidator(schemaText: string, references: ReadonlyMap<string, string> = new Map()): JsonSchemaValidator {
  let schema: unknown;
  try {
    schema = JSON.parse(schemaText);
  } catch (err) {
    throw new JsonSchemaError(`not valid JSON: ${(err as Error).message}`);
  }
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    throw new JsonSchemaError('a JSON Schema is an object or a boolean');
  }
  const spec = typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  let validate: ValidateFunction;
  const { Ajv2019, Ajv2020, draft06, draft07 } = loadAjv();
  // Referenced schemas are added under the names the schema's $refs use (Confluent's JsonDeserializer does the same).
  const referenced: [string, object][] = [];
  for (const [name, text] of references) {
    try {
      referenced.push([name, JSON.parse(text) as object]);
    } catch (err) {
      throw new JsonSchemaError(`its reference ${name} is not valid JSON: ${(err as Error).message}`);
    }
  }
  try {
    if (spec === 'http://json-schema.org/draft/2020-12/schema' || spec === 'https://json-schema.org/draft/2020-12/schema') {
      const validator = new Ajv2020(OPTIONS);
      for (const [name, ref] of referenced) validator.addSchema(ref, name);
      validate = validator.compile(schema as object);
    } else {
      const validator = new Ajv2019(OPTIONS);
      validator.addMetaSchema(draft06);
      validator.addMetaSchema(draft07);
      for (const [name, ref] of referenced) validator.addSchema(ref, name);
      validate = validator.compile(schema as object);
    }
  } catch (err) {
    throw new JsonSchemaError(`ajv cannot compile it: ${(err as Error).message}`);
  }
  return {
    validate(body) {
      // JSON text is UTF-8 (RFC 8259): a body that is not is undecodable, as in Avro and Protobuf, not published with U+FFFD.
      if (!isUtf8(body)) return { notJson: true, message: 'the body is not valid UTF-8' };
      let value: unknown;
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch (err) {
        return { notJson: true, message: `the body is not valid JSON: ${(err as Error).message}` };
      }
      if (validate(value)) return undefined;
      return { notJson: false, message: failure(validate.errors?.[0]) };
    },
    keyText(body) {
      const text = body.toString('utf8');
      const value: unknown = JSON.parse(text);
      return typeof value === 'string' ? value : text;
    },
  };
}

function failure(error: ErrorObject | undefined): string {
  if (error === undefined) return 'it does not conform to the schema';
  const path = error.instancePath === '' ? '/' : error.instancePath;
  const extra = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
  return `at ${path}: ${error.message ?? error.keyword}${extra} (schema rule ${error.schemaPath})`;
}
