// The public API of @wirestream/testkit: real servers on free ports for integration and e2e tests.
export { findRepoRoot } from './findRepoRoot.js';
export { freePort } from './freePort.js';
export { uniqueName } from './uniqueName.js';
export { waitFor, type WaitForOptions } from './waitFor.js';
export { startRedis, type RedisServer, type RedisServerOptions } from './startRedis.js';
export type { RedisAclUser, RedisTlsFiles, RedisTlsOptions } from './internal/redisSecurity.js';
export {
  startRedisCluster,
  type ClusterNode,
  type ClusterNodeRole,
  type Failover,
  type RedisCluster,
  type RedisClusterOptions,
  type SlotMigration,
} from './startRedisCluster.js';
export { CLUSTER_SLOTS, keySlot } from './keySlot.js';
export { startKafka, type KafkaBroker, type KafkaBrokerOptions } from './startKafka.js';
export {
  startSecuredKafka,
  unsecuredJwt,
  type KafkaSaslMechanism,
  type KafkaSecurity,
  type KafkaSecurityFiles,
  type KafkaUser,
  type SecuredKafkaBroker,
} from './startSecuredKafka.js';
export { grantAcls, type AclGrant, type AclOperation } from './grantAcls.js';
export {
  startKafkaCluster,
  type KafkaCluster,
  type KafkaClusterNode,
  type KafkaClusterOptions,
} from './startKafkaCluster.js';
export { SHARED_KAFKA_ENV, setupSharedKafka, sharedKafkaFromEnv } from './sharedKafka.js';
export { createTopics } from './createTopics.js';
export { startApp, type AppProcess } from './startApp.js';
export { startStack, type AppStartOptions, type GatewayProcess, type Stack, type StackEnv, type StackOptions } from './startStack.js';
// For benches that spawn their own servers: a detached watchdog that SIGKILLs a child once this process is gone.
export { killWhenGone } from './internal/processes.js';
export { confluentProtobufSerializer, type ProtobufInit } from './confluentProtobuf.js';
export { startOtlpReceiver, type OtlpReceiver, type OtlpReceiverOptions, type OtlpRequest } from './startOtlpReceiver.js';
