// Bring your own secured Kafka and Redis (issue 13): the built ingest against each listener of a real
// secured broker (infra/kafka start.sh --security: SASL_SSL with SCRAM, PLAIN and OAUTHBEARER, SSL with
// client certificates, the StandardAuthorizer with ACLs), the built gateway on a TLS-only redis-server
// with an ACL user; secrets from files. Each wrong setting ends in one line naming it and exit 78, and
// no secret reaches a log.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLevel, type Admin } from 'kafkajs';
import WebSocket from 'ws';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import {
  createTopics,
  findRepoRoot,
  grantAcls,
  startApp,
  startSecuredKafka,
  startStack,
  uniqueName,
  unsecuredJwt,
  waitFor,
  type AppProcess,
  type SecuredKafkaBroker,
  type Stack,
} from '@wirestream/testkit';

const EXIT_CONFIG = 78;
const REDIS_USER = 'wirestream';
const REDIS_PASSWORD = 'redis-password-never-logged';

let broker: SecuredKafkaBroker;
let stack: Stack;
let admin: Admin;
let client: Client;
let topic: string;
let schemaPath: string;
/** An SDL naming a topic that exists and on which the ingest principal has no ACL at all. */
let deniedSchemaPath: string;
const received: FormattedExecutionResult<Record<string, unknown>, unknown>[] = [];
const logs: AppProcess[] = [];

