/**
 * A 10,000-key snapshot to one subscriber: time from `subscribe` to the snapshot's end frame,
 * bytes, and the gateway's memory, next to a baseline in the same run: the same 10,000 events
 * replayed to one subscriber by resume from history (`extensions.resume` with no position: all of
 * history). The built gateway runs as its own process on the run's redis-server, written as ingest
 * writes it (per chunk of 500: the XADDs, then SNAPSHOT_APPLY_SCRIPT). Rounds alternate.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import WebSocket from 'ws';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { auctionSchemaPath } from '@wirestream/schema';
import {
  channelName,
  createEnvelopeHeadEncoder,
  historyAppendArgs,
  historyEntryId,
  historyEpochKey,
  historyPartitionsKey,
  historyStreamKey,
  shardOf,
  snapshotHashKey,
  SNAPSHOT_APPLY_SCRIPT,
  SNAPSHOT_TOP_SUFFIX,
} from '@wirestream/wire';
import { createKeyTransformer } from '@wirestream/transform';
import { markdownTable, median, readRssBytes } from '@wirestream/bench-kit';
import { fmtBytes, fmtMs, section } from './report.js';
import type { RunContext } from './run-stack.js';
import { textSection, type Scenario } from './scenario.js';
import { fetchMemory, startServer, type ServerHandle } from './servers.js';

const TOPIC = 'listing-events';
const PREFIX = 'wsh'; // the gateway's default REDIS_HISTORY_PREFIX
const QUERY = `subscription { listingUpdated { ${FULL_SELECTION} } }`;

interface SnapshotOptions {
  readonly keys: number;
  readonly rounds: number;
  readonly partitions: number;
}

type Mode = 'snapshot' | 'resume';
interface Round {
  readonly mode: Mode;
  /** subscribe sent → the last frame of the initial values (snapshot: its end frame; resume: the keys-th event). */
  readonly ms: number;
  readonly frames: number;
  readonly bytes: number;
  /** Peak gateway RSS during the round minus its RSS before it. */
  readonly rssPeakDelta: number;
  /** Gateway heap after the round (forced GC), and its peak (no GC) while the round ran. */
  readonly heapAfter: number;
  readonly heapPeak: number;
}

/** Writes `keys` listings (one event each, distinct keys) as ingest would, in chunks of 500 per partition. */
async function fill(redis: Redis, keys: number, partitions: number): Promise<void> {
  const generator = createAuctionEventGenerator({ seed: 7, listings: 100 });
  const transformer = createKeyTransformer();
  const head = createEnvelopeHeadEncoder(TOPIC);
  const next = new Array<number>(partitions).fill(0);
  const chunks = new Map<number, { offset: string; key: string; envelope: string }[]>();
  const flush = async (partition: number): Promise<void> => {
    const chunk = chunks.get(partition) ?? [];
    if (chunk.length === 0) return;
    const multi = redis.multi();
    for (const e of chunk) multi.call('XADD', ...historyAppendArgs(PREFIX, TOPIC, partition, e.offset, channelName('ws', TOPIC, shardOf(e.key, 16)), e.envelope));
    multi.sadd(historyPartitionsKey(PREFIX, TOPIC), String(partition));
    const hash = snapshotHashKey(PREFIX, TOPIC, partition);
    const argv = chunk.flatMap((e) => [e.offset, e.key, e.envelope]);
    multi.eval(SNAPSHOT_APPLY_SCRIPT, 3, hash, hash + SNAPSHOT_TOP_SUFFIX, historyStreamKey(PREFIX, TOPIC, partition), historyEntryId((chunk.at(-1) as { offset: string }).offset), ...argv);
    await multi.exec();
    chunks.set(partition, []);
  };
  for (let i = 0; i < keys; i++) {
    const key = `lst-${i}`;
    const partition = i % partitions;
    const payload = transformer.transform<Record<string, unknown>>(generator.listingEvent().value);
    payload['listing_id'] = key;
    const offset = String(next[partition]);
    next[partition] = (next[partition] as number) + 1;
    const list = chunks.get(partition) ?? [];
    list.push({ offset, key, envelope: head(partition, offset, key, Date.now()) + JSON.stringify(payload) + '}' });
    chunks.set(partition, list);
    if (list.length >= 500) await flush(partition);
  }
  for (let p = 0; p < partitions; p++) await flush(p);
}

