import { randomUUID } from 'node:crypto';
import { envelopeTimestamp, type EnvelopeRoute, type HistoryEntry } from '@wirestream/wire';
import type { Broker, BrokerListener, HistoryReader } from './broker.js';

/** Where one event sits in Kafka: what ingest stores it under in history. */
export interface MemoryPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/**
 * A real in-process bus with the semantics the gateway relies on from Redis: channel pub/sub that
 * is at-most-once (nothing is delivered while disconnected or before a SUBSCRIBE is confirmed),
 * and a history of every published event per partition, written before the publish, with
 * retention, trimming and an epoch that a data loss renews. Not a mock: it routes every message
 * by channel like Redis does. For the hub's unit tests and the in-process benchmarks.
 */
export interface MemoryBus {
  readonly broker: Broker;
  readonly history: HistoryReader;
  /**
   * What ingest does for one event: append it to its partition's history (unless that offset is
   * already stored), then publish it on `channel`. Delivery to the listener is synchronous when
   * the channel is subscribed and the bus is connected. `route`: the routing key a batch part would
   * give with it (decision 0039), handed to the listener as Redis brokers do.
   */
  publish(channel: string, envelope: string, position?: MemoryPosition, route?: EnvelopeRoute): void;
  /** Drops the connection: the listener hears `lost`, publishes until `reconnect` reach history only. */
  disconnect(): void;
  /** Restores the connection and every subscription: the listener hears `ready`. */
  reconnect(): void;
  /** Keeps the newest `maxLen` entries of a partition (as `XTRIM MAXLEN`). */
  trim(topic: string, partition: number, maxLen: number): void;
  /** Loses everything, epoch included (a store restarted empty). */
  flushAll(): void;
  /** Channels subscribed now. */
  channels(): readonly string[];
}

interface Stream {
  entries: HistoryEntry[];
  /** Entries ever appended (Redis's `entries-added`), so trimming is detectable. */
  added: number;
  lastOffset: bigint;
}

export interface MemoryBusOptions {
  /** Entries read per page of `history.read`. @default 500 */
  readonly pageSize?: number;
  /**
   * Messages kept for a paused listener, like Redis's output buffer for a subscriber that does not
   * read; one more and the bus drops the connection as Redis does (`lost`, then `ready` on the next
   * turn, everything in between only in history). @default Infinity
   */
  readonly pausedBufferLimit?: number;
}

