// Ingest's memory against a real broker and Redis: idle after joining its group, under the demo
// producer (default rate, then a sustained high rate), and catching up a backlog at full speed.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { createAuctionEventGenerator, DEMO_TOPICS } from '@wirestream/demo-events';
import { createTopics, findRepoRoot, freePort, uniqueName, type KafkaBroker, type RedisServer } from '@wirestream/testkit';
import { readRssAndPeak, type ManagedProcess } from '@wirestream/bench-kit';
import { scrape, startApp } from './apps.js';

/** One reading of the ingest process. */
export interface IngestSample {
  readonly t: number;
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly consumed: number;
}

export interface IngestPhase {
  readonly name: string;
  readonly seconds: number;
  readonly samples: readonly IngestSample[];
  /** VmHWM of the process at the end of the phase (peak RSS since it started). */
  readonly hwm: number;
  readonly eventsConsumed: number;
}

export interface IngestProbeResult {
  readonly phases: readonly IngestPhase[];
  readonly partitions: number;
  readonly meanValueBytes: number;
  readonly backlogEvents: number;
}

export interface IngestProbeOptions {
  readonly broker: KafkaBroker;
  readonly redis: RedisServer;
  readonly settleS: number;
  readonly defaultRateS: number;
  readonly sustainedRate: number;
  readonly sustainedS: number;
  readonly backlogEvents: number;
  readonly log: (line: string) => void;
}

const PARTITIONS = 3;
const root = findRepoRoot();

