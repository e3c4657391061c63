// How Wirestream's processes reach secured Kafka and Redis: the settings (spread into a service's
// config spec) and the client options built from them, with every problem naming its setting.
export { kafkaSecurity, kafkaSecuritySpec, tokenFromCommand, tokenFromFile, KAFKA_SASL_MECHANISMS, type KafkaSasl, type KafkaSaslMechanism, type KafkaSecurity, type KafkaSecurityConfig } from './kafka-security.js';
export { redisSecurity, redisSecuritySpec, type RedisSecurity, type RedisSecurityConfig } from './redis-security.js';
export { describeKafkaFailure, type KafkaFailure } from './kafka-failure.js';
export { readPemFiles, type PemFileSetting } from './pem-files.js';
