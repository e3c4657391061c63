import { Agent } from 'node:https';
// Confluent's package index loads every KMS driver (AWS, Azure, GCP, Vault: ~500 ms at start, decision 0016);
// the client and its error are separate files of the package, which has no `exports` map. The client
// itself is loaded only when a registry is configured (createRegistryClient): ~33 MiB of RSS at import
// (axios, its caches, the mock client it bundles) that a pod without a registry should not carry.
import type { Client } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { RestError } from '@confluentinc/schemaregistry/dist/rest-error.js';
import { SCHEMA_TYPES, type RegisteredSchema, type SchemaReference, type SchemaSource, type SchemaType, type VersionedSchema } from './schema-source.js';

/**
 * A {@link SchemaSource} over a Confluent Schema Registry `Client`: the HTTP `SchemaRegistryClient`
 * in production ({@link createRegistryClient}), Confluent's `MockClient` (the vendor's in-memory
 * registry) in tests. The lookup is by id alone (`GET /schemas/ids/{id}`): ids are global to a
 * registry, so every subject naming strategy works. HTTP 404 means the id does not exist; any
 * other failure (network, 5xx, 401/403, timeout) rejects, so that ingest waits instead of dead-lettering.
 */
export function createRegistrySource(client: Client, description = 'Schema Registry'): SchemaSource {
  return {
    description,
    async schemaById(id) {
      const info = await orNullWhenNotFound(client.getBySubjectAndId('', id));
      if (info === null) return null;
      const schema: RegisteredSchema = { id, schemaType: schemaTypeOf(info.schemaType, `schema id ${id}`, description), schema: info.schema, references: referencesOf(info.references) };
      return schema;
    },
    schemaByVersion: (subject, version) => registryVersion(client, subject, version, description),
  };
}

/** The registry's answer, or null on HTTP 404 (no such id, subject or version); any other failure rejects. */
export async function orNullWhenNotFound<T>(request: Promise<T>): Promise<T | null> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof RestError && err.status === 404) return null;
    throw err;
  }
}

/** `GET /subjects/{subject}/versions/{version}`: null on HTTP 404 (no such subject or version). */
export async function registryVersion(client: Client, subject: string, version: number, description: string): Promise<VersionedSchema | null> {
  const metadata = await orNullWhenNotFound(client.getSchemaMetadata(subject, version, false));
  if (metadata === null) return null;
  return {
    subject,
    version: metadata.version ?? version,
    id: metadata.id ?? 0,
    schemaType: schemaTypeOf(metadata.schemaType, `subject ${subject} version ${version}`, description),
    schema: metadata.schema,
    references: referencesOf(metadata.references),
  };
}

export function schemaTypeOf(type: string | undefined, what: string, description: string): SchemaType {
  const schemaType = (type ?? 'AVRO') as SchemaType;
  if (!SCHEMA_TYPES.includes(schemaType)) throw new TypeError(`${description} returned ${what} of unknown type ${JSON.stringify(type)}`);
  return schemaType;
}

export function referencesOf(references: readonly { name: string; subject: string; version: number }[] | undefined): SchemaReference[] {
  return (references ?? []).map(({ name, subject, version }) => ({ name, subject, version }));
}

/** How to reach an HTTP Schema Registry. */
export interface RegistryClientOptions {
  /** Base URLs, tried in order (e.g. `https://sr.example:8081`). */
  readonly urls: readonly string[];
  /** HTTP basic auth (Confluent Cloud: API key and secret). */
  readonly basicAuth?: { readonly username: string; readonly password: string } | undefined;
  /** A static bearer token, sent as `Authorization: Bearer …`. */
  readonly bearerToken?: string | undefined;
  /** PEM CA certificates to trust for https URLs, instead of Node's default set. */
  readonly caPem?: string | undefined;
  /** Longest one request may take before it counts as the registry being down. @default 10_000 */
  readonly timeoutMs?: number;
  /** Schemas Confluent's client caches by id (ours caches compiled decoders besides). @default 1_000 */
  readonly cacheCapacity?: number;
}

/** Confluent's HTTP client with our settings: auth, TLS trust and a request timeout (axios has none by default). */
export async function createRegistryClient(options: RegistryClientOptions): Promise<Client> {
  const { urls, basicAuth, bearerToken, caPem, timeoutMs = 10_000, cacheCapacity = 1_000 } = options;
  if (urls.length === 0) throw new RangeError('a Schema Registry client needs at least one URL');
  if (basicAuth !== undefined && bearerToken !== undefined) {
    throw new RangeError('give the Schema Registry either basic auth or a bearer token, not both: it takes one Authorization header');
  }
  const { SchemaRegistryClient } = await import('@confluentinc/schemaregistry/dist/schemaregistry-client.js');
  return new SchemaRegistryClient({
    baseURLs: [...urls],
    cacheCapacity,
    // Our own waits and retries pace a registry that is down (ingest pauses the partition); one retry here is enough.
    maxRetries: 1,
    ...(basicAuth === undefined ? {} : { basicAuthCredentials: { credentialsSource: 'USER_INFO' as const, userInfo: `${basicAuth.username}:${basicAuth.password}` } }),
    createAxiosDefaults: {
      timeout: timeoutMs,
      ...(bearerToken === undefined ? {} : { headers: { Authorization: `Bearer ${bearerToken}` } }),
      ...(caPem === undefined ? {} : { httpsAgent: new Agent({ ca: caPem, keepAlive: true }) }),
    },
  });
}