export async function probeIngest(o: IngestProbeOptions): Promise<IngestProbeResult> {
  const kafka = new Kafka({ clientId: 'capacity-probe', brokers: o.broker.brokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, DEMO_TOPICS.map((topic) => ({ topic, numPartitions: PARTITIONS })));
  await admin.disconnect();
  const groupId = uniqueName('capacity-probe');
  const phases: IngestPhase[] = [];

  let ingest = await startIngest(o, groupId);
  let consumedBefore = 0;
  try {
    o.log(`  ingest idle: settling ${o.settleS} s after it joined its group`);
    phases.push(await watch(ingest, 'idle (joined, no traffic)', o.settleS * 1000, consumedBefore));
    consumedBefore = last(phases).samples.at(-1)?.consumed ?? 0;

    o.log(`  ingest under the demo producer at its defaults (DEMO_RATE=5) for ${o.defaultRateS} s`);
    let producer = startProducer(o, {});
    await producer.waitForLine('demo producer started', 30_000);
    phases.push(await watch(ingest, 'demo producer, defaults (5 events/s)', o.defaultRateS * 1000, consumedBefore));
    await producer.stop();
    consumedBefore = last(phases).samples.at(-1)?.consumed ?? consumedBefore;

    o.log(`  ingest under the demo producer at DEMO_RATE=${o.sustainedRate} for ${o.sustainedS} s`);
    producer = startProducer(o, { DEMO_RATE: String(o.sustainedRate) });
    await producer.waitForLine('demo producer started', 30_000);
    phases.push(await watch(ingest, `demo producer, DEMO_RATE=${o.sustainedRate}`, o.sustainedS * 1000, consumedBefore));
    await producer.stop();
    await ingest.stop();

    o.log(`  backlog: ${o.backlogEvents.toLocaleString('en-US')} generated events produced while ingest is stopped, then a fresh ingest catches up`);
    const meanValueBytes = await produceBacklog(kafka, o.backlogEvents);
    ingest = await startIngest(o, groupId);
    phases.push(await watchUntil(ingest, 'catching up the backlog at full speed', o.backlogEvents, 240_000));
    return { phases, partitions: PARTITIONS, meanValueBytes, backlogEvents: o.backlogEvents };
  } finally {
    await ingest.stop();
  }
}

function last<T>(list: readonly T[]): T {
  return list[list.length - 1] as T;
}

interface RunningIngest extends ManagedProcess {
  readonly metricsUrl: string;
}

async function startIngest(o: IngestProbeOptions, groupId: string): Promise<RunningIngest> {
  const port = await freePort();
  const child = startApp('ingest', [join(root, 'apps', 'ingest', 'dist', 'main.js')], {
    KAFKA_BROKERS: o.broker.brokers.join(','),
    REDIS_URL: o.redis.url,
    KAFKA_GROUP_ID: groupId,
    INGEST_HTTP_PORT: String(port),
    LOG_LEVEL: 'info',
  });
  await child.waitForLine('joined consumer group', 90_000);
  return { ...child, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}

function startProducer(o: IngestProbeOptions, env: Record<string, string>): ManagedProcess {
  return startApp('demo-producer', [join(root, 'apps', 'demo', 'dist', 'producer.js')], { KAFKA_BROKERS: o.broker.brokers.join(','), LOG_LEVEL: 'info', ...env });
}

async function sample(ingest: RunningIngest, t0: number): Promise<IngestSample | undefined> {
  const [metrics, rss] = [await scrape(ingest.metricsUrl), readRssAndPeak(ingest.pid)];
  if (metrics === undefined || rss === undefined) return undefined;
  return {
    t: (performance.now() - t0) / 1000,
    rss: rss.rss,
    heapTotal: metrics.get('wirestream_nodejs_heap_size_total_bytes') ?? NaN,
    heapUsed: metrics.get('wirestream_nodejs_heap_size_used_bytes') ?? NaN,
    external: metrics.get('wirestream_nodejs_external_memory_bytes') ?? NaN,
    consumed: metrics.get('wirestream_ingest_consumed_total') ?? 0,
  };
}

/** Samples every 500 ms for `ms`. */
async function watch(ingest: RunningIngest, name: string, ms: number, consumedBefore: number): Promise<IngestPhase> {
  const t0 = performance.now();
  const samples: IngestSample[] = [];
  while (performance.now() - t0 < ms) {
    const s = await sample(ingest, t0);
    if (s) samples.push(s);
    if (ingest.exitedAt() !== undefined) throw new Error(`ingest exited during "${name}":\n${ingest.tail()}`);
    await sleep(500);
  }
  return { name, seconds: ms / 1000, samples, hwm: readRssAndPeak(ingest.pid)?.hwm ?? NaN, eventsConsumed: (samples.at(-1)?.consumed ?? 0) - consumedBefore };
}

/** Samples every 250 ms until the process reports `events` consumed (and 2 s more). */
async function watchUntil(ingest: RunningIngest, name: string, events: number, timeoutMs: number): Promise<IngestPhase> {
  const t0 = performance.now();
  const samples: IngestSample[] = [];
  let doneAt: number | undefined;
  for (;;) {
    const s = await sample(ingest, t0);
    if (s) samples.push(s);
    const now = performance.now();
    if (doneAt === undefined && (s?.consumed ?? 0) >= events) doneAt = now;
    if (doneAt !== undefined && now - doneAt > 2_000) break;
    if (now - t0 > timeoutMs) throw new Error(`ingest consumed ${s?.consumed ?? '?'} of ${events} backlog events in ${timeoutMs / 1000} s`);
    if (ingest.exitedAt() !== undefined) throw new Error(`ingest exited during "${name}":\n${ingest.tail()}`);
    await sleep(250);
  }
  return { name, seconds: (performance.now() - t0) / 1000, samples, hwm: readRssAndPeak(ingest.pid)?.hwm ?? NaN, eventsConsumed: samples.at(-1)?.consumed ?? 0 };
}

/** The demo generator's events (70 % listing, 30 % bid), keyed by listing, sent in batches; returns the mean value size. */
async function produceBacklog(kafka: Kafka, events: number): Promise<number> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const generator = createAuctionEventGenerator({ seed: 42, listings: 5_000 });
  let bytes = 0;
  try {
    for (let start = 0; start < events; start += 500) {
      const byTopic = new Map<string, { key: string; value: string }[]>();
      for (let i = start; i < Math.min(events, start + 500); i++) {
        const e = generator.next();
        const value = JSON.stringify(e.value);
        bytes += Buffer.byteLength(value);
        const list = byTopic.get(e.topic) ?? [];
        list.push({ key: e.key, value });
        byTopic.set(e.topic, list);
      }
      await producer.sendBatch({ acks: 1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    }
  } finally {
    await producer.disconnect();
  }
  return bytes / events;
}
