// Settings of the minimal loops, from the environment the bench gives them (same names as the app
// where they mean the same thing). A bench child, not an app: reading process.env here is fine.
import { loadWirestreamSchema } from '@wirestream/schema';

export type LoopMode = 'publish' | 'consume-only';
/** object: JSON.parse → transform → JSON.stringify (the app's converter); bytes: transform's JSON-bytes rewriter. */
export type ConvertMode = 'object' | 'bytes';
/** pipeline: one ioredis pipeline of PUBLISH per chunk (the app); lua: one EVALSHA publishing the whole chunk. */
export type PublishMode = 'pipeline' | 'lua';

export interface LoopConfig {
  readonly brokers: string[];
  readonly redisUrl: string;
  readonly groupId: string;
  readonly topics: string[];
  readonly routes: ReadonlyMap<string, { keyField: string | undefined; shards: number }>;
  readonly mode: LoopMode;
  readonly convert: ConvertMode;
  readonly publish: PublishMode;
  readonly chunk: number;
  readonly partitionsConcurrently: number;
}

function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const value = process.env[name] ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new RangeError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}
function positiveInt(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got "${process.env[name]}"`);
  return value;
}
function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

export function loadLoopConfig(): LoopConfig {
  const schema = loadWirestreamSchema(required('SCHEMA_PATH'));
  return {
    brokers: required('KAFKA_BROKERS').split(','),
    redisUrl: required('REDIS_URL'),
    groupId: required('KAFKA_GROUP_ID'),
    topics: [...schema.topics],
    routes: new Map(
      schema.topics.map((topic) => {
        const route = schema.routesForTopic(topic)[0];
        return [topic, { keyField: route?.keyField, shards: route?.shards ?? 1 }] as const;
      }),
    ),
    mode: oneOf('BENCH_LOOP_MODE', ['publish', 'consume-only'], 'publish'),
    convert: oneOf('BENCH_CONVERT', ['object', 'bytes'], 'object'),
    publish: oneOf('BENCH_PUBLISH', ['pipeline', 'lua'], 'pipeline'),
    chunk: positiveInt('INGEST_PUBLISH_CHUNK', 500),
    partitionsConcurrently: positiveInt('INGEST_PARTITIONS_CONCURRENTLY', 3),
  };
}
