// The decoders' errors, apart from the decoders: schema-decoders.ts and subject-shape.ts test for them
// without loading avsc or protobufjs, which codecs.ts brings in with the first schema (decision 0031).

/** A schema that cannot be turned into payloads (the messages that use it are dead-lettered). */
export class AvroSchemaError extends Error {
  override readonly name = 'AvroSchemaError';
}

/** A Protobuf schema that cannot be turned into payloads (the messages that use it are dead-lettered). */
export class ProtobufSchemaError extends Error {
  override readonly name = 'ProtobufSchemaError';
}
