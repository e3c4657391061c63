/**
 * The servers an ingest integration test file runs against: the shared Kafka broker (global-setup.ts;
 * its own one without it), a private redis-server, an admin and a producer. One fixture instead of a
 * copy of this set-up in every test file: `const servers = useKafkaRedis('my-test')` at the top of the
 * file starts them before its tests and stops them after.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Producer, type ProducerConfig } from 'kafkajs';
import { afterAll, beforeAll } from 'vitest';
import { sharedKafkaFromEnv, startKafka, startRedis, type KafkaBroker, type RedisServer } from '@wirestream/testkit';

export interface KafkaRedisFixture {
  readonly brokers: string[];
  readonly redisServer: RedisServer;
  readonly admin: Admin;
  readonly producer: Producer;
  stop(): Promise<void>;
}

/** Producer settings of a test file that needs other ones (e.g. no topic auto-creation). */
export interface KafkaRedisOptions {
  readonly producer?: ProducerConfig;
}

export async function startKafkaRedis(clientId: string, options: KafkaRedisOptions = {}): Promise<KafkaRedisFixture> {
  const shared = sharedKafkaFromEnv();
  const ownKafka: KafkaBroker | undefined = shared ? undefined : await startKafka();
  const brokers = shared?.brokers ?? ownKafka?.brokers ?? [];
  const redisServer = await startRedis();
  const kafka = new Kafka({ clientId, brokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  const producer = kafka.producer(options.producer ?? { createPartitioner: Partitioners.DefaultPartitioner });
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

/**
 * The fixture for the whole test file: started in `beforeAll`, stopped in `afterAll`. Its members may
 * be read inside tests and hooks only (before `beforeAll` ran there is nothing to read: that throws).
 */
export function useKafkaRedis(clientId: string, options: KafkaRedisOptions = {}): KafkaRedisFixture {
  let servers: KafkaRedisFixture | undefined;
  beforeAll(async () => {
    servers = await startKafkaRedis(clientId, options);
  });
  afterAll(() => servers?.stop());
  const started = (): KafkaRedisFixture => {
    if (!servers) throw new Error(`the Kafka + Redis fixture of ${clientId} is read before its beforeAll ran`);
    return servers;
  };
  return {
    get brokers() {
      return started().brokers;
    },
    get redisServer() {
      return started().redisServer;
    },
    get admin() {
      return started().admin;
    },
    get producer() {
      return started().producer;
    },
    stop: () => started().stop(),
  };
}