/** Writes a secret into a file, as a mounted Kubernetes secret. */
const secretFile = (name: string, value: string): string => {
  const path = stack.path(name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return path;
};

beforeAll(async () => {
  broker = await startSecuredKafka();
  topic = uniqueName('secured-events');
  // PLAINTEXT is the admin listener (a super user): topics, ACLs and the test's producer.
  // The dead-letter topic is ingest's to create, with the ACLs the guide lists (Create on it).
  stack = await startStack({
    name: 'secured',
    brokers: [broker.security.listeners.plaintext],
    redis: { tls: true, aclUsers: [{ name: REDIS_USER, password: REDIS_PASSWORD, rules: ['~*', '&*', '+@all'] }] },
    schema: `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${topic}", key: "id") }\n`,
    topics: [{ topic, numPartitions: 2 }],
    apps: [],
    kafkaLogLevel: logLevel.NOTHING, // the warm-up below retries through COORDINATOR_NOT_AVAILABLE
  });
  admin = stack.admin;
  schemaPath = stack.schemaPath ?? '';
  // A new broker creates __consumer_offsets at the first group request, and kafkajs logs each
  // COORDINATOR_NOT_AVAILABLE it retries meanwhile at error level; a cluster in service has it.
  // Created here, so the matrix below sees only what the ACLs cause.
  await waitFor(async () => (await admin.fetchOffsets({ groupId: uniqueName('warm-up'), topics: [topic] }).then(() => true, () => false)), { timeoutMs: 60_000, message: 'the group coordinator' });
  const deniedTopic = uniqueName('secured-denied');
  await createTopics(admin, [{ topic: deniedTopic, numPartitions: 1 }]);
  deniedSchemaPath = stack.writeFile('denied.graphql', `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${deniedTopic}", key: "id") }\n`);

  const gateway = await stack.startGateway({ env: { ...redisEnv(), LOG_LEVEL: 'debug' } });
  logs.push(gateway);
  client = createClient({ url: gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  stack.onStop(() => client.dispose());
  client.subscribe({ query: 'subscription { changed { id n } }' }, { next: (r) => void received.push(r), error: () => {}, complete: () => {} });
  await waitFor(async () => ((await gateway.stats())['confirmedChannels'] ?? 0) > 0, { message: 'subscribed' });
});

afterAll(async () => {
  await stack?.stop();
  await broker?.stop();
});

function redisEnv(): Record<string, string> {
  const tls = stack.redis.tls;
  if (!tls) throw new Error('the test Redis runs without TLS');
  return { REDIS_URL: stack.redis.url, REDIS_TLS_CA_FILE: tls.ca, REDIS_USERNAME: REDIS_USER, REDIS_PASSWORD_FILE: secretFile('redis-password', REDIS_PASSWORD) };
}

/**
 * The ACLs docs/bring-your-own-kafka.md lists, granted the way it says: infra/kafka/grant-acls.mjs
 * through the admin listener. Resolves once the broker lists them.
 */
async function grantIngest(groupId: string): Promise<void> {
  const script = join(findRepoRoot(), 'infra', 'kafka', 'grant-acls.mjs');
  const args = ['--brokers', broker.security.listeners.plaintext, '--principal', broker.security.clientPrincipal, '--topics', topic, '--group', groupId];
  const run = await runToExit(script, args, {});
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout).toContain(`granted ${broker.security.clientPrincipal} Write, Describe, DescribeConfigs, Create on topic ${topic}.dlq`);
  // The same grants through testkit's grantAcls are no-ops that wait until the broker lists them.
  await grantAcls(admin, broker.security.clientPrincipal, [
    { resource: 'topic', name: topic, operations: ['read', 'describe'] },
    { resource: 'topic', name: `${topic}.dlq`, operations: ['write', 'describe', 'describeConfigs', 'create'] },
    { resource: 'group', name: groupId, operations: ['read', 'describe'] },
  ]);
}

function ingestEnv(groupId: string, kafkaEnv: Record<string, string>): Record<string, string> {
  return { ...redisEnv(), ...kafkaEnv, SCHEMA_PATH: schemaPath, KAFKA_GROUP_ID: groupId, INGEST_HTTP_PORT: '0', INGEST_FROM_BEGINNING: 'true', LOG_LEVEL: 'debug' };
}

const LISTENERS = {
  'SASL_SSL SCRAM-SHA-512 (spelled as providers do), password from a file': () => ({
    KAFKA_BROKERS: broker.security.listeners.saslSsl,
    KAFKA_SSL_CA_FILE: broker.security.files.ca,
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    KAFKA_SASL_USERNAME: broker.security.users.app.username,
    KAFKA_SASL_PASSWORD_FILE: secretFile('kafka-password-512', broker.security.users.app.password),
  }),
  'SASL_SSL SCRAM-SHA-256': () => ({
    KAFKA_BROKERS: broker.security.listeners.saslSsl,
    KAFKA_SSL_CA_FILE: broker.security.files.ca,
    KAFKA_SASL_MECHANISM: 'scram-sha-256',
    KAFKA_SASL_USERNAME: broker.security.users.app.username,
    KAFKA_SASL_PASSWORD: broker.security.users.app.password,
  }),
  'SASL_SSL PLAIN': () => ({
    KAFKA_BROKERS: broker.security.listeners.saslSsl,
    KAFKA_SSL_CA_FILE: broker.security.files.ca,
    KAFKA_SASL_MECHANISM: 'plain',
    KAFKA_SASL_USERNAME: broker.security.users.app.username,
    KAFKA_SASL_PASSWORD: broker.security.users.app.password,
  }),
  'SASL_SSL OAUTHBEARER, token file': () => ({
    KAFKA_BROKERS: broker.security.listeners.saslSsl,
    KAFKA_SSL_CA_FILE: broker.security.files.ca,
    KAFKA_SASL_MECHANISM: 'oauthbearer',
    KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: secretFile('token', unsecuredJwt('app')),
  }),
  'SSL with a client certificate (mTLS)': () => ({
    KAFKA_BROKERS: broker.security.listeners.ssl,
    KAFKA_SSL_CA_FILE: broker.security.files.ca,
    KAFKA_SSL_CERT_FILE: broker.security.files.clientCert,
    KAFKA_SSL_KEY_FILE: broker.security.files.clientKey,
  }),
} as const;

describe('ingest on a secured Kafka, gateway on a TLS Redis with an ACL user', () => {
  it.each(Object.keys(LISTENERS) as (keyof typeof LISTENERS)[])('%s: with the guide\'s ACLs, an event produced reaches a graphql-ws client, no warning', async (name) => {
    const groupId = uniqueName('ingest-secured');
    await grantIngest(groupId);
    const ingest = startApp('ingest', ingestEnv(groupId, LISTENERS[name]()));
    logs.push(ingest);
    try {
      await ingest.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group', 60_000);
      const id = uniqueName('evt');
      await stack.send(topic, [{ key: id, value: JSON.stringify({ id, n: 7 }) }]);
      await waitFor(() => received.some((r) => (r.data?.['changed'] as { id?: string } | undefined)?.id === id), { timeoutMs: 30_000, message: `event ${id} through ${name}` });
    } finally {
      expect(await ingest.stop()).toBe(0);
    }
    // The guide's ACLs are enough: nothing is denied, nothing falls back (DescribeConfigs, truncation).
    const complaints = ingest.lines.filter((l) => l['level'] === 'warn' || l['level'] === 'error' || l['level'] === 'fatal');
    expect(complaints.map((l) => l['msg'])).toEqual([]);
  });
});

describe('ACLs short of the guide\'s on the dead-letter topic: each named where it matters', () => {
  it('no DescribeConfigs: a warning naming it at start; no Write: an error naming it at the first dead letter', async () => {
    const partial = uniqueName('secured-partial');
    const groupId = uniqueName('ingest-partial');
    await createTopics(admin, [{ topic: partial, numPartitions: 1 }]);
    const partialSchema = stack.writeFile('partial.graphql', `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${partial}", key: "id") }\n`);
    await grantAcls(admin, broker.security.clientPrincipal, [
      { resource: 'topic', name: partial, operations: ['read', 'describe'] },
      { resource: 'topic', name: `${partial}.dlq`, operations: ['create', 'describe'] },
      { resource: 'group', name: groupId, operations: ['read', 'describe'] },
    ]);
    const ingest = startApp('ingest', { ...ingestEnv(groupId, LISTENERS['SASL_SSL PLAIN']()), SCHEMA_PATH: partialSchema });
    logs.push(ingest);
    try {
      const warning = await ingest.waitForLog((l) => /^Kafka denied DescribeConfigs on the dead-letter topic /.test(String(l['msg'])), 'the DescribeConfigs warning', 60_000);
      expect(warning['msg']).toContain(`"${partial}.dlq" (TOPIC_AUTHORIZATION_FAILED): grant the ingest principal DescribeConfigs on it`);
      await ingest.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group', 60_000);
      await stack.send(partial, [{ key: 'k', value: 'not json' }]);
      const denied = await ingest.waitForLog((l) => String(l['msg']).startsWith('Kafka denied writing to the dead-letter topic'), 'the dead-letter Write error', 30_000);
      expect(denied).toMatchObject({ level: 'error', deadLetterTopic: `${partial}.dlq` });
      expect(denied['msg']).toContain('grant the ingest principal Write and Describe on it');
    } finally {
      expect(await ingest.stop()).toBe(0);
    }
  });
});

/** Runs the built ingest until it exits (or the deadline), with what it printed. */
function runIngestToExit(env: Record<string, string>, timeoutMs = 90_000): Promise<{ status: number | null; stderr: string; stdout: string }> {
  return runToExit(join(findRepoRoot(), 'apps', 'ingest', 'dist', 'main.js'), [], env, timeoutMs);
}

/** Runs a Node script until it exits (or the deadline), with what it printed. */
function runToExit(script: string, args: readonly string[], env: Record<string, string>, timeoutMs = 90_000): Promise<{ status: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr, stdout });
    });
  });
}

