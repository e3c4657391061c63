// What the built apps say when what they need is not there (issue 13): the words of the settings, not a
// stack trace; a gateway without Redis is not "ready for clients".
import { spawn } from 'node:child_process';
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


