import type { AvroField, AvroShape, AvroSlot } from './avro-shape.js';

/**
 * A JSON Schema (as registered) read into the shapes its payloads have, in the same form as an Avro
 * schema's (`avro-shape.ts`): what the start-up check compares an SDL with and what `wirestream-schema
 * from-registry` writes SDL from. A JSON_SCHEMA body is published as written (keys by the key rule),
 * so the shape is the schema's: `object` with `properties` → a record (a property not in
 * `required`, or whose type allows `null`, is nullable), `object` without them → a map, `array` →
 * a list of `items`, `integer` → Int when `minimum`/`maximum` keep it in 32 bits, else a number that
 * may pass it, `number` → Float, an `enum` of names → an enum. `$ref`s inside the schema
 * (`#/definitions/…`, `#/$defs/…`) and, by schema reference, to other schemas (`refs`, by the `$ref`'s
 * text before `#`) are followed; `allOf` merges objects; `oneOf`/`anyOf` with `null` are nullable,
 * of several other types a union.
 */

/** A JSON Schema this module cannot read (a `$ref` no schema reference gives, an unknown type). */
export class JsonSchemaShapeError extends Error {
  override readonly name = 'JsonSchemaShapeError';
}

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

type Node = Record<string, unknown>;

interface Reader {
  /** Shapes by the schema node they were read from (recursive `$ref`s end). */
  readonly seen: Map<Node, AvroShape>;
  readonly refs: ReadonlyMap<string, string>;
  /** Parsed documents by reference name ('' is the schema itself). */
  readonly documents: Map<string, unknown>;
}

/** Reads the schema text into its top-level slot; `fallbackName` names the top record when it has no `title`. */
export function readJsonSchemaShape(schemaText: string, fallbackName: string, refs: ReadonlyMap<string, string> = new Map()): AvroSlot {
  const root = parse(schemaText, 'the schema');
  const reader: Reader = { seen: new Map(), refs, documents: new Map([['', root]]) };
  return slotOf(root, '', pascal(fallbackName) || 'Event', reader);
}

function parse(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new JsonSchemaShapeError(`${what} is not JSON: ${(err as Error).message}`);
  }
}

/** `bid-events-value` → `BidEventsValue`; `line_items` → `LineItems`. */
function pascal(text: string): string {
  const name = text
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');
  return /^[0-9]/.test(name) ? `T${name}` : name;
}

function slotOf(schema: unknown, documentName: string, nameHint: string, reader: Reader): AvroSlot {
  if (schema === true || schema === undefined) return { shape: { kind: 'primitive', type: 'any', json: 'any' }, nullable: true };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new JsonSchemaShapeError(`not a JSON Schema: ${JSON.stringify(schema)?.slice(0, 80)}`);
  const node = schema as Node;
  if (typeof node['$ref'] === 'string') {
    const { target, document, name } = resolveRef(node['$ref'], documentName, reader);
    return slotOf(target, document, name ?? nameHint, reader);
  }
  const types = typesOf(node);
  const nullable = types.includes('null') || (Array.isArray(node['enum']) && node['enum'].includes(null));
  const branches = (node['oneOf'] ?? node['anyOf']);
  if (Array.isArray(branches) && types.length === 0 && node['properties'] === undefined) {
    const slots = branches.map((b, i) => slotOf(b, documentName, `${nameHint}${i + 1}`, reader));
    const nonNull = slots.filter((s) => !(s.shape.kind === 'primitive' && s.shape.json === 'null'));
    const anyNull = nonNull.length < slots.length || slots.some((s) => s.nullable);
    if (nonNull.length === 1) return { shape: (nonNull[0] as AvroSlot).shape, nullable: anyNull || nullable };
    if (nonNull.length === 0) return { shape: { kind: 'primitive', type: 'null', json: 'null' }, nullable: true };
    return { shape: { kind: 'union', branches: nonNull.map((s) => s.shape) }, nullable: anyNull || nullable };
  }
  const nonNullTypes = types.filter((t) => t !== 'null');
  if (nonNullTypes.length > 1) return { shape: { kind: 'union', branches: nonNullTypes.map((t) => shapeOfType(t, node, documentName, nameHint, reader)) }, nullable };
  const type = nonNullTypes[0] ?? (types.includes('null') ? 'null' : inferredType(node));
  if (type === undefined) return { shape: { kind: 'primitive', type: 'any', json: 'any' }, nullable: true };
  return { shape: shapeOfType(type, node, documentName, nameHint, reader), nullable: nullable || type === 'null' };
}

