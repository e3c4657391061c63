import { startKafka, type KafkaBrokerOptions } from './startKafka.js';

/**
 * Env var naming the bootstrap servers of a Kafka broker shared by a whole test run,
 * comma-separated: `127.0.0.1:9092` or `127.0.0.1:9092,127.0.0.1:9093`.
 * Set by {@link setupSharedKafka}, or by hand to reuse a broker you already run.
 */
export const SHARED_KAFKA_ENV = 'WIRESTREAM_TEST_KAFKA_BROKERS';

/**
 * The shared broker's address from {@link SHARED_KAFKA_ENV}, or undefined when unset or empty
 * (the caller then starts its own with {@link startKafka}).
 *
 * @param env - where to read it. @default process.env
 * @throws when the variable is set but an entry is not `host:port`
 */
export function sharedKafkaFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): { brokers: string[] } | undefined {
  const raw = env[SHARED_KAFKA_ENV]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const brokers = raw.split(',').map((entry) => entry.trim());
  const bad = brokers.filter((entry) => !/^[^\s:,]+:\d{1,5}$/.test(entry));
  if (bad.length > 0) {
    throw new Error(
      `${SHARED_KAFKA_ENV} must be comma-separated host:port entries (e.g. 127.0.0.1:9092); ` +
        `got ${JSON.stringify(raw)}, bad: ${bad.map((entry) => JSON.stringify(entry)).join(', ')}`,
    );
  }
  return { brokers };
}

/**
 * For a vitest `globalSetup` file: starts one broker for the whole run and publishes it in
 * {@link SHARED_KAFKA_ENV}, which vitest copies into every test worker it starts afterwards.
 * When the variable is already set (CI started a broker, or you run one), starts nothing.
 * Resolves to the teardown, which is what vitest expects `setup` to return.
 *
 * @example
 * // test/globalSetup.ts, listed in vitest.config.ts as `globalSetup: ['./test/globalSetup.ts']`
 * import { setupSharedKafka } from '@wirestream/testkit';
 * export default () => setupSharedKafka();
 *
 * // in a test file
 * const { brokers } = sharedKafkaFromEnv() ?? (await startKafka());
 */
export async function setupSharedKafka(options: KafkaBrokerOptions = {}): Promise<() => Promise<void>> {
  if (sharedKafkaFromEnv() !== undefined) return async () => {};
  const broker = await startKafka(options);
  process.env[SHARED_KAFKA_ENV] = broker.brokers.join(',');
  return async () => {
    delete process.env[SHARED_KAFKA_ENV];
    await broker.stop();
  };
}
