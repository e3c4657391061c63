/**
 * An Avro schema (its JSON text, as registered) read into the shapes its payloads have in JSON
 * (docs/schema.md, "JSON mapping"): what the start-up check compares an SDL with and what
 * `wirestream-schema from-registry` writes SDL from. Decoding does not use it (avro-json.ts).
 */

/** Where a value sits: its shape, and whether it may be null (a union with `null`). */
export interface AvroSlot {
  readonly shape: AvroShape;
  readonly nullable: boolean;
}

export interface AvroField extends AvroSlot {
  /** The field's name in the schema (before the key style). */
  readonly name: string;
  readonly doc: string | undefined;
  /**
   * Versions of the subject whose record lacks the field (their events publish no such key), when the
   * shape is read from several versions (`shape-history.ts`); such a field is nullable.
   */
  readonly absentIn?: readonly number[];
}

/** What a value becomes in the published JSON. */
/** `any`: a JSON value of any type (Protobuf's `google.protobuf.Value`, an untyped JSON Schema). */
export type AvroJsonKind = 'boolean' | 'int' | 'long' | 'float' | 'string' | 'null' | 'object' | 'any';

export type AvroShape =
  | { readonly kind: 'record'; readonly name: string; readonly doc: string | undefined; readonly fields: AvroField[] }
  /** `open`: a number the schema does not name is published as the number (Protobuf enums, docs/schema.md). */
  | { readonly kind: 'enum'; readonly name: string; readonly doc: string | undefined; readonly symbols: readonly string[]; readonly open?: boolean }
  | { readonly kind: 'array'; readonly items: AvroSlot }
  | { readonly kind: 'map'; readonly values: AvroSlot }
  /** `type` the Avro type (with its logical type, when valid on it), `json` what it is published as. */
  | { readonly kind: 'primitive'; readonly type: string; readonly json: AvroJsonKind }
  /** A union of two or more non-null branches. */
  | { readonly kind: 'union'; readonly branches: readonly AvroShape[] };

/** An Avro schema this module cannot read (the registry accepted it, so rare: a reference to another subject). */
export class AvroShapeError extends Error {
  override readonly name = 'AvroShapeError';
}

const PRIMITIVE_JSON: Readonly<Record<string, AvroJsonKind>> = {
  null: 'null',
  boolean: 'boolean',
  int: 'int',
  long: 'long',
  float: 'float',
  double: 'float',
  bytes: 'string', // base64
  string: 'string',
};

// Logical types, on the underlying types where the specification defines them (elsewhere ignored, as avro-json.ts does).
const LOGICAL_ON: Readonly<Record<string, readonly string[]>> = {
  'timestamp-millis': ['long'],
  'timestamp-micros': ['long'],
  'timestamp-nanos': ['long'],
  'local-timestamp-millis': ['long'],
  'local-timestamp-micros': ['long'],
  'local-timestamp-nanos': ['long'],
  date: ['int'],
  'time-millis': ['int'],
  'time-micros': ['long'],
  decimal: ['bytes', 'fixed'],
  uuid: ['string', 'fixed'],
  duration: ['fixed'],
};

/** Reads the schema text into its top-level slot (a record, for an event payload). */
export function readAvroShape(schemaText: string, references: readonly string[] = []): AvroSlot {
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new AvroShapeError(`not an Avro schema (not JSON): ${(err as Error).message}`);
    }
  };
  const named = new Map<string, AvroShape>();
  // Schema references, in dependency order: their named types are known by name in the schema.
  for (const text of references) slotOf(parse(text), '', named);
  return slotOf(parse(schemaText), '', named);
}

function slotOf(schema: unknown, namespace: string, named: Map<string, AvroShape>): AvroSlot {
  if (Array.isArray(schema)) {
    const branches = schema.map((branch) => shapeOf(branch, namespace, named));
    const nonNull = branches.filter((b) => !(b.kind === 'primitive' && b.type === 'null'));
    const nullable = nonNull.length < branches.length;
    if (nonNull.length === 0) return { shape: { kind: 'primitive', type: 'null', json: 'null' }, nullable: true };
    if (nonNull.length === 1) return { shape: nonNull[0] as AvroShape, nullable };
    return { shape: { kind: 'union', branches: nonNull }, nullable };
  }
  const shape = shapeOf(schema, namespace, named);
  return { shape, nullable: shape.kind === 'primitive' && shape.type === 'null' };
}

