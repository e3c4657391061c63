import protobuf from 'protobufjs';
import type { AvroField, AvroShape, AvroSlot } from './avro-shape.js';
import { hasDeclaredDefault, loadProtobufFile, ProtobufSchemaError } from './protobuf-json.js';

/**
 * A Protobuf schema (`.proto` text or the base64 descriptor Confluent's serializer registers) read
 * into the shapes its payloads have in JSON (docs/schema.md, "JSON mapping (Protobuf)"), in the same
 * form as an Avro schema's (`avro-shape.ts`): what the start-up check compares an SDL with and what
 * `wirestream-schema from-registry` writes SDL from. Decoding does not use it (protobuf-json.ts).
 *
 * Nullability follows what ingest publishes: fields without presence always carry a value (their
 * default when absent), so they are non-null; fields with presence (messages, wrappers, proto3 and
 * proto2 `optional` without a declared default) and oneof members may be null.
 */
export interface ProtobufShapes {
  /** The file's top-level messages in declaration order (message index `[i]`), as record shapes. */
  readonly messages: readonly (AvroShape & { readonly kind: 'record' })[];
  /** Every message of the file, nested ones too, by its path in the file: `Outer`, `Outer.Inner` (message indexes `[i]`, `[i, j]`). */
  readonly paths: readonly string[];
  /**
   * The message `name` names (see {@link PROTOBUF_MESSAGE_RULE}): its full name (`shop.Outer.Inner`), its
   * path in the file (`Outer.Inner`), or its simple name (`Inner`), nested messages included; undefined when none.
   */
  find(name: string): (AvroShape & { readonly kind: 'record' }) | undefined;
  /** The message `name` names, else the first top-level message no other message holds (a file declaring `Money` before `BidPlaced` carries `BidPlaced`). */
  pick(name: string | undefined): AvroShape & { readonly kind: 'record' };
}

/**
 * Which message of a .proto file a topic carries, in one place for the generator (`--message`), the
 * start-up check and the docs: the one named (full name, path in the file such as `Outer.Inner`, or
 * simple name; nested messages too, as ingest decodes message-index paths like `[1, 0]`); without a
 * name (the generator) or when the name names none (the check, which names the SDL's payload type), the
 * file's first top-level message that no other message holds.
 */
export const PROTOBUF_MESSAGE_RULE =
  'the message named (its full name, its path in the file such as Outer.Inner, or its simple name; nested messages too), else the file\'s first top-level message that no other message holds';

const WRAPPER_VALUE = new Set(['DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue']);

/** Reads the messages of a Protobuf schema; `imports` are the texts of the files it imports by schema reference. */
export function readProtobufShapes(schemaText: string, imports?: ReadonlyMap<string, string>): ProtobufShapes {
  const { messages } = loadProtobufFile(schemaText, imports);
  if (messages.length === 0) throw new ProtobufSchemaError('the .proto file declares no message');
  const shapes = new Map<protobuf.Type | protobuf.Enum, AvroShape>();
  const records = messages.map((type) => messageShape(type, shapes)).filter((s): s is AvroShape & { kind: 'record' } => s.kind === 'record');
  const all = messages.flatMap((type) => withNested(type, type.name));
  const recordOf = (type: protobuf.Type): (AvroShape & { kind: 'record' }) | undefined => {
    const shape = messageShape(type, shapes);
    return shape.kind === 'record' ? shape : undefined;
  };
  const find = (name: string): (AvroShape & { kind: 'record' }) | undefined => {
    const wanted = name.startsWith('.') ? name.slice(1) : name;
    const found = all.find((m) => m.type.fullName.slice(1) === wanted) ?? all.find((m) => m.path === wanted) ?? all.find((m) => m.type.name === wanted);
    return found === undefined ? undefined : recordOf(found.type);
  };
  return {
    messages: records,
    paths: all.map((m) => m.path),
    find,
    pick(name) {
      const named = name === undefined ? undefined : find(name);
      if (named !== undefined) return named;
      const held = new Set<AvroShape>();
      for (const record of records) for (const field of record.fields) held.add(innermost(field.shape));
      return (records.find((r) => !held.has(r)) ?? records[0]) as AvroShape & { kind: 'record' };
    },
  };
}

/** A message and the messages nested in it, depth first in declaration order, with their paths in the file. */
function withNested(type: protobuf.Type, path: string): { type: protobuf.Type; path: string }[] {
  const nested = type.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type && !(n.options?.['map_entry'] === true));
  return [{ type, path }, ...nested.flatMap((n) => withNested(n, `${path}.${n.name}`))];
}

/** The shape a field holds, through lists and maps. */
function innermost(shape: AvroShape): AvroShape {
  if (shape.kind === 'array') return innermost(shape.items.shape);
  if (shape.kind === 'map') return innermost(shape.values.shape);
  return shape;
}