function typesOf(node: Node): string[] {
  const type = node['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

/** A node without `type`: what its keywords say it is. */
function inferredType(node: Node): string | undefined {
  if (node['properties'] !== undefined || node['additionalProperties'] !== undefined || Array.isArray(node['allOf'])) return 'object';
  if (node['items'] !== undefined) return 'array';
  if (Array.isArray(node['enum'])) {
    const values = (node['enum'] as unknown[]).filter((v) => v !== null);
    if (values.every((v) => typeof v === 'string')) return 'string';
    if (values.every((v) => typeof v === 'number')) return values.every(Number.isInteger) ? 'integer' : 'number';
  }
  if (typeof node['const'] === 'string') return 'string';
  if (typeof node['const'] === 'number') return 'number';
  if (typeof node['const'] === 'boolean') return 'boolean';
  return undefined;
}

function shapeOfType(type: string, node: Node, documentName: string, nameHint: string, reader: Reader): AvroShape {
  switch (type) {
    case 'object':
      return objectShape(node, documentName, nameHint, reader);
    case 'array': {
      const items = node['items'];
      if (Array.isArray(items) || Array.isArray(node['prefixItems'])) return { kind: 'array', items: { shape: { kind: 'primitive', type: 'any', json: 'any' }, nullable: true } };
      const item = slotOf(items, documentName, singular(nameHint), reader);
      return { kind: 'array', items: item };
    }
    case 'string': {
      const values = Array.isArray(node['enum']) ? (node['enum'] as unknown[]).filter((v) => v !== null) : undefined;
      if (values !== undefined && values.length > 0 && values.every((v) => typeof v === 'string' && GRAPHQL_NAME.test(v) && !['true', 'false', 'null'].includes(v))) {
        const title = typeof node['title'] === 'string' ? pascal(node['title']) : '';
        return { kind: 'enum', name: title || nameHint, doc: docOf(node), symbols: values as string[] };
      }
      const format = typeof node['format'] === 'string' ? `/${node['format']}` : '';
      return { kind: 'primitive', type: `string${format}`, json: 'string' };
    }
    case 'integer': {
      const min = numberOf(node['minimum']) ?? numberOf(node['exclusiveMinimum']);
      const max = numberOf(node['maximum']) ?? numberOf(node['exclusiveMaximum']);
      const in32 = min !== undefined && max !== undefined && min >= INT32_MIN && max <= INT32_MAX;
      return { kind: 'primitive', type: in32 ? 'integer/int32' : 'integer', json: in32 ? 'int' : 'long' };
    }
    case 'number':
      return { kind: 'primitive', type: 'number', json: 'float' };
    case 'boolean':
      return { kind: 'primitive', type: 'boolean', json: 'boolean' };
    case 'null':
      return { kind: 'primitive', type: 'null', json: 'null' };
    default:
      throw new JsonSchemaShapeError(`unknown JSON Schema type ${JSON.stringify(type)}`);
  }
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.endsWith('s') && !name.endsWith('ss') ? name.slice(0, -1) : `${name}Item`;
}

function docOf(node: Node): string | undefined {
  return typeof node['description'] === 'string' ? node['description'] : undefined;
}

/** `properties` (with `allOf` members merged) → a record; an object without properties → a map of its `additionalProperties`. */
function objectShape(node: Node, documentName: string, nameHint: string, reader: Reader): AvroShape {
  const known = reader.seen.get(node);
  if (known !== undefined) return known;
  const parts = collectObjectParts(node, documentName, reader, new Set());
  if (parts.length === 0 || parts.every((p) => p.node['properties'] === undefined)) {
    const extra = node['additionalProperties'];
    const values = typeof extra === 'object' && extra !== null ? slotOf(extra, documentName, `${nameHint}Value`, reader) : { shape: { kind: 'primitive', type: 'any', json: 'any' } as AvroShape, nullable: true };
    const map: AvroShape = { kind: 'map', values };
    reader.seen.set(node, map);
    return map;
  }
  const title = typeof node['title'] === 'string' ? pascal(node['title']) : '';
  const fields: AvroField[] = [];
  const record: AvroShape = { kind: 'record', name: title || nameHint, doc: docOf(node), fields };
  reader.seen.set(node, record);
  for (const part of parts) {
    const required = new Set(Array.isArray(part.node['required']) ? (part.node['required'] as unknown[]).filter((r): r is string => typeof r === 'string') : []);
    const properties = (part.node['properties'] ?? {}) as Record<string, unknown>;
    for (const [name, property] of Object.entries(properties)) {
      if (fields.some((f) => f.name === name)) continue;
      const slot = slotOf(property, part.document, pascal(name) || 'Field', reader);
      const doc = typeof property === 'object' && property !== null ? docOf(property as Node) : undefined;
      fields.push({ name, doc, shape: slot.shape, nullable: slot.nullable || !required.has(name) });
    }
  }
  return record;
}

/** The node and the objects its `allOf` members (and their `$ref`s) add. */
function collectObjectParts(node: Node, document: string, reader: Reader, visited: Set<Node>): { node: Node; document: string }[] {
  if (visited.has(node)) return [];
  visited.add(node);
  const parts = [{ node, document }];
  for (const member of Array.isArray(node['allOf']) ? (node['allOf'] as unknown[]) : []) {
    if (typeof member !== 'object' || member === null) continue;
    let target = member as Node;
    let targetDocument = document;
    if (typeof target['$ref'] === 'string') {
      const resolved = resolveRef(target['$ref'], document, reader);
      if (typeof resolved.target !== 'object' || resolved.target === null) continue;
      target = resolved.target as Node;
      targetDocument = resolved.document;
    }
    parts.push(...collectObjectParts(target, targetDocument, reader, visited));
  }
  return parts;
}

/** A `$ref` inside the document (`#/…`) or to another schema (by schema reference: `other.json#/…`); its last segment names a type. */
function resolveRef(ref: string, documentName: string, reader: Reader): { target: unknown; document: string; name: string | undefined } {
  const hash = ref.indexOf('#');
  const external = hash < 0 ? ref : ref.slice(0, hash);
  const pointer = hash < 0 ? '' : ref.slice(hash + 1);
  const document = external === '' ? documentName : external;
  let root = reader.documents.get(document);
  if (root === undefined) {
    const text = reader.refs.get(document);
    if (text === undefined) throw new JsonSchemaShapeError(`$ref ${JSON.stringify(ref)} names ${document}, which no schema reference gives: register it as a reference of the schema`);
    root = parse(text, `the referenced schema ${document}`);
    reader.documents.set(document, root);
  }
  let target: unknown = root;
  const segments = pointer.split('/').slice(1).map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
  for (const segment of segments) {
    if (typeof target !== 'object' || target === null) throw new JsonSchemaShapeError(`$ref ${JSON.stringify(ref)} does not point into the schema`);
    target = (target as Record<string, unknown>)[segment];
  }
  if (target === undefined) throw new JsonSchemaShapeError(`$ref ${JSON.stringify(ref)} points at nothing`);
  const last = segments.at(-1);
  const title = typeof target === 'object' && target !== null && typeof (target as Node)['title'] === 'string' ? ((target as Node)['title'] as string) : undefined;
  const name = pascal(title ?? last ?? document.replace(/\.json$/, ''));
  return { target, document, name: name === '' ? undefined : name };
}
