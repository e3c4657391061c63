#!/usr/bin/env node
// Grants a Wirestream ingest principal exactly the ACLs docs/bring-your-own-kafka.md lists, through
// the Kafka admin API (kafkajs, from the repo's apps/ingest), or prints the same grants as commands
// for the broker's own kafka-acls.sh (--print). Run `node infra/kafka/grant-acls.mjs --help`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const USAGE = `usage: node infra/kafka/grant-acls.mjs --principal User:ingest --topics t1,t2 [options]

Grants the ingest principal what docs/bring-your-own-kafka.md lists:
  each topic of the schema   Read, Describe (+ Create with --create-topics)
  group --group               Read, Describe
  each <topic><dlq-suffix>    Write, Describe, DescribeConfigs, Create
                              (+ AlterConfigs with --alter-configs: dead-letter topics you created
                              with max.message.bytes below INGEST_MAX_MESSAGE_BYTES + 65536)

  --principal P          the ingest principal, e.g. User:ingest (SASL user, or the certificate's CN)
  --topics a,b           the topics of the schema (its @topic names)
  --group G              KAFKA_GROUP_ID (default wirestream-ingest)
  --dlq-suffix S         INGEST_DLQ_SUFFIX (default .dlq)
  --create-topics        INGEST_CREATE_TOPICS=true: Create on the source topics too
  --alter-configs        AlterConfigs on the dead-letter topics
  --print                print kafka-acls.sh commands instead of granting (needs no connection)
  --brokers h:p,…        an admin connection allowed to alter ACLs (default 127.0.0.1:9092)
  --ssl                  connect over TLS (system CAs, or --ssl-ca-file)
  --ssl-ca-file F        PEM CA for the brokers' certificates
  --sasl-mechanism M     plain, scram-sha-256 or scram-sha-512 (any case)
  --sasl-username U      with --sasl-password-file F (a file, so the password is in no process list)
`;

const { values } = parseArgs({
  options: {
    principal: { type: 'string' },
    topics: { type: 'string' },
    group: { type: 'string', default: 'wirestream-ingest' },
    'dlq-suffix': { type: 'string', default: '.dlq' },
    'create-topics': { type: 'boolean', default: false },
    'alter-configs': { type: 'boolean', default: false },
    print: { type: 'boolean', default: false },
    brokers: { type: 'string', default: '127.0.0.1:9092' },
    ssl: { type: 'boolean', default: false },
    'ssl-ca-file': { type: 'string' },
    'sasl-mechanism': { type: 'string' },
    'sasl-username': { type: 'string' },
    'sasl-password-file': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const problems = [];
const principal = values.principal ?? '';
if (!/^[A-Za-z]+:.+$/.test(principal)) problems.push(`--principal must be <type>:<name>, e.g. User:ingest, got ${JSON.stringify(values.principal)}`);
const topics = (values.topics ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
if (topics.length === 0) problems.push('--topics must name at least one topic (comma-separated)');
const mechanism = values['sasl-mechanism']?.trim().toLowerCase();
if (mechanism !== undefined && !['plain', 'scram-sha-256', 'scram-sha-512'].includes(mechanism)) problems.push(`--sasl-mechanism must be plain, scram-sha-256 or scram-sha-512, got ${JSON.stringify(values['sasl-mechanism'])}`);
if ((mechanism === undefined) !== (values['sasl-username'] === undefined) || (mechanism === undefined) !== (values['sasl-password-file'] === undefined)) {
  problems.push('--sasl-mechanism, --sasl-username and --sasl-password-file go together');
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n\n${USAGE}`);
  process.exit(64); // EX_USAGE
}

/** The grants, as docs/bring-your-own-kafka.md's ACL table lists them. */
const grants = [
  ...topics.map((name) => ({ resource: 'topic', name, operations: ['Read', 'Describe', ...(values['create-topics'] ? ['Create'] : [])] })),
  { resource: 'group', name: values.group, operations: ['Read', 'Describe'] },
  ...topics.map((t) => ({ resource: 'topic', name: t + values['dlq-suffix'], operations: ['Write', 'Describe', 'DescribeConfigs', 'Create', ...(values['alter-configs'] ? ['AlterConfigs'] : [])] })),
];

if (values.print) {
  for (const { resource, name, operations } of grants) {
    const ops = operations.map((op) => `--operation ${op}`).join(' ');
    process.stdout.write(`kafka-acls.sh --bootstrap-server ${values.brokers} --add --allow-principal '${principal}' ${ops} --${resource} '${name}'\n`);
  }
  process.exit(0);
}

// kafkajs from the ingest app (this script lives outside any package).
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = createRequire(new URL('../../apps/ingest/package.json', import.meta.url))('kafkajs');
const OPERATIONS = { Read: AclOperationTypes.READ, Write: AclOperationTypes.WRITE, Create: AclOperationTypes.CREATE, Describe: AclOperationTypes.DESCRIBE, DescribeConfigs: AclOperationTypes.DESCRIBE_CONFIGS, AlterConfigs: AclOperationTypes.ALTER_CONFIGS };
const RESOURCES = { topic: AclResourceTypes.TOPIC, group: AclResourceTypes.GROUP };
const ssl = values['ssl-ca-file'] !== undefined ? { ca: [readFileSync(values['ssl-ca-file'], 'utf8')] } : values.ssl;
const sasl = mechanism === undefined ? undefined : { mechanism, username: values['sasl-username'], password: readFileSync(values['sasl-password-file'], 'utf8').trim() };
const kafka = new Kafka({ clientId: 'wirestream-grant-acls', brokers: values.brokers.split(','), logLevel: logLevel.NOTHING, ...(ssl ? { ssl } : {}), ...(sasl ? { sasl } : {}) });
const admin = kafka.admin();
try {
  await admin.connect();
  const acl = grants.flatMap(({ resource, name, operations }) =>
    operations.map((op) => ({
      resourceType: RESOURCES[resource],
      resourceName: name,
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal,
      host: '*',
      operation: OPERATIONS[op],
      permissionType: AclPermissionTypes.ALLOW,
    })),
  );
  await admin.createAcls({ acl });
  for (const { resource, name, operations } of grants) process.stdout.write(`granted ${principal} ${operations.join(', ')} on ${resource} ${name}\n`);
} catch (err) {
  process.stderr.write(`grant-acls: ${err instanceof Error ? err.message : String(err)} (the admin connection must be allowed to alter ACLs: Alter on the cluster, or a super user)\n`);
  process.exitCode = 1;
} finally {
  await admin.disconnect();
}
