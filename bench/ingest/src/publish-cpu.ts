// CPU per event of ingest and of the Redis servers, for builds of apps/ingest over the same
// preloaded Kafka events, interleaved per round: each `--variant <label>=<apps/ingest dir>` (another
// checkout's, built: the commit before a change, or a change tried on a copy) and this checkout's
// dist/main.js, all run as processes the way an operator runs them. On a Redis Cluster (3 primaries + 3 replicas, testkit)
// or one redis-server (`--mode standalone`). bench/ingest measures standalone in depth but cannot
// run against a cluster (one redis-server, progress by cmdstat_publish): this is its cluster
// counterpart, with the same method (25 ms samples of /proc/<pid>/stat, the window from the last
// sample before the first publish to the one where all were published, FLUSHALL before each run).
//
//   git worktree add /tmp/ingest-base <base-commit>
//   (cd /tmp/ingest-base && pnpm install --frozen-lockfile --offline && npx turbo run build --filter=@wirestream/ingest...)
//   node bench/ingest/dist/publish-cpu.js --variant base=/tmp/ingest-base/apps/ingest --mode cluster
// Options: --mode cluster|standalone (cluster), --events N (60000), --partitions N (6), --repeat N
// (rounds, 3), --wait-replicas N (INGEST_REDIS_WAIT_REPLICAS, 0).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Kafka, logLevel, Partitioners, type Admin } from 'kafkajs';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { auctionSchemaPath } from '@wirestream/schema';
import { createTopics, findRepoRoot, startKafka, startRedis, startRedisCluster, uniqueName } from '@wirestream/testkit';
import { median, parseCli, readCpuMs, readMachineTicks, startNodeProcess } from '@wirestream/bench-kit';

const SAMPLE_INTERVAL_MS = 25;
const RUN_TIMEOUT_MS = 180_000; // 3 minutes per run: far above a run of 100k events on a busy 2-core machine

type Mode = 'cluster' | 'standalone';

/** A Redis to publish to: the seed URL, every redis-server's pid by role, and connections to the primaries. */
interface Target {
  readonly url: string;
  readonly primaries: readonly { pid: number; client: Redis }[];
  readonly replicaPids: readonly number[];
  readonly stop: () => Promise<void>;
}

interface Variant {
  readonly name: string;
  readonly main: string;
}

interface RunResult {
  readonly variant: string;
  readonly round: number;
  readonly eventsPerS: number;
  readonly ingestUsPerEvent: number;
  readonly primariesUsPerEvent: number;
  readonly replicasUsPerEvent: number;
  readonly machineBusyPct: number;
  readonly publishes: number;
}

interface Sample {
  readonly t: number;
  readonly publishes: number;
  readonly ingest: number;
  readonly primaries: number;
  readonly replicas: number;
  readonly busy: number;
  readonly total: number;
}

/** CPU seconds (user + system, all threads) of a process so far; NaN once it is gone. */
function cpuSecondsOf(pid: number | undefined): number {
  return pid === undefined ? Number.NaN : (readCpuMs(pid) ?? Number.NaN) / 1_000;
}

async function startTarget(mode: Mode): Promise<Target> {
  if (mode === 'standalone') {
    const server = await startRedis();
    const client = new Redis(server.url);
    const stop = async (): Promise<void> => {
      client.disconnect();
      await server.stop();
    };
    return { url: server.url, primaries: [{ pid: server.pid ?? NaN, client }], replicaPids: [], stop };
  }
  const cluster = await startRedisCluster();
  const live = cluster.nodes.filter((n) => n.pid !== undefined);
  const primaries = live.filter((n) => n.role === 'primary').map((n) => ({ pid: n.pid ?? NaN, client: new Redis({ host: n.host, port: n.port }) }));
  const seed = live[0] ?? raise('the cluster has no live node');
  return {
    url: `redis://${seed.host}:${seed.port}`,
    primaries,
    replicaPids: live.filter((n) => n.role === 'replica').map((n) => n.pid ?? NaN),
    stop: async () => {
      for (const p of primaries) p.client.disconnect();
      await cluster.stop();
    },
  };
}

