import { create, createFileRegistry, createMutableRegistry, fromBinary, type DescFile, type DescMessage } from '@bufbuild/protobuf';
import * as wkt from '@bufbuild/protobuf/wkt';
import type { FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { ProtobufSerializer, SerdeType, type Client } from '@confluentinc/schemaregistry';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor.js';

/** The well-known files a test .proto may import, as Confluent's serializer knows them. */
const WELL_KNOWN: Readonly<Record<string, DescFile>> = {
  'google/protobuf/any.proto': wkt.file_google_protobuf_any,
  'google/protobuf/duration.proto': wkt.file_google_protobuf_duration,
  'google/protobuf/empty.proto': wkt.file_google_protobuf_empty,
  'google/protobuf/struct.proto': wkt.file_google_protobuf_struct,
  'google/protobuf/timestamp.proto': wkt.file_google_protobuf_timestamp,
  'google/protobuf/wrappers.proto': wkt.file_google_protobuf_wrappers,
};

/** A message value for Confluent's ProtobufSerializer (protobuf-es's init shape: oneofs as `{ case, value }`, int64 as bigint). */
export type ProtobufInit = Record<string, unknown>;

/**
 * Confluent's own `ProtobufSerializer` for a message type of `protoText` (one .proto file, proto2 or
 * proto3, importing only well-known types): the bytes real Confluent producers write, and the schema
 * registered in `client` as Confluent's JavaScript serializer registers it (a base64
 * FileDescriptorProto under `<topic>-value` or `-key`). Confluent's serializer takes protobuf-es
 * messages, which are generated from descriptors: the descriptor is built from the text with
 * protobufjs (tests have no protoc).
 */
export function confluentProtobufSerializer(
  client: Client,
  protoText: string,
  options: {
    readonly serdeType?: 'VALUE' | 'KEY';
    readonly fileName?: string;
    readonly useSchemaId?: number;
    /**
     * Files `protoText` imports besides the well-known types, by import name (each in a package of its own,
     * importing only well-known types): Confluent's serializer registers each under its name as a subject and
     * the schema with schema references to them, as it does for a producer's imports.
     */
    readonly imports?: Readonly<Record<string, string>>;
  } = {},
): { readonly serialize: (topic: string, typeName: string, value: ProtobufInit) => Promise<Buffer>; readonly message: (typeName: string) => DescMessage } {
  const imported = new Map<string, DescFile>();
  for (const [name, text] of Object.entries(options.imports ?? {})) {
    imported.set(name, createFileRegistry(fileDescriptorOf(text, name), (dep) => WELL_KNOWN[dep]).getFile(name) as DescFile);
  }
  const file = fileDescriptorOf(protoText, options.fileName ?? 'test.proto', options.imports ?? {});
  const files = createFileRegistry(file, (name) => WELL_KNOWN[name] ?? imported.get(name));
  const registry = createMutableRegistry(...[...files.files].flatMap((f) => f.messages));
  for (const f of files.files) for (const m of f.messages) for (const nested of allNested(m)) registry.add(nested);
  const serializer = new ProtobufSerializer(client, options.serdeType === 'KEY' ? SerdeType.KEY : SerdeType.VALUE, {
    registry,
    ...(options.useSchemaId === undefined ? { autoRegisterSchemas: true } : { useSchemaId: options.useSchemaId }),
  });
  const message = (typeName: string): DescMessage => {
    const desc = files.getMessage(typeName);
    if (desc === undefined) throw new Error(`no message ${typeName} in the test .proto`);
    return desc;
  };
  return {
    message,
    serialize: (topic, typeName, value) => serializer.serialize(topic, create(message(typeName), value)),
  };
}

function allNested(message: DescMessage): DescMessage[] {
  return message.nestedMessages.flatMap((m) => [m, ...allNested(m)]);
}

/** protobufjs parses the text (and the well-known types it imports); its descriptor, with type names made absolute. */
function fileDescriptorOf(protoText: string, fileName: string, imports: Readonly<Record<string, string>> = {}): FileDescriptorProto {
  const root = new protobuf.Root();
  const parsed = protobuf.parse(protoText, root, { keepCase: true });
  for (const name of parsed.imports ?? []) {
    const text = imports[name];
    if (text !== undefined) {
      for (const dep of protobuf.parse(text, root, { keepCase: true }).imports ?? []) root.addJSON(protobuf.common.get(dep)?.nested ?? {});
      continue;
    }
    const common = protobuf.common.get(name);
    if (common === null || WELL_KNOWN[name] === undefined) throw new Error(`the test .proto imports ${name}: only well-known types are available`);
    root.addJSON(common.nested ?? {});
  }
  root.resolveAll();
  const proto2 = /\bsyntax\s*=\s*"proto2"/.test(protoText);
  const set = fromBinary(wkt.FileDescriptorSetSchema, descriptor.FileDescriptorSet.encode(root.toDescriptor(proto2 ? 'proto2' : 'proto3')).finish());
  const pkg = parsed.package ?? '';
  const file = set.file.find((f) => f.package === pkg && !f.package.startsWith('google.protobuf'));
  if (file === undefined) throw new Error('the test .proto declares no messages');
  file.name = fileName;
  file.dependency = [...(parsed.imports ?? [])];
  if (!proto2) file.syntax = 'proto3';
  const prefix = pkg === '' ? '' : `${pkg}.`;
  for (const message of file.messageType) qualify(root, message, `${prefix}${message.name}`);
  return file;
}

/** protobufjs writes type names relative to their scope; protobuf-es (and Confluent's serializer) want them absolute. */
function qualify(root: protobuf.Root, message: FileDescriptorProto['messageType'][number], fullName: string): void {
  // A map's entry message exists only in the descriptor: its field types resolve from the message that holds the map.
  const scope = message.options?.mapEntry === true ? root.lookup(fullName.slice(0, fullName.lastIndexOf('.'))) : root.lookupType(fullName);
  if (scope === null) throw new Error(`${fullName} is not in the test .proto`);
  for (const field of message.field) {
    if (field.typeName === '' || field.typeName.startsWith('.')) continue;
    if (message.nestedType.some((n) => n.name === field.typeName && n.options?.mapEntry === true)) field.typeName = `.${fullName}.${field.typeName}`;
    else field.typeName = (scope as protobuf.Namespace).lookupTypeOrEnum(field.typeName).fullName;
  }
  for (const nested of message.nestedType) qualify(root, nested, `${fullName}.${nested.name}`);
}
