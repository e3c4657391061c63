import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './freePort.js';
import { startKafkaWith, type KafkaBroker, type KafkaBrokerOptions } from './startKafka.js';

/** SASL mechanisms the secured listeners accept (SASL_SSL and SASL_PLAINTEXT alike). */
export type KafkaSaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER';

/** A SASL user of the secured broker: PLAIN (JAAS) and SCRAM-SHA-256/512 (made at format time). */
export interface KafkaUser {
  readonly username: string;
  readonly password: string;
}

/** How to reach the secured listeners of a broker from {@link startSecuredKafka}. */
export interface KafkaSecurity {
  /** `127.0.0.1:<port>` per listener. PLAINTEXT is the super user User:ANONYMOUS (admin, ACL grants). */
  readonly listeners: {
    readonly plaintext: string;
    /** TLS (server certificate, {@link KafkaSecurityFiles.ca}) + SASL. */
    readonly saslSsl: string;
    /** Mutual TLS: a client certificate signed by the CA is required; its CN is the principal. */
    readonly ssl: string;
    /** SASL without TLS. */
    readonly saslPlaintext: string;
  };
  readonly saslMechanisms: readonly KafkaSaslMechanism[];
  /** `admin` is a super user; `app` has no ACLs until a test grants some ({@link grantAcls}). */
  readonly users: { readonly admin: KafkaUser; readonly app: KafkaUser };
  /** The principal of {@link KafkaSecurityFiles.clientCert} on the SSL listener: `User:app`. */
  readonly clientPrincipal: string;
  readonly files: KafkaSecurityFiles;
}

/** PEM files (absolute paths) made at the broker's first start, in `<dataDir>/security/`. */
export interface KafkaSecurityFiles {
  /** The CA that signed the broker's certificate (SAN 127.0.0.1, localhost) and the client's. */
  readonly ca: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A second CA that signed nothing the broker trusts: a client using it rejects the broker. */
  readonly untrustedCa: string;
  /** A client certificate (CN app) signed by the untrusted CA: the SSL listener rejects it. */
  readonly untrustedClientCert: string;
  readonly untrustedClientKey: string;
}

/** A running broker with secured listeners next to PLAINTEXT. */
export interface SecuredKafkaBroker extends KafkaBroker {
  readonly security: KafkaSecurity;
}

/**
 * Starts the real broker of {@link startKafka} with `infra/kafka/start.sh --security`: SASL_SSL
 * (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with Kafka's unsecured JWS validator), SSL
 * with a required client certificate, SASL_PLAINTEXT, the StandardAuthorizer with
 * `allow.everyone.if.no.acl.found=false`, and a throwaway CA. `brokers` is the PLAINTEXT listener,
 * which is a super user: use it for admin and {@link grantAcls}, and `security.listeners` for the
 * clients under test. A JVM start costs ~5-20 s here: start one per test file.
 */
export async function startSecuredKafka(options: KafkaBrokerOptions = {}): Promise<SecuredKafkaBroker> {
  const broker = await startKafkaWith(options, async () => [
    '--security',
    '--sasl-ssl-port', String(await freePort()),
    '--ssl-port', String(await freePort()),
    '--sasl-plaintext-port', String(await freePort()),
  ]);
  let security: KafkaSecurity;
  try {
    security = readClientsJson(join(broker.dataDir, 'security', 'clients.json'));
  } catch (error) {
    await broker.stop();
    throw error;
  }
  // Not a spread: pid is a getter that follows restart().
  return Object.defineProperty(broker, 'security', { value: security, enumerable: true }) as SecuredKafkaBroker;
}

/** Reads start.sh's clients.json, checking every field: a drift between the two fails here, by name. */
function readClientsJson(file: string): KafkaSecurity {
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const at = (path: string): unknown =>
    path.split('.').reduce<unknown>((value, key) => (isRecord(value) ? value[key] : undefined), raw);
  const text = (path: string): string => {
    const value = at(path);
    if (typeof value !== 'string' || value === '') {
      throw new Error(`startSecuredKafka: ${file}: ${path} must be a non-empty string, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  const user = (name: string): KafkaUser => ({ username: text(`users.${name}.username`), password: text(`users.${name}.password`) });
  const mechanisms = at('saslMechanisms');
  const known: readonly string[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];
  if (!Array.isArray(mechanisms) || !mechanisms.every((m): m is KafkaSaslMechanism => typeof m === 'string' && known.includes(m))) {
    throw new Error(`startSecuredKafka: ${file}: saslMechanisms must list some of ${known.join(', ')}, got ${JSON.stringify(mechanisms)}`);
  }
  return Object.freeze({
    listeners: Object.freeze({
      plaintext: text('listeners.plaintext'),
      saslSsl: text('listeners.saslSsl'),
      ssl: text('listeners.ssl'),
      saslPlaintext: text('listeners.saslPlaintext'),
    }),
    saslMechanisms: Object.freeze([...mechanisms]),
    users: Object.freeze({ admin: user('admin'), app: user('app') }),
    clientPrincipal: text('clientPrincipal'),
    files: Object.freeze({
      ca: text('files.ca'),
      clientCert: text('files.clientCert'),
      clientKey: text('files.clientKey'),
      untrustedCa: text('files.untrustedCa'),
      untrustedClientCert: text('files.untrustedClientCert'),
      untrustedClientKey: text('files.untrustedClientKey'),
    }),
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * An unsecured JWT (`alg: none`) for the OAUTHBEARER mechanism: the broker's default validator
 * (OAuthBearerUnsecuredValidatorCallbackHandler) needs only a `sub` (the principal, `User:<sub>`)
 * and an `exp` in the future. For a kafkajs `oauthBearerProvider: async () => ({ value })`.
 * A negative `lifetimeMs` makes an expired token (a negative test).
 */
export function unsecuredJwt(subject: string, { lifetimeMs = 3_600_000 /* 1 hour */ } = {}): string {
  const nowS = Math.floor(Date.now() / 1000);
  const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part({ sub: subject, iat: nowS, exp: nowS + Math.ceil(lifetimeMs / 1000) })}.`;
}
