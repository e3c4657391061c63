import type { Redis } from 'ioredis';
import { createEnvelopeBatchAssembler } from '@wirestream/schema';
import type { Broker, BrokerListener } from './broker.js';

export interface RedisBrokerOptions {
  /** Called on each reconnection attempt (the gateway counts them in a metric). */
  readonly onReconnecting?: () => void;
}

/**
 * The broker on Redis pub/sub, over a connection the gateway dedicates to SUBSCRIBE (ioredis puts
 * it in subscriber mode; it re-subscribes every channel itself after a reconnect, before `ready`).
 * Ingest's batch parts (one message per key shard per chunk) are re-assembled here and handed to
 * the hub one envelope at a time, in offset order, as if published one by one (decision 0010).
 */
export function createRedisBroker(redis: Redis, options: RedisBrokerOptions = {}): Broker {
  const { onReconnecting } = options;
  let attached = false;
  /** Channels subscribed, or with a SUBSCRIBE on its way: a chunk's parts are awaited on these. */
  const listening = new Set<string>();
  return {
    attach(listener: BrokerListener) {
      if (attached) throw new Error('a Redis broker has one listener: attach() was called twice');
      attached = true;
      let wasReady = redis.status === 'ready';
      const assembler = createEnvelopeBatchAssembler({
        emit: (channel, text) => listener.message(channel, text),
        listens: (channel) => listening.has(channel),
        onMalformed: (channel, text) => listener.message(channel, text),
      });
      redis.on('message', (channel: string, text: string) => assembler.message(channel, channel, text));
      if (onReconnecting) redis.on('reconnecting', onReconnecting);
      // Pub/sub is at-most-once: from the moment the connection drops, anything published is only in history.
      redis.on('close', () => {
        // A chunk whose parts were cut off is re-read whole by the back-fill (from the last delivered position).
        assembler.discard();
        if (wasReady) listener.lost();
      });
      redis.on('ready', () => {
        wasReady = true;
        listener.ready();
      });
    },
    async subscribe(channel) {
      listening.add(channel);
      await redis.subscribe(channel);
    },
    async unsubscribe(channel) {
      listening.delete(channel);
      await redis.unsubscribe(channel);
    },
    isReady: () => redis.status === 'ready',
    status: () => `redis ${redis.status}`,
  };
}
