import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { createRedisLayout, type RedisMode } from '@wirestream/wire';
import type { Logger } from '@wirestream/telemetry';
import type { Broker, HistoryReader, SnapshotReader } from './broker.js';
import { createRedisBroker } from './redis-broker.js';
import { createRedisClusterBroker } from './redis-cluster-broker.js';
import { createRedisHistory } from './redis-history.js';
import { createRedisSnapshots } from './redis-snapshots.js';

export interface RedisConnectOptions {
  readonly mode: RedisMode;
  /** Standalone: the server. Cluster: any one node (a seed); its credentials and TLS apply to every node. */
  readonly url: string;
  readonly channelPrefix: string;
  readonly historyPrefix: string;
  readonly historyEnabled: boolean;
  /** Cluster mode: how often partition counts are re-read. */
  readonly partitionsPollMs: number;
  readonly logger: Logger;
  readonly onReconnecting?: () => void;
  /**
   * ACL user, password and TLS options (`@wirestream/connect`'s `redisSecurity`), applied to every
   * connection; they win over credentials in the URL.
   */
  readonly security?: Pick<RedisOptions, 'username' | 'password' | 'tls'>;
}

/** The broker and history reader of one mode, and how to close their connections. */
export interface RedisConnections {
  readonly broker: Broker;
  readonly history: HistoryReader | undefined;
  /** Snapshots of `@topic(snapshot: true)` topics, on the command connection (undefined without one). */
  readonly snapshots: SnapshotReader | undefined;
  /** A connection for ordinary commands (shared SSE tickets); undefined when a standalone gateway keeps no history. */
  readonly commands: Redis | Cluster | undefined;
  close(): void;
}

/** Retry forever with a capped backoff: a gateway outlives any Redis outage. */
const retryStrategy = (times: number): number => Math.min(times * 200, 2_000);

/** Calls `fn` at most once per `intervalMs` (errors of a failing cluster arrive by the hundred). */
function throttled<A extends unknown[]>(intervalMs: number, fn: (...args: A) => void): (...args: A) => void {
  let last = 0;
  return (...args) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    fn(...args);
  };
}

/** Builds the Redis clients of the configured mode (composition root helper: main.ts and tests). */
export function connectRedis(options: RedisConnectOptions): RedisConnections {
  return options.mode === 'cluster' ? connectCluster(options) : connectStandalone(options);
}

function connectStandalone({ url, historyPrefix, historyEnabled, logger, onReconnecting, security }: RedisConnectOptions): RedisConnections {
  const redis = new Redis(url, {
    ...security,
    // Subscriber connections cannot queue ordinary commands; retry forever with a capped backoff.
    maxRetriesPerRequest: null,
    retryStrategy,
    connectionName: 'wirestream-gateway',
  });
  redis.on('ready', () => logger.info('redis ready'));
  // At most one line per 5 s, without a stack: a gateway retries forever while Redis is away.
  const warn = throttled(5_000, (err: Error, what: string) =>
    logger.warn({ error: err.message, status: redis.status }, redis.status === 'ready' ? `${what} error` : `${what} not reachable (REDIS_URL, REDIS_MODE=standalone): retrying`),
  );
  redis.on('error', (err: Error) => warn(err, 'redis'));
  // History reads need an ordinary connection: a subscriber-mode connection accepts only (P)SUBSCRIBE commands.
  const historyRedis = historyEnabled ? new Redis(url, { ...security, maxRetriesPerRequest: 2, retryStrategy, connectionName: 'wirestream-gateway-history' }) : undefined;
  const warnHistory = throttled(5_000, (err: Error) => logger.warn({ error: err.message, status: historyRedis?.status }, 'redis (history) error'));
  historyRedis?.on('error', warnHistory);
  return {
    broker: createRedisBroker(redis, onReconnecting ? { onReconnecting } : {}),
    history: historyRedis ? createRedisHistory(historyRedis, historyPrefix) : undefined,
    snapshots: historyRedis ? createRedisSnapshots(historyRedis, historyPrefix) : undefined,
    commands: historyRedis,
    close: () => {
      redis.disconnect();
      historyRedis?.disconnect();
    },
  };
}

function connectCluster({ url, channelPrefix, historyPrefix, historyEnabled, partitionsPollMs, logger, onReconnecting, security }: RedisConnectOptions): RedisConnections {
  const seed = new URL(url);
  const nodeOptions: RedisOptions = {
    ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
    ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
    ...(seed.protocol === 'rediss:' ? { tls: {} } : {}),
    ...security,
  };
  const cluster = new Cluster([{ host: seed.hostname, port: Number(seed.port || 6379) }], {
    redisOptions: { ...nodeOptions, connectionName: 'wirestream-gateway', maxRetriesPerRequest: 2 },
    clusterRetryStrategy: retryStrategy,
    // A failover or a resharding changes the slot map; the broker also refreshes it on every recovery.
    slotsRefreshInterval: 5_000,
  });
  cluster.on('ready', () => logger.info('redis cluster ready'));
  // Mandatory listeners: a killed primary makes the cluster client emit errors until the failover is
  // done, so they are logged at most once per 5 s, with the setting to check when it never connects.
  const warn = throttled(5_000, (err: Error, node?: string) =>
    logger.warn(
      { err, ...(node === undefined ? {} : { node }), status: cluster.status },
      cluster.status === 'ready' ? 'redis cluster error' : 'redis cluster not reachable (REDIS_MODE=cluster: is REDIS_URL a node of a Redis Cluster?)',
    ),
  );
  cluster.on('error', (err: Error) => warn(err));
  cluster.on('node error', (err: Error, node: string) => warn(err, node));
  const layout = createRedisLayout('cluster', channelPrefix, historyPrefix);
  const broker = createRedisClusterBroker({ cluster, layout, nodeOptions, logger, partitionsPollMs, ...(onReconnecting ? { onReconnecting } : {}) });
  return {
    broker,
    history: historyEnabled ? createRedisHistory(cluster, layout) : undefined,
    snapshots: createRedisSnapshots(cluster, layout),
    commands: cluster,
    close: () => {
      broker.stop();
      cluster.disconnect();
    },
  };
}
