// The bench's demo-event schemas in the two other registry formats, derived from the Avro schema
// avsc infers from the events, so that all three describe the same payloads: a proto3 file (numbers
// as int32 / double, so that they stay JSON numbers as in the JSON path; a nullable field `optional`
// or a message, which is null when unset) and a draft-07 JSON Schema (every field required unless
// nullable, no other properties).
import avsc from 'avsc';

type AvroSchema = string | readonly AvroSchema[] | { readonly type: string; readonly [key: string]: unknown };

interface AvroField {
  readonly name: string;
  readonly type: AvroSchema;
}

const PROTO_SCALARS: Readonly<Record<string, string>> = { string: 'string', int: 'int32', long: 'double', float: 'double', double: 'double', boolean: 'bool' };

/** The non-null branch of a `[X, "null"]` union, and whether there was a null branch. */
function unwrap(schema: AvroSchema): { schema: AvroSchema; nullable: boolean } {
  if (!Array.isArray(schema)) return { schema, nullable: false };
  const branches = (schema as readonly AvroSchema[]).filter((b) => b !== 'null');
  if (branches.length !== 1) throw new Error(`the bench's schemas have unions of one type and null only, got ${JSON.stringify(schema)}`);
  return { schema: branches[0] as AvroSchema, nullable: branches.length < (schema as readonly AvroSchema[]).length };
}

/** A proto3 file `package demo;` whose first message `name` has the fields of the Avro record `type`. */
export function protoOf(type: avsc.Type): string {
  const name = (type.name ?? 'Event').split('.').pop() as string;
  const messages: string[] = [];
  let count = 0;
  const message = (record: { readonly fields: readonly AvroField[] }, messageName: string): string => {
    const lines = record.fields.map((field, i) => {
      const { schema, nullable } = unwrap(field.type);
      return `  ${fieldType(schema, nullable)} ${field.name} = ${i + 1};`;
    });
    messages.push(`message ${messageName} {\n${lines.join('\n')}\n}`);
    return messageName;
  };
  const fieldType = (schema: AvroSchema, nullable: boolean): string => {
    if (typeof schema === 'string') {
      const scalar = PROTO_SCALARS[schema];
      if (scalar === undefined) throw new Error(`no proto type for Avro ${schema}`);
      return nullable ? `optional ${scalar}` : scalar;
    }
    const object = schema as { readonly type: string; readonly [key: string]: unknown };
    if (object.type === 'record') return message(object as unknown as { fields: readonly AvroField[] }, `Part${++count}`);
    if (object.type === 'array') return `repeated ${fieldType(unwrap(object['items'] as AvroSchema).schema, false)}`;
    if (object.type === 'map') return `map<string, ${fieldType(unwrap(object['values'] as AvroSchema).schema, false)}>`;
    throw new Error(`no proto type for Avro ${JSON.stringify(schema)}`);
  };
  const top = type.schema() as unknown as { fields: readonly AvroField[] };
  const first = message(top, name);
  // The event's message first: Confluent's serializer writes its index, [0], as one byte.
  const ordered = [messages.find((m) => m.startsWith(`message ${first} `)) as string, ...messages.filter((m) => !m.startsWith(`message ${first} `))];
  return `syntax = "proto3";\npackage demo;\n\n${ordered.join('\n\n')}\n`;
}

/** A draft-07 JSON Schema for the Avro record `type`. */
export function jsonSchemaOf(type: avsc.Type): Record<string, unknown> {
  const of = (avro: AvroSchema): Record<string, unknown> => {
    const { schema, nullable } = unwrap(avro);
    let json: Record<string, unknown>;
    if (typeof schema === 'string') {
      json = { type: { string: 'string', int: 'integer', long: 'integer', float: 'number', double: 'number', boolean: 'boolean' }[schema] ?? 'null' };
    } else {
      const object = schema as { readonly type: string; readonly [key: string]: unknown };
      if (object.type === 'record') {
        const fields = object['fields'] as readonly AvroField[];
        json = {
          type: 'object',
          properties: Object.fromEntries(fields.map((f) => [f.name, of(f.type)])),
          required: fields.filter((f) => !unwrap(f.type).nullable).map((f) => f.name),
          additionalProperties: false,
        };
      } else if (object.type === 'array') json = { type: 'array', items: of(object['items'] as AvroSchema) };
      else json = { type: 'object', additionalProperties: of(object['values'] as AvroSchema) };
    }
    return nullable ? { anyOf: [{ type: 'null' }, json] } : json;
  };
  return { $schema: 'http://json-schema.org/draft-07/schema#', title: type.name ?? 'Event', ...of(type.schema() as AvroSchema) };
}

/** A JSON value without its null fields: protobuf-es (Confluent's serializer's messages) takes an absent field, not null. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== null).map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === null ? [] : [[k, withoutNulls(v)]])));
}

/**
 * An Avro schema that every value of `values` fits: avsc infers one per value, then merges them
 * (in slices, so that hundreds of thousands of events do not make one huge union); fractions as
 * `double` (avsc infers `float` where a value fits one, which no JSON producer means).
 */
export function inferSchema(name: string, values: readonly unknown[]): avsc.Type {
  let merged: avsc.Type | undefined;
  for (let i = 0; i < values.length; i += 2_000) {
    const types = values.slice(i, i + 2_000).map((value) => avsc.Type.forValue(value as object));
    merged = avsc.Type.forTypes(merged === undefined ? types : [merged, ...types], { wrapUnions: false });
  }
  if (merged === undefined) throw new Error(`no ${name} values to infer a schema from`);
  const schema = JSON.parse(JSON.stringify({ ...(merged.schema() as object), name }).replaceAll('"float"', '"double"')) as avsc.Schema;
  return avsc.Type.forSchema(namedRecords(schema, name) as avsc.Schema);
}

/**
 * The schema with a name for every record avsc left anonymous (`<name>Part<n>`): the Avro spec
 * requires one, and ingest's start-up check reads the schema as the spec does.
 */
function namedRecords(schema: unknown, name: string): unknown {
  let count = 0;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const object = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'name' || k === 'type' && typeof v === 'string' ? v : walk(v)]));
    return object['type'] === 'record' && object['name'] === undefined ? { ...object, name: `${name}Part${++count}` } : object;
  };
  return walk(schema);
}
