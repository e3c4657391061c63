import { ConfigError, csvList, defineConfigSpec, durationMs, envVar, integer, url, z, type Config, type ConfigIssue } from '@wirestream/config';
import { readPemFiles } from '@wirestream/connect';
import { loadSchemaDirectory, SchemaDirectoryError } from './directory-source.js';
import { createRegistryClient, createRegistrySource } from './registry-source.js';
import type { SchemaSource } from './schema-source.js';
import { createDirectorySubjects, createRegistrySubjects, type SubjectSchemas } from './subject-schemas.js';

/**
 * Where the schemas of wire-format topics (`@topic(format: AVRO)` …) come from: a Schema Registry
 * or a schema directory, one of the two. Spread into a service's spec. Secrets can come from files
 * (`<NAME>_FILE`, see @wirestream/config).
 */
export const schemaSourceSpec = defineConfigSpec({
  schemaRegistryUrls: envVar({ name: 'SCHEMA_REGISTRY_URL', schema: csvList(url({ protocols: ['http', 'https'] })), optional: true, description: 'Confluent-compatible Schema Registry for topics whose @topic(format:) is not JSON; several comma-separated URLs are tried in order. Or SCHEMA_DIR.' }),
  schemaRegistryUsername: envVar({ name: 'SCHEMA_REGISTRY_USERNAME', schema: z.string().min(1), optional: true, description: 'HTTP basic auth user (Confluent Cloud: the API key), with SCHEMA_REGISTRY_PASSWORD.' }),
  schemaRegistryPassword: envVar({ name: 'SCHEMA_REGISTRY_PASSWORD', schema: z.string().min(1), optional: true, secret: true, description: 'HTTP basic auth password (Confluent Cloud: the API secret).' }),
  schemaRegistryBearerToken: envVar({ name: 'SCHEMA_REGISTRY_BEARER_TOKEN', schema: z.string().min(1), optional: true, secret: true, description: 'Static bearer token sent as Authorization: Bearer (instead of basic auth).' }),
  schemaRegistryCaFile: envVar({ name: 'SCHEMA_REGISTRY_CA_FILE', schema: z.string().trim().min(1), optional: true, description: "PEM file of the CA(s) that signed the registry's certificate (https URLs); without it the system CAs verify it." }),
  schemaRegistryTimeoutMs: envVar({ name: 'SCHEMA_REGISTRY_TIMEOUT_MS', schema: durationMs({ minMs: 100, maxMs: 120_000 }), default: 10_000, description: 'Longest one registry request may take; a slower registry counts as down (the partitions that need it wait, nothing is dead-lettered).' }),
  schemaDir: envVar({ name: 'SCHEMA_DIR', schema: z.string().trim().min(1), optional: true, description: 'Schema directory instead of a registry: <subject>/v<version>.id<id>.avsc (.proto, .json) files, read at start (docs/schema.md).' }),
  schemaCacheSize: envVar({ name: 'SCHEMA_CACHE_SIZE', schema: integer({ min: 1, max: 1_000_000 }), default: 1_000, description: 'Schemas kept compiled for decoding, shared by all partitions (the least recently used goes first).' }),
});

export type SchemaSourceConfig = Config<typeof schemaSourceSpec>;

/** A source and what to log about it (never a secret). */
export interface ConfiguredSchemaSource {
  readonly source: SchemaSource;
  /** The same source by subject: the latest schema of each, for the check at start (sdl-check.ts). */
  readonly subjects: SubjectSchemas;
  /** e.g. `Schema Registry https://sr:8081 (basic auth, CA file)` or `schema directory /etc/schemas (4 schemas)`. */
  readonly summary: string;
}

/**
 * The schema source the settings name, or undefined when they name none. `neededBy` lists what
 * needs one (e.g. `topic bid-events (format AVRO)`): without a source that is a problem, not a
 * silent fallback. Files are read now, so a bad one fails at start naming its setting.
 * @throws ConfigError with every problem
 */
export async function createSchemaSource(config: SchemaSourceConfig, neededBy: readonly string[] = []): Promise<ConfiguredSchemaSource | undefined> {
  const issues: ConfigIssue[] = [];
  const issue = (variable: string, key: string, problem: string, received?: string): void => void issues.push({ variable, key, source: 'env', problem, received });
  const urls = config.schemaRegistryUrls;
  if (urls !== undefined && config.schemaDir !== undefined) {
    issue('SCHEMA_DIR', 'schemaDir', 'is set together with SCHEMA_REGISTRY_URL: schemas come from one source; unset one of them', JSON.stringify(config.schemaDir));
  }
  if (urls === undefined && config.schemaDir === undefined && neededBy.length > 0) {
    issue('SCHEMA_REGISTRY_URL', 'schemaRegistryUrls', `is not set, nor SCHEMA_DIR, but ${neededBy.join(', ')} needs the writers' schemas: set one of them (docs/schema.md)`);
  }
  if ((config.schemaRegistryUsername === undefined) !== (config.schemaRegistryPassword === undefined)) {
    issue(config.schemaRegistryUsername === undefined ? 'SCHEMA_REGISTRY_USERNAME' : 'SCHEMA_REGISTRY_PASSWORD', 'schemaRegistryUsername', 'basic auth needs both SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD');
  }
  if (config.schemaRegistryUsername !== undefined && config.schemaRegistryBearerToken !== undefined) {
    issue('SCHEMA_REGISTRY_BEARER_TOKEN', 'schemaRegistryBearerToken', 'is set together with SCHEMA_REGISTRY_USERNAME: the registry takes one Authorization header; keep one of them');
  }
  const pem = await readPemFiles([['SCHEMA_REGISTRY_CA_FILE', 'schemaRegistryCaFile', config.schemaRegistryCaFile]], issues);
  let configured: ConfiguredSchemaSource | undefined;
  if (issues.length === 0 && config.schemaDir !== undefined) {
    try {
      const directory = loadSchemaDirectory(config.schemaDir, 'SCHEMA_DIR');
      configured = {
        source: directory,
        subjects: createDirectorySubjects(directory.files, directory.description),
        summary: `schema directory ${config.schemaDir} (${directory.files.length} schema files)`,
      };
    } catch (err) {
      if (!(err instanceof SchemaDirectoryError)) throw err;
      for (const problem of err.problems.length > 0 ? err.problems : [err.message]) issue('SCHEMA_DIR', 'schemaDir', problem, JSON.stringify(config.schemaDir));
    }
  }
  if (issues.length === 0 && urls !== undefined) {
    const username = config.schemaRegistryUsername;
    const password = config.schemaRegistryPassword;
    const client = await createRegistryClient({
      urls,
      basicAuth: username !== undefined && password !== undefined ? { username, password } : undefined,
      bearerToken: config.schemaRegistryBearerToken,
      caPem: pem.get('SCHEMA_REGISTRY_CA_FILE'),
      timeoutMs: config.schemaRegistryTimeoutMs,
      cacheCapacity: config.schemaCacheSize,
    });
    const auth = username !== undefined ? 'basic auth' : config.schemaRegistryBearerToken !== undefined ? 'bearer token' : 'no auth';
    // Never a password in a log line or a dead letter: a URL may carry user:password@.
    const description = `Schema Registry ${urls.map(withoutCredentials).join(', ')}`;
    configured = {
      source: createRegistrySource(client, description),
      subjects: createRegistrySubjects(client, description),
      summary: `${description} (${auth}${pem.size > 0 ? ', CA file' : ''})`,
    };
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return configured;
}

function withoutCredentials(raw: string): string {
  const parsed = new URL(raw);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/$/, '');
}
