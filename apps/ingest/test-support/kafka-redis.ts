/**
 * The servers an ingest integration test file runs against: the shared Kafka broker (global-setup.ts;
 * its own one without it), a private redis-server, an admin and a producer. One fixture instead of a
 * copy of this set-up in every test file.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { sharedKafkaFromEnv, startKafka, startRedis, type KafkaBroker, type RedisServer } from '@wirestream/testkit';

export interface KafkaRedisFixture {
  readonly brokers: string[];
  readonly redisServer: RedisServer;
  readonly admin: Admin;
  readonly producer: Producer;
  stop(): Promise<void>;
}

export async function startKafkaRedis(clientId: string): Promise<KafkaRedisFixture> {
  const shared = sharedKafkaFromEnv();
  const ownKafka: KafkaBroker | undefined = shared ? undefined : await startKafka();
  const brokers = shared?.brokers ?? ownKafka?.brokers ?? [];
  const redisServer = await startRedis();
  const kafka = new Kafka({ clientId, brokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await Promise.all([admin.connect(), producer.connect()]);
  return {
    brokers,
    redisServer,
    admin,
    producer,
    async stop() {
      await producer.disconnect();
      await admin.disconnect();
      await redisServer.stop();
      await ownKafka?.stop();
    },
  };
}
