import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import { toError, type Logger } from '@wirestream/telemetry';
import { hasKafkaErrorType } from './kafka-errors.js';

// A default import: Node's ESM loader does not see ConfigResourceTypes among kafkajs's CommonJS
// exports, so a named import made the built app (node dist/main.js) fail at start.
const { ConfigResourceTypes } = kafkajs;

export interface PrepareTopicsOptions {
  readonly kafka: Kafka;
  /** The schema's source topics. */
  readonly topics: readonly string[];
  readonly dlqSuffix: string;
  readonly logger: Logger;
  /** True once stop() was called: waiting for topics is given up. */
  readonly isStopped: () => boolean;
  /** Also read each source topic's partition count (Redis Cluster mode publishes it for the gateways). @default false */
  readonly fetchPartitionCounts?: boolean;
  /**
   * The largest value ingest lets through unparsed to a dead letter (`INGEST_MAX_MESSAGE_BYTES`):
   * dead-letter topics are created (or raised) to hold one, plus its headers.
   */
  readonly maxMessageBytes: number;
  /** Create the source topics that do not exist (`INGEST_CREATE_TOPICS`) instead of waiting for them. @default false */
  readonly createSourceTopics?: boolean;
  /** Partitions and replication of the topics ingest creates; `undefined` takes the broker's defaults. */
  readonly newTopics?: NewTopicSettings;
}

/** `INGEST_TOPIC_PARTITIONS` and `INGEST_TOPIC_REPLICATION`: undefined is the broker's `num.partitions` / `default.replication.factor`. */
export interface NewTopicSettings {
  /** Partitions of a created source topic (dead-letter topics get the broker's default). */
  readonly partitions?: number | undefined;
  /** Replication factor of every topic ingest creates, source and dead-letter. */
  readonly replicationFactor?: number | undefined;
}

/** What ingest learnt about its topics at start. */
export interface PreparedTopics {
  /** Source topic → partition count (when asked for). */
  readonly partitionCounts: ReadonlyMap<string, number>;
  /** Dead-letter topic → the largest record it accepts (`max.message.bytes`), where it could be read. */
  readonly deadLetterLimits: ReadonlyMap<string, number>;
}

/** Room for the dead letter's headers and the record batch's framing on top of the value. */
export const DEAD_LETTER_HEADROOM_BYTES = 65_536;

const TOPIC_POLL_INTERVAL_MS = 500; // how often to look for source topics that do not exist yet
const TOPIC_WAIT_LOG_INTERVAL_MS = 10_000; // 10 seconds: how often to log that ingest is still waiting
const LEADER_POLL_INTERVAL_MS = 100; // how often to look for the leaders of topics just created
const LEADER_WAIT_MS = 30_000; // 30 seconds: a broker that elects no leader by then is not healthy

/**
 * Source topics belong to their producers: by default ingest waits for them, naming each one that
 * does not exist, instead of creating them (auto-creation would pick the broker's default partition
 * count behind the owner's back); with `createSourceTopics` it creates them with `newTopics`.
 * Dead-letter topics are ingest's own, so it always creates those. Resolves to the source topics'
 * partition counts when asked (`fetchPartitionCounts`), else to an empty map.
 */
export async function prepareTopics(options: PrepareTopicsOptions): Promise<PreparedTopics> {
  const { kafka, topics, dlqSuffix, logger, isStopped, fetchPartitionCounts = false, maxMessageBytes } = options;
  const needed = maxMessageBytes + DEAD_LETTER_HEADROOM_BYTES;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await waitForSourceTopics(admin, options);
    const existing = new Set(await admin.listTopics());
    const missing = topics.map((t) => t + dlqSuffix).filter((t) => !existing.has(t));
    if (missing.length > 0) {
      try {
        await createTopics(admin, missing, { replicationFactor: options.newTopics?.replicationFactor, configEntries: [{ name: 'max.message.bytes', value: String(needed) }] }, isStopped);
      } catch (err) {
        if (!isTopicAuthorizationFailure(err)) throw err;
        throw aclError(
          `Kafka denied creating the dead-letter topic${missing.length === 1 ? '' : 's'} ${quoted(missing)} (TOPIC_AUTHORIZATION_FAILED): grant the ingest principal Create, Write, Describe and DescribeConfigs on ${missing.length === 1 ? 'it' : 'them'}, or create ${missing.length === 1 ? 'it' : 'them'} yourself and grant Write, Describe and DescribeConfigs (docs/bring-your-own-kafka.md, infra/kafka/grant-acls.mjs)`,
          err,
        );
      }
      logger.info({ topics: missing, maxMessageBytes: needed }, 'created dead-letter topics');
    }
    const deadLetterLimits = await checkDeadLetterLimits(admin, topics.map((t) => t + dlqSuffix), needed, logger);
    if (!fetchPartitionCounts) return { partitionCounts: new Map(), deadLetterLimits };
    const metadata = await admin.fetchTopicMetadata({ topics: [...topics] });
    return { partitionCounts: new Map(metadata.topics.map((t) => [t.name, t.partitions.length])), deadLetterLimits };
  } finally {
    await admin.disconnect();
  }
}

