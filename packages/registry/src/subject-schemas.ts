import type { Client } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { RestError } from '@confluentinc/schemaregistry/dist/rest-error.js';
import type { SchemaFile } from './directory-source.js';
import { SCHEMA_TYPES, type SchemaType } from './schema-source.js';

/** The latest schema of a subject, as the registry holds it. */
export interface SubjectSchema {
  readonly subject: string;
  readonly version: number;
  readonly id: number;
  readonly schemaType: SchemaType;
  readonly schema: string;
}

/**
 * Schemas by subject, for what is checked at start and generated from a schema (`sdl-check.ts`,
 * `wirestream-schema from-registry`). Decoding never uses it: messages carry their schema id.
 */
export interface SubjectSchemas {
  /** e.g. `Schema Registry https://sr:8081` or `schema directory apps/demo/schemas`. */
  readonly description: string;
  /** The subject's latest version, or null when the subject does not exist. Rejects when the source could not answer. */
  latest(subject: string): Promise<SubjectSchema | null>;
}

/** Over a Confluent `Client` (`SchemaRegistryClient`, or `MockClient` in tests): `GET /subjects/{subject}/versions/latest`. */
export function createRegistrySubjects(client: Client, description = 'Schema Registry'): SubjectSchemas {
  return {
    description,
    async latest(subject) {
      let metadata;
      try {
        metadata = await client.getLatestSchemaMetadata(subject);
      } catch (err) {
        if (err instanceof RestError && err.status === 404) return null;
        throw err;
      }
      const schemaType = (metadata.schemaType ?? 'AVRO') as SchemaType;
      if (!SCHEMA_TYPES.includes(schemaType)) throw new TypeError(`${description} returned subject ${subject} of unknown type ${JSON.stringify(metadata.schemaType)}`);
      return { subject, version: metadata.version ?? 0, id: metadata.id ?? 0, schemaType, schema: metadata.schema };
    },
  };
}

/** Over the files of a schema directory (`loadSchemaDirectory(…).files`): the highest `v<version>` of the subject's folder. */
export function createDirectorySubjects(files: readonly SchemaFile[], description: string): SubjectSchemas {
  const latest = new Map<string, SchemaFile>();
  for (const file of files) {
    const known = latest.get(file.subject);
    if (known === undefined || known.version < file.version) latest.set(file.subject, file);
  }
  return {
    description,
    latest(subject) {
      const file = latest.get(subject);
      if (file === undefined) return Promise.resolve(null);
      const { id, schemaType, schema } = file.schema;
      return Promise.resolve({ subject, version: file.version, id, schemaType, schema });
    },
  };
}
