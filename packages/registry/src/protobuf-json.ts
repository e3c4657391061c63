import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor.js';
import { floatText } from './avro-bytes.js';
import type { FieldNamer, WireDecoder } from './wire-decoder.js';
import { readMessageIndexes } from './wire-format.js';
import { ProtobufSchemaError } from './schema-errors.js';

export { ProtobufSchemaError } from './schema-errors.js';

/** The well-known files a schema may import without a schema reference (protobufjs ships them). */
const WELL_KNOWN_FILES = Object.freeze(['any', 'duration', 'empty', 'field_mask', 'struct', 'timestamp', 'wrappers'].map((name) => `google/protobuf/${name}.proto`));

/** Writes one decoded value (a protobufjs message's property) as JSON text. */
type ValueWriter = (value: unknown) => string;

/**
 * Compiles a Protobuf schema (the writer's, as registered: `.proto` text as a registry serves it, or
 * the base64 `FileDescriptorProto` Confluent's JavaScript serializer registers) for decoding into
 * JSON: the body (after the 5-byte header) starts with the message-index list that picks the
 * message type of the file; protobufjs decodes it (its generated decoder, compiled once per type)
 * and a writer compiled per message type turns the decoded message into the payload's JSON text,
 * with the mapping of docs/schema.md. Throws {@link ProtobufSchemaError} for a schema it cannot use.
 */
/**
 * protobufjs's Buffer reader, but every `string` field (or map key) that is not valid UTF-8 fails the
 * decode (UNDECODABLE, as in Avro and JSON Schema), with one message: protobufjs verifies proto3 strings
 * itself (`stringVerify`, Node's TextDecoder message) and publishes proto2 ones with U+FFFD in place of
 * their bytes (`string`).
 */
class Utf8Reader extends protobuf.BufferReader {
  override string(): string {
    const bytes = this.bytes(); // a Buffer slice: BufferReader reads Node Buffers
    if (!isUtf8(bytes)) throw new Error(`a string field is not valid UTF-8 (at byte ${this.pos - bytes.length})`);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  override stringVerify(): string {
    return this.string();
  }
}

export function compileProtobufDecoder(schemaText: string, fieldName: FieldNamer, imports?: ReadonlyMap<string, string>): WireDecoder {
  const { messages } = loadProtobufFile(schemaText, imports);
  if (messages.length === 0) throw new ProtobufSchemaError('the .proto file declares no message');
  const writers = new Map<protobuf.Type, (message: protobuf.Message) => string>();
  for (const type of messages) checkFieldNames(type, fieldName, new Set());
  const writerOf = (type: protobuf.Type): ((message: protobuf.Message) => string) => {
    let writer = writers.get(type);
    if (writer === undefined) {
      writer = compileMessageWriter(type, fieldName, writerOf);
      writers.set(type, writer);
    }
    return writer;
  };

  function decodeMessage(body: Buffer): { type: protobuf.Type; message: protobuf.Message } {
    const found = readMessageIndexes(body, 0);
    if (found === undefined) throw new Error('the message-index list after the header is cut short or invalid');
    const type = messageAt(messages, found.indexes);
    return { type, message: type.decode(new Utf8Reader(body.subarray(found.bodyOffset))) };
  }

  // The route field of each type, found once (a topic has one).
  const routeFields = new Map<protobuf.Type, Map<string, protobuf.Field | undefined>>();
  function routeFieldOf(type: protobuf.Type, routeField: string): protobuf.Field | undefined {
    let byName = routeFields.get(type);
    if (byName === undefined) routeFields.set(type, (byName = new Map<string, protobuf.Field | undefined>()));
    if (!byName.has(routeField)) byName.set(routeField, type.fieldsArray.find((f) => fieldName(f.name) === routeField && !f.repeated && !f.map));
    return byName.get(routeField);
  }

  function decodeJson(body: Buffer, routeField: string | undefined): { json: string; routeValue: string | undefined } {
    const { type, message } = decodeMessage(body);
    const json = writerOf(type)(message);
    return { json, routeValue: routeField === undefined ? undefined : routeValueOf(routeFieldOf(type, routeField), message) };
  }

  return {
    isRecord: true,
    fields: (messages[0] as protobuf.Type).fieldsArray.map((f) => fieldName(f.name)),
    decode: decodeJson,
    decodeEnvelope(body, head, suffix, routeField) {
      const { json, routeValue } = decodeJson(body, routeField);
      return { bytes: Buffer.from(head + json + suffix, 'utf8'), routeValue };
    },
    decodeKey: (body) => decodeJson(body, undefined).json,
  };
}

/** The message type the index list names: `[i]` the i-th top-level message, `[i, j]` the j-th nested message of it. */
function messageAt(messages: readonly protobuf.Type[], indexes: readonly number[]): protobuf.Type {
  let type = messages[indexes[0] as number];
  if (type === undefined) throw new Error(`message index ${indexes[0]} is out of range: the schema has ${messages.length} top-level messages`);
  for (let i = 1; i < indexes.length; i++) {
    const nested = nestedMessages(type);
    const next = nested[indexes[i] as number];
    if (next === undefined) throw new Error(`message index ${indexes[i]} is out of range: ${type.fullName.slice(1)} has ${nested.length} nested messages`);
    type = next;
  }
  return type;
}

function nestedMessages(type: protobuf.Type): protobuf.Type[] {
  return type.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type);
}

