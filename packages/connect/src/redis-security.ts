import type { ConnectionOptions } from 'node:tls';
import { ConfigError, defineConfigSpec, envVar, z, type Config, type ConfigIssue } from '@wirestream/config';
import { readPemFiles } from './pem-files.js';

/**
 * How a Wirestream process reaches a secured Redis (managed Redis: TLS and an ACL user): TLS is on
 * with a `rediss://` REDIS_URL; these add the CA, a client certificate and the ACL user. Spread into
 * a service's spec; the password can come from REDIS_PASSWORD_FILE.
 */
export const redisSecuritySpec = defineConfigSpec({
  redisUsername: envVar({ name: 'REDIS_USERNAME', schema: z.string().min(1), optional: true, description: 'Redis ACL user (Redis 6+); overrides a user in REDIS_URL.' }),
  redisPassword: envVar({ name: 'REDIS_PASSWORD', schema: z.string().min(1), optional: true, secret: true, description: 'Password of REDIS_USERNAME (or of `default`); overrides one in REDIS_URL.' }),
  redisTlsCaFile: envVar({ name: 'REDIS_TLS_CA_FILE', schema: z.string().trim().min(1), optional: true, description: 'PEM file of the CA that signed Redis\'s certificate (REDIS_URL must be rediss://). Default: the system CAs.' }),
  redisTlsCertFile: envVar({ name: 'REDIS_TLS_CERT_FILE', schema: z.string().trim().min(1), optional: true, description: 'PEM client certificate, when Redis requires one (`tls-auth-clients yes`), with REDIS_TLS_KEY_FILE.' }),
  redisTlsKeyFile: envVar({ name: 'REDIS_TLS_KEY_FILE', schema: z.string().trim().min(1), optional: true, description: 'PEM private key of REDIS_TLS_CERT_FILE.' }),
  redisTlsServername: envVar({ name: 'REDIS_TLS_SERVERNAME', schema: z.string().trim().min(1), optional: true, description: 'TLS server name (SNI) to send and verify, when it differs from the host in REDIS_URL.' }),
});

export type RedisSecurityConfig = Config<typeof redisSecuritySpec>;

/** The ioredis options of a secured connection (spread into `new Redis(url, {...})` / a cluster's `redisOptions`). */
export interface RedisSecurity {
  readonly username?: string;
  readonly password?: string;
  readonly tls?: ConnectionOptions;
  /** One line for the start log (never a secret). */
  readonly summary: string;
}

/**
 * The ioredis security options from the settings and REDIS_URL. Files are read now.
 * @throws ConfigError naming every setting to fix
 */
export async function redisSecurity(config: RedisSecurityConfig, redisUrl: string): Promise<RedisSecurity> {
  const issues: ConfigIssue[] = [];
  const tls = redisUrl.startsWith('rediss://');
  const files = [config.redisTlsCaFile, config.redisTlsCertFile, config.redisTlsKeyFile, config.redisTlsServername];
  if (!tls && files.some((f) => f !== undefined)) {
    issues.push({ variable: 'REDIS_URL', key: 'redisUrl', source: 'env', problem: 'REDIS_TLS_* is set but REDIS_URL is redis://: use rediss:// for TLS', received: undefined });
  }
  if ((config.redisTlsCertFile === undefined) !== (config.redisTlsKeyFile === undefined)) {
    const variable = config.redisTlsCertFile === undefined ? 'REDIS_TLS_CERT_FILE' : 'REDIS_TLS_KEY_FILE';
    issues.push({ variable, key: undefined, source: 'env', problem: 'a client certificate needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE', received: undefined });
  }
  const pem = await readPemFiles(
    [
      ['REDIS_TLS_CA_FILE', 'redisTlsCaFile', config.redisTlsCaFile],
      ['REDIS_TLS_CERT_FILE', 'redisTlsCertFile', config.redisTlsCertFile],
      ['REDIS_TLS_KEY_FILE', 'redisTlsKeyFile', config.redisTlsKeyFile],
    ],
    issues,
  );
  if (issues.length > 0) throw new ConfigError(issues);
  const tlsOptions: ConnectionOptions = {
    ...(pem.has('REDIS_TLS_CA_FILE') ? { ca: pem.get('REDIS_TLS_CA_FILE') } : {}),
    ...(pem.has('REDIS_TLS_CERT_FILE') ? { cert: pem.get('REDIS_TLS_CERT_FILE'), key: pem.get('REDIS_TLS_KEY_FILE') } : {}),
    ...(config.redisTlsServername !== undefined ? { servername: config.redisTlsServername } : {}),
  };
  const user = config.redisUsername ?? (safeUrl(redisUrl)?.username || undefined);
  const summary = [
    tls ? `TLS (${[pem.has('REDIS_TLS_CA_FILE') ? 'CA file' : 'system CAs', ...(pem.has('REDIS_TLS_CERT_FILE') ? ['client certificate'] : [])].join(', ')})` : 'plaintext',
    ...(user !== undefined ? [`as ${decodeURIComponent(user)}`] : config.redisPassword !== undefined ? ['with a password'] : []),
  ].join(', ');
  return {
    ...(config.redisUsername !== undefined ? { username: config.redisUsername } : {}),
    ...(config.redisPassword !== undefined ? { password: config.redisPassword } : {}),
    ...(tls ? { tls: tlsOptions } : {}),
    summary,
  };
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
