// The security settings as an operator sets them (environment, secret files), parsed by the real
// loadConfig, turned into client options. Real TLS and SASL handshakes against secured servers are
// tested where the servers run (packages/testkit, apps/ingest, apps/gateway).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@wirestream/config';
import { kafkaSecurity, kafkaSecuritySpec, redisSecurity, redisSecuritySpec } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'wirestream-connect-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string, mode?: number): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  if (mode !== undefined) chmodSync(path, mode);
  return path;
};
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';

const kafka = (env: Record<string, string>) => kafkaSecurity(loadConfig(kafkaSecuritySpec, env));
const problems = async (promise: Promise<unknown>): Promise<string[]> => {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  return err.issues.map((i) => `${i.variable}: ${i.problem}`);
};

describe('Kafka security settings', () => {
  it('adds nothing by default (plaintext, no SASL)', async () => {
    expect(await kafka({})).toEqual({ summary: 'plaintext' });
  });

  it('builds TLS with a CA, mutual TLS and SCRAM, the password from a mounted secret file', async () => {
    const security = await kafka({
      KAFKA_SSL_CA_FILE: file('ca.pem', PEM),
      KAFKA_SSL_CERT_FILE: file('client.pem', PEM),
      KAFKA_SSL_KEY_FILE: file('client.key', KEY),
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'ingest',
      KAFKA_SASL_PASSWORD_FILE: file('password', 's3cret-from-file\n'),
    });
    expect(security.ssl).toEqual({ ca: PEM, cert: PEM, key: KEY });
    expect(security.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'ingest', password: 's3cret-from-file' });
    expect(security.summary).toBe('TLS (CA file, client certificate), SASL scram-sha-512 as ingest');
    expect(security.summary).not.toContain('s3cret');
  });

  it('takes the mechanism in any case, as providers spell it (SCRAM-SHA-512), and names the choices when unknown', async () => {
    for (const spelled of ['SCRAM-SHA-512', 'Scram-Sha-512', ' scram-sha-512 ']) {
      const security = await kafka({ KAFKA_SASL_MECHANISM: spelled, KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
      expect(security.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'u', password: 'p' });
      expect(security.summary).toBe('plaintext, SASL scram-sha-512 as u');
    }
    expect((await kafka({ KAFKA_SASL_MECHANISM: 'OAUTHBEARER', KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: file('token', 'tok') })).sasl).toMatchObject({ mechanism: 'oauthbearer' });
    expect(await kafka({ KAFKA_SASL_MECHANISM: 'NONE' })).toEqual({ summary: 'plaintext' });
    let refused: unknown;
    try {
      loadConfig(kafkaSecuritySpec, { KAFKA_SASL_MECHANISM: 'SCRAM-SHA-1' });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).message).toMatch(/KAFKA_SASL_MECHANISM.*none, plain, scram-sha-256, scram-sha-512, oauthbearer \(any case\)/s);
  });

  it('turns TLS on with the system CAs when only KAFKA_SSL is set', async () => {
    expect(await kafka({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toMatchObject({
      ssl: true,
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
      summary: 'TLS (system CAs), SASL plain as u',
    });
  });

  it('names every setting that is missing or contradicts another, at once', async () => {
    expect(await problems(kafka({ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SSL_CERT_FILE: file('only-cert.pem', PEM) }))).toEqual([
      'KAFKA_SSL_KEY_FILE: mutual TLS needs both KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE',
      'KAFKA_SASL_USERNAME: required with KAFKA_SASL_MECHANISM=scram-sha-256',
      'KAFKA_SASL_PASSWORD: required with KAFKA_SASL_MECHANISM=scram-sha-256 (or KAFKA_SASL_PASSWORD_FILE)',
    ]);
    expect(await problems(kafka({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }))).toEqual([
      'KAFKA_SASL_MECHANISM: KAFKA_SASL_USERNAME/PASSWORD are set but the mechanism is none: set plain, scram-sha-256 or scram-sha-512',
    ]);
    expect(await problems(kafka({ KAFKA_SASL_MECHANISM: 'oauthbearer' }))).toEqual([
      'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: KAFKA_SASL_MECHANISM=oauthbearer needs exactly one of KAFKA_SASL_OAUTHBEARER_TOKEN_FILE and KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND',
    ]);
  });

  it('names a certificate file that cannot be read or is not PEM', async () => {
    const found = await problems(kafka({ KAFKA_SSL_CA_FILE: join(dir, 'absent.pem'), KAFKA_SSL_CERT_FILE: file('der.crt', 'binary'), KAFKA_SSL_KEY_FILE: file('k.key', KEY) }));
    expect(found[0]).toMatch(/^KAFKA_SSL_CA_FILE: could not read the file: ENOENT/);
    expect(found[1]).toBe('KAFKA_SSL_CERT_FILE: is not a PEM file (no "-----BEGIN" line): give the certificate or key in PEM form');
  });

  it('re-reads the OAUTHBEARER token file at every authentication', async () => {
    const path = file('token', 'token-1\n');
    const { sasl } = await kafka({ KAFKA_SASL_MECHANISM: 'oauthbearer', KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: path });
    if (sasl?.mechanism !== 'oauthbearer') throw new Error('expected oauthbearer');
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'token-1' });
    writeFileSync(path, 'token-2');
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'token-2' });
    rmSync(path);
    await expect(sasl.oauthBearerProvider()).rejects.toThrow(/^KAFKA_SASL_OAUTHBEARER_TOKEN_FILE .* could not be read/);
  });

  it('runs the OAUTHBEARER token command at every authentication, without echoing its output on failure', async () => {
    const counter = file('count', '0');
    const script = file('token.sh', `#!/bin/sh\nn=$(($(cat ${counter}) + 1)); echo $n > ${counter}; echo "tok-$n"\n`, 0o755);
    const { sasl } = await kafka({ KAFKA_SASL_MECHANISM: 'oauthbearer', KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND: script });
    if (sasl?.mechanism !== 'oauthbearer') throw new Error('expected oauthbearer');
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'tok-1' });
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'tok-2' });
    const failing = file('fail.sh', '#!/bin/sh\necho secret-token-fragment\nexit 3\n', 0o755);
    const broken = await kafka({ KAFKA_SASL_MECHANISM: 'oauthbearer', KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND: failing });
    if (broken.sasl?.mechanism !== 'oauthbearer') throw new Error('expected oauthbearer');
    const err = await broken.sasl.oauthBearerProvider().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND failed: Command failed/);
    expect(err?.message).not.toContain('secret-token-fragment');
  });
});

