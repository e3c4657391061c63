import { keyConverter, type KeyStyle } from '@wirestream/transform';
import { AvroShapeError, describeShape, readAvroShape, type AvroShape, type AvroSlot } from './avro-shape.js';
import { description, renderSdl, type SdlParts, type SdlType } from './sdl-parts.js';

/** What `wirestream-schema from-registry` writes SDL for: one subject's schema, bound to one topic. */
export interface SdlFromAvroOptions {
  /** The value schema's text (Avro JSON), e.g. the latest of `bid-events-value`. */
  readonly schema: string;
  /** The Kafka topic, e.g. `bid-events`. */
  readonly topic: string;
  /** The Subscription field, e.g. `bidPlaced`. */
  readonly field: string;
  /** The routing key as published (after the key style), e.g. `listing_id`; also the field's filter argument. */
  readonly key?: string | undefined;
  /** Written as `@topic(subject:)` when it is not the TopicNameStrategy's `<topic>-value`. */
  readonly subject?: string | undefined;
  /** How ingest publishes field names (INGEST_KEY_STYLE). */
  readonly keyStyle: KeyStyle;
}

/** A schema that cannot be written as SDL (a name GraphQL refuses, a key that is not a scalar field). */
export class SdlFromAvroError extends Error {
  override readonly name = 'SdlFromAvroError';
}

const specifiedScalarNames = new Set(['Int', 'Float', 'String', 'Boolean', 'ID']);

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** The formats whose schemas SDL is written from (`@topic(format:)`). */
export type SdlFormat = 'AVRO' | 'PROTOBUF' | 'JSON_SCHEMA';

/**
 * The scalars a shape needs beyond GraphQL's own: `long` (a number that may pass Int), `float` (a number
 * that may be NaN or ±Infinity, published as strings, which `Float` refuses), map, union, duration, any JSON.
 */
type ScalarRole = 'long' | 'float' | 'map' | 'union' | 'duration' | 'any';

const DOUBLE: readonly [name: string, description: string] = ['Double', 'A float or double: a JSON number, or one of the strings "NaN", "Infinity", "-Infinity" (GraphQL Float has no such values; docs/schema.md).'];

// Scalars the generated SDL declares when the schema needs them. Declared without a serializer, a
// GraphQL scalar passes the published JSON through as it is: exact where Int and Float are not.
const CUSTOM_SCALARS: Readonly<Record<SdlFormat, Readonly<Record<ScalarRole, readonly [name: string, description: string]>>>> = {
  AVRO: {
    long: ['Long', 'An Avro long: a JSON number while exact (|n| ≤ 2^53 − 1), else its digits as a string (docs/schema.md).'],
    float: DOUBLE,
    map: ['JSONObject', 'An Avro map: an object whose keys are data (kept as written, not renamed by the key style).'],
    duration: ['AvroDuration', 'An Avro duration: {"months", "days", "milliseconds"}.'],
    union: ['AvroUnion', 'An Avro union of several non-null types: the value of its branch, as written.'],
    any: ['JSON', 'Any JSON value.'],
  },
  PROTOBUF: {
    long: ['UInt32', 'A Protobuf uint32 or fixed32: a JSON number from 0 to 4294967295 (GraphQL Int stops at 2^31 − 1).'],
    float: DOUBLE,
    map: ['JSONObject', 'A Protobuf map, Struct or Empty: an object whose keys are data (kept as written, not renamed by the key style; 64-bit keys as their digits).'],
    duration: ['JSON', 'A google.protobuf.Value (or ListValue item): any JSON value (docs/schema.md).'],
    union: ['JSON', 'A google.protobuf.Value (or ListValue item): any JSON value (docs/schema.md).'],
    any: ['JSON', 'A google.protobuf.Value (or ListValue item): any JSON value (docs/schema.md).'],
  },
  JSON_SCHEMA: {
    long: ['Long', 'A JSON Schema integer whose minimum and maximum do not keep it in 32 bits: a JSON number as the producer wrote it.'],
    // JSON has no NaN or Infinity: a JSON Schema number is always a JSON number, which Float holds.
    float: ['Float', ''],
    map: ['JSONObject', 'A JSON Schema object without properties: an object of any keys (renamed by the key style, as every key of a JSON body).'],
    duration: ['JSON', 'Any JSON value.'],
    union: ['JSON', 'Any JSON value: one the JSON Schema allows several types for (oneOf, anyOf, a type list), or does not constrain.'],
    any: ['JSON', 'Any JSON value: one the JSON Schema allows several types for (oneOf, anyOf, a type list), or does not constrain.'],
  },
};
const SCALAR_NAMES = new Set(Object.values(CUSTOM_SCALARS).flatMap((roles) => Object.values(roles).map(([name]) => name)).filter((name) => name !== 'Float'));

