import type { Redis } from 'ioredis';
import { createEnvelopeBatchAssembler, type EnvelopeBatchAssembler } from '@wirestream/wire';
import type { Broker, BrokerListener } from './broker.js';

export interface RedisBrokerOptions {
  /** Called on each reconnection attempt (the gateway counts them in a metric). */
  readonly onReconnecting?: () => void;
}

/**
 * The broker on Redis pub/sub, over a connection the gateway dedicates to SUBSCRIBE (ioredis puts
 * it in subscriber mode; it re-subscribes every channel itself after a reconnect, before `ready`).
 * Ingest's batch parts (one message per key shard per chunk) are re-assembled here and handed to
 * the hub one envelope at a time, in offset order, as if published one by one (decision 0012).
 */
export function createRedisBroker(redis: Redis, options: RedisBrokerOptions = {}): Broker {
  const { onReconnecting } = options;
  let attached = false;
  let paused = false;
  /** Channels subscribed, or with a SUBSCRIBE on its way: a chunk's parts are awaited on these. */
  const listening = new Set<string>();
  /** Channels whose SUBSCRIBE this connection confirmed (all of them again once a reconnect is `ready`). */
  const confirmed = new Set<string>();
  let assembler: EnvelopeBatchAssembler | undefined;
  return {
    attach(listener: BrokerListener) {
      if (attached) throw new Error('a Redis broker has one listener: attach() was called twice');
      attached = true;
      let wasReady = redis.status === 'ready';
      const chunks = createEnvelopeBatchAssembler({
        emit: (channel, text, route) => listener.message(channel, text, route),
        listens: (channel) => listening.has(channel),
        confirmed: (channel) => confirmed.has(channel),
        onMalformed: (channel, text) => listener.message(channel, text),
      });
      assembler = chunks;
      redis.on('message', (channel: string, text: string) => chunks.message(channel, channel, text));
      if (onReconnecting) redis.on('reconnecting', onReconnecting);
      // Pub/sub is at-most-once: from the moment the connection drops, anything published is only in history.
      redis.on('close', () => {
        // A chunk whose parts were cut off is re-read whole by the back-fill (from the last delivered position).
        chunks.discard();
        confirmed.clear();
        if (wasReady) listener.lost();
      });
      // A new socket after a reconnect starts flowing: keep it paused if the hub still is.
      redis.on('connect', () => setReading(redis, !paused));
      redis.on('ready', () => {
        // ioredis re-subscribed every channel before 'ready' (its auto-resubscribe).
        for (const channel of listening) confirmed.add(channel);
        wasReady = true;
        listener.ready();
      });
    },
    async subscribe(channel) {
      listening.add(channel);
      await redis.subscribe(channel);
      if (listening.has(channel)) confirmed.add(channel);
    },
    async unsubscribe(channel) {
      listening.delete(channel);
      confirmed.delete(channel);
      await redis.unsubscribe(channel);
    },
    pause() {
      paused = true;
      // Parts still unread in the socket: no incomplete chunk may go on while they wait.
      assembler?.pause();
      setReading(redis, false);
    },
    resume() {
      paused = false;
      assembler?.resume();
      setReading(redis, true);
    },
    isReady: () => redis.status === 'ready',
    status: () => `redis ${redis.status}`,
  };
}

/** Stops or restarts reading a connection's socket (ioredis parses replies as the socket emits data). */
export function setReading(redis: Redis, reading: boolean): void {
  // `stream` is unset before the first connect; `connect` applies the state then.
  const stream = redis.stream as typeof redis.stream | undefined;
  if (!stream) return;
  if (reading) stream.resume();
  else stream.pause();
}