/** One subscriber: connects, subscribes, counts frames until the initial values are in; closes. */
async function runRound(server: ServerHandle, mode: Mode, epoch: string, keys: number): Promise<Round> {
  const ws = new WebSocket(server.wsUrl, 'graphql-transport-ws');
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  await new Promise<void>((resolve) => ws.once('message', () => resolve())); // connection_ack
  await fetchMemory(server, true, 10_000);
  const rssBefore = readRssBytes(server.process.pid) ?? 0;
  let rssPeak = rssBefore;
  let heapPeak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      rssPeak = Math.max(rssPeak, readRssBytes(server.process.pid) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const heapSampler = setInterval(() => void fetchMemory(server, false, 1_000).then((m) => (heapPeak = Math.max(heapPeak, m?.heapUsed ?? 0))), 20);
  let frames = 0;
  let bytes = 0;
  const startedAt = performance.now();
  const done = new Promise<number>((resolve) => {
    ws.on('message', (data: Buffer) => {
      bytes += data.length;
      const text = data.toString('utf8');
      if (text.includes('"snapshot":{"keys"')) return resolve(performance.now() - startedAt);
      frames++;
      if (mode === 'resume' && text.includes('"position"') && frames - 1 >= keys) resolve(performance.now() - startedAt);
    });
  });
  const extensions = mode === 'snapshot' ? { snapshot: true } : { resume: { epoch, positions: {} } };
  ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY, extensions } }));
  const ms = await done;
  sampling = false;
  clearInterval(heapSampler);
  await sampler;
  ws.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const after = await fetchMemory(server, true, 10_000);
  // resume: the recovery signal is one frame more than the events.
  return { mode, ms, frames: mode === 'resume' ? frames - 1 : frames, bytes, rssPeakDelta: rssPeak - rssBefore, heapAfter: after?.heapUsed ?? NaN, heapPeak };
}


const HOW_TO_READ =
  'The topic `listing-events` (`@topic(snapshot: true)`) is written as ingest writes it (chunks of 500 per partition: the XADDs, ' +
  'then `SNAPSHOT_APPLY_SCRIPT`): distinct listings, one demo listing event each (~2 KB of JSON). One raw graphql-transport-ws ' +
  'client subscribes with the full selection. **Baseline, same run**: the same subscription resumed with `extensions.resume` and ' +
  'no position, i.e. the same events replayed from history (the recovery frame is not counted). The two alternate (after one ' +
  "warm-up pair); time is from the `subscribe` frame to the snapshot's end frame (resume: to its last event); memory is the " +
  "gateway process's (RSS from /proc every 5 ms, heap from `/debug/memory` every 20 ms; \"after\" with two forced GCs).";

/** The auction schema with the listing topic as a snapshot topic, in a temporary directory. */
function writeSnapshotSchema(dir: string): string {
  const schemaPath = join(dir, 'schema.graphql');
  writeFileSync(
    schemaPath,
    readFileSync(auctionSchemaPath, 'utf8')
      .replace('keyFormat: TopicKeyFormat = STRING)', 'keyFormat: TopicKeyFormat = STRING, snapshot: Boolean = false)')
      .replace('@topic(name: "listing-events", key: "listing_id")', '@topic(name: "listing-events", key: "listing_id", snapshot: true)'),
  );
  return schemaPath;
}

