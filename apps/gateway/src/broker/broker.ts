import type { EnvelopeRoute, HistoryEntry, Snapshot } from '@wirestream/wire';

/**
 * The seam between the hub and the bus that carries envelopes (in the spirit of centrifuge's
 * `broker.go`): channel subscriptions and the messages on them, nothing else. Implemented on Redis
 * pub/sub (`redis-broker.ts`) and in process (`memory-broker.ts`, for the hub's unit tests and
 * in-process benchmarks). The scale-out work adds a Redis Cluster broker behind the same interface.
 */
export interface Broker {
  /** Registers the one listener (the hub). Called once, before any subscribe. */
  attach(listener: BrokerListener): void;
  /** Starts receiving a channel; resolves once the bus confirmed it (live messages flow from then on). */
  subscribe(channel: string): Promise<void>;
  /** Stops receiving a channel. */
  unsubscribe(channel: string): Promise<void>;
  /**
   * Stops handing over messages (the hub's inbound queue is full): on Redis the socket is no longer
   * read, so TCP pushes back into Redis's output buffer. Redis may then drop the connection (its
   * `client-output-buffer-limit pubsub`): that is an ordinary `lost`, followed by `ready` and a
   * back-fill from history. Idempotent.
   */
  pause(): void;
  /** Hands over messages again, in order, after {@link pause}. Idempotent. */
  resume(): void;
  /** True while connected: messages flow and subscriptions hold. */
  isReady(): boolean;
  /** The connection's state in a word or two, for `/readyz` when not ready (`connecting`, `reconnecting`…). */
  status(): string;
}

/** What the broker tells its listener. */
export interface BrokerListener {
  /**
   * A message on a subscribed channel: the envelope text as published, and its routing key when the
   * batch part it came in gave one (decision 0039: the hub may then drop it unparsed).
   */
  message(channel: string, text: string, route?: EnvelopeRoute): void;
  /**
   * The connection dropped after having been ready. Pub/sub is at-most-once: whatever is published
   * from now until {@link ready} is not delivered, only stored in history.
   */
  lost(): void;
  /** Connected (again), with every subscription restored. */
  ready(): void;
}

/**
 * Reads what ingest writes next to each publish (the layout in `@wirestream/wire`'s history):
 * one stream per Kafka partition with offset-derived ids, the set of partitions, and the epoch.
 */
export interface HistoryReader {
  /** The epoch, creating it if the store has none (a fresh or emptied store starts a new life). */
  loadEpoch(): Promise<string>;
  /** Partitions of `topic` that have history, ascending. */
  partitions(topic: string): Promise<number[]>;
  /** Offset of the newest stored entry per partition (partitions without a stream are absent). */
  tops(topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  /**
   * Whether history may have lost an entry after `afterOffset` (trimmed by retention, or deleted).
   * Conservative: the store does not record the id of the last trimmed entry, only what remains, so a
   * hole in the offsets just before the oldest retained entry (e.g. a dead-lettered message) counts
   * as a possible loss. A partition with positions but no stream counts as lost too.
   */
  lostAfter(topic: string, partition: number, afterOffset: string): Promise<boolean>;
  /** Entries after `afterOffset` (from the oldest retained when undefined), oldest first, in pages. */
  read(topic: string, partition: number, afterOffset: string | undefined): AsyncGenerator<HistoryEntry[]>;
  /**
   * Where a replay from a time starts on one partition: the first event whose Kafka timestamp is at
   * or after `sinceMs`, found by a binary search over offsets (a few reads, whatever the length), so
   * it takes timestamps as not going back within a partition (Kafka's LogAppendTime, and CreateTime
   * from ordinary producers; an event stamped out of order can move the seam by its neighbours).
   */
  entryFrom(topic: string, partition: number, sinceMs: number): Promise<TimeSeek>;
}

/** Where a replay from a time starts on one partition ({@link HistoryReader.entryFrom}). */
export interface TimeSeek {
  /**
   * Read after this offset ({@link HistoryReader.read}) to get the first event at or after the time:
   * the offset just before it (the partition's newest when every event is older). Undefined: from the
   * oldest retained event (it is at or after the time already, or the partition has none).
   */
  readonly after: string | undefined;
  /**
   * History may have lost events at or after the time: it was trimmed, and its oldest retained event
   * is not older than the time (what was trimmed may have been too).
   */
  readonly lost: boolean;
  /** Kafka timestamp (ms) of the oldest retained event; undefined when the partition holds none. */
  readonly oldestMs: number | undefined;
}

/**
 * Reads the snapshots ingest keeps for `@topic(snapshot: true)` topics (decision 0023): the latest
 * envelope per key with its position, and per partition the top offset the read saw (the seam with
 * the live stream, decision 0024). Implemented on Redis by `redis-snapshots.ts` (`readSnapshot`).
 */
export interface SnapshotReader {
  /** The given keys' entries (at most `cap` keys), or every key's (`'all'`: at most `cap` entries, `truncated` when there were more). */
  read(topic: string, keys: readonly string[] | 'all', cap: number): Promise<Snapshot>;
}
