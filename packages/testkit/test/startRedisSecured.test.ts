// startRedis({ tls, aclUsers }) against ioredis (the version the apps pin): Debian's redis-server
// is built with TLS (7.0.15, linked to libssl 3), so these are the real TLS listener and ACLs.
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, uniqueName, type RedisServer } from '../src/index.js';
import { rejection } from './support/rejection.js';

const pem = (file: string): string => readFileSync(file, 'utf8');
const open: Redis[] = [];

/**
 * Connects (no retries, so the first error is the one asserted) and resolves to the client. A
 * failed connect() rejects with "Connection is closed."; the cause (TLS, AUTH) is what ioredis
 * emitted as 'error' before, which is what an app logs: that one is thrown.
 */
async function connectTo(server: RedisServer, options: RedisOptions): Promise<Redis> {
  const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, ...options });
  let emitted: unknown;
  client.on('error', (error: unknown) => {
    emitted ??= error;
  });
  open.push(client);
  try {
    await client.connect();
  } catch (error) {
    throw emitted ?? error;
  }
  return client;
}

afterAll(() => {
  for (const client of open) client.disconnect();
});

describe('startRedis({ tls: true, aclUsers })', () => {
  let redis: RedisServer;
  let ca: string;
  beforeAll(async () => {
    redis = await startRedis({ tls: true, aclUsers: [{ name: 'app', password: 'app-secret', rules: ['~app:*', '&*', '+@all'] }] });
    ca = pem(redis.tls?.ca ?? '');
  });
  afterAll(() => redis?.stop());

  it('serves TLS only, on rediss://', async () => {
    expect(redis.url).toBe(`rediss://127.0.0.1:${redis.port}`);
    expect(redis.defaultPassword).toMatch(/^\S{16,}$/);
    const admin = await connectTo(redis, { tls: { ca }, password: redis.defaultPassword ?? '' });
    expect(await admin.config('GET', 'port')).toEqual(['port', '0']);
    expect(await admin.config('GET', 'tls-port')).toEqual(['tls-port', String(redis.port)]);
  });

  it('an ACL user with the CA reads and writes its keys, and no others (NOPERM)', async () => {
    const client = await connectTo(redis, { tls: { ca }, username: 'app', password: 'app-secret' });
    const key = `app:${uniqueName('key')}`;
    await client.set(key, 'v1');
    expect(await client.get(key)).toBe('v1');
    expect(await client.acl('WHOAMI')).toBe('app');
    const error = await rejection(client.set(`other:${uniqueName('key')}`, 'v'));
    expect(error).toMatchObject({ name: 'ReplyError' });
    expect(error.message).toMatch(/^NOPERM /);
  });

  it('a wrong password: WRONGPASS', async () => {
    const error = await rejection(connectTo(redis, { tls: { ca }, username: 'app', password: 'not-the-password' }));
    expect(error).toMatchObject({ name: 'ReplyError' });
    expect(error.message).toBe('WRONGPASS invalid username-password pair or user is disabled.');
  });

  it('no credentials: NOAUTH (from the ready check ioredis sends on connect)', async () => {
    const error = await rejection(connectTo(redis, { tls: { ca } }));
    expect(error).toMatchObject({ name: 'ReplyError', message: 'NOAUTH Authentication required.' });
  });

  it('a client that trusts another CA rejects the server certificate', async () => {
    const error = await rejection(connectTo(redis, { tls: { ca: pem(redis.tls?.untrustedCa ?? '') }, username: 'app', password: 'app-secret' }));
    expect(error).toMatchObject({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  });

  it("with client certificates 'optional', one from an untrusted CA is refused", async () => {
    const { untrustedClientCert, untrustedClientKey } = redis.tls ?? { untrustedClientCert: '', untrustedClientKey: '' };
    const error = await rejection(
      connectTo(redis, { tls: { ca, cert: pem(untrustedClientCert), key: pem(untrustedClientKey) }, username: 'app', password: 'app-secret' }),
    );
    // The server's alert, or (TLS 1.3, the client's handshake is done first) a reset of the next write.
    expect(String(error.code)).toMatch(/^(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA|ECONNRESET)$/);
  });

  it('keeps TLS and users across stop() and start()', async () => {
    await redis.stop();
    await redis.start();
    const client = await connectTo(redis, { tls: { ca }, username: 'app', password: 'app-secret' });
    expect(await client.acl('WHOAMI')).toBe('app');
  });
});

describe("startRedis({ tls: { clientCertificates: 'required' } })", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ tls: { clientCertificates: 'required' } });
  });
  afterAll(() => redis?.stop());

  it('accepts a client certificate signed by the CA and refuses a client without one', async () => {
    const files = redis.tls;
    if (files === undefined) throw new Error('no tls files');
    const ca = pem(files.ca);
    const client = await connectTo(redis, { tls: { ca, cert: pem(files.clientCert), key: pem(files.clientKey) } });
    expect(await client.ping()).toBe('PONG');
    expect(redis.defaultPassword).toBeUndefined(); // no aclUsers: the default user stays nopass

    const error = await rejection(connectTo(redis, { tls: { ca } }).then((c) => c.ping()));
    // TLS 1.3: the client completes its side of the handshake before the server's alert arrives,
    // so it sees either that alert or its own next write reset (seen: ECONNRESET).
    expect(String(error.code)).toMatch(/^(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED|ECONNRESET)$/);
  });
});

describe('startRedis option checks', () => {
  it('reports every bad ACL user at once, by field', async () => {
    const error = await rejection(
      startRedis({ aclUsers: [{ name: 'default', password: 'x' }, { name: 'a b', password: '' }, { name: 'app', password: 'p', rules: ['~a *'] }] }),
    );
    expect(error.message).toMatch(/aclUsers\[0\]\.name 'default'/);
    expect(error.message).toMatch(/aclUsers\[1\]\.name must be/);
    expect(error.message).toMatch(/aclUsers\[1\]\.password/);
    expect(error.message).toMatch(/aclUsers\[2\]\.rules/);
  });
});
