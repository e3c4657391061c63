import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@wirestream/config';
import { afterAll, describe, expect, it } from 'vitest';
import { createSchemaSource, schemaSourceSpec } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'wirestream-source-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function problemsOf(env: Record<string, string>, neededBy: string[] = []): Promise<string[]> {
  try {
    await createSchemaSource(loadConfig(schemaSourceSpec, env), neededBy);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.variable}: ${i.problem}`);
    throw err;
  }
  return [];
}

describe('createSchemaSource', () => {
  it('none when nothing needs one and nothing is set', async () => {
    expect(await createSchemaSource(loadConfig(schemaSourceSpec, {}))).toBeUndefined();
  });

  it('a registry, described without its credentials', async () => {
    const configured = await createSchemaSource(
      loadConfig(schemaSourceSpec, { SCHEMA_REGISTRY_URL: 'https://key:secret@sr.example:8081,https://sr2.example', SCHEMA_REGISTRY_BEARER_TOKEN: 't0ken' }),
    );
    expect(configured?.summary).toBe('Schema Registry https://sr.example:8081, https://sr2.example (bearer token)');
    expect(configured?.source.description).toBe('Schema Registry https://sr.example:8081, https://sr2.example');
  });

  it('a schema directory', async () => {
    mkdirSync(join(dir, 'schemas', 'a-value'), { recursive: true });
    writeFileSync(join(dir, 'schemas', 'a-value', 'v1.id7.avsc'), '{"type":"record","name":"A","fields":[]}');
    const configured = await createSchemaSource(loadConfig(schemaSourceSpec, { SCHEMA_DIR: join(dir, 'schemas') }), ['topic a (format AVRO)']);
    expect(configured?.summary).toBe(`schema directory ${join(dir, 'schemas')} (1 schema files)`);
    expect((await configured?.source.schemaById(7))?.schemaType).toBe('AVRO');
  });

  it('every contradiction and missing piece at once, each naming its setting', async () => {
    writeFileSync(join(dir, 'not-pem'), 'hello');
    expect(
      await problemsOf({
        SCHEMA_REGISTRY_URL: 'https://sr.example',
        SCHEMA_DIR: join(dir, 'schemas'),
        SCHEMA_REGISTRY_USERNAME: 'key',
        SCHEMA_REGISTRY_BEARER_TOKEN: 't',
        SCHEMA_REGISTRY_CA_FILE: join(dir, 'not-pem'),
      }),
    ).toEqual([
      'SCHEMA_DIR: is set together with SCHEMA_REGISTRY_URL: schemas come from one source; unset one of them',
      'SCHEMA_REGISTRY_PASSWORD: basic auth needs both SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD',
      'SCHEMA_REGISTRY_BEARER_TOKEN: is set together with SCHEMA_REGISTRY_USERNAME: the registry takes one Authorization header; keep one of them',
      'SCHEMA_REGISTRY_CA_FILE: is not a PEM file (no "-----BEGIN" line): give the certificate or key in PEM form',
    ]);
    expect(await problemsOf({}, ['topic bids (format AVRO)'])).toEqual([
      "SCHEMA_REGISTRY_URL: is not set, nor SCHEMA_DIR, but topic bids (format AVRO) needs the writers' schemas: set one of them (docs/schema.md)",
    ]);
    expect(await problemsOf({ SCHEMA_DIR: join(dir, 'missing') })).toEqual([
      `SCHEMA_DIR: SCHEMA_DIR ${join(dir, 'missing')} cannot be read (ENOENT): give a directory of <subject>/v<version>.id<id>.avsc files`,
    ]);
  });

  it('the password may come from a file (SCHEMA_REGISTRY_PASSWORD_FILE)', async () => {
    writeFileSync(join(dir, 'password'), 'from-file\n');
    const config = loadConfig(schemaSourceSpec, { SCHEMA_REGISTRY_URL: 'http://sr:8081', SCHEMA_REGISTRY_USERNAME: 'u', SCHEMA_REGISTRY_PASSWORD_FILE: join(dir, 'password') });
    expect(config.schemaRegistryPassword).toBe('from-file');
    expect((await createSchemaSource(config))?.summary).toBe('Schema Registry http://sr:8081 (basic auth)');
  });
});
