import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisMode } from '@wirestream/wire';
import type { Logger } from '@wirestream/telemetry';

/**
 * What ingest publishes through: a standalone `Redis` or a Redis Cluster client (`REDIS_MODE`).
 * Everything ingest calls on it (`pipeline`, `call`, `status`, `disconnect`, its events) both offer.
 */
export type IngestRedis = Redis | Cluster;

export interface IngestRedisOptions {
  /** `standalone` or `cluster` (`REDIS_MODE`). */
  readonly mode: RedisMode;
  /**
   * `redis[s]://[user:password@]host:port[/db]` (`REDIS_URL`). In cluster mode it is a seed node
   * (any node; the others are discovered), and its user, password and TLS (`rediss://`) apply to
   * every node. Redis Cluster has only database 0.
   */
  readonly url: string;
  /** Logs connection errors (rate-limited) and readiness. */
  readonly logger: Logger;
  /** @default 'wirestream-ingest' */
  readonly connectionName?: string;
  /** ACL user, password and TLS options (`@wirestream/connect`'s `redisSecurity`); they win over the URL's. */
  readonly security?: Pick<RedisOptions, 'username' | 'password' | 'tls'>;
}

const NODE_ERROR_LOG_INTERVAL_MS = 5_000; // 5 seconds: a killed primary makes every refresh and node report errors

/**
 * Builds the publishing connection the way ingest needs it. Ingest owns retrying (batch-processor.ts
 * deliverChunk: pause consumption, heartbeat, redo the whole chunk once Redis is back), so ioredis
 * must fail fast instead of parking commands:
 * - no offline queue: a publish while Redis is away fails at once instead of waiting unbounded in
 *   memory, where it would also block stop() (the batch in flight never finished);
 * - 0 retries per request: a command in flight when the connection drops fails at the drop instead
 *   of being re-sent later behind the chunk's back (the chunk is redone as a whole; history XADDs
 *   are idempotent by offset id and the gateway drops duplicate positions);
 * - no commandTimeout: it arms a timer per command (two per event); ingest times out each chunk's
 *   pipeline instead (redisTimeoutMs) and treats a Redis that never answers as down.
 *
 * Cluster mode keeps the same rules where ioredis lets it: the cluster client has no offline queue
 * either (a pipeline before the slots are known, or while the cluster reconnects, fails), but each
 * node's own connection always queues until it is connected (ioredis forces `enableOfflineQueue`
 * and no reconnect on node connections: a lost node is replaced from the slots, not redialled).
 * A pipeline whose every command failed alike (all MOVED, all ASK, all CLUSTERDOWN, all "Connection
 * is closed" after a primary died) is re-sent whole by ioredis, at most `maxRedirections` times;
 * anything else comes back as per-command errors, which ingest turns into a redo of the chunk.
 */
export function createIngestRedis({ mode, url, logger, connectionName = 'wirestream-ingest', security }: IngestRedisOptions): IngestRedis {
  const base: RedisOptions = { ...security, maxRetriesPerRequest: 0, connectionName };
  if (mode === 'standalone') {
    const redis = new Redis(url, {
      ...base,
      enableOfflineQueue: false,
      // Reconnect forever, at most 2 s apart: consumption resumes within that of Redis coming back.
      retryStrategy: (times) => Math.min(times * 200, 2_000),
    });
    redis.on('ready', () => logger.info('redis ready'));
    // Mandatory: without a listener ioredis prints every connection error to stderr.
    redis.on('error', (err: Error) => logger.warn({ err }, 'redis error'));
    return redis;
  }
  const seed = clusterSeed(url);
  const options: ClusterOptions = {
    enableOfflineQueue: false,
    // The whole cluster unreachable: discover it again from the seed, at most 2 s apart, forever.
    clusterRetryStrategy: (times) => Math.min(times * 200, 2_000),
    redisOptions: { ...seed.auth, ...(seed.tls ? { tls: {} } : {}), ...base },
    // With TLS the node's certificate is checked against the seed's host name: keep the name
    // (ioredis resolves startup host names to IPs otherwise, which a certificate rarely lists).
    ...(seed.tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
  };
  const cluster = new Cluster([{ host: seed.host, port: seed.port }], options);
  const logNodeError = rateLimitedWarn(logger, NODE_ERROR_LOG_INTERVAL_MS);
  cluster.on('ready', () => logger.info({ seed: `${seed.host}:${seed.port}` }, 'redis cluster ready'));
  // Mandatory: the cluster emits 'error' when no node answers (and prints it to stderr without a listener).
  cluster.on('error', (err: Error) => logger.warn({ err }, 'redis cluster error'));
  // One per failed node connection or slots refresh: a killed primary makes a burst of them.
  cluster.on('node error', (err: Error, node: string) => logNodeError(err, node));
  return cluster;
}

interface ClusterSeed {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly auth: { username?: string; password?: string };
}

/** The seed node of `REDIS_URL` in cluster mode; throws a message naming the setting when it cannot be one. */
function clusterSeed(url: string): ClusterSeed {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RangeError(`REDIS_URL must be a redis:// or rediss:// URL of a cluster node, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RangeError(`REDIS_URL must start with redis:// or rediss://, got ${parsed.protocol}//`);
  }
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && db !== '0') {
    throw new RangeError(`REDIS_URL selects database ${db}, but Redis Cluster (REDIS_MODE=cluster) has only database 0: remove "/${db}" from the URL`);
  }
  const auth: { username?: string; password?: string } = {};
  if (parsed.username !== '') auth.username = decodeURIComponent(parsed.username);
  if (parsed.password !== '') auth.password = decodeURIComponent(parsed.password);
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port === '' ? 6379 : Number(parsed.port), tls: parsed.protocol === 'rediss:', auth };
}

/** A warn log of node errors, at most one line per node and interval, with how many were folded into it. */
function rateLimitedWarn(logger: Logger, intervalMs: number): (err: Error, node: string) => void {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (err, node) => {
    const now = Date.now();
    const entry = last.get(node);
    if (entry !== undefined && now - entry.at < intervalMs) {
      entry.suppressed++;
      return;
    }
    logger.warn({ err, node, suppressed: entry?.suppressed ?? 0 }, 'redis cluster node error');
    last.set(node, { at: now, suppressed: 0 });
  };
}