/**
 * The root of one .proto file (text or base64 descriptor) with the files it imports — Google's
 * well-known types (built in) and, by schema reference, other files whose texts are in `imports`
 * (by the import's name) — and the file's own top-level messages in order (its message indexes).
 */
export function loadProtobufFile(schemaText: string, imports: ReadonlyMap<string, string> = new Map()): { root: protobuf.Root; messages: protobuf.Type[] } {
  try {
    const root = new protobuf.Root();
    const messages = addFile(root, schemaText, imports, new Set());
    root.resolveAll();
    return { root, messages };
  } catch (err) {
    if (err instanceof ProtobufSchemaError) throw err;
    throw new ProtobufSchemaError(`not a valid Protobuf schema: ${(err as Error).message}`);
  }
}

/** Adds one file and, once each, the files it imports; returns the file's top-level messages. */
function addFile(root: protobuf.Root, schemaText: string, imports: ReadonlyMap<string, string>, added: Set<string>): protobuf.Type[] {
  const text = schemaText.trim();
  const { dependencies, messages } = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? addDescriptor(root, text) : addText(root, text);
  const missing = dependencies.filter((name) => !WELL_KNOWN_FILES.includes(name) && !imports.has(name));
  if (missing.length > 0) {
    throw new ProtobufSchemaError(
      `it imports ${missing.join(', ')}, which ${missing.length === 1 ? 'is not a well-known type and no schema reference gives' : 'are not well-known types and no schema references give'}: register ${missing.length === 1 ? 'it' : 'them'} as a reference of the schema (Confluent: "references" with that name; a schema directory: its imports file, docs/schema.md)`,
    );
  }
  for (const name of dependencies) {
    if (added.has(name)) continue;
    added.add(name);
    const imported = imports.get(name);
    if (imported === undefined) root.addJSON(protobuf.common.get(name)?.nested ?? {});
    else addFile(root, imported, imports, added);
  }
  return messages;
}

/** `int64 credit = 5 [default = 9007199254740993]`: a 64-bit field's declared default, as written. */
const LONG_DEFAULT = /\b(?:u?int64|sint64|s?fixed64)\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*\d+\s*\[[^\]]*?\bdefault\s*=\s*(-?\d+)/g;

/**
 * protobufjs's parser reads a default as a JavaScript number, which rounds a 64-bit one past 2^53;
 * the digits as written are given back to such fields (protobufjs reads a string default exactly).
 */
function keepExactLongDefaults(namespace: protobuf.NamespaceBase, digitsOf: ReadonlyMap<string, string>): void {
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Type) {
      for (const field of nested.fieldsArray) {
        const digits = digitsOf.get(field.name);
        if (digits !== undefined && typeof field.options?.['default'] === 'number' && INT64_TYPES.has(field.type)) field.options['default'] = digits;
      }
    }
    if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) keepExactLongDefaults(nested, digitsOf);
  }
}