/** Two topics of the auction schema (unique names, `partitions` each) filled with `events` demo events. */
async function preload(admin: Admin, kafka: Kafka, dir: string, events: number, partitions: number): Promise<{ schemaPath: string; topics: string[] }> {
  const suffix = uniqueName('bench-publish-cpu');
  const names = { 'listing-events': `listing-events-${suffix}`, 'bid-events': `bid-events-${suffix}` } as const;
  const schemaPath = join(dir, 'schema.graphql');
  writeFileSync(
    schemaPath,
    readFileSync(auctionSchemaPath, 'utf8').replace('"listing-events"', JSON.stringify(names['listing-events'])).replace('"bid-events"', JSON.stringify(names['bid-events'])),
  );
  const topics = Object.values(names);
  await createTopics(admin, topics.map((topic) => ({ topic, numPartitions: partitions })));
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const generator = createAuctionEventGenerator({ seed: 42, listings: 5_000 });
  for (let sent = 0; sent < events; sent += 2_000) {
    const batch = Array.from({ length: Math.min(2_000, events - sent) }, () => generator.next());
    await producer.sendBatch({
      acks: 1,
      topicMessages: topics.map((topic, i) => ({
        topic,
        messages: batch.filter((e) => (e.topic === 'listing-events') === (i === 0)).map((e) => ({ key: e.key, value: JSON.stringify(e.value) })),
      })),
    });
  }
  await producer.disconnect();
  return { schemaPath, topics };
}

async function publishesSoFar(target: Target, command: string): Promise<number> {
  let sum = 0;
  for (const { client } of target.primaries) sum += Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(await client.info('commandstats'))?.[1] ?? 0);
  return sum;
}

async function committedSoFar(admin: Admin, groupId: string, topics: string[]): Promise<number> {
  let sum = 0;
  for (const { partitions } of await admin.fetchOffsets({ groupId, topics })) for (const p of partitions) sum += Math.max(0, Number(p.offset));
  return sum;
}

function sample(target: Target, ingestPid: number | undefined, publishes: number): Sample {
  const machine = readMachineTicks();
  let primaries = 0;
  for (const p of target.primaries) primaries += cpuSecondsOf(p.pid);
  let replicas = 0;
  for (const pid of target.replicaPids) replicas += cpuSecondsOf(pid);
  return { t: performance.now(), publishes, ingest: cpuSecondsOf(ingestPid), primaries, replicas, busy: machine.busy, total: machine.total };
}

/** One ingest process over the preloaded topics with a fresh group, until every event is published and committed. */
async function runOnce(
  ctx: { target: Target; mode: Mode; admin: Admin; brokers: string[]; schemaPath: string; topics: string[]; events: number; env: Record<string, string> },
  variant: Variant,
  round: number,
): Promise<RunResult> {
  const { target, mode, admin, events } = ctx;
  const command = mode === 'cluster' ? 'spublish' : 'publish';
  for (const { client } of target.primaries) {
    // Every run re-reads the same offsets: without FLUSHALL its XADDs would be refused as already stored.
    await client.flushall();
    await client.config('RESETSTAT');
  }
  const groupId = uniqueName('bench-publish-cpu');
  const child = startNodeProcess(variant.name, [variant.main], {
    inheritEnv: false,
    tailChars: 4_000,
    env: {
      KAFKA_BROKERS: ctx.brokers.join(','),
      REDIS_URL: target.url,
      REDIS_MODE: mode,
      SCHEMA_PATH: ctx.schemaPath,
      KAFKA_GROUP_ID: groupId,
      LOG_LEVEL: 'warn',
      INGEST_HTTP_PORT: '0',
      ...ctx.env,
    },
  });
  const samples: Sample[] = [];
  try {
    const deadline = performance.now() + RUN_TIMEOUT_MS;
    for (;;) {
      const exit = child.exitInfo();
      if (exit !== undefined) throw new Error(`${variant.name} exited (${exit}): ${child.tail()}`);
      if (performance.now() > deadline) throw new Error(`${variant.name} did not publish ${events} events within ${RUN_TIMEOUT_MS} ms`);
      const s = sample(target, child.pid, await publishesSoFar(target, command));
      samples.push(s);
      if (s.publishes >= events && (await committedSoFar(admin, groupId, ctx.topics)) >= events) break;
      await new Promise((done) => setTimeout(done, SAMPLE_INTERVAL_MS));
    }
  } finally {
    // The app commits and leaves its group on SIGTERM: SIGKILL only if that hangs.
    await child.stop(30_000);
  }
  const first = samples.findIndex((s) => s.publishes > 0);
  const start = samples[Math.max(0, first - 1)] ?? raise('no samples');
  const end = samples.find((s) => s.publishes >= events) ?? raise('no end sample');
  const perEvent = (a: number, b: number): number => ((b - a) * 1e6) / events;
  return {
    variant: variant.name,
    round,
    eventsPerS: events / ((end.t - start.t) / 1_000),
    ingestUsPerEvent: perEvent(start.ingest, end.ingest),
    primariesUsPerEvent: perEvent(start.primaries, end.primaries),
    replicasUsPerEvent: perEvent(start.replicas, end.replicas),
    machineBusyPct: ((end.busy - start.busy) / (end.total - start.total)) * 100,
    publishes: await publishesSoFar(target, command),
  };
}

