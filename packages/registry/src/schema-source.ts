/** The schema types of the Confluent Schema Registry (its `schemaType`; absent means AVRO). */
export const SCHEMA_TYPES = Object.freeze(['AVRO', 'PROTOBUF', 'JSON'] as const);
export type SchemaType = (typeof SCHEMA_TYPES)[number];

/** A schema as registered: its id, type and text (an Avro schema's JSON, a .proto file, a JSON Schema). */
export interface RegisteredSchema {
  readonly id: number;
  readonly schemaType: SchemaType;
  readonly schema: string;
  /** Schemas this one refers to (Confluent schema references), resolved by subject and version ({@link SchemaSource.schemaByVersion}). */
  readonly references: readonly SchemaReference[];
}

/**
 * A Confluent schema reference: the name the schema uses for another (an Avro full type name such as
 * `demo.Money`, a Protobuf import path such as `demo/money.proto`, a JSON Schema `$ref` URL such as
 * `money.json`) and the subject and version that hold it.
 */
export interface SchemaReference {
  readonly name: string;
  readonly subject: string;
  readonly version: number;
}

/** A subject's version as registered: what a reference points at. */
export interface VersionedSchema {
  readonly subject: string;
  readonly version: number;
  readonly id: number;
  readonly schemaType: SchemaType;
  readonly schema: string;
  readonly references: readonly SchemaReference[];
}

/**
 * Where the writer's schema of a wire-format message comes from: a Schema Registry
 * ({@link createRegistrySource}) or a schema directory ({@link loadSchemaDirectory}).
 * Ids are global to a source, so lookups do not depend on the subject naming strategy.
 */
export interface SchemaSource {
  /** For messages and logs, e.g. `Schema Registry https://sr:8081` or `schema directory /etc/schemas`. */
  readonly description: string;
  /**
   * The schema registered under `id`, or null when the source definitely has none (a retry will
   * not find it: such messages are dead-lettered). Rejects when the source could not answer
   * (down, slow, refused): the caller retries later and dead-letters nothing.
   */
  schemaById(id: number): Promise<RegisteredSchema | null>;
  /**
   * Version `version` of `subject` (what a schema reference names), or null when the source
   * definitely has none; rejects when it could not answer, as {@link schemaById}.
   */
  schemaByVersion(subject: string, version: number): Promise<VersionedSchema | null>;
}