export function createMemoryBus(options: MemoryBusOptions = {}): MemoryBus {
  const { pageSize = 500, pausedBufferLimit = Infinity } = options;
  let listener: BrokerListener | undefined;
  let connected = true;
  let paused = false;
  /** What a paused listener has not been handed yet (Redis's output buffer). */
  let buffered: [channel: string, envelope: string, route: EnvelopeRoute | undefined][] = [];
  let epoch: string | undefined;
  const subscribed = new Set<string>();
  const streams = new Map<string, Map<number, Stream>>();

  const streamOf = (topic: string, partition: number): Stream | undefined => streams.get(topic)?.get(partition);

  function append(channel: string, envelope: string, { topic, partition, offset }: MemoryPosition): void {
    let partitions = streams.get(topic);
    if (!partitions) streams.set(topic, (partitions = new Map<number, Stream>()));
    let stream = partitions.get(partition);
    if (!stream) partitions.set(partition, (stream = { entries: [], added: 0, lastOffset: -1n }));
    // Like an XADD at or below the stream's top: a re-publish is refused by history, still published.
    if (BigInt(offset) <= stream.lastOffset) return;
    stream.entries.push({ offset, channel, envelope });
    stream.added++;
    stream.lastOffset = BigInt(offset);
  }

  const broker: Broker = {
    attach(l) {
      if (listener) throw new Error('a memory broker has one listener: attach() was called twice');
      listener = l;
    },
    subscribe(channel) {
      subscribed.add(channel);
      // Confirmed a turn later, like a SUBSCRIBE reply.
      return new Promise((resolve) => setImmediate(resolve));
    },
    unsubscribe(channel) {
      subscribed.delete(channel);
      return Promise.resolve();
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      const pending = buffered;
      buffered = [];
      for (const [channel, envelope, route] of pending) listener?.message(channel, envelope, route);
    },
    isReady: () => connected,
    status: () => (connected ? 'memory ready' : 'memory disconnected'),
  };

  function disconnect(): void {
    if (!connected) return;
    connected = false;
    buffered = [];
    listener?.lost();
  }

  /** Redis closes a subscriber whose output buffer passed its limit; the client reconnects. */
  function dropSlowListener(): void {
    disconnect();
    setImmediate(() => {
      connected = true;
      listener?.ready();
    });
  }

  const history: HistoryReader = {
    loadEpoch() {
      epoch ??= randomUUID();
      return Promise.resolve(epoch);
    },
    partitions(topic) {
      return Promise.resolve([...(streams.get(topic)?.keys() ?? [])].sort((a, b) => a - b));
    },
    tops(topic, partitions) {
      const tops = new Map<number, string>();
      for (const p of partitions) {
        const newest = streamOf(topic, p)?.entries.at(-1);
        if (newest) tops.set(p, newest.offset);
      }
      return Promise.resolve(tops);
    },
    lostAfter(topic, partition, afterOffset) {
      const stream = streamOf(topic, partition);
      if (!stream) return Promise.resolve(true);
      if (stream.added <= stream.entries.length) return Promise.resolve(false);
      const first = stream.entries[0];
      const oldest = first ? BigInt(first.offset) : stream.lastOffset + 1n;
      return Promise.resolve(oldest > BigInt(afterOffset) + 1n);
    },
    entryFrom(topic, partition, sinceMs) {
      const stream = streamOf(topic, partition);
      const entries = stream?.entries ?? [];
      const oldest = entries[0];
      if (!stream || !oldest) return Promise.resolve({ after: undefined, lost: false, oldestMs: undefined });
      const oldestMs = envelopeTimestamp(oldest.envelope);
      if (oldestMs >= sinceMs) return Promise.resolve({ after: undefined, lost: stream.added > entries.length, oldestMs });
      const at = entries.findIndex((e) => envelopeTimestamp(e.envelope) >= sinceMs);
      // The event just before the first at or after the time (the newest when all are older).
      const before = entries[at < 0 ? entries.length - 1 : at - 1] as HistoryEntry;
      return Promise.resolve({ after: before.offset, lost: false, oldestMs });
    },
    async *read(topic, partition, afterOffset) {
      const entries = streamOf(topic, partition)?.entries ?? [];
      const after = afterOffset === undefined ? -1n : BigInt(afterOffset);
      let start = entries.findIndex((e) => BigInt(e.offset) > after);
      if (start < 0) return;
      while (start < entries.length) {
        await Promise.resolve(); // a page is an asynchronous read, as over a socket
        yield entries.slice(start, start + pageSize);
        start += pageSize;
      }
    },
  };

  return {
    broker,
    history,
    publish(channel, envelope, position, route) {
      if (position) append(channel, envelope, position);
      if (!connected || !subscribed.has(channel)) return;
      if (!paused) {
        listener?.message(channel, envelope, route);
        return;
      }
      buffered.push([channel, envelope, route]);
      if (buffered.length > pausedBufferLimit) dropSlowListener();
    },
    disconnect,
    reconnect() {
      if (connected) return;
      connected = true;
      listener?.ready();
    },
    trim(topic, partition, maxLen) {
      const stream = streamOf(topic, partition);
      if (stream && stream.entries.length > maxLen) stream.entries.splice(0, stream.entries.length - maxLen);
    },
    flushAll() {
      streams.clear();
      epoch = undefined;
    },
    channels: () => [...subscribed],
  };
}