function addText(root: protobuf.Root, text: string): { dependencies: string[]; messages: protobuf.Type[] } {
  const parsed = protobuf.parse(text, root, { keepCase: true, alternateCommentMode: true });
  const longDefaults = new Map([...text.matchAll(LONG_DEFAULT)].map((m) => [m[1] as string, m[2] as string]));
  if (longDefaults.size > 0) keepExactLongDefaults(root, longDefaults);
  const scope = parsed.package === undefined ? root : root.lookup(parsed.package);
  if (!(scope instanceof protobuf.Namespace)) throw new ProtobufSchemaError(`package ${parsed.package} declares nothing`);
  // Declaration order is the order of the message indexes (protobufjs keeps it). The file itself is added first, so its
  // messages are the package's before any import adds to it.
  const messages = scope.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type && !n.fullName.startsWith('.google.protobuf.'));
  return { dependencies: [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])], messages };
}

function addDescriptor(root: protobuf.Root, base64: string): { dependencies: string[]; messages: protobuf.Type[] } {
  const file = descriptor.FileDescriptorProto.decode(Buffer.from(base64, 'base64')) as descriptor.IFileDescriptorProto;
  const dependencies = (file.dependency as string[] | null | undefined) ?? [];
  const scope = file.package === null || file.package === undefined || file.package === '' ? root : root.define(file.package);
  const context = { edition: file.syntax === 'proto2' ? 'proto2' : file.syntax === 'editions' ? String(file.edition ?? '2023') : 'proto3', keepCase: true };
  const fromDescriptor = protobuf.Type as unknown as { fromDescriptor(d: descriptor.IDescriptorProto, c: typeof context): protobuf.Type };
  const enumFromDescriptor = protobuf.Enum as unknown as { fromDescriptor(d: descriptor.IEnumDescriptorProto, c: typeof context): protobuf.Enum };
  const messages = (file.messageType ?? []).map((m) => fromDescriptor.fromDescriptor(m, context));
  for (const type of messages) scope.add(type);
  for (const e of file.enumType ?? []) scope.add(enumFromDescriptor.fromDescriptor(e, context));
  return { dependencies, messages };
}

/** Two fields of one message published under one name would make duplicate JSON keys: refused. */
function checkFieldNames(type: protobuf.Type, fieldName: FieldNamer, checked: Set<protobuf.Type>): void {
  if (checked.has(type) || type.fullName.startsWith('.google.protobuf.')) return;
  checked.add(type);
  const originals = type.fieldsArray.map((f) => f.name);
  const published = originals.map(fieldName);
  const clash = published.findIndex((n, i) => published.indexOf(n) !== i);
  if (clash >= 0) {
    const first = published.indexOf(published[clash] as string);
    throw new ProtobufSchemaError(
      `message ${type.fullName.slice(1)}: fields ${originals[first]} and ${originals[clash]} are both published as ${published[clash]}: rename one, or choose another INGEST_KEY_STYLE`,
    );
  }
  for (const field of type.fieldsArray) if (field.resolvedType instanceof protobuf.Type) checkFieldNames(field.resolvedType, fieldName, checked);
  for (const nested of nestedMessages(type)) checkFieldNames(nested, fieldName, checked);
}

/** A proto2 `[default = …]` on a scalar or enum field: published for the unset field instead of null. */
export function hasDeclaredDefault(field: protobuf.Field): boolean {
  return !field.repeated && !field.map && !(field.resolvedType instanceof protobuf.Type) && field.options !== undefined && Object.hasOwn(field.options, 'default');
}

