// startSecuredKafka against kafkajs 2.2.4 (the version the apps pin): every secured listener and
// mechanism works once ACLs allow it, and each misconfiguration ends in the error a client sees
// (asserted by type and code, which is what the apps' error mapping will key on). One broker for
// the whole file: a JVM start costs ~5-20 s here.
import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type Admin, type KafkaConfig, type SASLOptions } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTopics,
  grantAcls,
  startSecuredKafka,
  uniqueName,
  unsecuredJwt,
  waitFor,
  type KafkaSecurity,
  type SecuredKafkaBroker,
} from '../src/index.js';
import { rejection } from './support/rejection.js';

let broker: SecuredKafkaBroker;
let security: KafkaSecurity;
/** On the PLAINTEXT listener: User:ANONYMOUS, a super user. */
let admin: Admin;
let ca: string;

beforeAll(async () => {
  broker = await startSecuredKafka();
  security = broker.security;
  ca = readFileSync(security.files.ca, 'utf8');
  admin = kafka({ brokers: broker.brokers }).admin();
  await admin.connect();
});

afterAll(async () => {
  await admin?.disconnect();
  await broker?.stop();
});

/** A kafkajs client that fails at once: no retries, so each negative case shows its first error. */
function kafka(config: Omit<KafkaConfig, 'clientId'>): Kafka {
  return new Kafka({ clientId: 'testkit-secured', logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 5_000, ...config });
}

const pem = (file: string): string => readFileSync(file, 'utf8');

/** A SASL_SSL client for `app` (or the given password) with the mechanism, trusting our CA. */
function saslSsl(mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', password = security.users.app.password): Kafka {
  const sasl = { mechanism, username: security.users.app.username, password } as SASLOptions;
  return kafka({ brokers: [security.listeners.saslSsl], ssl: { ca: [ca] }, sasl });
}

/** A topic the admin created and `app` may produce to (and read, with describe for metadata). */
async function grantedTopic(): Promise<string> {
  const topic = uniqueName('secured');
  await createTopics(admin, [{ topic, numPartitions: 1 }]);
  await grantAcls(admin, security.clientPrincipal, [{ resource: 'topic', name: topic, operations: ['write', 'read', 'describe'] }]);
  return topic;
}

/** Produces one message through `client` and returns it as read back through the admin listener. */
async function produceAndReadBack(client: Kafka, topic: string): Promise<string> {
  const value = uniqueName('value');
  const producer = client.producer();
  await producer.connect();
  try {
    await producer.send({ topic, messages: [{ value }] });
  } finally {
    await producer.disconnect();
  }
  const offsets = await admin.fetchTopicOffsets(topic);
  expect(offsets).toEqual([expect.objectContaining({ partition: 0, offset: '1' })]);
  return value;
}