function snapshotTable(rounds: readonly Round[], keys: number): string {
  const row = (mode: Mode): string[] => {
    const mine = rounds.filter((x) => x.mode === mode);
    return [
      mode === 'snapshot' ? `snapshot (\`extensions.snapshot\`, ${keys.toLocaleString('en-US')} keys)` : `baseline: resume replay of the same ${keys.toLocaleString('en-US')} events from history`,
      fmtMs(median(mine.map((x) => x.ms))),
      `${fmtMs(Math.min(...mine.map((x) => x.ms)))} – ${fmtMs(Math.max(...mine.map((x) => x.ms)))}`,
      fmtBytes(median(mine.map((x) => x.bytes))),
      fmtBytes(median(mine.map((x) => x.rssPeakDelta))),
      fmtBytes(median(mine.map((x) => x.heapPeak))),
      fmtBytes(median(mine.map((x) => x.heapAfter))),
    ];
  };
  const ratio = median(rounds.filter((x) => x.mode === 'snapshot').map((x) => x.ms)) / median(rounds.filter((x) => x.mode === 'resume').map((x) => x.ms));
  return [
    markdownTable([['run', 'to last initial frame (median)', 'range', 'bytes to client', 'gateway RSS peak − before (median)', 'gateway heap peak (median)', 'heap after, GC (median)'], row('snapshot'), row('resume')]),
    '',
    `snapshot / resume time: ${ratio.toFixed(2)}×`,
  ].join('\n');
}

async function snapshotSection(ctx: RunContext, o: SnapshotOptions): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'wirestream-snapshot-bench-'));
  let server: ServerHandle | undefined;
  // The run's redis-server: start from an empty one, and leave it empty for the scenarios after this one.
  await ctx.redis.flushall();
  try {
    await fill(ctx.redis, o.keys, o.partitions);
    const gatewayEnv = { ...ctx.gatewayEnv, GATEWAY_SNAPSHOT_MAX_KEYS: String(o.keys) };
    server = await startServer('ours', ctx.redisUrl, [], { SCHEMA_PATH: writeSnapshotSchema(dir), NODE_ENV: ctx.nodeEnv }, gatewayEnv);
    const epoch = (await ctx.redis.get(historyEpochKey(PREFIX))) ?? '';
    const rounds: Round[] = [];
    for (let r = 0; r < o.rounds + 1; r++) {
      // The first pair warms up (JIT, document cache) and is not counted.
      for (const mode of (r % 2 === 0 ? ['snapshot', 'resume'] : ['resume', 'snapshot']) as Mode[]) {
        const round = await runRound(server, mode, epoch, o.keys);
        if (round.frames !== o.keys) throw new Error(`${mode}: ${round.frames} frames, expected ${o.keys}`);
        if (r > 0) rounds.push(round);
      }
    }
    const title = `Snapshot of ${o.keys.toLocaleString('en-US')} keys over ${o.partitions} partitions to one subscriber, ${o.rounds} rounds of each`;
    const body = `${HOW_TO_READ}\n\n${snapshotTable(rounds, o.keys)}`;
    return section(ctx.log, title, body);
  } finally {
    await server?.process.stop();
    await ctx.redis.flushall();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const snapshotScenario: Scenario = {
  name: 'snapshot',
  description: "opt-in: a snapshot of K keys to one subscriber (extensions.snapshot) against the same K events replayed by resume from history, rounds alternating",
  report: 'snapshot',
  options: {
    'snapshot-keys': { arg: 'K', default: '10000', quick: '1000', help: 'distinct keys (one event each)' },
    'snapshot-rounds': { arg: 'R', default: '5', quick: '1', help: 'rounds of each, after one warm-up pair' },
    'snapshot-partitions': { arg: 'P', default: '3', help: 'partitions of the topic' },
  },
  prepare(options) {
    const o: SnapshotOptions = {
      keys: options.positiveInt('snapshot-keys'),
      rounds: options.positiveInt('snapshot-rounds'),
      partitions: options.positiveInt('snapshot-partitions'),
    };
    return textSection(0, (env) => snapshotSection(env.ctx, o));
  },
};
