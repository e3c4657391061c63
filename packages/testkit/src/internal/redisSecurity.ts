import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { findRepoRoot } from '../findRepoRoot.js';
import { isAlive, onProcessExit, runScript } from './processes.js';

/** TLS of a {@link startRedis} server. */
export interface RedisTlsOptions {
  /**
   * `tls-auth-clients`: `required` refuses clients without a certificate signed by the CA,
   * `optional` accepts them but refuses a certificate it cannot verify, `none` ignores certificates.
   * @default 'optional'
   */
  clientCertificates?: 'required' | 'optional' | 'none';
}

/** An ACL user, created at start (`--user`, the config form of `ACL SETUSER`). */
export interface RedisAclUser {
  name: string;
  password: string;
  /** ACL rules after `on >password`. @default ['~*', '&*', '+@all'] (every key, channel and command) */
  rules?: readonly string[];
}

/**
 * PEM files (absolute paths) of a TLS server, made by infra/tls/make-certs.sh under
 * `<repo>/.wirestream/testkit/redis-tls-<pid>-*`; deleted at exit or by a later start once that pid is gone.
 */
export interface RedisTlsFiles {
  /** Signed the server certificate (SAN 127.0.0.1, localhost) and {@link clientCert}. */
  readonly ca: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A CA that signed nothing the server uses: a client trusting only it rejects the server. */
  readonly untrustedCa: string;
  /** Signed by the untrusted CA: the server refuses it (unless clientCertificates is 'none'). */
  readonly untrustedClientCert: string;
  readonly untrustedClientKey: string;
}

/** What the readiness probe needs to talk to a secured server. */
export interface RedisProbeAccess {
  tls?: { ca: string; cert: string; key: string };
  /** AUTH default <password> first. */
  password?: string;
}

/** The redis-server arguments, files and probe access of the `tls` and `aclUsers` options. */
export interface RedisSecurity {
  /** Arguments that replace `--port <port>`. */
  portArgs(port: number): string[];
  /** Arguments for users (after the port ones). */
  readonly userArgs: readonly string[];
  readonly files: RedisTlsFiles | undefined;
  readonly defaultPassword: string | undefined;
  readonly probe: RedisProbeAccess;
}

const NAME = /^[A-Za-z0-9._:-]+$/;
const NO_SPACE = /^\S+$/;

/**
 * Checks the options (every problem at once), makes certificates when TLS is on and builds the
 * arguments. With ACL users the default user gets a random password, so a client that does not
 * authenticate is refused (NOAUTH) as on a secured server; the probe uses that password.
 */
export async function prepareRedisSecurity(tls: boolean | RedisTlsOptions | undefined, aclUsers: readonly RedisAclUser[] | undefined): Promise<RedisSecurity> {
  const problems = validate(tls, aclUsers);
  if (problems.length > 0) throw new Error(`startRedis: ${problems.join('; ')}`);
  const tlsOptions = tls === true ? {} : tls === false ? undefined : tls;
  const defaultPassword = aclUsers !== undefined && aclUsers.length > 0 ? randomBytes(18).toString('base64url') : undefined;
  const userArgs: string[] = [];
  if (defaultPassword !== undefined) userArgs.push('--user', 'default', 'on', `>${defaultPassword}`, '~*', '&*', '+@all');
  for (const user of aclUsers ?? []) {
    userArgs.push('--user', user.name, 'on', `>${user.password}`, ...(user.rules ?? ['~*', '&*', '+@all']));
  }
  const probe: RedisProbeAccess = defaultPassword === undefined ? {} : { password: defaultPassword };
  if (tlsOptions === undefined) {
    return { portArgs: (port) => ['--port', String(port)], userArgs, files: undefined, defaultPassword, probe };
  }

  const root = findRepoRoot();
  const parent = join(root, '.wirestream', 'testkit');
  mkdirSync(parent, { recursive: true });
  pruneOrphanedCertDirs(parent);
  const dir = mkdtempSync(join(parent, `redis-tls-${process.pid}-`));
  onProcessExit(() => rmSync(dir, { recursive: true, force: true }));
  await runScript(join(root, 'infra', 'tls', 'make-certs.sh'), ['--out', dir], { timeoutMs: 30_000 });
  const file = (name: string): string => join(dir, name);
  const files: RedisTlsFiles = Object.freeze({
    ca: file('ca.pem'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
    untrustedCa: file('untrusted-ca.pem'),
    untrustedClientCert: file('untrusted-client.pem'),
    untrustedClientKey: file('untrusted-client.key'),
  });
  const authClients = { required: 'yes', optional: 'optional', none: 'no' }[tlsOptions.clientCertificates ?? 'optional'];
  probe.tls = { ca: readFileSync(files.ca, 'utf8'), cert: readFileSync(files.clientCert, 'utf8'), key: readFileSync(files.clientKey, 'utf8') };
  return {
    // --port 0: TLS only, no plaintext port a client could fall back to.
    portArgs: (port) => [
      '--port', '0',
      '--tls-port', String(port),
      '--tls-cert-file', file('server.pem'),
      '--tls-key-file', file('server.key'),
      '--tls-ca-cert-file', files.ca,
      '--tls-auth-clients', authClients,
    ],
    userArgs,
    files,
    defaultPassword,
    probe,
  };
}

/**
 * Deletes certificate dirs whose test process is gone. The exit hook does not run in every case
 * (a vitest worker ended from outside, a SIGKILL), and the dir's name carries its owner's pid.
 */
function pruneOrphanedCertDirs(parent: string): void {
  for (const name of readdirSync(parent)) {
    const owner = /^redis-tls-(\d+)-/.exec(name)?.[1];
    if (owner === undefined || isAlive(Number(owner))) continue;
    rmSync(join(parent, name), { recursive: true, force: true });
  }
}

function validate(tls: boolean | RedisTlsOptions | undefined, aclUsers: readonly RedisAclUser[] | undefined): string[] {
  const problems: string[] = [];
  if (typeof tls === 'object') {
    const mode = tls.clientCertificates;
    if (mode !== undefined && !['required', 'optional', 'none'].includes(mode)) {
      problems.push(`tls.clientCertificates must be 'required', 'optional' or 'none', got '${String(mode)}'`);
    }
  }
  const seen = new Set<string>();
  for (const [i, user] of (aclUsers ?? []).entries()) {
    if (!NAME.test(user.name)) problems.push(`aclUsers[${i}].name must be letters, digits or . _ : -, got '${user.name}'`);
    if (user.name === 'default') problems.push(`aclUsers[${i}].name 'default' is the default user (its password is defaultPassword)`);
    if (seen.has(user.name)) problems.push(`aclUsers[${i}].name '${user.name}' appears twice`);
    seen.add(user.name);
    if (!NO_SPACE.test(user.password)) problems.push(`aclUsers[${i}].password (user '${user.name}') must be non-empty without spaces`);
    for (const rule of user.rules ?? []) {
      if (!NO_SPACE.test(rule)) problems.push(`aclUsers[${i}].rules (user '${user.name}') holds '${rule}', a rule is one word like '~app:*' or '+get'`);
    }
  }
  return problems;
}