describe('startSecuredKafka', () => {
  it('describes its listeners, users and PEM files', () => {
    const { listeners, files } = security;
    expect(broker.brokers).toEqual([listeners.plaintext]);
    const ports = Object.values(listeners).map((address) => Number(address.split(':')[1]));
    expect(new Set(ports).size).toBe(4);
    expect(security.saslMechanisms).toEqual(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER']);
    expect(security.users.app.username).toBe('app');
    expect(security.clientPrincipal).toBe('User:app');
    const paths = [files.ca, files.clientCert, files.clientKey, files.untrustedCa, files.untrustedClientCert, files.untrustedClientKey];
    for (const file of paths) expect(pem(file)).toMatch(/^-----BEGIN /);
  });
});

describe('authentication succeeds on every secured listener and mechanism', () => {
  it.each(['plain', 'scram-sha-256', 'scram-sha-512'] as const)('SASL_SSL %s produces once ACLs allow it', async (mechanism) => {
    const topic = await grantedTopic();
    await produceAndReadBack(saslSsl(mechanism), topic);
  });

  it('SASL_SSL OAUTHBEARER (unsecured JWT, sub = principal) produces once ACLs allow it', async () => {
    const topic = await grantedTopic();
    const client = kafka({
      brokers: [security.listeners.saslSsl],
      ssl: { ca: [ca] },
      sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => Promise.resolve({ value: unsecuredJwt('app') }) },
    });
    await produceAndReadBack(client, topic);
  });

  it('SSL with the client certificate (mTLS, principal = its CN) produces once ACLs allow it', async () => {
    const topic = await grantedTopic();
    const client = kafka({
      brokers: [security.listeners.ssl],
      ssl: { ca: [ca], cert: pem(security.files.clientCert), key: pem(security.files.clientKey) },
    });
    await produceAndReadBack(client, topic);
  });

  it('SASL_PLAINTEXT scram-sha-512 produces once ACLs allow it', async () => {
    const topic = await grantedTopic();
    const { username, password } = security.users.app;
    const client = kafka({ brokers: [security.listeners.saslPlaintext], sasl: { mechanism: 'scram-sha-512', username, password } });
    await produceAndReadBack(client, topic);
  });

  it('the admin user is a super user on SASL_SSL: no ACL needed', async () => {
    const topic = uniqueName('secured-admin');
    await createTopics(admin, [{ topic, numPartitions: 1 }]);
    const { username, password } = security.users.admin;
    const client = kafka({ brokers: [security.listeners.saslSsl], ssl: { ca: [ca] }, sasl: { mechanism: 'scram-sha-256', username, password } });
    await produceAndReadBack(client, topic);
  });
});

describe('a wrong password fails authentication, not retriable', () => {
  it.each([
    ['plain', /^SASL PLAIN authentication failed: Authentication failed: Invalid username or password$/],
    ['scram-sha-256', /^SASL SCRAM SHA256 authentication failed: .*invalid credentials with SASL mechanism SCRAM-SHA-256$/],
    ['scram-sha-512', /^SASL SCRAM SHA512 authentication failed: .*invalid credentials with SASL mechanism SCRAM-SHA-512$/],
  ] as const)('%s', async (mechanism, message) => {
    const producer = saslSsl(mechanism, 'not-the-password').producer();
    const error = await rejection(producer.connect());
    expect(error).toMatchObject({ name: 'KafkaJSSASLAuthenticationError', retriable: false });
    expect(error.message).toMatch(message);
  });
});