/** One field of a message: its JSON key (pre-encoded) and how its value is written, or skipped. */
interface FieldPart {
  readonly name: string;
  readonly prefix: string;
  readonly write: ValueWriter;
  /** Fields with presence (messages, `optional`): null when unset. Implicit ones: their value, the default when absent. */
  readonly presence: boolean;
  /** For a field of a real oneof: only the field set is written. */
  readonly oneof: string | undefined;
  /** A string field: quoted inline (escaped only when it must be). */
  readonly quote: boolean;
  /** A bool or 32-bit integer field: its text is the value's own. */
  readonly plain: boolean;
}

function compileMessageWriter(
  type: protobuf.Type,
  fieldName: FieldNamer,
  writerOf: (type: protobuf.Type) => (message: protobuf.Message) => string,
): (message: protobuf.Message) => string {
  const wellKnown = wellKnownWriter(type, writerOf);
  if (wellKnown !== undefined) return wellKnown;
  const parts: FieldPart[] = type.fieldsArray.map((field) => {
    field.resolve();
    const realOneof = field.partOf !== null && !field.partOf.isProto3Optional ? field.partOf.name : undefined;
    return {
      name: field.name,
      prefix: `${JSON.stringify(fieldName(field.name))}:`,
      write: fieldWriter(field, writerOf),
      // A message-typed field always has presence (protobufjs's proto3 feature set says IMPLICIT for it). A proto2
      // field with [default = …] publishes its default when unset (Protobuf's JSON mapping): protobufjs puts the
      // declared default on the message's prototype, so reading the field gives it.
      presence: !field.repeated && !field.map && (field.hasPresence || field.resolvedType instanceof protobuf.Type) && !hasDeclaredDefault(field),
      oneof: realOneof,
      quote: !field.repeated && !field.map && field.resolvedType === null && field.type === 'string',
      plain: !field.repeated && !field.map && field.resolvedType === null && PLAIN_TYPES.has(field.type),
    };
  });
  return generateWriter(parts);
}

/**
 * The writer of one message type as generated code, as protobufjs generates its decoders: one
 * concatenation of every field's pre-quoted key and value (strings quoted inline, bools and 32-bit
 * integers as they are, a call for the rest), then the member of each oneof that is set. The
 * generated text holds only JSON-quoted names and indexes into `parts`, never data.
 */
function generateWriter(parts: readonly FieldPart[]): (message: protobuf.Message) => string {
  const access = (part: FieldPart): string => `m[${JSON.stringify(part.name)}]`;
  const valueOf = (part: FieldPart, i: number): string => (part.quote ? `q(${access(part)})` : part.plain ? `('' + ${access(part)})` : `w[${i}](${access(part)})`);
  const fields: string[] = [];
  const oneofs: string[] = [];
  parts.forEach((part, i) => {
    const prefix = JSON.stringify(part.prefix);
    if (part.oneof !== undefined) oneofs.push(`if (m[${JSON.stringify(part.oneof)}] === ${JSON.stringify(part.name)}) s += (s.length > 1 ? ',' : '') + ${prefix} + ${valueOf(part, i)};`);
    else if (part.presence) fields.push(`${prefix} + (${access(part)} != null && hasOwn(m, ${JSON.stringify(part.name)}) ? ${valueOf(part, i)} : 'null')`);
    else fields.push(`${prefix} + ${valueOf(part, i)}`);
  });
  const body = `return function write(m) {\n  let s = '{' + ${fields.length === 0 ? "''" : fields.join(" + ',' + ")};\n  ${oneofs.join('\n  ')}\n  return s + '}';\n};`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the schema's field names (JSON-quoted), as protobufjs generates its decoders
  const factory = new Function('w', 'q', 'hasOwn', body) as (w: readonly ValueWriter[], q: (text: unknown) => string, hasOwn: (o: object, k: string) => boolean) => (message: protobuf.Message) => string;
  return factory(
    parts.map((p) => p.write),
    quoteString,
    (o, k) => Object.hasOwn(o, k),
  );
}

/** Characters a JSON string must escape (and lone surrogates, which JSON.stringify writes as escapes). */
// eslint-disable-next-line no-control-regex -- the control characters are exactly what JSON must escape
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: between quotes as it is, unless it holds a character to escape. */
function quoteString(text: unknown): string {
  return NEEDS_ESCAPE.test(text as string) ? JSON.stringify(text) : `"${text as string}"`;
}