function printTable(results: RunResult[], variants: Variant[], events: number): void {
  const row = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  const fixed = (n: number, digits = 1): string => n.toFixed(digits);
  console.log(row(['variant', 'events/s (median)', 'ingest CPU µs/event', 'Redis primaries CPU µs/event', 'Redis replicas CPU µs/event', 'machine busy %', 'publishes per run']));
  console.log(row(['---', '--:', '--:', '--:', '--:', '--:', '--:']));
  for (const { name } of variants) {
    const runs = results.filter((r) => r.variant === name);
    const m = (pick: (r: RunResult) => number): number => median(runs.map(pick));
    const perRun = (pick: (r: RunResult) => number): string => `${fixed(m(pick))} (${runs.map((r) => fixed(pick(r))).join(' ')})`;
    console.log(
      row([
        name,
        Math.round(m((r) => r.eventsPerS)).toLocaleString('en-US'),
        perRun((r) => r.ingestUsPerEvent),
        perRun((r) => r.primariesUsPerEvent),
        perRun((r) => r.replicasUsPerEvent),
        fixed(m((r) => r.machineBusyPct), 0),
        runs.map((r) => (r.publishes === events ? String(r.publishes) : `${r.publishes} (≠ ${events})`)).join(' '),
      ]),
    );
  }
  // Paired per round against the first variant: the machine's load moves both runs of a round alike.
  const [baseline, ...others] = variants;
  for (const { name } of others) {
    const delta = (pick: (r: RunResult) => number): string => {
      const deltas = results
        .filter((r) => r.variant === name)
        .map((r) => pick(r) - pick(results.find((b) => b.variant === baseline?.name && b.round === r.round) ?? raise(`no baseline run in round ${r.round}`)));
      return `${median(deltas) >= 0 ? '+' : ''}${fixed(median(deltas))} (${deltas.map((d) => fixed(d)).join(' ')})`;
    };
    console.log(`${name} − ${baseline?.name ?? ''}, paired median (per round): ingest ${delta((r) => r.ingestUsPerEvent)} µs/event, Redis primaries ${delta((r) => r.primariesUsPerEvent)} µs/event, replicas ${delta((r) => r.replicasUsPerEvent)} µs/event`);
  }
}

async function main(): Promise<void> {
  const { values } = parseCli({
    options: {
      variant: { type: 'string', multiple: true, default: [] },
      mode: { type: 'string', default: 'cluster' },
      events: { type: 'string', default: '60000' },
      partitions: { type: 'string', default: '6' },
      repeat: { type: 'string', default: '3' },
      'wait-replicas': { type: 'string', default: '0' },
    },
  });
  const mode: Mode = values.mode === 'standalone' ? 'standalone' : values.mode === 'cluster' ? 'cluster' : raise(`--mode must be cluster or standalone, got ${values.mode}`);
  const [events, partitions, repeat] = [values.events, values.partitions, values.repeat].map(Number) as [number, number, number];
  const variants: Variant[] = values.variant.map((spec) => {
    const [name = '', dir = ''] = spec.split('=');
    if (name === '' || dir === '') raise(`--variant must be <label>=<apps/ingest dir>, got ${spec}`);
    return { name, main: join(resolve(dir), 'dist', 'main.js') };
  });
  variants.push({ name: 'this checkout', main: join(findRepoRoot(), 'apps', 'ingest', 'dist', 'main.js') });

  const dir = mkdtempSync(join(tmpdir(), 'wirestream-publish-cpu-'));
  const [broker, target] = await Promise.all([startKafka(), startTarget(mode)]);
  const kafka = new Kafka({ clientId: 'bench-publish-cpu', brokers: broker.brokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const { schemaPath, topics } = await preload(admin, kafka, dir, events, partitions);
    const ctx = { target, mode, admin, brokers: broker.brokers, schemaPath, topics, events, env: { INGEST_REDIS_WAIT_REPLICAS: values['wait-replicas'] } };
    console.log(`${mode}, ${events} events over ${topics.length} topics × ${partitions} partitions, ${repeat} rounds; warm-up run first`);
    await runOnce(ctx, variants[variants.length - 1] ?? raise('no variant'), 0);
    const results: RunResult[] = [];
    for (let round = 0; round < repeat; round++) {
      for (const variant of variants) {
        const result = await runOnce(ctx, variant, round + 1);
        console.log(`round ${round + 1}: ${JSON.stringify(result)}`);
        results.push(result);
      }
    }
    printTable(results, variants, events);
  } finally {
    await admin.disconnect();
    await target.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function raise(message: string): never {
  throw new Error(message);
}

await main();