/**
 * Writes SDL for a value schema: an object type per record, an enum per enum (names from the schema;
 * fields named by the key style), nullability from unions with null, lists from arrays, and the
 * Subscription field bound by `@topic(name:, key:, format: AVRO)`. What each Avro type becomes is
 * the JSON mapping of docs/schema.md: strings, bytes and logical types are `String`, `int` is
 * `Int`, `long` the scalar `Long` (exact past 2^31 and 2^53), `float`/`double` the scalar `Double`
 * (NaN and ±Infinity are published as strings), the key field `ID`. The result passes the start-up
 * check (sdl-check.ts) against the same schema.
 */
export function sdlFromAvro(options: SdlFromAvroOptions): string {
  let top: AvroSlot;
  try {
    top = readAvroShape(options.schema);
  } catch (err) {
    if (err instanceof AvroShapeError) throw new SdlFromAvroError(err.message);
    throw err;
  }
  return sdlFromShape(top.shape, 'AVRO', options);
}

/**
 * Writes SDL for a payload shape of any registry format (read by `avro-shape.ts`, `protobuf-shape.ts`
 * or `json-schema-shape.ts`): the same rules as {@link sdlFromAvro}, with the format's own scalars
 * (Protobuf: `UInt32`, `JSONObject` for maps and Struct, `JSON` for Value; JSON Schema: `Long` for
 * unbounded integers, `JSONObject` for objects without properties, `JSON` for unions and untyped values).
 */
export function sdlFromShape(payload: AvroShape, format: SdlFormat, options: Omit<SdlFromAvroOptions, 'schema'>): string {
  return renderSdl([sdlPartsFromShape(payload, format, options)]);
}

/** {@link sdlFromShape} in parts; `rename` maps a schema's type name to the GraphQL name to write (default: the same). */
export function sdlPartsFromShape(payload: AvroShape, format: SdlFormat, options: Omit<SdlFromAvroOptions, 'schema'>, rename: (schemaName: string) => string = (n) => n): SdlParts {
  const { topic, field, key, subject, keyStyle } = options;
  const name = keyConverter(keyStyle);
  if (payload.kind !== 'record') throw new SdlFromAvroError(`the schema is ${describeShape(payload)}; an event payload is a record`);
  if (!GRAPHQL_NAME.test(field) || field.startsWith('__')) throw new SdlFromAvroError(`--field ${JSON.stringify(field)} is not a GraphQL field name`);
  const writer = createWriter(name, CUSTOM_SCALARS[format], rename);
  const payloadType = writer.typeName(payload);
  if (key !== undefined) {
    const keyField = payload.fields.find((f) => name(f.name) === key);
    if (keyField === undefined) {
      throw new SdlFromAvroError(`--key ${key} is not a field of record ${payload.name} as published with key style ${keyStyle}: one of ${payload.fields.map((f) => name(f.name)).join(', ')}`);
    }
    if (!['primitive', 'enum'].includes(keyField.shape.kind) || (keyField.shape.kind === 'primitive' && ['object', 'any', 'null'].includes(keyField.shape.json))) {
      throw new SdlFromAvroError(`--key ${key} is ${describeShape(keyField.shape)}; the key must be a scalar field (its entity id)`);
    }
    writer.keyField = { record: payload, avroName: keyField.name };
  }
  writer.drain();
  const topicArguments = [`name: ${JSON.stringify(topic)}`, ...(key === undefined ? [] : [`key: ${JSON.stringify(key)}`]), `format: ${format}`];
  if (subject !== undefined && subject !== `${topic}-value`) topicArguments.push(`subject: ${JSON.stringify(subject)}`);
  const argument = key === undefined ? '' : `(${key}: ID)`;
  return {
    subject: subject ?? `${topic}-value`,
    keyStyle,
    field,
    subscriptionField: `  ${field}${argument}: ${payloadType} @topic(${topicArguments.join(', ')})\n`,
    types: writer.types,
    scalars: writer.scalars,
  };
}

interface Writer {
  readonly types: Map<string, SdlType>;
  readonly scalars: Map<string, string>;
  keyField: { readonly record: AvroShape; readonly avroName: string } | undefined;
  typeName(shape: AvroShape & { readonly name: string }): string;
  drain(): void;
}