describe('an untrusted certificate fails the TLS handshake', () => {
  it('the client does not trust the broker (wrong CA): SELF_SIGNED_CERT_IN_CHAIN', async () => {
    const { username, password } = security.users.app;
    const client = kafka({
      brokers: [security.listeners.saslSsl],
      ssl: { ca: [pem(security.files.untrustedCa)] },
      sasl: { mechanism: 'plain', username, password },
    });
    const error = await rejection(client.producer().connect());
    // kafkajs wraps the connection error once its retries (none here) are spent.
    expect(error).toMatchObject({ name: 'KafkaJSNumberOfRetriesExceeded', retriable: false });
    expect(error.cause).toMatchObject({ name: 'KafkaJSConnectionError', code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  });

  it('the broker does not trust the client certificate (mTLS): alert certificate unknown', async () => {
    const client = kafka({
      brokers: [security.listeners.ssl],
      ssl: { ca: [ca], cert: pem(security.files.untrustedClientCert), key: pem(security.files.untrustedClientKey) },
    });
    const error = await rejection(client.producer().connect());
    expect(error).toMatchObject({ name: 'KafkaJSNumberOfRetriesExceeded' });
    // The broker's alert; under TLS 1.3 the client's side of the handshake is done before it
    // arrives, so a reset of kafkajs's first request is possible too (seen with Redis, not yet here).
    expect(error.cause).toMatchObject({ name: 'KafkaJSConnectionError' });
    expect(String((error.cause as { code?: unknown }).code)).toMatch(/^(ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_CERTIFICATE_UNKNOWN|ECONNRESET)$/);
  });

  it('no client certificate on the mTLS listener: alert bad certificate', async () => {
    const client = kafka({ brokers: [security.listeners.ssl], ssl: { ca: [ca] } });
    const error = await rejection(client.producer().connect());
    expect(error.cause).toMatchObject({ name: 'KafkaJSConnectionError' });
    expect(String((error.cause as { code?: unknown }).code)).toMatch(/^(ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_BAD_CERTIFICATE|ECONNRESET)$/);
  });
});

describe('a client whose settings do not match the listener', () => {
  /** What a producer's connect() and then its first request report (undefined: it succeeded). */
  async function connectThenSend(client: Kafka): Promise<{ connect?: Error & Record<string, unknown>; send?: Error & Record<string, unknown> }> {
    const producer = client.producer();
    try {
      const connect = await rejection(producer.connect()).catch(() => undefined);
      if (connect !== undefined) return { connect };
      const send = await rejection(producer.send({ topic: uniqueName('mismatch'), messages: [{ value: 'x' }] })).catch(() => undefined);
      return send === undefined ? {} : { send };
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }
  const causeOf = (error: Error | undefined): unknown => (error as { cause?: unknown } | undefined)?.cause;

  it('an expired OAUTHBEARER token: connect() resolves, the first request fails ILLEGAL_SASL_STATE', async () => {
    // The broker answers a rejected token with an RFC 7628 error challenge ({"status":"invalid_token"})
    // inside a successful SaslAuthenticate response; kafkajs 2.2.4 never reads it and carries on.
    const client = kafka({
      brokers: [security.listeners.saslSsl],
      ssl: { ca: [ca] },
      sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => Promise.resolve({ value: unsecuredJwt('app', { lifetimeMs: -60_000 }) }) },
    });
    const { connect, send } = await connectThenSend(client);
    expect(connect).toBeUndefined();
    expect(causeOf(send)).toMatchObject({ name: 'KafkaJSProtocolError', type: 'ILLEGAL_SASL_STATE', code: 34 });
  });

  it('TLS without SASL on SASL_SSL: connect() resolves (ApiVersions needs no auth), the first request finds the connection closed', async () => {
    const { connect, send } = await connectThenSend(kafka({ brokers: [security.listeners.saslSsl], ssl: { ca: [ca] } }));
    expect(connect).toBeUndefined();
    expect(causeOf(send)).toMatchObject({ name: 'KafkaJSConnectionClosedError', message: 'Closed connection' });
  });

  it('SASL without TLS on SASL_SSL: the broker closes the connection', async () => {
    const { username, password } = security.users.app;
    const { connect } = await connectThenSend(kafka({ brokers: [security.listeners.saslSsl], sasl: { mechanism: 'plain', username, password } }));
    expect(connect).toMatchObject({ name: 'KafkaJSNumberOfRetriesExceeded' });
    expect(causeOf(connect)).toMatchObject({ name: 'KafkaJSConnectionClosedError', message: 'Closed connection' });
  });

  it('SASL on the PLAINTEXT listener: ILLEGAL_SASL_STATE', async () => {
    const { username, password } = security.users.app;
    const { connect } = await connectThenSend(kafka({ brokers: [security.listeners.plaintext], sasl: { mechanism: 'plain', username, password } }));
    expect(connect).toMatchObject({ name: 'KafkaJSProtocolError', type: 'ILLEGAL_SASL_STATE' });
  });
});

describe('authorization: nothing without an ACL, produce and consume with one', () => {
  it('producing to a topic without ACLs: TOPIC_AUTHORIZATION_FAILED', async () => {
    const topic = uniqueName('secured-denied');
    await createTopics(admin, [{ topic, numPartitions: 1 }]);
    const producer = saslSsl('scram-sha-512').producer();
    await producer.connect();
    try {
      const error = await rejection(producer.send({ topic, messages: [{ value: 'x' }] }));
      expect(error).toMatchObject({ name: 'KafkaJSNonRetriableError', retriable: false });
      expect(error.cause).toMatchObject({ name: 'KafkaJSProtocolError', type: 'TOPIC_AUTHORIZATION_FAILED', code: 29 });
    } finally {
      await producer.disconnect();
    }
  });

  it('consuming with topic ACLs but none on the group: kafkajs reports only "Failed to find group coordinator"', async () => {
    // The broker answers FindCoordinator with GROUP_AUTHORIZATION_FAILED (Describe on the group is
    // missing); kafkajs's brokerPool.withBroker swallows it and throws KafkaJSGroupCoordinatorNotFound.
    const topic = await grantedTopic();
    const { error, findCoordinatorErrors } = await consumeError(topic, uniqueName('group-none'));
    expect(error).toMatchObject({ name: 'KafkaJSGroupCoordinatorNotFound', message: 'Failed to find group coordinator' });
    expect(findCoordinatorErrors).toContain('GROUP_AUTHORIZATION_FAILED');
  });

  it('consuming with Describe but not Read on the group: GROUP_AUTHORIZATION_FAILED', async () => {
    const topic = await grantedTopic();
    const groupId = uniqueName('group-describe');
    await grantAcls(admin, security.clientPrincipal, [{ resource: 'group', name: groupId, operations: ['describe'] }]);
    const { error } = await consumeError(topic, groupId);
    expect(error).toMatchObject({ name: 'KafkaJSProtocolError', type: 'GROUP_AUTHORIZATION_FAILED', code: 30 });
  });

  it('with Read on the topic and the group, a consumer on SASL_SSL reads what was produced', async () => {
    const topic = await grantedTopic();
    const groupId = uniqueName('group-read');
    await grantAcls(admin, security.clientPrincipal, [{ resource: 'group', name: groupId, operations: ['read'] }]);
    const client = saslSsl('scram-sha-256');
    const value = await produceAndReadBack(client, topic);
    const consumer = client.consumer({ groupId, retry: { retries: 0 } });
    const received: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({ eachMessage: ({ message }) => Promise.resolve(void received.push(message.value?.toString() ?? '')) });
      await waitFor(() => received.length > 0, { timeoutMs: 20_000, message: `the consumer in ${groupId} to read ${topic}` });
      expect(received).toEqual([value]);
    } finally {
      await consumer.disconnect();
    }
  });
});

/**
 * Runs a SASL_SSL consumer of `topic` in `groupId` until it crashes. Resolves to the crash's error
 * and the error kafkajs logged (at debug level only) for its failed FindCoordinator requests.
 */
async function consumeError(topic: string, groupId: string): Promise<{ error: Error & Record<string, unknown>; findCoordinatorErrors: string[] }> {
  const findCoordinatorErrors: string[] = [];
  const { username, password } = security.users.app;
  const client = new Kafka({
    clientId: 'testkit-secured',
    brokers: [security.listeners.saslSsl],
    ssl: { ca: [ca] },
    sasl: { mechanism: 'plain', username, password },
    logLevel: logLevel.DEBUG,
    logCreator: () => ({ log }) => {
      const { error } = log as { error?: unknown };
      if (log.message === 'Tried to find group coordinator' && error instanceof Error) {
        findCoordinatorErrors.push((error as Error & { type?: string }).type ?? error.name);
      }
    },
  });
  // Retries on: a fresh broker answers the first FindCoordinator with COORDINATOR_NOT_AVAILABLE
  // while it creates __consumer_offsets, which kafkajs retries; authorization errors end at once.
  const consumer = client.consumer({ groupId, retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) } });
  let crash: Error | undefined;
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    crash = payload.error;
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ eachMessage: () => Promise.resolve() });
    const error = await waitFor(() => crash, { timeoutMs: 20_000, message: `the consumer in ${groupId} to crash` });
    return { error: error as Error & Record<string, unknown>, findCoordinatorErrors };
  } finally {
    await consumer.disconnect();
  }
}
