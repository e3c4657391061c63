// The multi-node topology of issue #17 on one machine, every part a real process: a three-broker
// Kafka cluster (RF 3, min ISR 2), Redis (a 3-primary + 3-replica Redis Cluster, or one
// redis-server while the apps' cluster mode is not there), and the built ingest and gateway apps as
// many replicas as a test asks for. Each run has its own topics, consumer group and schema file.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { auctionSchemaPath } from '@wirestream/schema';
import {
  createTopics,
  freePort,
  startApp,
  startKafkaCluster,
  startRedis,
  startRedisCluster,
  uniqueName,
  waitFor,
  type AppProcess,
  type KafkaCluster,
  type RedisCluster,
  type RedisServer,
} from '@wirestream/testkit';

/** Partitions of each topic: two ingest replicas share them unevenly (2 + 1), so a kill moves work. */
export const PARTITIONS = 3;

export type RedisKind = 'cluster' | 'standalone';

/** Where the apps' Redis is: a Redis Cluster (any node is a seed) or one server. */
export type RedisDeployment =
  | { readonly kind: 'cluster'; readonly cluster: RedisCluster; readonly url: string }
  | { readonly kind: 'standalone'; readonly server: RedisServer; readonly url: string };

export interface GatewayProcess {
  /** `A`, `B`, … in start order: what the test log calls it. */
  readonly name: string;
  readonly app: AppProcess;
  readonly wsUrl: string;
  readonly httpBase: string;
}

export interface IngestProcess {
  readonly name: string;
  readonly app: AppProcess;
}

export interface Topology {
  readonly kafka: KafkaCluster;
  readonly redis: RedisDeployment;
  readonly listingTopic: string;
  readonly groupId: string;
  readonly ingests: readonly IngestProcess[];
  readonly gateways: readonly GatewayProcess[];
  /** Bootstrap servers of the Kafka nodes that are not killed (a test tells which it killed). */
  liveBrokers(): string[];
  /** Marks a broker as killed so liveBrokers() leaves it out. */
  brokerKilled(id: number): void;
  startIngest(): Promise<IngestProcess>;
  startGateway(): Promise<GatewayProcess>;
  /** The gateway's GET /stats. */
  gatewayStats(gateway: GatewayProcess): Promise<Record<string, unknown>>;
  /** The ingest group's committed offset (the next to consume) per partition of the listing topic; -1: none yet. */
  committedOffsets(): Promise<Map<number, bigint>>;
  /** The partitions of the listing topic each ingest was last assigned (its latest `joined consumer group`). */
  assignments(): Map<IngestProcess, number[]>;
  /** Stops every app (SIGKILL: the data is throwaway), then Redis and Kafka. Idempotent. */
  close(): Promise<void>;
}

export interface TopologyOptions {
  readonly redis: RedisKind;
  /** A folder to write every app's log lines to on close (`<app> <n>.log`), for a failure's post-mortem. */
  readonly logDir?: string | undefined;
}