/** Returns once every source topic exists: created when `createSourceTopics`, else waited for, each missing one named in a warning. */
async function waitForSourceTopics(admin: Admin, options: PrepareTopicsOptions): Promise<void> {
  const { topics, logger, isStopped, createSourceTopics = false, newTopics = {} } = options;
  let lastLogged = 0;
  for (;;) {
    const existing = new Set(await admin.listTopics());
    const waitingFor = topics.filter((t) => !existing.has(t));
    if (waitingFor.length === 0) return;
    // Kafka lists only the topics the principal may Describe: a topic missing from the list may exist.
    const denied = await deniedTopics(admin, waitingFor);
    if (denied.length > 0) {
      throw aclError(
        `Kafka denied the ingest principal access to topic${denied.length === 1 ? '' : 's'} ${quoted(denied)} (TOPIC_AUTHORIZATION_FAILED): grant it Read and Describe on ${denied.length === 1 ? 'it' : 'them'}${createSourceTopics ? ', and Create (INGEST_CREATE_TOPICS=true)' : ''} (docs/bring-your-own-kafka.md, infra/kafka/grant-acls.mjs)`,
        undefined,
      );
    }
    if (createSourceTopics) {
      await createTopics(admin, waitingFor, { numPartitions: newTopics.partitions, replicationFactor: newTopics.replicationFactor }, isStopped);
      logger.info({ topics: waitingFor, partitions: newTopics.partitions ?? 'broker default', replicationFactor: newTopics.replicationFactor ?? 'broker default' }, 'created source topics (INGEST_CREATE_TOPICS)');
      return;
    }
    if (isStopped()) throw new Error('ingest stopped while waiting for its topics');
    if (Date.now() - lastLogged >= TOPIC_WAIT_LOG_INTERVAL_MS) {
      const names = waitingFor.map((t) => `"${t}"`).join(', ');
      logger.warn({ topics: waitingFor }, `Kafka topic${waitingFor.length === 1 ? '' : 's'} ${names} ${waitingFor.length === 1 ? 'does' : 'do'} not exist: ingest waits for ${waitingFor.length === 1 ? 'it' : 'them'}; create ${waitingFor.length === 1 ? 'it' : 'them'} (or start the producer), or set INGEST_CREATE_TOPICS=true`);
      lastLogged = Date.now();
    }
    await sleep(TOPIC_POLL_INTERVAL_MS);
  }
}

/**
 * The topics among `names` the principal may not Describe: Kafka answers their metadata with
 * TOPIC_AUTHORIZATION_FAILED whether they exist or not (it does not reveal which), and a topic it
 * may Describe that does not exist with UNKNOWN_TOPIC_OR_PARTITION. Asked one by one: kafkajs fails
 * a metadata request on its first topic error.
 */
async function deniedTopics(admin: Admin, names: readonly string[]): Promise<string[]> {
  const denied: string[] = [];
  for (const topic of names) {
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
    } catch (err) {
      if (isTopicAuthorizationFailure(err)) denied.push(topic);
    }
  }
  return denied;
}

function isTopicAuthorizationFailure(err: unknown): boolean {
  return hasKafkaErrorType(err, 'TOPIC_AUTHORIZATION_FAILED');
}

/**
 * An error main.ts turns into one line and exit 78 (`describeKafkaFailure` reads `aclAdvice`): the
 * ACL to grant, named with the resource, rather than kafkajs's "Not authorized to access topics".
 */
function aclError(advice: string, cause: unknown): Error {
  return Object.assign(new Error(advice, cause === undefined ? undefined : { cause }), { type: 'TOPIC_AUTHORIZATION_FAILED', aclAdvice: advice, retriable: false });
}

function quoted(names: readonly string[]): string {
  return names.map((t) => `"${t}"`).join(', ');
}

interface TopicSpec {
  readonly numPartitions?: number | undefined;
  readonly replicationFactor?: number | undefined;
  readonly configEntries?: readonly { name: string; value: string }[];
}