describe('Redis security settings', () => {
  const redis = (env: Record<string, string>, url: string) => redisSecurity(loadConfig(redisSecuritySpec, env), url);

  it('adds nothing for a plain redis:// URL', async () => {
    expect(await redis({}, 'redis://127.0.0.1:6379')).toEqual({ summary: 'plaintext' });
  });

  it('builds TLS from rediss:// with a CA, a client certificate and an ACL user whose password is a secret file', async () => {
    const security = await redis(
      { REDIS_USERNAME: 'gateway', REDIS_PASSWORD_FILE: file('redis-password', 'pw\n'), REDIS_TLS_CA_FILE: file('rca.pem', PEM), REDIS_TLS_CERT_FILE: file('rc.pem', PEM), REDIS_TLS_KEY_FILE: file('rc.key', KEY) },
      'rediss://redis.internal:6380',
    );
    expect(security).toEqual({ username: 'gateway', password: 'pw', tls: { ca: PEM, cert: PEM, key: KEY }, summary: 'TLS (CA file, client certificate), as gateway' });
    expect(await redis({}, 'rediss://user@redis.internal:6380')).toEqual({ tls: {}, summary: 'TLS (system CAs), as user' });
  });

  it('names REDIS_URL when TLS files are set for a redis:// URL, and a certificate without its key', async () => {
    expect(await problems(redis({ REDIS_TLS_CA_FILE: file('c2.pem', PEM), REDIS_TLS_CERT_FILE: file('c3.pem', PEM) }, 'redis://127.0.0.1:6379'))).toEqual([
      'REDIS_URL: REDIS_TLS_* is set but REDIS_URL is redis://: use rediss:// for TLS',
      'REDIS_TLS_KEY_FILE: a client certificate needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE',
    ]);
  });
});
