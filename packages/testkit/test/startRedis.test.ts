import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { accepts } from '../src/internal/accepts.js';
import { isAlive } from '../src/internal/processes.js';
import { startRedis, type RedisServer, uniqueName, waitFor } from '../src/index.js';

/** Whether something accepts TCP connections on 127.0.0.1:port. */

describe('startRedis', () => {
  let redis: RedisServer | undefined;
  afterAll(() => redis?.stop());

  it('starts a private redis-server on a free port, stops it, and restarts it on the same port', async () => {
    redis = await startRedis();
    const { port, url } = redis;
    expect(port).not.toBe(6379); // the machine's shared Redis
    expect(url).toBe(`redis://127.0.0.1:${port}`);

    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await client.connect();
    const key = uniqueName('testkit');
    await client.set(key, 'v1');
    expect(await client.get(key)).toBe('v1');
    expect(await client.config('GET', 'save')).toEqual(['save', '']);
    client.disconnect();

    const pid = redis.pid;
    expect(pid).toBeTypeOf('number');
    await redis.stop();
    expect(redis.pid).toBeUndefined();
    expect(isAlive(pid ?? -1)).toBe(false);
    expect(await accepts(port)).toBe(false);
    await redis.stop(); // idempotent

    await redis.start();
    expect(redis.port).toBe(port);
    expect(redis.pid).not.toBe(pid);
    const again = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await again.connect();
    // Nothing persisted across the restart.
    expect(await again.get(key)).toBeNull();
    again.disconnect();

    await redis.stop();
    await waitFor(async () => !(await accepts(port)), { timeoutMs: 2_000, message: `port ${port} to be free` });
  });

  it('persistent: keeps the data across a restart, and stop({ discardData }) starts the next one empty', async () => {
    const server = await startRedis({ persistent: true });
    try {
      const connect = async () => {
        const c = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        await c.connect();
        return c;
      };
      const key = uniqueName('testkit-persistent');
      const first = await connect();
      await first.set(key, 'kept');
      first.disconnect();
      await server.stop();
      await server.start();
      const second = await connect();
      expect(await second.get(key)).toBe('kept');
      second.disconnect();
      await server.stop({ discardData: true });
      await server.start();
      const third = await connect();
      expect(await third.get(key)).toBeNull();
      third.disconnect();
    } finally {
      await server.stop({ discardData: true });
    }
  });

  it('fails, naming the cause, when a given port is taken', async () => {
    const other = await startRedis();
    try {
      await expect(startRedis({ port: other.port })).rejects.toThrow(new RegExp(`127\\.0\\.0\\.1:${other.port} is already in use`));
    } finally {
      await other.stop();
    }
  });

  it('refuses the shared Redis port', async () => {
    await expect(startRedis({ port: 6379 })).rejects.toThrow(/6379 is the machine's shared Redis/);
  });

  it('explains a missing binary', async () => {
    await expect(startRedis({ redisServerPath: '/nonexistent/redis-server' })).rejects.toThrow(
      /could not run \/nonexistent\/redis-server .*apt-get install -y redis-server/,
    );
  });
});