function createWriter(name: (avroName: string) => string, scalarOf: Readonly<Record<ScalarRole, readonly [name: string, description: string]>>, rename: (schemaName: string) => string): Writer {
  const types = new Map<string, SdlType>();
  const names = new Map<AvroShape, string>();
  const taken = new Set<string>();
  const pending: AvroShape[] = [];
  const scalars = new Map<string, string>();

  const writer: Writer = {
    types,
    scalars,
    keyField: undefined,
    typeName(shape) {
      const known = names.get(shape);
      if (known !== undefined) return known;
      if (!GRAPHQL_NAME.test(shape.name) || shape.name.startsWith('__')) throw new SdlFromAvroError(`type name ${shape.name} of the schema is not a GraphQL type name`);
      const wanted = rename(shape.name);
      let typeName = wanted;
      for (let n = 2; taken.has(typeName) || SCALAR_NAMES.has(typeName) || ['Subscription', 'Query', 'TopicFormat', 'TopicKeyFormat'].includes(typeName); n++) typeName = `${wanted}${n}`;
      taken.add(typeName);
      names.set(shape, typeName);
      pending.push(shape);
      return typeName;
    },
    drain() {
      for (let shape = pending.shift(); shape !== undefined; shape = pending.shift()) {
        types.set(names.get(shape) as string, { text: blockOf(shape), schemaName: (shape as { readonly name: string }).name });
      }
    },
  };

  function blockOf(shape: AvroShape): string {
    if (shape.kind === 'enum' && shape.open === true) {
      // An open enum publishes a number it does not name as the number, which no GraphQL enum can render (decision 0035).
      const doc = `${shape.doc === undefined || shape.doc.trim() === '' ? '' : `${shape.doc.trim()}\n`}One of ${shape.symbols.join(', ')}, or a number the enum does not name (Protobuf enums are open).`;
      return `${description(doc)}scalar ${names.get(shape) ?? shape.name}\n`;
    }
    if (shape.kind === 'enum') {
      const bad = shape.symbols.find((s) => !GRAPHQL_NAME.test(s) || ['true', 'false', 'null'].includes(s));
      if (bad !== undefined) throw new SdlFromAvroError(`enum ${shape.name}: symbol ${bad} cannot be a GraphQL enum value`);
      return `${description(shape.doc)}enum ${names.get(shape) ?? shape.name} {\n${shape.symbols.map((s) => `  ${s}\n`).join('')}}\n`;
    }
    if (shape.kind !== 'record') throw new SdlFromAvroError(`no type block for ${describeShape(shape)}`);
    const lines: string[] = [];
    for (const f of shape.fields) {
      const fieldName = name(f.name);
      if (!GRAPHQL_NAME.test(fieldName) || fieldName.startsWith('__')) throw new SdlFromAvroError(`record ${shape.name}: field ${f.name} is published as ${JSON.stringify(fieldName)}, not a GraphQL field name: choose another key style`);
      const isKey = writer.keyField?.record === shape && writer.keyField.avroName === f.name;
      lines.push(`${description(f.doc, '  ')}  ${fieldName}: ${isKey ? `ID${f.nullable ? '' : '!'}` : typeOf(f)}\n`);
    }
    if (lines.length === 0) throw new SdlFromAvroError(`record ${shape.name} has no fields; a GraphQL object type needs one`);
    return `${description(shape.doc)}type ${names.get(shape) ?? shape.name} {\n${lines.join('')}}\n`;
  }

  function typeOf(slot: AvroSlot): string {
    return `${namedOf(slot.shape)}${slot.nullable ? '' : '!'}`;
  }

  function namedOf(shape: AvroShape): string {
    switch (shape.kind) {
      case 'record':
        // A message without fields (no GraphQL object type can be empty) publishes `{}`.
        return shape.fields.length === 0 ? custom('map') : writer.typeName(shape);
      case 'enum':
        return writer.typeName(shape);
      case 'array':
        return `[${typeOf(shape.items)}]`;
      case 'map':
        return custom('map');
      case 'union':
        return custom('union');
      case 'primitive':
        if (shape.type === 'fixed/duration') return custom('duration');
        if (shape.json === 'object') return custom('map');
        if (shape.json === 'any' || shape.json === 'null') return custom('any');
        if (shape.json === 'boolean') return 'Boolean';
        if (shape.json === 'int') return 'Int';
        if (shape.json === 'long') return custom('long');
        if (shape.json === 'float') return custom('float');
        return 'String';
    }
  }

  function custom(role: ScalarRole): string {
    const [scalar, doc] = scalarOf[role];
    if (specifiedScalarNames.has(scalar)) return scalar;
    if (!scalars.has(scalar)) scalars.set(scalar, doc);
    return scalar;
  }

  return writer;
}
