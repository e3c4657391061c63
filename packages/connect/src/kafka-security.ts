import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { ConnectionOptions } from 'node:tls';
import { promisify } from 'node:util';
import { booleanFlag, ConfigError, defineConfigSpec, durationMs, envVar, z, type Config, type ConfigIssue } from '@wirestream/config';
import { readPemFiles } from './pem-files.js';

const run = promisify(execFile);

export const KAFKA_SASL_MECHANISMS = ['none', 'plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] as const;
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

/**
 * A SASL mechanism in any case: providers and Kafka itself spell them `SCRAM-SHA-512`, kafkajs wants
 * `scram-sha-512`. Normalized here, at the edge, so nothing else compares case.
 */
function saslMechanism() {
  const expected = `one of ${KAFKA_SASL_MECHANISMS.join(', ')} (any case)`;
  return z.string().trim().toLowerCase().pipe(z.enum(KAFKA_SASL_MECHANISMS, { error: `expected ${expected}` })).describe(expected);
}

/**
 * How a Wirestream process reaches a secured Kafka (every managed offering: MSK, Confluent Cloud,
 * Aiven, Strimzi, Redpanda): TLS with a CA, mutual TLS, SASL PLAIN / SCRAM / OAUTHBEARER. Spread
 * into a service's spec. Secrets can come from files (`<NAME>_FILE`, see @wirestream/config).
 */
export const kafkaSecuritySpec = defineConfigSpec({
  kafkaSsl: envVar({ name: 'KAFKA_SSL', schema: booleanFlag(), default: false, description: 'Connect to Kafka over TLS (on by itself when a KAFKA_SSL_*_FILE is set). Without KAFKA_SSL_CA_FILE the system CAs verify the brokers.' }),
  kafkaSslCaFile: envVar({ name: 'KAFKA_SSL_CA_FILE', schema: z.string().trim().min(1), optional: true, description: 'PEM file of the CA(s) that signed the brokers\' certificates.' }),
  kafkaSslCertFile: envVar({ name: 'KAFKA_SSL_CERT_FILE', schema: z.string().trim().min(1), optional: true, description: 'PEM client certificate for mutual TLS (with KAFKA_SSL_KEY_FILE).' }),
  kafkaSslKeyFile: envVar({ name: 'KAFKA_SSL_KEY_FILE', schema: z.string().trim().min(1), optional: true, description: 'PEM private key of KAFKA_SSL_CERT_FILE.' }),
  kafkaSslKeyPassword: envVar({ name: 'KAFKA_SSL_KEY_PASSWORD', schema: z.string().min(1), optional: true, secret: true, description: 'Passphrase of an encrypted KAFKA_SSL_KEY_FILE.' }),
  kafkaSslServername: envVar({ name: 'KAFKA_SSL_SERVERNAME', schema: z.string().trim().min(1), optional: true, description: 'TLS server name (SNI) to send and verify, when it differs from the broker host.' }),
  kafkaSaslMechanism: envVar({ name: 'KAFKA_SASL_MECHANISM', schema: saslMechanism(), default: 'none', description: 'SASL: `plain`, `scram-sha-256`, `scram-sha-512` (KAFKA_SASL_USERNAME/PASSWORD) or `oauthbearer` (a token from KAFKA_SASL_OAUTHBEARER_TOKEN_FILE or _COMMAND; MSK IAM: docs/bring-your-own-kafka.md). Use with KAFKA_SSL outside a trusted network.' }),
  kafkaSaslUsername: envVar({ name: 'KAFKA_SASL_USERNAME', schema: z.string().min(1), optional: true, description: 'SASL user (PLAIN, SCRAM).' }),
  kafkaSaslPassword: envVar({ name: 'KAFKA_SASL_PASSWORD', schema: z.string().min(1), optional: true, secret: true, description: 'SASL password (PLAIN, SCRAM).' }),
  kafkaSaslTokenFile: envVar({ name: 'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE', schema: z.string().trim().min(1), optional: true, description: 'OAUTHBEARER: file holding the current token, re-read at every authentication (a sidecar or projected token refreshes it).' }),
  kafkaSaslTokenCommand: envVar({ name: 'KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND', schema: z.string().trim().min(1), optional: true, description: 'OAUTHBEARER: command run (no shell; split on spaces) at every authentication; its standard output is the token.' }),
  kafkaSaslTokenTimeoutMs: envVar({ name: 'KAFKA_SASL_OAUTHBEARER_TOKEN_TIMEOUT_MS', schema: durationMs({ minMs: 100, maxMs: 120_000 }), default: 10_000, description: 'Longest KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND may run.' }),
});

export type KafkaSecurityConfig = Config<typeof kafkaSecuritySpec>;

/** SASL as kafkajs's `KafkaConfig.sasl` takes it. */
export type KafkaSasl =
  | { readonly mechanism: 'plain'; readonly username: string; readonly password: string }
  | { readonly mechanism: 'scram-sha-256'; readonly username: string; readonly password: string }
  | { readonly mechanism: 'scram-sha-512'; readonly username: string; readonly password: string }
  | { readonly mechanism: 'oauthbearer'; readonly oauthBearerProvider: () => Promise<{ value: string }> };

/** The `ssl` and `sasl` fields of kafkajs's `KafkaConfig` (absent when not used). */
export interface KafkaSecurity {
  readonly ssl?: ConnectionOptions | true;
  readonly sasl?: KafkaSasl;
  /** One line for the start log (never a secret): e.g. `TLS (CA file, client certificate), SASL scram-sha-512 as ingest`. */
  readonly summary: string;
}

/**
 * The kafkajs security options from the settings. Files are read now, so a missing or unreadable
 * one fails at start, naming its setting; so do settings that contradict each other.
 * @throws ConfigError with every problem
 */
export async function kafkaSecurity(config: KafkaSecurityConfig): Promise<KafkaSecurity> {
  const issues = checkKafkaSecurity(config);
  const pem = await readPemFiles(
    [
      ['KAFKA_SSL_CA_FILE', 'kafkaSslCaFile', config.kafkaSslCaFile],
      ['KAFKA_SSL_CERT_FILE', 'kafkaSslCertFile', config.kafkaSslCertFile],
      ['KAFKA_SSL_KEY_FILE', 'kafkaSslKeyFile', config.kafkaSslKeyFile],
    ],
    issues,
  );
  if (issues.length > 0) throw new ConfigError(issues);
  const tls = config.kafkaSsl || pem.size > 0;
  const sslOptions: ConnectionOptions = {
    ...(pem.has('KAFKA_SSL_CA_FILE') ? { ca: pem.get('KAFKA_SSL_CA_FILE') } : {}),
    ...(pem.has('KAFKA_SSL_CERT_FILE') ? { cert: pem.get('KAFKA_SSL_CERT_FILE'), key: pem.get('KAFKA_SSL_KEY_FILE') } : {}),
    ...(config.kafkaSslKeyPassword !== undefined ? { passphrase: config.kafkaSslKeyPassword } : {}),
    ...(config.kafkaSslServername !== undefined ? { servername: config.kafkaSslServername } : {}),
  };
  const sasl = saslOf(config);
  return {
    ...(tls ? { ssl: Object.keys(sslOptions).length > 0 ? sslOptions : true } : {}),
    ...(sasl ? { sasl } : {}),
    summary: summarize(tls, pem, config),
  };
}

/** Contradictions and gaps between the security settings, each naming what to set. */
function checkKafkaSecurity(config: KafkaSecurityConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const issue = (variable: string, key: string, problem: string): void => void issues.push({ variable, key, source: 'env', problem, received: undefined });
  if ((config.kafkaSslCertFile === undefined) !== (config.kafkaSslKeyFile === undefined)) {
    const missing = config.kafkaSslCertFile === undefined ? ['KAFKA_SSL_CERT_FILE', 'kafkaSslCertFile'] : ['KAFKA_SSL_KEY_FILE', 'kafkaSslKeyFile'];
    issue(missing[0] as string, missing[1] as string, 'mutual TLS needs both KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE');
  }
  const mechanism = config.kafkaSaslMechanism;
  const userPassword = mechanism === 'plain' || mechanism === 'scram-sha-256' || mechanism === 'scram-sha-512';
  if (userPassword) {
    if (config.kafkaSaslUsername === undefined) issue('KAFKA_SASL_USERNAME', 'kafkaSaslUsername', `required with KAFKA_SASL_MECHANISM=${mechanism}`);
    if (config.kafkaSaslPassword === undefined) issue('KAFKA_SASL_PASSWORD', 'kafkaSaslPassword', `required with KAFKA_SASL_MECHANISM=${mechanism} (or KAFKA_SASL_PASSWORD_FILE)`);
  } else if (config.kafkaSaslUsername !== undefined || config.kafkaSaslPassword !== undefined) {
    issue('KAFKA_SASL_MECHANISM', 'kafkaSaslMechanism', `KAFKA_SASL_USERNAME/PASSWORD are set but the mechanism is ${mechanism}: set plain, scram-sha-256 or scram-sha-512`);
  }
  const tokenSources = [config.kafkaSaslTokenFile, config.kafkaSaslTokenCommand].filter((v) => v !== undefined).length;
  if (mechanism === 'oauthbearer' && tokenSources !== 1) {
    issue('KAFKA_SASL_OAUTHBEARER_TOKEN_FILE', 'kafkaSaslTokenFile', 'KAFKA_SASL_MECHANISM=oauthbearer needs exactly one of KAFKA_SASL_OAUTHBEARER_TOKEN_FILE and KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND');
  } else if (mechanism !== 'oauthbearer' && tokenSources > 0) {
    issue('KAFKA_SASL_MECHANISM', 'kafkaSaslMechanism', `an OAUTHBEARER token source is set but the mechanism is ${mechanism}: set oauthbearer`);
  }
  return issues;
}

function saslOf(config: KafkaSecurityConfig): KafkaSasl | undefined {
  const mechanism = config.kafkaSaslMechanism;
  if (mechanism === 'none') return undefined;
  if (mechanism === 'oauthbearer') {
    const { kafkaSaslTokenFile: file, kafkaSaslTokenCommand: command, kafkaSaslTokenTimeoutMs: timeoutMs } = config;
    return { mechanism, oauthBearerProvider: file !== undefined ? () => tokenFromFile(file) : () => tokenFromCommand(command as string, timeoutMs) };
  }
  const credentials = { username: config.kafkaSaslUsername as string, password: config.kafkaSaslPassword as string };
  // One object per mechanism: kafkajs's SASLOptions is a union discriminated by it.
  if (mechanism === 'plain') return { mechanism, ...credentials };
  if (mechanism === 'scram-sha-256') return { mechanism, ...credentials };
  return { mechanism, ...credentials };
}

/** Re-read at every authentication: whatever refreshes the file (a sidecar, a projected token) is picked up. */
export async function tokenFromFile(path: string): Promise<{ value: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`KAFKA_SASL_OAUTHBEARER_TOKEN_FILE ${path} could not be read: ${(err as Error).message}`);
  }
  const value = text.trim();
  if (value === '') throw new Error(`KAFKA_SASL_OAUTHBEARER_TOKEN_FILE ${path} is empty`);
  return { value };
}

