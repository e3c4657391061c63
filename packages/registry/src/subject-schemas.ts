import type { Client } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { directoryVersion, type SchemaFile } from './directory-source.js';
import { orNullWhenNotFound, referencesOf, registryVersion, schemaTypeOf } from './registry-source.js';
import type { SchemaReference, SchemaType, VersionedSchema } from './schema-source.js';

/** A version of a subject (its latest, or any), as the registry holds it. */
export interface SubjectSchema {
  readonly subject: string;
  readonly version: number;
  readonly id: number;
  readonly schemaType: SchemaType;
  readonly schema: string;
  /** Schemas it refers to, by subject and version ({@link SubjectSchemas.schemaByVersion}). */
  readonly references: readonly SchemaReference[];
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
  /**
   * Every registered version of the subject, oldest first (soft-deleted ones left out), or null when the
   * subject does not exist: records of any of them may still be in the topic. Rejects when the source could not answer.
   */
  versions(subject: string): Promise<SubjectSchema[] | null>;
  /** Every subject the source holds, sorted (`wirestream-schema from-registry --all`). Rejects when the source could not answer. */
  subjects(): Promise<string[]>;
  /** A version of a subject (what a schema reference names), or null when there is none. */
  schemaByVersion(subject: string, version: number): Promise<VersionedSchema | null>;
}

/** Over a Confluent `Client` (`SchemaRegistryClient`, or `MockClient` in tests): `GET /subjects/{subject}/versions/latest`. */
export function createRegistrySubjects(client: Client, description = 'Schema Registry'): SubjectSchemas {
  return {
    description,
    async latest(subject) {
      const metadata = await orNullWhenNotFound(client.getLatestSchemaMetadata(subject));
      if (metadata === null) return null;
      const schemaType: SchemaType = schemaTypeOf(metadata.schemaType, `subject ${subject}`, description);
      return { subject, version: metadata.version ?? 0, id: metadata.id ?? 0, schemaType, schema: metadata.schema, references: referencesOf(metadata.references) };
    },
    async versions(subject) {
      const numbers = await orNullWhenNotFound(client.getAllVersions(subject));
      if (numbers === null) return null;
      const found = await Promise.all([...numbers].sort((a, b) => a - b).map((version) => registryVersion(client, subject, version, description)));
      // A version deleted between the two requests is left out, as if it had been deleted before.
      return found.filter((v): v is SubjectSchema => v !== null);
    },
    subjects: async () => [...(await client.getAllSubjects())].sort(),
    schemaByVersion: (subject, version) => registryVersion(client, subject, version, description),
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
      const { id, schemaType, schema, references } = file.schema;
      return Promise.resolve({ subject, version: file.version, id, schemaType, schema, references });
    },
    versions(subject) {
      const found = files.filter((f) => f.subject === subject).sort((a, b) => a.version - b.version);
      if (found.length === 0) return Promise.resolve(null);
      return Promise.resolve(found.map((f) => directoryVersion(files, subject, f.version) as SubjectSchema));
    },
    subjects: () => Promise.resolve([...new Set(files.map((f) => f.subject))].sort()),
    schemaByVersion: (subject, version) => Promise.resolve(directoryVersion(files, subject, version)),
  };
}