function shapeOf(schema: unknown, namespace: string, named: Map<string, AvroShape>): AvroShape {
  if (typeof schema === 'string') {
    const json = PRIMITIVE_JSON[schema];
    if (json !== undefined) return { kind: 'primitive', type: schema, json };
    const found = named.get(schema.includes('.') ? schema : `${namespace}.${schema}`) ?? named.get(schema);
    if (found === undefined) throw new AvroShapeError(`unknown Avro type ${JSON.stringify(schema)} (a reference to another subject is not resolved)`);
    return found;
  }
  if (Array.isArray(schema)) throw new AvroShapeError('a union directly inside a union is not valid Avro');
  if (typeof schema !== 'object' || schema === null) throw new AvroShapeError(`not an Avro type: ${JSON.stringify(schema)}`);
  const node = schema as Record<string, unknown>;
  const type = node['type'];
  const doc = typeof node['doc'] === 'string' ? node['doc'] : undefined;
  if (typeof type !== 'string' && Array.isArray(type)) return slotOf(type, namespace, named).shape;
  if (typeof type === 'object' && type !== null) return shapeOf(type, namespace, named);
  const logical = typeof node['logicalType'] === 'string' ? node['logicalType'] : undefined;
  const logicalOn = logical === undefined ? undefined : LOGICAL_ON[logical];
  const logicalValid = logical !== undefined && logicalOn !== undefined && typeof type === 'string' && logicalOn.includes(type);
  switch (type) {
    case 'record':
    case 'error': {
      const { fullName, ownNamespace } = nameOf(node, namespace);
      const record: AvroShape = { kind: 'record', name: shortName(fullName), doc, fields: [] };
      named.set(fullName, record);
      const fields = Array.isArray(node['fields']) ? (node['fields'] as unknown[]) : [];
      for (const field of fields) {
        const f = field as Record<string, unknown>;
        if (typeof f['name'] !== 'string') throw new AvroShapeError(`record ${fullName}: a field without a name`);
        const slot = slotOf(f['type'], ownNamespace, named);
        record.fields.push({ name: f['name'], doc: typeof f['doc'] === 'string' ? f['doc'] : undefined, ...slot });
      }
      return record;
    }
    case 'enum': {
      const { fullName } = nameOf(node, namespace);
      const symbols = Array.isArray(node['symbols']) ? (node['symbols'] as unknown[]).filter((s): s is string => typeof s === 'string') : [];
      const shape: AvroShape = { kind: 'enum', name: shortName(fullName), doc, symbols };
      named.set(fullName, shape);
      return shape;
    }
    case 'fixed': {
      const { fullName } = nameOf(node, namespace);
      const shape: AvroShape = logicalValid
        ? { kind: 'primitive', type: `fixed/${logical}`, json: logical === 'duration' ? 'object' : 'string' }
        : { kind: 'primitive', type: 'fixed', json: 'string' };
      named.set(fullName, shape);
      return shape;
    }
    case 'array':
      return { kind: 'array', items: slotOf(node['items'], namespace, named) };
    case 'map':
      return { kind: 'map', values: slotOf(node['values'], namespace, named) };
    default: {
      if (typeof type !== 'string' || PRIMITIVE_JSON[type] === undefined) return shapeOf(type, namespace, named);
      // Every logical type but duration is published as a string (RFC 3339, YYYY-MM-DD, decimal digits, uuid text).
      return logicalValid ? { kind: 'primitive', type: `${type}/${logical}`, json: 'string' } : shapeOf(type, namespace, named);
    }
  }
}

function nameOf(node: Record<string, unknown>, enclosing: string): { fullName: string; ownNamespace: string } {
  const name = node['name'];
  if (typeof name !== 'string') throw new AvroShapeError(`a named Avro type without a name: ${JSON.stringify(node).slice(0, 80)}`);
  const namespace = typeof node['namespace'] === 'string' ? node['namespace'] : enclosing;
  const fullName = name.includes('.') || namespace === '' ? name : `${namespace}.${name}`;
  return { fullName, ownNamespace: fullName.includes('.') ? fullName.slice(0, fullName.lastIndexOf('.')) : '' };
}

function shortName(fullName: string): string {
  return fullName.slice(fullName.lastIndexOf('.') + 1);
}

/** `long`, `string/uuid`, `record BidPlaced`, `array<int>`…: how messages name an Avro type. */
export function describeShape(shape: AvroShape): string {
  switch (shape.kind) {
    case 'record':
      return `record ${shape.name}`;
    case 'enum':
      return `enum ${shape.name}`;
    case 'array':
      return `array<${describeShape(shape.items.shape)}>`;
    case 'map':
      return `map<${describeShape(shape.values.shape)}>`;
    case 'primitive':
      return shape.type;
    case 'union':
      return `union [${shape.branches.map(describeShape).join(', ')}]`;
  }
}