function fieldWriter(field: protobuf.Field, writerOf: (type: protobuf.Type) => (message: protobuf.Message) => string): ValueWriter {
  const single = singleWriter(field.type, field.resolvedType, writerOf);
  if (field instanceof protobuf.MapField) {
    const keyText = mapKeyText(field.keyType);
    return (value) => {
      let json = '{';
      let first = true;
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        json += `${first ? '' : ','}${JSON.stringify(keyText(key))}:${single(item)}`;
        first = false;
      }
      return `${json}}`;
    };
  }
  if (field.repeated) {
    return (value) => {
      const items = value as readonly unknown[];
      let json = '[';
      for (let i = 0; i < items.length; i++) json += i === 0 ? single(items[i]) : `,${single(items[i])}`;
      return `${json}]`;
    };
  }
  return single;
}

/** A 64-bit integer's exact digits: protobufjs decodes it as a `Long` (long.js), or a number where that is exact. */
function longText(value: unknown): string {
  return typeof value === 'number' ? String(value) : (value as { toString(radix: number): string }).toString(10);
}

/** Map keys are data: kept as they are, as text (protobufjs holds 64-bit keys as 8-character hashes). */
function mapKeyText(keyType: string): (key: string) => string {
  if (['int64', 'sint64', 'sfixed64'].includes(keyType)) return (key) => longText(protobuf.util.longFromHash(key, false));
  if (['uint64', 'fixed64'].includes(keyType)) return (key) => longText(protobuf.util.longFromHash(key, true));
  return (key) => key;
}