describe('a wrong security setting: one line naming it, exit 78, no secret in the log', () => {
  const WRONG_PASSWORD = 'not-the-password-never-logged';
  it.each([
    [
      'a wrong SASL password',
      () => ({ ...LISTENERS['SASL_SSL SCRAM-SHA-512 (spelled as providers do), password from a file'](), KAFKA_SASL_PASSWORD_FILE: secretFile('wrong', WRONG_PASSWORD) }),
      /KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/,
    ],
    ['an untrusted broker certificate', () => ({ ...LISTENERS['SASL_SSL PLAIN'](), KAFKA_SSL_CA_FILE: broker.security.files.untrustedCa }), /set KAFKA_SSL_CA_FILE to the CA that signed it/],
    [
      'a client certificate the broker does not trust',
      () => ({ ...LISTENERS['SSL with a client certificate (mTLS)'](), KAFKA_SSL_CERT_FILE: broker.security.files.untrustedClientCert, KAFKA_SSL_KEY_FILE: broker.security.files.untrustedClientKey }),
      /refused the client certificate .*KAFKA_SSL_CERT_FILE/,
    ],
    ['no ACL for the consumer group', () => LISTENERS['SASL_SSL PLAIN'](), /Read on the group named by KAFKA_GROUP_ID/],
    [
      'no ACL at all (a topic that exists, nothing granted)',
      () => ({ ...LISTENERS['SASL_SSL SCRAM-SHA-256'](), SCHEMA_PATH: deniedSchemaPath }),
      /^ingest cannot start: Kafka denied the ingest principal access to topic "secured-denied-[^"]+" \(TOPIC_AUTHORIZATION_FAILED\): grant it Read and Describe on it /,
    ],
  ] as const)('%s', async (_name, env, expected) => {
    const groupId = uniqueName('ingest-denied'); // never granted: only the group case reaches the group
    const run = await runIngestToExit({ ...ingestEnv(groupId, {}), ...env() });
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    expect(run.stderr).toMatch(expected);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    for (const secret of [WRONG_PASSWORD, broker.security.users.app.password, REDIS_PASSWORD]) {
      expect(run.stdout).not.toContain(secret);
      expect(run.stderr).not.toContain(secret);
    }
  });

  it('never logs a password of a running ingest or gateway (LOG_LEVEL=debug)', () => {
    for (const proc of logs) {
      const text = JSON.stringify(proc.lines) + proc.stderr();
      for (const secret of [broker.security.users.app.password, REDIS_PASSWORD]) expect(text, proc.name).not.toContain(secret);
    }
    expect(logs.length).toBeGreaterThan(1);
  });
});