/** Runs the token command (no shell) at every authentication; its trimmed standard output is the token. */
export async function tokenFromCommand(command: string, timeoutMs: number): Promise<{ value: string }> {
  const [file, ...args] = command.split(/\s+/).filter((part) => part !== '');
  let stdout: string;
  try {
    ({ stdout } = await run(file as string, args, { timeout: timeoutMs, maxBuffer: 1_048_576, encoding: 'utf8' }));
  } catch (err) {
    // The command's own message, not its output (which could hold a token).
    throw new Error(`KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND failed: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  const value = stdout.trim();
  if (value === '') throw new Error('KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND printed no token');
  return { value };
}

function summarize(tls: boolean, pem: ReadonlyMap<string, string>, config: KafkaSecurityConfig): string {
  const parts: string[] = [];
  if (tls) {
    const extras = [pem.has('KAFKA_SSL_CA_FILE') ? 'CA file' : 'system CAs', ...(pem.has('KAFKA_SSL_CERT_FILE') ? ['client certificate'] : [])];
    parts.push(`TLS (${extras.join(', ')})`);
  } else parts.push('plaintext');
  const mechanism = config.kafkaSaslMechanism;
  if (mechanism === 'oauthbearer') parts.push(`SASL oauthbearer (token ${config.kafkaSaslTokenFile !== undefined ? 'file' : 'command'})`);
  else if (mechanism !== 'none') parts.push(`SASL ${mechanism} as ${config.kafkaSaslUsername ?? '?'}`);
  return parts.join(', ');
}
