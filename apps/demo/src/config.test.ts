import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@wirestream/config';
import { producerConfigSpec } from './config.js';

describe('producerConfigSpec', () => {
  it('has working defaults', () => {
    expect(loadConfig(producerConfigSpec, {})).toMatchObject({ kafkaBrokers: ['127.0.0.1:9092'], ratePerSecond: 5, count: undefined });
  });

  it('reports every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig(producerConfigSpec, { DEMO_RATE: 'fast', KAFKA_BROKERS: 'nohost' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.variable).sort()).toEqual(['DEMO_RATE', 'KAFKA_BROKERS']);
  });
});

describe('WIRESTREAM_CONFIG_FILE', () => {
  it('is read by the built entry point, and a bad value in it is reported with exit code 78', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wirestream-config-'));
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ DEMO_RATE: 'fast' }));
      const main = new URL('../dist/producer.js', import.meta.url).pathname;
      const run = spawnSync(process.execPath, [main], { env: { PATH: process.env['PATH'] ?? '', WIRESTREAM_CONFIG_FILE: file }, encoding: 'utf8', timeout: 20_000 });
      expect(run.status).toBe(78);
      expect(run.stderr).toContain('DEMO_RATE');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
