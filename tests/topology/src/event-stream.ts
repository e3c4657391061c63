// The producer of the topology test and the read-back of what Kafka holds afterwards.
//
// The producer sends uniquely identified listing events, each partition in its own loop so that a
// partition whose leader was killed stalls alone while the others keep flowing, and records the
// position of every event Kafka acknowledged (acks = all). A send that failed is sent again, so
// Kafka may hold an event that was never acknowledged (the leader wrote it, then died before
// answering) or hold one event at two positions: the read-back of the topic, not the acks, is
// therefore what each client's expected set is computed from, and every acknowledged position
// must be in it.
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, type Message, type Producer } from 'kafkajs';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { uniqueName, waitFor } from '@wirestream/testkit';

/** `partition:offset` of the listing topic: what every count is keyed by. */
export type Position = string;

/** One record of the listing topic as the read-back found it. */
export interface LoggedEvent {
  readonly position: Position;
  readonly eventId: string;
  readonly listingId: string;
  readonly eventType: string;
}

/** An event Kafka acknowledged, with what a filter looks at. */
export interface AckedEvent extends LoggedEvent {
  /** Epoch ms of the acknowledgement. */
  readonly ackedAt: number;
}

export interface StreamOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly partitions: number;
  /** Events sent to each partition every 100 ms. @default 3 (90 events/s over 3 partitions) */
  readonly perPartitionPerTick?: number;
  /** Distinct listing ids (`lst-000000`…): few listings give a key-filtered client several events a second. @default 24 */
  readonly listings?: number;
}

export interface EventStream {
  /** Every acknowledged event, in the order of the acknowledgements (so `ackedAt` never decreases). */
  readonly acks: readonly AckedEvent[];
  /** event_id → when it was first sent (epoch ms): what puts an event in a fault's window. */
  readonly firstSentAt: ReadonlyMap<string, number>;
  /** Sends that failed (and were sent again). */
  failedSends(): number;
  /** Resolves once `n` more events are acknowledged than when called. */
  waitForMore(n: number, timeoutMs?: number): Promise<void>;
  /** Stops sending; resolves once the sends in flight are acknowledged. */
  stop(): Promise<void>;
}

const TICK_MS = 100;
const RESEND_PAUSE_MS = 250;

export async function startEventStream(options: StreamOptions): Promise<EventStream> {
  const { brokers, topic, partitions, perPartitionPerTick = 3, listings = 24 } = options;
  // Retries sized for a leader election (several seconds); the loop below retries on top of that.
  const kafka = new Kafka({ clientId: 'topology-producer', brokers: [...brokers], logLevel: logLevel.NOTHING, retry: { retries: 8, maxRetryTime: 2_000 } });
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const generator = createAuctionEventGenerator({ seed: 17, listings });
  const acks: AckedEvent[] = [];
  const firstSentAt = new Map<string, number>();
  let failed = 0;
  let stopping = false;

  type Sent = Omit<LoggedEvent, 'position'>;
  async function sendUntilAcked(partition: number, messages: Message[], events: readonly Sent[]): Promise<void> {
    for (;;) {
      try {
        const [result] = await producer.send({ topic, acks: -1, messages });
        if (result === undefined || result.baseOffset === undefined) throw new Error(`no offset in the answer for ${topic}/${partition}`);
        const now = Date.now();
        const base = BigInt(result.baseOffset);
        events.forEach((event, k) => acks.push({ ...event, position: `${partition}:${base + BigInt(k)}`, ackedAt: now }));
        return;
      } catch {
        // The leader is away (a kill): the same events again, until they are in.
        failed++;
        if (stopping) throw new Error(`sends to ${topic}/${partition} still fail while the stream stops`);
        await sleep(RESEND_PAUSE_MS);
      }
    }
  }

  async function partitionLoop(partition: number): Promise<void> {
    let nextTick = Date.now();
    while (!stopping) {
      const messages: Message[] = [];
      const events: Sent[] = [];
      for (let k = 0; k < perPartitionPerTick; k++) {
        const { key, value } = generator.listingEvent();
        const event = { eventId: String(value['eventId']), listingId: String(value['listingId']), eventType: String(value['eventType']) };
        firstSentAt.set(event.eventId, Date.now());
        events.push(event);
        messages.push({ partition, key, value: JSON.stringify(value) });
      }
      await sendUntilAcked(partition, messages, events);
      // After a stall, go on at the normal rate rather than sending the missed ticks in a burst.
      nextTick = Math.max(nextTick + TICK_MS, Date.now());
      await sleep(nextTick - Date.now());
    }
  }

  const loops = Promise.all(Array.from({ length: partitions }, (_, p) => partitionLoop(p)));
  loops.catch(() => {}); // observed through stop()

  return {
    acks,
    firstSentAt,
    failedSends: () => failed,
    async waitForMore(n, timeoutMs = 60_000) {
      const target = acks.length + n;
      await waitFor(() => acks.length >= target, { timeoutMs, intervalMs: 20, message: `${n} more events acknowledged by Kafka (have ${acks.length}, want ${target})` });
    },
    async stop() {
      stopping = true;
      try {
        await loops;
      } finally {
        await producer.disconnect();
      }
    },
  };
}

/**
 * Reads every record of `topic` with a consumer group of its own, up to the high watermarks at the
 * time of the call: what Kafka holds, acknowledged or not.
 */
export async function readTopic(brokers: readonly string[], topic: string, timeoutMs = 60_000): Promise<Map<Position, LoggedEvent>> {
  const kafka = new Kafka({ clientId: 'topology-read-back', brokers: [...brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const { partition, high } of await admin.fetchTopicOffsets(topic)) ends.set(partition, BigInt(high));
  } finally {
    await admin.disconnect();
  }
  const records = new Map<Position, LoggedEvent>();
  const consumer = kafka.consumer({ groupId: uniqueName('topology-read-back'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const next = new Map<number, bigint>([...ends.keys()].map((p) => [p, 0n]));
    await consumer.run({
      eachBatch: ({ batch }) => {
        for (const message of batch.messages) {
          const value = JSON.parse(message.value?.toString('utf8') ?? '{}') as Record<string, unknown>;
          const position = `${batch.partition}:${message.offset}`;
          records.set(position, { position, eventId: String(value['eventId']), listingId: String(value['listingId']), eventType: String(value['eventType']) });
          next.set(batch.partition, BigInt(message.offset) + 1n);
        }
        return Promise.resolve();
      },
    });
    await waitFor(() => [...ends].every(([p, high]) => (next.get(p) ?? 0n) >= high), {
      timeoutMs,
      intervalMs: 100,
      message: `the read-back to reach the high watermarks ${JSON.stringify(Object.fromEntries([...ends].map(([p, h]) => [p, String(h)])))}`,
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** The longest time a partition went without an acknowledgement between `from` and `to` (epoch ms): how long producing stalled. */
export function longestAckPause(acks: readonly AckedEvent[], from: number, to: number): { partition: string; pauseMs: number } {
  const last = new Map<string, number>();
  let longest = { partition: '-', pauseMs: 0 };
  const consider = (partition: string, at: number): void => {
    const pauseMs = at - (last.get(partition) ?? from);
    if (pauseMs > longest.pauseMs) longest = { partition, pauseMs };
    last.set(partition, at);
  };
  for (const { position, ackedAt } of acks) {
    if (ackedAt < from || ackedAt > to) continue;
    consider(position.slice(0, position.indexOf(':')), ackedAt);
  }
  for (const partition of last.keys()) consider(partition, to);
  return longest;
}