/**
 * Creates `names` and waits for their leaders. Another replica creating them at the same moment is
 * not an error (kafkajs then resolves false, or fails on a mix: the topics are listed again).
 * Not kafkajs's waitForLeaders: it retries only LEADER_NOT_AVAILABLE, and a busy broker first
 * answers the metadata of a topic it is still creating with UNKNOWN_TOPIC_OR_PARTITION, which
 * failed start (and so the process) although the topic was being created.
 */
async function createTopics(admin: Admin, names: readonly string[], spec: TopicSpec, isStopped: () => boolean): Promise<void> {
  const topicConfig = {
    ...(spec.numPartitions === undefined ? {} : { numPartitions: spec.numPartitions }),
    ...(spec.replicationFactor === undefined ? {} : { replicationFactor: spec.replicationFactor }),
    ...(spec.configEntries === undefined ? {} : { configEntries: [...spec.configEntries] }),
  };
  try {
    await admin.createTopics({ waitForLeaders: false, topics: names.map((topic) => ({ topic, ...topicConfig })) });
  } catch (err) {
    const existing = new Set(await admin.listTopics());
    if (!names.every((t) => existing.has(t))) throw err;
  }
  await waitForLeaders(admin, names, isStopped);
}

/** Polls the metadata of just-created topics until every partition has a leader; errors meanwhile are the broker still creating them. */
async function waitForLeaders(admin: Admin, topics: readonly string[], isStopped: () => boolean): Promise<void> {
  const deadline = Date.now() + LEADER_WAIT_MS;
  let lastProblem = 'no metadata yet';
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] });
      const leaderless = topics.filter((name) => {
        const partitions = metadata.find((m) => m.name === name)?.partitions ?? [];
        return partitions.length === 0 || partitions.some((p) => p.leader < 0);
      });
      if (leaderless.length === 0) return;
      lastProblem = `no leader yet for ${leaderless.join(', ')}`;
    } catch (err) {
      lastProblem = toError(err).message;
    }
    if (isStopped()) throw new Error('ingest stopped while waiting for the topics it created');
    if (Date.now() >= deadline) {
      throw new Error(`the topics ${topics.join(', ')} have no leader ${LEADER_WAIT_MS} ms after their creation (${lastProblem}); check the Kafka brokers`);
    }
    await sleep(LEADER_POLL_INTERVAL_MS);
  }
}

/**
 * Reads each dead-letter topic's `max.message.bytes`; one below what a dead letter can need is
 * raised (it is ingest's own topic), or, where the ACLs do not allow that, reported with what to
 * set. Either way a dead letter that still does not fit is sent truncated (batch-processor.ts), so
 * no message can stop its partition.
 */
async function checkDeadLetterLimits(admin: Admin, deadLetterTopics: readonly string[], needed: number, logger: Logger): Promise<Map<string, number>> {
  const limits = new Map<string, number>();
  let described;
  try {
    described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: deadLetterTopics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['max.message.bytes'] })),
    });
  } catch (err) {
    const message = isTopicAuthorizationFailure(err)
      ? `Kafka denied DescribeConfigs on the dead-letter topic${deadLetterTopics.length === 1 ? '' : 's'} ${quoted(deadLetterTopics)} (TOPIC_AUTHORIZATION_FAILED): grant the ingest principal DescribeConfigs on ${deadLetterTopics.length === 1 ? 'it' : 'them'}; until then ingest cannot read or raise max.message.bytes, and a dead letter the topic refuses as too large is sent truncated`
      : 'could not read max.message.bytes of the dead-letter topics: a dead letter the topic refuses as too large is sent truncated';
    logger.warn({ err, topics: deadLetterTopics }, message);
    return limits;
  }
  for (const resource of described.resources) {
    const value = Number(resource.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue);
    if (!Number.isFinite(value)) continue;
    limits.set(resource.resourceName, value);
    if (value >= needed) continue;
    try {
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: resource.resourceName, configEntries: [{ name: 'max.message.bytes', value: String(needed) }] }] });
      limits.set(resource.resourceName, needed);
      logger.info({ topic: resource.resourceName, from: value, to: needed }, 'raised max.message.bytes of a dead-letter topic to fit INGEST_MAX_MESSAGE_BYTES');
    } catch (err) {
      logger.warn(
        { err, topic: resource.resourceName, maxMessageBytes: value, needed },
        `dead-letter topic ${resource.resourceName} accepts records up to ${value} bytes (max.message.bytes), below INGEST_MAX_MESSAGE_BYTES plus headers (${needed}): raise it (ingest could not: AlterConfigs ACL?); until then larger dead letters are sent truncated`,
      );
    }
  }
  return limits;
}