export async function startTopology({ redis: redisKind, logDir }: TopologyOptions): Promise<Topology> {
  const suffix = uniqueName('topology');
  const listingTopic = `listing-events-${suffix}`;
  const bidTopic = `bid-events-${suffix}`;
  const groupId = `ingest-${suffix}`;
  const workDir = mkdtempSync(join(tmpdir(), 'wirestream-topology-'));
  const schemaPath = join(workDir, 'schema.graphql');
  writeFileSync(
    schemaPath,
    readFileSync(auctionSchemaPath, 'utf8')
      .replace('"listing-events"', JSON.stringify(listingTopic))
      .replace('"bid-events"', JSON.stringify(bidTopic)),
  );

  // The JVMs take most of the start-up; Redis starts meanwhile. If one fails, stop the other.
  const [kafkaResult, redisResult] = await Promise.allSettled([startKafkaCluster(), startRedisDeployment(redisKind)]);
  if (kafkaResult.status === 'rejected' || redisResult.status === 'rejected') {
    if (kafkaResult.status === 'fulfilled') await kafkaResult.value.stop();
    if (redisResult.status === 'fulfilled') await stopRedis(redisResult.value);
    rmSync(workDir, { recursive: true, force: true });
    throw kafkaResult.status === 'rejected' ? kafkaResult.reason : (redisResult as PromiseRejectedResult).reason;
  }
  const kafka = kafkaResult.value;
  const redis = redisResult.value;
  const killedBrokers = new Set<number>();
  const liveBrokers = (): string[] => kafka.nodes.filter((n) => !killedBrokers.has(n.id)).map((n) => `127.0.0.1:${n.port}`);

  const admin = new Kafka({ clientId: 'topology-admin', brokers: liveBrokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await createTopics(admin, [listingTopic, bidTopic].map((topic) => ({ topic, numPartitions: PARTITIONS })));
  } finally {
    await admin.disconnect();
  }

  // What both apps need to find Redis. Cluster mode: any node is a seed; ingest waits until each
  // history write reached a replica before publishing, so a primary's SIGKILL loses nothing.
  const redisEnv: Record<string, string> = redis.kind === 'cluster' ? { REDIS_URL: redis.url, REDIS_MODE: 'cluster' } : { REDIS_URL: redis.url };
  const common = { ...redisEnv, SCHEMA_PATH: schemaPath, LOG_LEVEL: 'info' };
  const ingests: IngestProcess[] = [];
  const gateways: GatewayProcess[] = [];
  let closing: Promise<void> | undefined;

  async function startIngest(): Promise<IngestProcess> {
    const env: Record<string, string> = {
      ...common,
      KAFKA_BROKERS: kafka.brokers.join(','),
      KAFKA_GROUP_ID: groupId,
      INGEST_HTTP_PORT: '0',
      ...(redis.kind === 'cluster' ? { INGEST_REDIS_WAIT_REPLICAS: '1' } : {}),
    };
    const ingest = { name: `ingest ${ingests.length + 1}`, app: startApp('ingest', env) };
    ingests.push(ingest);
    await ingest.app.waitForLog((l) => l['msg'] === 'joined consumer group', 'joined consumer group');
    return ingest;
  }

  async function startGateway(): Promise<GatewayProcess> {
    const port = await freePort();
    const app = startApp('gateway', { ...common, GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: String(port), GATEWAY_AUTH_MODE: 'anonymous' });
    const gateway = { name: String.fromCharCode(65 + gateways.length), app, wsUrl: `ws://127.0.0.1:${port}/graphql`, httpBase: `http://127.0.0.1:${port}` };
    gateways.push(gateway);
    await waitFor(
      async () => {
        if (app.child.exitCode !== null) throw new Error(`gateway ${gateway.name} exited with ${app.child.exitCode}: ${app.stderr()}`);
        return (await fetch(`${gateway.httpBase}/readyz`).catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 30_000, message: `gateway ${gateway.name} /readyz to answer 200` },
    );
    return gateway;
  }

  async function committedOffsets(): Promise<Map<number, bigint>> {
    // A client per call, bootstrapped from the live brokers only: a killed one would cost each call a timeout.
    const admin = new Kafka({ clientId: 'topology-offsets', brokers: liveBrokers(), logLevel: logLevel.NOTHING, retry: { retries: 1 } }).admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [listingTopic] });
      return new Map((offsets?.partitions ?? []).map(({ partition, offset }) => [partition, BigInt(offset)]));
    } finally {
      await admin.disconnect();
    }
  }

  function assignments(): Map<IngestProcess, number[]> {
    const result = new Map<IngestProcess, number[]>();
    for (const ingest of ingests) {
      const joined = ingest.app.lines.filter((l) => l['msg'] === 'joined consumer group').at(-1);
      const assignment = joined?.['assignment'] as Record<string, number[]> | undefined;
      result.set(ingest, [...(assignment?.[listingTopic] ?? [])].sort((a, b) => a - b));
    }
    return result;
  }

  return {
    kafka,
    redis,
    listingTopic,
    groupId,
    ingests,
    gateways,
    liveBrokers,
    brokerKilled: (id) => killedBrokers.add(id),
    startIngest,
    startGateway,
    committedOffsets,
    gatewayStats: async (gateway) => (await (await fetch(`${gateway.httpBase}/stats`)).json()) as Record<string, unknown>,
    assignments,
    close() {
      closing ??= (async () => {
        // SIGKILL: a drain would only cost time, and nothing of this run is kept.
        await Promise.all([...ingests, ...gateways].map((p) => p.app.stop('SIGKILL')));
        if (logDir !== undefined) {
          mkdirSync(logDir, { recursive: true });
          for (const { name, app } of [...ingests, ...gateways.map((g) => ({ name: `gateway ${g.name}`, app: g.app }))]) {
            writeFileSync(join(logDir, `${name}.log`), app.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
          }
        }
        await Promise.all([stopRedis(redis), kafka.stop()]);
        rmSync(workDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

async function startRedisDeployment(kind: RedisKind): Promise<RedisDeployment> {
  if (kind === 'standalone') {
    const server = await startRedis();
    return { kind, server, url: server.url };
  }
  const cluster = await startRedisCluster();
  const seed = cluster.startupNodes[0];
  if (seed === undefined) throw new Error('startRedisCluster returned no nodes');
  return { kind, cluster, url: `redis://${seed.host}:${seed.port}` };
}

function stopRedis(redis: RedisDeployment): Promise<void> {
  return redis.kind === 'cluster' ? redis.cluster.stop() : redis.server.stop();
}