const PLAIN_TYPES = new Set(['bool', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
}

function bytesText(value: unknown): string {
  // Decoded bytes are Buffers; an absent proto3 field reads protobufjs's default, an empty array.
  const bytes = Array.isArray(value) ? Uint8Array.from(value as number[]) : (value as Uint8Array);
  return `"${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}"`;
}

function singleWriter(typeName: string, resolved: protobuf.Type | protobuf.Enum | null, writerOf: (type: protobuf.Type) => (message: protobuf.Message) => string): ValueWriter {
  if (resolved instanceof protobuf.Type) {
    const write = writerOf(resolved);
    return (value) => write(value as protobuf.Message);
  }
  if (resolved instanceof protobuf.Enum) {
    if (resolved.fullName === '.google.protobuf.NullValue') return () => 'null';
    const names = resolved.valuesById;
    // Open enums (proto3): a number the schema does not name stays the number.
    return (value) => {
      const name = names[value as number];
      return name === undefined ? String(value) : JSON.stringify(name);
    };
  }
  if (INT64_TYPES.has(typeName)) return (value) => `"${longText(value)}"`;
  switch (typeName) {
    case 'double':
      return (value) => numberText(value as number);
    case 'float':
      return (value) => floatText(value as number);
    case 'bool':
      return (value) => (value === true ? 'true' : 'false');
    case 'string':
      return quoteString;
    case 'bytes':
      return bytesText;
    default:
      return (value) => String(value); // the 32-bit integers
  }
}

/** What a routing field's value is as text, or undefined when it is not a scalar. */
function routeValueOf(field: protobuf.Field | undefined, message: protobuf.Message): string | undefined {
  if (field === undefined) return undefined;
  const value = (message as unknown as Record<string, unknown>)[field.name];
  if (field.resolvedType instanceof protobuf.Enum) return field.resolvedType.valuesById[value as number] ?? String(value);
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (value !== null && typeof value === 'object' && INT64_TYPES.has(field.type)) return longText(value);
  return undefined;
}

const WRAPPERS = new Set(['DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map((n) => `.google.protobuf.${n}`));

/** The well-known types with a JSON form of their own (Protobuf's JSON mapping); others are written as messages. */
function wellKnownWriter(type: protobuf.Type, writerOf: (type: protobuf.Type) => (message: protobuf.Message) => string): ((message: protobuf.Message) => string) | undefined {
  const name = type.fullName;
  const get = (message: protobuf.Message, field: string): unknown => (message as unknown as Record<string, unknown>)[field];
  if (name === '.google.protobuf.Timestamp') return (m) => timestampText(get(m, 'seconds'), get(m, 'nanos') as number);
  if (name === '.google.protobuf.Duration') return (m) => durationText(get(m, 'seconds'), get(m, 'nanos') as number);
  if (WRAPPERS.has(name)) {
    const field = type.fields['value'] as protobuf.Field;
    const write = singleWriter(field.type, null, writerOf);
    return (m) => write(get(m, 'value'));
  }
  if (name === '.google.protobuf.Struct') {
    const valueWriter = (): ((message: protobuf.Message) => string) => writerOf(type.lookupType('.google.protobuf.Value'));
    return (m) => {
      const write = valueWriter();
      const entries = Object.entries(get(m, 'fields') as Record<string, protobuf.Message>);
      return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${write(value)}`).join(',')}}`;
    };
  }
  if (name === '.google.protobuf.ListValue') {
    return (m) => {
      const write = writerOf(type.lookupType('.google.protobuf.Value'));
      return `[${(get(m, 'values') as protobuf.Message[]).map(write).join(',')}]`;
    };
  }
  if (name === '.google.protobuf.Value') {
    return (m) => {
      switch (get(m, 'kind')) {
        case 'numberValue':
        case 'number_value':
          return numberText(get(m, (get(m, 'kind') as string)) as number);
        case 'stringValue':
        case 'string_value':
          return JSON.stringify(get(m, get(m, 'kind') as string));
        case 'boolValue':
        case 'bool_value':
          return get(m, get(m, 'kind') as string) === true ? 'true' : 'false';
        case 'structValue':
        case 'struct_value':
          return writerOf(type.lookupType('.google.protobuf.Struct'))(get(m, get(m, 'kind') as string) as protobuf.Message);
        case 'listValue':
        case 'list_value':
          return writerOf(type.lookupType('.google.protobuf.ListValue'))(get(m, get(m, 'kind') as string) as protobuf.Message);
        default:
          return 'null'; // null_value, or no kind set
      }
    };
  }
  return undefined;
}

/** Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range of google.protobuf.Timestamp. */
const MIN_TIMESTAMP_SECONDS = -62_135_596_800;
const MAX_TIMESTAMP_SECONDS = 253_402_300_799;

/** 0, 3, 6 or 9 fraction digits, as Protobuf's JSON mapping writes them: as many as the nanoseconds need. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const digits = String(nanos).padStart(9, '0');
  if (nanos % 1_000_000 === 0) return `.${digits.slice(0, 3)}`;
  if (nanos % 1_000 === 0) return `.${digits.slice(0, 6)}`;
  return `.${digits}`;
}

function timestampText(secondsValue: unknown, nanos: number): string {
  const seconds = Number(String(secondsValue));
  if (seconds < MIN_TIMESTAMP_SECONDS || seconds > MAX_TIMESTAMP_SECONDS || !(nanos >= 0 && nanos <= 999_999_999)) {
    throw new Error(`google.protobuf.Timestamp ${String(secondsValue)}s ${nanos}ns is out of its range (years 1 to 9999, nanos 0 to 999999999)`);
  }
  const iso = new Date(seconds * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  return `"${iso.slice(0, 19)}${fraction(nanos)}Z"`;
}

/** google.protobuf.Duration's range: ±10,000 years in seconds. */
const MAX_DURATION_SECONDS = 315_576_000_000;

function durationText(secondsValue: unknown, nanos: number): string {
  const digits = String(secondsValue);
  const seconds = Number(digits);
  if (Math.abs(seconds) > MAX_DURATION_SECONDS || Math.abs(nanos) > 999_999_999 || (seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0)) {
    throw new Error(`google.protobuf.Duration ${digits}s ${nanos}ns is out of its range or has mixed signs`);
  }
  const negative = seconds < 0 || nanos < 0;
  return `"${negative ? '-' : ''}${Math.abs(seconds)}${fraction(Math.abs(nanos))}s"`;
}
