// A user's own SDL at SCHEMA_PATH, as the built apps see it at start: no Kafka or Redis is needed to be
// refused. Exit 78 (EX_CONFIG) tells an orchestrator that a restart with the same input cannot help.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findRepoRoot, freePort, startApp } from '@wirestream/testkit';

const EXIT_CONFIG = 78;
const APPS = ['gateway', 'ingest'] as const;
const dir = mkdtempSync(join(tmpdir(), 'wirestream-schema-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Nothing listens on port 1: an app that got past its schema would fail later, and differently.
const unreachable = { KAFKA_BROKERS: '127.0.0.1:1', REDIS_URL: 'redis://127.0.0.1:1', GATEWAY_AUTH_MODE: 'anonymous' };

function runToExit(app: (typeof APPS)[number], schemaPath: string) {
  const main = join(findRepoRoot(), 'apps', app, 'dist', 'main.js');
  const env = { PATH: process.env['PATH'] ?? '', ...unreachable, SCHEMA_PATH: schemaPath, GATEWAY_PORT: '0', INGEST_HTTP_PORT: '0' };
  return spawnSync(process.execPath, [main], { env, encoding: 'utf8', timeout: 20_000 });
}

describe.each(APPS)('%s with SCHEMA_PATH', (app) => {
  it('that names no file: one line naming SCHEMA_PATH and the path, exit 78', () => {
    const missing = join(dir, 'missing.graphql');
    const run = runToExit(app, missing);
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    expect(run.stderr).toBe(`SCHEMA_PATH ${missing} cannot be read (no such file): set SCHEMA_PATH to a readable GraphQL SDL file (what it holds: docs/schema.md)\n`);
  });

  it('whose SDL has problems: one block listing all of them at file:line:column, exit 78', () => {
    const path = join(dir, `${app}-bad.graphql`);
    writeFileSync(path, 'type E { id: ID! }\ntype Subscription {\n  a: E\n  b: E @topic(name: "bad topic", key: "nope", shards: 0)\n}\n');
    const run = runToExit(app, path);
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`SCHEMA_PATH ${path} cannot be served (4 problems):`);
    const places = lines.slice(1, -1).map((line) => line.split(': ')[0]);
    expect(places).toEqual([`  - ${path}:3:3 Subscription.a`, `  - ${path}:4:21 Subscription.b`, `  - ${path}:4:39 Subscription.b`, `  - ${path}:4:55 Subscription.b`]);
    expect(run.stderr).toContain('not a valid Kafka topic name');
    expect(run.stderr).toContain('@topic(key: "nope") is not a field of E');
    expect(run.stderr).toContain('@topic(shards: 0) must be an integer from 1 to 1024');
    expect(lines.at(-1)).toBe(`Fix ${path} and start again; what a schema needs and what Wirestream adds: docs/schema.md`);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});

describe('a minimal SDL (only its types and Subscription)', () => {
  it('is completed by the gateway, which says what it added and starts', async () => {
    const path = join(dir, 'minimal.graphql');
    writeFileSync(path, 'type E { id: ID! }\ntype Subscription { changed(id: ID): E @topic(name: "e-events", key: "id") }\n');
    const gateway = startApp('gateway', { ...unreachable, SCHEMA_PATH: path, GATEWAY_PORT: String(await freePort()), GATEWAY_HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    try {
      const line = await gateway.waitForLog((l) => typeof l['msg'] === 'string' && l['msg'].startsWith('schema: added'), 'the schema additions', 20_000);
      expect(line['added']).toEqual(['directive @topic', 'enum TopicFormat', 'enum TopicKeyFormat', 'type Query']);
    } finally {
      await gateway.stop();
    }
  });
});

describe('ingest with topics in a registry format (@topic(format: AVRO) …)', () => {
  const sdl = (format: string) => `type E { id: ID! }\ntype Subscription { e: E @topic(name: "e-events", key: "id", format: ${format}) }\n`;

  it('without SCHEMA_REGISTRY_URL or SCHEMA_DIR: names both settings and the topic, exit 78', () => {
    const path = join(dir, 'avro.graphql');
    writeFileSync(path, sdl('AVRO'));
    const run = runToExit('ingest', path);
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    expect(run.stderr).toContain("SCHEMA_REGISTRY_URL: is not set, nor SCHEMA_DIR, but topic e-events (format AVRO, keyFormat STRING) needs the writers' schemas: set one of them (docs/schema.md)");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it.each(['PROTOBUF', 'JSON_SCHEMA'])('in %s, now decoded too: asks for the schema source like AVRO, exit 78', (format) => {
    const path = join(dir, `${format}.graphql`);
    writeFileSync(path, sdl(format));
    const run = runToExit('ingest', path);
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    expect(run.stderr).toContain(`SCHEMA_REGISTRY_URL: is not set, nor SCHEMA_DIR, but topic e-events (format ${format}, keyFormat STRING) needs the writers' schemas`);
  });
});
