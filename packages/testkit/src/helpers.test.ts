import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRepoRoot, freePort, SHARED_KAFKA_ENV, sharedKafkaFromEnv, uniqueName, waitFor } from './index.js';

describe('waitFor', () => {
  it('resolves with the first passing value', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? `done after ${calls}` : false), { intervalMs: 1 });
    expect(value).toBe('done after 3');
  });

  it('retries while fn throws, then passes', async () => {
    let calls = 0;
    await waitFor(
      () => {
        calls += 1;
        expect(calls).toBe(2);
        return true;
      },
      { intervalMs: 1 },
    );
    expect(calls).toBe(2);
  });

  it('times out with the message, the attempts and the last error as cause', async () => {
    const boom = new Error('still not there');
    const error: unknown = await waitFor(
      () => {
        throw boom;
      },
      { timeoutMs: 60, intervalMs: 10, message: 'the thing' },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/timed out after \d+ ms \(\d+ attempts\) waiting for the thing; last error: still not there/);
    expect((error as Error).cause).toBe(boom);
  });

  it('rejects a non-positive timeout at once', async () => {
    await expect(waitFor(() => true, { timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be > 0, got 0/);
  });
});

describe('uniqueName', () => {
  it('is unique and safe as a Kafka topic name', () => {
    const names = new Set(Array.from({ length: 100 }, () => uniqueName('orders in/eu')));
    expect(names.size).toBe(100);
    for (const name of names) expect(name).toMatch(/^orders-in-eu-[a-z0-9]+-\d+-[0-9a-f]{6}$/);
  });
});

describe('sharedKafkaFromEnv', () => {
  it('is undefined when the variable is unset or blank', () => {
    expect(sharedKafkaFromEnv({})).toBeUndefined();
    expect(sharedKafkaFromEnv({ [SHARED_KAFKA_ENV]: '  ' })).toBeUndefined();
  });

  it('splits comma-separated host:port entries', () => {
    expect(sharedKafkaFromEnv({ [SHARED_KAFKA_ENV]: '127.0.0.1:9092, localhost:9093' })).toEqual({
      brokers: ['127.0.0.1:9092', 'localhost:9093'],
    });
  });

  it('names the variable and the bad entry', () => {
    expect(() => sharedKafkaFromEnv({ [SHARED_KAFKA_ENV]: '127.0.0.1:9092,9093' })).toThrow(
      /WIRESTREAM_TEST_KAFKA_BROKERS must be comma-separated host:port .* bad: "9093"/,
    );
  });
});

describe('findRepoRoot', () => {
  it('finds the workspace root from anywhere inside it', () => {
    const root = findRepoRoot();
    expect(existsSync(join(root, 'pnpm-workspace.yaml'))).toBe(true);
    expect(findRepoRoot(join(root, 'infra', 'kafka'))).toBe(root);
  });

  it('says what to do outside a checkout', () => {
    expect(() => findRepoRoot('/')).toThrow(/no pnpm-workspace.yaml in \/ or any folder above it/);
  });
});

describe('freePort', () => {
  it('returns a port that can be bound on 127.0.0.1', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
