export { SCHEMA_TYPES, type RegisteredSchema, type SchemaSource, type SchemaType } from './schema-source.js';
export { createRegistrySource, createRegistryClient, type RegistryClientOptions } from './registry-source.js';
export { loadSchemaDirectory, SchemaDirectoryError, type SchemaFile } from './directory-source.js';
export { readWireHeader, readMessageIndexes, WIRE_MAGIC_BYTE, WIRE_HEADER_BYTES, type WireHeader } from './wire-format.js';
export { compileAvroDecoder, AvroSchemaError, type AvroJsonDecoder, type FieldNamer } from './avro-json.js';
export { decimalText, readExactLong, type AvroLong } from './avro-logical-types.js';
export { createSchemaDecoders, type SchemaDecoders, type SchemaDecodersOptions, type SchemaEntry } from './schema-decoders.js';
export { schemaSourceSpec, createSchemaSource, type SchemaSourceConfig, type ConfiguredSchemaSource } from './schema-source-config.js';
