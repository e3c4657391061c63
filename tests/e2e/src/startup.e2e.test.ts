// What the built apps say when what they need is not there (issue 13): the words of the settings, not a
// stack trace; a gateway without Redis is not "ready for clients".
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRepoRoot, freePort, startApp, startRedis, type RedisServer } from '@wirestream/testkit';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describe('a gateway whose Redis does not answer', () => {
  it('listens but is not ready, says once what to check, and logs retries without stacks at most every 5 s', async () => {
    const port = await freePort();
    const gateway = startApp('gateway', { REDIS_URL: 'redis://:pw-never-logged@127.0.0.1:1', GATEWAY_AUTH_MODE: 'anonymous', GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: String(port), LOG_LEVEL: 'info' });
    try {
      const waiting = await gateway.waitForLog((l) => typeof l['msg'] === 'string' && l['msg'].startsWith('gateway listening, not ready'), 'the not-ready line', 20_000);
      expect(waiting['msg']).toBe('gateway listening, not ready: waiting for Redis (check REDIS_URL and REDIS_MODE)');
      expect(waiting['redis']).toBe('redis://:****@127.0.0.1:1');
      const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(readyz.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const retries = gateway.lines.filter((l) => typeof l['msg'] === 'string' && l['msg'].includes('not reachable (REDIS_URL'));
      expect(retries.length).toBeGreaterThanOrEqual(1);
      expect(retries.length).toBeLessThanOrEqual(3); // ~6 s at one line per 5 s
      expect(gateway.lines.some((l) => l['msg'] === 'gateway ready for clients')).toBe(false);
      expect(JSON.stringify(gateway.lines)).not.toContain('pw-never-logged');
      expect(JSON.stringify(gateway.lines)).not.toMatch(/\\n\s+at /); // no stack traces
    } finally {
      await gateway.stop();
    }
  });
});

describe('an ingest whose Kafka does not answer', () => {
  it('names KAFKA_BROKERS in one line and exits 1 (an orchestrator may retry: the broker may come)', async () => {
    const main = join(findRepoRoot(), 'apps', 'ingest', 'dist', 'main.js');
    const env = { PATH: process.env['PATH'] ?? '', KAFKA_BROKERS: '127.0.0.1:1', REDIS_URL: redis.url, INGEST_HTTP_PORT: '0' };
    const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('exit', (status) => {
        clearTimeout(timer);
        resolve({ status, stderr });
      });
    });
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/^ingest cannot start: no Kafka broker answered at KAFKA_BROKERS=127\.0\.0\.1:1 \(ECONNREFUSED\): check the addresses and that the brokers run\n$/);
  });
});



// Issue #14 / decision 0019: the SDL of an @topic(format: AVRO) topic against its subject's latest schema, here
// the demo's schema directory (apps/demo/schemas: bid-events-value v1, the BidPlaced record).
describe.each(['ingest', 'gateway'] as const)('%s comparing the SDL with the schema directory at start', (app) => {
  const root = findRepoRoot();
  const auction = readFileSync(join(root, 'packages', 'schema', 'schema', 'auction.graphql'), 'utf8');
  const avroSdl = auction.replace('@topic(name: "bid-events", key: "listing_id")', '@topic(name: "bid-events", key: "listing_id", format: AVRO)');
  const dir = mkdtempSync(join(tmpdir(), 'wirestream-sdl-check-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = (schemaPath: string): Record<string, string> => ({
    KAFKA_BROKERS: '127.0.0.1:1',
    REDIS_URL: 'redis://127.0.0.1:1',
    GATEWAY_AUTH_MODE: 'anonymous',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    INGEST_HTTP_PORT: '0',
    LOG_LEVEL: 'info',
    SCHEMA_PATH: schemaPath,
    SCHEMA_DIR: join(root, 'apps', 'demo', 'schemas'),
  });

  it('a field the latest schema lacks: one line naming topic, subject and field, exit 78', () => {
    expect(avroSdl).not.toBe(auction);
    const path = join(dir, 'missing-field.graphql');
    writeFileSync(path, avroSdl.replace('  previous_high_bid: Bid\n}', '  previous_high_bid: Bid\n  seller_note: String\n}'));
    const run = spawnSync(process.execPath, [join(root, 'apps', app, 'dist', 'main.js')], { env: { PATH: process.env['PATH'] ?? '', ...env(path) }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(78);
    expect(run.stderr).toBe(
      'schema check: topic bid-events, subject bid-events-value, field BidEvent.seller_note: not in the registry\'s latest schema (version 1, id 1), whose record BidPlaced publishes ' +
        'event_id, event_type, listing_id, bid_id, bidder_id, amount, placed_at, is_auto_bid, previous_high_bid: remove the field from the SDL, or register a schema version that has it\n',
    );
  });

  it('a compatible difference (Int! for the schema\'s long): a warning, and the start goes on', async () => {
    const path = join(dir, 'demo.graphql');
    writeFileSync(path, avroSdl);
    const started = startApp(app, env(path));
    try {
      const warning = await started.waitForLog((l) => typeof l['msg'] === 'string' && l['msg'].startsWith('schema check: topic'), 'the schema-check warning', 20_000);
      expect(warning['level']).toBe('warn');
      expect(warning['field']).toBe('Money.amount_cents');
      expect(warning['msg']).toContain("Int! in the SDL for the registry's long (version 1, id 1)");
      const summary = await started.waitForLog((l) => l['msg'] === 'schema check: the SDL accepts every registered version of each subject', 'the schema-check summary', 20_000);
      expect(summary['subjects']).toEqual(['bid-events-value v1 (id 1)']);
    } finally {
      await started.stop();
    }
  });
});

describe.each(['ingest', 'gateway'] as const)('%s with an INGEST_KEY_STYLE it does not know', (app) => {
  it('names the setting and the three styles, exit 78', () => {
    const main = join(findRepoRoot(), 'apps', app, 'dist', 'main.js');
    const run = spawnSync(process.execPath, [main], { env: { PATH: process.env['PATH'] ?? '', GATEWAY_AUTH_MODE: 'anonymous', INGEST_KEY_STYLE: 'kebab' }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(78);
    expect(run.stderr).toBe('Invalid configuration (1 problem):\n  - INGEST_KEY_STYLE: Invalid option: expected one of "snake"|"lodash"|"none"; received "kebab"\nFix these variables (environment or config file) and start again.\n');
  });
});