function messageShape(type: protobuf.Type, shapes: Map<protobuf.Type | protobuf.Enum, AvroShape>): AvroShape {
  const known = shapes.get(type);
  if (known !== undefined) return known;
  const wellKnown = wellKnownShape(type, shapes);
  if (wellKnown !== undefined) {
    shapes.set(type, wellKnown);
    return wellKnown;
  }
  const fields: AvroField[] = [];
  const record: AvroShape = { kind: 'record', name: type.name, doc: type.comment ?? undefined, fields };
  shapes.set(type, record);
  for (const field of type.fieldsArray) {
    field.resolve();
    fields.push({ name: field.name, doc: field.comment ?? undefined, ...fieldSlot(field, shapes) });
  }
  return record;
}

function fieldSlot(field: protobuf.Field, shapes: Map<protobuf.Type | protobuf.Enum, AvroShape>): AvroSlot {
  const single = singleShape(field.type, field.resolvedType, shapes);
  if (field instanceof protobuf.MapField) return { shape: { kind: 'map', values: { shape: single, nullable: false } }, nullable: false };
  if (field.repeated) return { shape: { kind: 'array', items: { shape: single, nullable: isNullValue(field.resolvedType) } }, nullable: false };
  const realOneof = field.partOf !== null && !field.partOf.isProto3Optional;
  // As the writer publishes it (protobuf-json.ts): a message always has presence; a declared proto2 default fills an unset field.
  const presence = field.hasPresence || field.resolvedType instanceof protobuf.Type;
  const defaulted = hasDeclaredDefault(field);
  const nullable = realOneof || isNullValue(field.resolvedType) || single.kind === 'primitive' && single.json === 'null' || (presence && !field.required && !defaulted);
  return { shape: single, nullable };
}

function isNullValue(resolved: protobuf.Type | protobuf.Enum | null): boolean {
  return resolved instanceof protobuf.Enum && resolved.fullName === '.google.protobuf.NullValue';
}

function singleShape(typeName: string, resolved: protobuf.Type | protobuf.Enum | null, shapes: Map<protobuf.Type | protobuf.Enum, AvroShape>): AvroShape {
  if (resolved instanceof protobuf.Type) return messageShape(resolved, shapes);
  if (resolved instanceof protobuf.Enum) {
    if (isNullValue(resolved)) return { kind: 'primitive', type: 'google.protobuf.NullValue', json: 'null' };
    // One shape per enum: an enum used by several fields is one GraphQL type, not Status and Status2.
    const known = shapes.get(resolved);
    if (known !== undefined) return known;
    // Every Protobuf enum is published open: protobufjs keeps a number the enum does not name (proto2's too), and so does the mapping.
    const shape: AvroShape = { kind: 'enum', name: resolved.name, doc: resolved.comment ?? undefined, symbols: Object.keys(resolved.values), open: true };
    shapes.set(resolved, shape);
    return shape;
  }
  return scalarShape(typeName);
}

/** What a scalar field is published as: 64-bit integers always as strings, uint32/fixed32 as numbers that may pass GraphQL Int. */
function scalarShape(typeName: string): AvroShape {
  switch (typeName) {
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return { kind: 'primitive', type: typeName, json: 'int' };
    case 'uint32':
    case 'fixed32':
      return { kind: 'primitive', type: typeName, json: 'long' };
    case 'double':
    case 'float':
      return { kind: 'primitive', type: typeName, json: 'float' };
    case 'bool':
      return { kind: 'primitive', type: typeName, json: 'boolean' };
    default:
      // string, bytes (base64), and the 64-bit integers (their digits as a string)
      return { kind: 'primitive', type: typeName, json: 'string' };
  }
}

/** The well-known types with a JSON form of their own; the others are ordinary messages. */
function wellKnownShape(type: protobuf.Type, shapes: Map<protobuf.Type | protobuf.Enum, AvroShape>): AvroShape | undefined {
  const name = type.fullName;
  if (!name.startsWith('.google.protobuf.')) return undefined;
  const short = name.slice('.google.protobuf.'.length);
  if (short === 'Timestamp' || short === 'Duration') return { kind: 'primitive', type: `google.protobuf.${short}`, json: 'string' };
  if (WRAPPER_VALUE.has(short)) {
    const value = type.fields['value'] as protobuf.Field;
    const inner = scalarShape(value.type);
    return { ...(inner as AvroShape & { kind: 'primitive' }), type: `google.protobuf.${short}` };
  }
  if (short === 'Struct' || short === 'Empty') return { kind: 'primitive', type: `google.protobuf.${short}`, json: 'object' };
  if (short === 'Value') return { kind: 'primitive', type: 'google.protobuf.Value', json: 'any' };
  if (short === 'ListValue') return { kind: 'array', items: { shape: { kind: 'primitive', type: 'google.protobuf.Value', json: 'any' }, nullable: true } };
  void shapes;
  return undefined;
}
