/**
 * What a Kafka client error means for the operator, in the words of the settings. kafkajs wraps the
 * cause (a TLS alert, a broker error code) in retry and connection errors; this walks the chain
 * (`originalError`, `cause`) and matches names, broker error types and Node TLS codes, read from
 * what kafkajs 2.2.4 throws against a real secured broker (packages/testkit startSecuredKafka).
 */

/** A failure explained: the line to log, and whether a restart with the same settings can help. */
export interface KafkaFailure {
  readonly message: string;
  /** True when the settings (or the broker's ACLs) must change: exit 78 (EX_CONFIG), no restart loop. */
  readonly config: boolean;
}

interface ErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly type?: unknown;
  readonly originalError?: unknown;
  readonly cause?: unknown;
  /** kafkajs's KafkaJSAggregateError (e.g. createTopics) holds one error per topic. */
  readonly errors?: unknown;
  /** Set by a caller that knows which ACL on which resource was denied: the line to print as it is. */
  readonly aclAdvice?: unknown;
}

const UNTRUSTED_BROKER = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']);
// OpenSSL 3.2+ (Node 24) says "ssl/tls alert" where 3.0 (Node 20) said "sslv3 alert": both spellings of each code.
const REFUSED_CLIENT_CERT = new Set([
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_SSL/TLS_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
]);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT']);

/** Every error in the chain, outermost first, with the members of an aggregate (bounded: a cycle cannot loop). */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const pending: unknown[] = [err];
  while (pending.length > 0 && out.length < 20) {
    const current = pending.shift();
    if (current === null || typeof current !== 'object') continue;
    const e = current as ErrorLike;
    out.push(e);
    pending.push(e.originalError ?? e.cause);
    if (Array.isArray(e.errors)) pending.push(...(e.errors as unknown[]));
  }
  return out;
}

/**
 * Explains a Kafka error in terms of the settings (`KAFKA_*`) and the ACLs ingest needs, or
 * undefined when it is none of the known kinds.
 */
export function describeKafkaFailure(err: unknown, context: { readonly brokers: readonly string[]; readonly groupId?: string; readonly secured: boolean }): KafkaFailure | undefined {
  const errors = chain(err);
  const has = (test: (e: ErrorLike) => boolean): boolean => errors.some(test);
  const code = (set: ReadonlySet<string>) => (e: ErrorLike) => typeof e.code === 'string' && set.has(e.code);
  const brokers = context.brokers.join(',');
  if (has((e) => e.name === 'KafkaJSSASLAuthenticationError')) {
    return { config: true, message: 'Kafka rejected the SASL credentials: check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE) and that KAFKA_SASL_MECHANISM is one the listener accepts' };
  }
  if (has(code(UNTRUSTED_BROKER))) {
    return { config: true, message: `the broker's TLS certificate is not trusted (${firstCode(errors, UNTRUSTED_BROKER)}): set KAFKA_SSL_CA_FILE to the CA that signed it (KAFKA_SSL_SERVERNAME if the name differs from KAFKA_BROKERS)` };
  }
  if (has(code(REFUSED_CLIENT_CERT))) {
    return { config: true, message: `the broker refused the client certificate (${firstCode(errors, REFUSED_CLIENT_CERT)}): set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE to a certificate signed by a CA the broker trusts` };
  }
  const advice = errors.find((e) => typeof e.aclAdvice === 'string')?.aclAdvice;
  if (typeof advice === 'string') return { config: true, message: advice };
  if (has((e) => e.type === 'TOPIC_AUTHORIZATION_FAILED')) {
    return { config: true, message: 'Kafka denied access to a topic (TOPIC_AUTHORIZATION_FAILED): grant the ingest principal Read and Describe on the topics of the schema, and Write, Describe and Create on their dead-letter topics (Create on the source topics too with INGEST_CREATE_TOPICS; docs/bring-your-own-kafka.md)' };
  }
  const created = createTopicFailure(errors);
  if (created) return created;
  if (has((e) => e.type === 'GROUP_AUTHORIZATION_FAILED') || (context.secured && has((e) => e.name === 'KafkaJSGroupCoordinatorNotFound'))) {
    return { config: true, message: `Kafka denied the consumer group${context.groupId === undefined ? '' : ` ${context.groupId}`} (GROUP_AUTHORIZATION_FAILED, or no group coordinator on a secured cluster): grant the ingest principal Read on the group named by KAFKA_GROUP_ID` };
  }
  if (has((e) => e.type === 'ILLEGAL_SASL_STATE')) {
    return { config: true, message: 'the broker ended the SASL exchange (ILLEGAL_SASL_STATE): an expired or rejected OAUTHBEARER token (KAFKA_SASL_OAUTHBEARER_TOKEN_FILE / _COMMAND), or SASL on a listener without it (check KAFKA_SASL_MECHANISM)' };
  }
  if (has((e) => e.name === 'KafkaJSConnectionClosedError' || (typeof e.message === 'string' && /closed connection/i.test(e.message)))) {
    return { config: true, message: `the broker closed the connection during the handshake: do KAFKA_SSL and KAFKA_SASL_MECHANISM match the listener at KAFKA_BROKERS=${brokers}?` };
  }
  if (has(code(UNREACHABLE))) {
    return { config: false, message: `no Kafka broker answered at KAFKA_BROKERS=${brokers} (${firstCode(errors, UNREACHABLE)}): check the addresses and that the brokers run` };
  }
  return undefined;
}

/** Why Kafka refused a topic ingest asked to create (its dead-letter topics, or source topics with INGEST_CREATE_TOPICS). */
function createTopicFailure(errors: readonly ErrorLike[]): KafkaFailure | undefined {
  const type = (t: string) => errors.some((e) => e.type === t);
  if (type('INVALID_REPLICATION_FACTOR')) {
    return { config: true, message: 'Kafka refused to create a topic (INVALID_REPLICATION_FACTOR): set INGEST_TOPIC_REPLICATION to at most the number of brokers (unset, the broker\'s default.replication.factor applies)' };
  }
  if (type('INVALID_PARTITIONS')) {
    return { config: true, message: 'Kafka refused to create a topic (INVALID_PARTITIONS): set INGEST_TOPIC_PARTITIONS to a partition count the cluster accepts' };
  }
  if (type('POLICY_VIOLATION')) {
    return { config: true, message: "the cluster's topic-creation policy refused a topic ingest creates (POLICY_VIOLATION): create the topics yourself (INGEST_CREATE_TOPICS=false, and the dead-letter topics T + INGEST_DLQ_SUFFIX)" };
  }
  if (type('CLUSTER_AUTHORIZATION_FAILED')) {
    return { config: true, message: 'Kafka denied creating a topic (CLUSTER_AUTHORIZATION_FAILED): grant the ingest principal Create on the topics it creates (the dead-letter topics, and the source topics with INGEST_CREATE_TOPICS), or create them yourself' };
  }
  return undefined;
}

function firstCode(errors: readonly ErrorLike[], set: ReadonlySet<string>): string {
  for (const e of errors) if (typeof e.code === 'string' && set.has(e.code)) return e.code;
  return 'unknown';
}
