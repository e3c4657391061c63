import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import { HISTORY_ALREADY_STORED, historyAppendArgs, historyEpochCommand, historyPartitionsKey } from '@wirestream/schema';
import type { Chunk } from './chunk-builder.js';
import type { IngestMetrics } from './metrics.js';

export interface RedisPublisherOptions {
  /** The publishing connection (see IngestDeps.redis for how it must be built). */
  readonly redis: Redis;
  readonly logger: Logger;
  readonly metrics: IngestMetrics | undefined;
  readonly historyPrefix: string;
  /** History entries kept per partition stream; 0 writes no history (and no epoch). */
  readonly historyLength: number;
  /** A pipeline not answered within this is treated as Redis being down. */
  readonly redisTimeoutMs: number;
}

/** Envelopes → Redis: the chunk's pipeline (history, then live) and the history epoch. Plain functions (no `this`). */
export interface RedisPublisher {
  /**
   * One pipeline per chunk: SADD of the partition once, then per event its history XADD before
   * its PUBLISH, so a gateway that saw the live event always finds it in history too.
   * Throws unless Redis acknowledged every command.
   */
  readonly publishChunk: (topic: string, partition: number, chunk: Chunk) => Promise<void>;
  /** Loads or creates the history epoch now (if Redis is connected) and after every reconnect. */
  readonly start: () => Promise<void>;
  /** Stops following reconnects. */
  readonly stop: () => void;
}

export function createRedisPublisher({ redis, logger, metrics, historyPrefix, historyLength, redisTimeoutMs }: RedisPublisherOptions): RedisPublisher {
  const history = historyLength > 0;
  const historyMaxLen = String(historyLength);

  async function publishChunk(topic: string, partition: number, chunk: Chunk): Promise<void> {
    const pipeline = redis.pipeline();
    if (history) pipeline.sadd(historyPartitionsKey(historyPrefix, topic), partition);
    const { channels, bodies, offsets } = chunk;
    // Deliberately imperative: two commands per event. 'xadd' in lower case, as ioredis names its
    // own commands: it lower-cases a command's name on every flag check (5 or so per command), and
    // 'XADD' would allocate a new string each time (bench/ingest's profile: checkFlag at 2.4x, more GC).
    for (let i = 0; i < channels.length; i++) {
      const channel = channels[i] as string;
      const body = bodies[i] as Buffer;
      if (history) pipeline.call('xadd', historyAppendArgs(historyPrefix, topic, partition, offsets[i] as string, channel, body, historyMaxLen));
      pipeline.publish(channel, body);
    }
    const started = performance.now();
    const results = await answeredWithin(redis, redisTimeoutMs, pipeline.exec(), `the pipeline for ${topic}[${partition}]`);
    metrics?.redisPublishSeconds.observe((performance.now() - started) / 1_000);
    if (!results) throw new Error(`Redis discarded the pipeline for ${topic}[${partition}]`);
    for (const [err] of results) {
      // An XADD at or below the stream's top: this event is already in history (a re-publish after
      // a crash or a rebalance). Its PUBLISH still went out; the gateway drops the duplicate position.
      if (err !== null && !err.message.includes(HISTORY_ALREADY_STORED)) {
        throw new Error(`Redis rejected a command for ${topic}[${partition}]: ${err.message}`, { cause: err });
      }
    }
  }

  /** Names this life of the history; a Redis that lost its data gets a new one (SET NX GET, Redis ≥ 7). */
  async function ensureEpoch(): Promise<void> {
    if (!history) return;
    const candidate = randomUUID();
    try {
      const previous = (await answeredWithin(redis, redisTimeoutMs, redis.call(...historyEpochCommand(historyPrefix, candidate)), 'the history epoch')) as string | null;
      logger.info({ epoch: previous ?? candidate, created: previous === null }, 'history epoch');
    } catch (err) {
      // The next 'ready' tries again; history entries written meanwhile still have their offsets.
      logger.warn({ err }, 'could not read or create the history epoch');
    }
  }
  const onRedisReady = (): void => void ensureEpoch();

  return {
    publishChunk,
    start: async () => {
      redis.on('ready', onRedisReady);
      if (redis.status === 'ready') await ensureEpoch();
    },
    stop: () => {
      redis.off('ready', onRedisReady);
    },
  };
}

/**
 * Rejects when Redis holds `reply` longer than `timeoutMs`. The connection is then dropped and
 * re-made: its queued commands fail instead of piling up behind a Redis that does not answer.
 * One timer per chunk, not ioredis's `commandTimeout` (a timer per command, two per event).
 */
async function answeredWithin<T>(redis: Redis, timeoutMs: number, reply: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      redis.disconnect(true);
      reject(new Error(`Redis did not answer ${what} within ${timeoutMs} ms; reconnecting`));
    }, timeoutMs);
  });
  // A reply that fails after the timeout won has nobody waiting for it.
  reply.catch(() => undefined);
  try {
    return await Promise.race([reply, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
