#!/usr/bin/env node
/**
 * Soak benchmark (issue 6): one gateway process, N sockets that check their own streams and keep
 * resuming (a few leave and come back with their positions every second), steady traffic written
 * as ingest writes it (history XADD + PUBLISH) for ≥ 10 minutes. Samples the gateway's memory after
 * forced GCs; reports the slope after warm-up (% per hour) and what remains once every client left.
 *
 *   node bench/soak/dist/main.js                     10 min, 2,000 sockets, 20 events/s
 *   node bench/soak/dist/main.js --minutes 1 --sockets 200 --no-write   smoke run
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { channelName, DEFAULT_CHANNEL_PREFIX, DEFAULT_HISTORY_PREFIX, historyAppendArgs, historyPartitionsKey, shardOf } from '@wirestream/wire';
import { findRepoRoot, startRedis, waitFor } from '@wirestream/testkit';
import { createKeyTransformer } from '@wirestream/transform';
import { commandLine, createEnvelopeWriter, loadAverageText, parseCli, parseEnvList, readRssBytes, startGateway } from '@wirestream/bench-kit';
import type { ClientsReport, FromClients, ToClients } from './clients.js';

const { values } = parseCli({
  options: {
    sockets: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '20' },
    minutes: { type: 'string', default: '10' },
    'warmup-minutes': { type: 'string', default: '2' },
    churn: { type: 'string', default: '5' },
    'gateway-env': { type: 'string', default: '' },
    report: { type: 'string', default: 'soak' },
    'no-write': { type: 'boolean', default: false },
  },
});
const SOCKETS = Number(values.sockets);
const RATE = Number(values.rate);
const MINUTES = Number(values.minutes);
const WARMUP_MS = Number(values['warmup-minutes']) * 60_000;
const CHURN = Number(values.churn);
const TOPIC = 'listing-events';
const SHARDS = 16;
const PARTITIONS = 3;
const HISTORY = '10000'; // MAXLEN ~ of each partition stream, ingest's default
const QUERIES = [
  'subscription { listingUpdated { listing_id event_type } }',
  'subscription { listingUpdated { event_id } }',
  'subscription Prices { listingUpdated { listing_id listing { current_price { amount_cents currency_code } } } }',
];

const root = findRepoRoot();
const log = (message: string): void => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`);

const GATEWAY_ENV = parseEnvList(values['gateway-env']);

interface Sample {
  readonly tMs: number;
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
}

async function memory(base: string): Promise<Omit<Sample, 'tMs'>> {
  const response = await fetch(`${base}/debug/memory?gc=1`);
  return (await response.json()) as Omit<Sample, 'tMs'>;
}

/**
 * Theil–Sen slope (median of pairwise slopes, y per ms) and mean of y. A forced-GC sample can
 * catch a burst in flight (a replay page, a batch of frames): the median ignores such outliers,
 * where least squares would read one as growth.
 */
function regression(samples: readonly Sample[], pick: (s: Sample) => number): { slopePerMs: number; mean: number } {
  const slopes: number[] = [];
  for (let i = 0; i < samples.length; i++) {
    for (let j = i + 1; j < samples.length; j++) {
      const a = samples[i] as Sample;
      const b = samples[j] as Sample;
      if (b.tMs !== a.tMs) slopes.push((pick(b) - pick(a)) / (b.tMs - a.tMs));
    }
  }
  slopes.sort((x, y) => x - y);
  const mean = samples.reduce((sum, s) => sum + pick(s), 0) / Math.max(1, samples.length);
  return { slopePerMs: slopes.length === 0 ? 0 : (slopes[Math.floor(slopes.length / 2)] as number), mean };
}

const mb = (bytes: number): string => (bytes / 1_048_576).toFixed(1);

function chart(samples: readonly Sample[], marks: readonly { tMs: number; label: string }[]): string {
  const width = 900;
  const height = 320;
  const pad = { left: 60, right: 20, top: 20, bottom: 40 };
  const maxT = Math.max(...samples.map((s) => s.tMs), 1);
  const maxY = Math.max(...samples.map((s) => s.rss)) * 1.1;
  const x = (t: number): number => pad.left + (t / maxT) * (width - pad.left - pad.right);
  const y = (v: number): number => height - pad.bottom - (v / maxY) * (height - pad.top - pad.bottom);
  const line = (pick: (s: Sample) => number, color: string): string =>
    `<polyline fill="none" stroke="${color}" stroke-width="2" points="${samples.map((s) => `${x(s.tMs).toFixed(1)},${y(pick(s)).toFixed(1)}`).join(' ')}"/>`;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${pad.left - 8}" y="${y(maxY * f) + 4}" text-anchor="end" font-size="11">${mb(maxY * f)} MB</text>`);
  const markLines = marks.map(
    (m) =>
      `<line x1="${x(m.tMs)}" x2="${x(m.tMs)}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#999" stroke-dasharray="4 3"/>` +
      `<text x="${x(m.tMs) + 3}" y="${pad.top + 10}" font-size="11">${m.label}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...ticks,
    ...markLines,
    line((s) => s.rss, '#d62728'),
    line((s) => s.heapUsed, '#1f77b4'),
    `<text x="${pad.left}" y="${height - 12}" font-size="12">gateway memory after forced GC over ${(maxT / 60_000).toFixed(1)} min: RSS (red), V8 heap used (blue)</text>`,
    `</svg>`,
  ].join('\n');
}

async function main(): Promise<void> {
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  const gateway = await startGateway({ redisUrl: redisServer.url, nodeArgs: ['--expose-gc'], inheritEnv: false, env: { NODE_ENV: 'production', ...GATEWAY_ENV } });
  const base = gateway.httpBase;
  const clients = fork(join(root, 'bench/soak/dist/clients.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // The gateway is the kit's to kill on exit; the clients are ours.
  process.on('exit', () => clients.kill('SIGKILL'));
  const fromClients = (type: FromClients['type']): Promise<FromClients> =>
    new Promise((resolve) => {
      const on = (m: FromClients): void => {
        if (m.type === type) {
          clients.off('message', on);
          resolve(m);
        }
      };
      clients.on('message', on);
    });
  const send = (m: ToClients): void => void clients.send(m);

  const pid = gateway.pid;
  const t0 = Date.now();
  const samples: Sample[] = [];
  const marks: { tMs: number; label: string }[] = [];
  const sample = async (): Promise<Sample> => {
    const m = await memory(base);
    const s = { tMs: Date.now() - t0, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal };
    samples.push(s);
    return s;
  };
  const idle = await sample();
  log(`gateway idle: RSS ${mb(idle.rss)} MB, heap ${mb(idle.heapUsed)} MB`);

  const ready = fromClients('ready');
  send({ type: 'start', start: { url: gateway.wsUrl, sockets: SOCKETS, queries: QUERIES } });
  await ready;
  await waitFor(async () => ((await (await fetch(`${base}/stats`)).json()) as { confirmedChannels: number }).confirmedChannels === SHARDS, { message: 'channels confirmed' });
  const subscribed = await sample();
  marks.push({ tMs: subscribed.tMs, label: `${SOCKETS} subscribed` });
  log(`${SOCKETS} sockets subscribed: RSS ${mb(subscribed.rss)} MB, heap ${mb(subscribed.heapUsed)} MB`);

  // Traffic as ingest writes it: history then publish, per partition consecutive offsets.
  const generator = createAuctionEventGenerator({ seed: 7, listings: 200 });
  const transformer = createKeyTransformer();
  const offsets = new Array<number>(PARTITIONS).fill(0);
  const writeEnvelope = createEnvelopeWriter(TOPIC);
  await redis.sadd(historyPartitionsKey(DEFAULT_HISTORY_PREFIX, TOPIC), ...Array.from({ length: PARTITIONS }, (_, p) => String(p)));
  let published = 0;
  let rawPeak = 0;
  const trafficStart = Date.now();
  const endAt = trafficStart + MINUTES * 60_000;
  marks.push({ tMs: trafficStart - t0, label: 'traffic' });
  marks.push({ tMs: trafficStart - t0 + WARMUP_MS, label: 'warm-up done' });
  let nextSample = Date.now() + 10_000;
  let nextChurn = Date.now() + 1_000;
  let nextLog = Date.now() + 60_000;
  let tick = Date.now();
  while (Date.now() < endAt) {
    const pipeline = redis.pipeline();
    for (let i = 0; i < RATE / 10; i++) {
      const event = generator.listingEvent();
      const partition = published % PARTITIONS;
      const offset = String(offsets[partition]);
      offsets[partition] = (offsets[partition] ?? 0) + 1;
      const channel = channelName(DEFAULT_CHANNEL_PREFIX, TOPIC, shardOf(event.key, SHARDS));
      const envelope = writeEnvelope(partition, offset, event.key, Date.now(), JSON.stringify(transformer.transform(event.value)));
      pipeline.call('xadd', historyAppendArgs(DEFAULT_HISTORY_PREFIX, TOPIC, partition, offset, channel, envelope, HISTORY));
      pipeline.publish(channel, envelope);
      published++;
    }
    await pipeline.exec();
    rawPeak = Math.max(rawPeak, readRssBytes(pid) ?? 0);
    if (Date.now() >= nextChurn) {
      send({ type: 'churn', count: CHURN });
      nextChurn += 1_000;
    }
    if (Date.now() >= nextSample) {
      await sample();
      nextSample += 10_000;
    }
    if (Date.now() >= nextLog) {
      const last = samples[samples.length - 1] as Sample;
      log(`${((Date.now() - trafficStart) / 60_000).toFixed(0)} min: ${published} events, RSS ${mb(last.rss)} MB, heap ${mb(last.heapUsed)} MB`);
      nextLog += 60_000;
    }
    tick += 100;
    await sleep(Math.max(0, tick - Date.now()));
  }
  marks.push({ tMs: Date.now() - t0, label: 'traffic ends' });
  const askReport = async (): Promise<ClientsReport> => {
    const reportPromise = fromClients('report');
    send({ type: 'report' });
    return ((await reportPromise) as { report: ClientsReport }).report;
  };
  // Let the tail arrive: every client should end with every event (resumes included).
  let report = await askReport();
  for (let waited = 0; waited < 120_000 && report.delivered < SOCKETS * published; waited += 2_000) {
    await sleep(2_000);
    report = await askReport();
  }
  const stats = (await (await fetch(`${base}/stats`)).json()) as Record<string, number>;
  const end = await sample();

  const closed = fromClients('closed');
  send({ type: 'close' });
  await closed;
  await waitFor(async () => ((await (await fetch(`${base}/stats`)).json()) as { connections: number }).connections === 0, { timeoutMs: 30_000, message: 'all sockets gone' });
  await sleep(2_000);
  const after = await sample();
  marks.push({ tMs: after.tMs, label: 'clients left' });

  const steady = samples.filter((s) => s.tMs >= trafficStart - t0 + WARMUP_MS && s.tMs <= end.tMs);
  const heap = regression(steady, (s) => s.heapUsed);
  const rss = regression(steady, (s) => s.rss);
  const perHour = (r: { slopePerMs: number; mean: number }): string => `${((r.slopePerMs * 3_600_000) / r.mean * 100).toFixed(2)} %/h (${mb(r.slopePerMs * 3_600_000)} MB/h)`;
  const expectedPerClient = published; // every client subscribed before traffic, unfiltered
  const lines = [
    '# Soak benchmark',
    '',
    `- date: ${new Date().toISOString()}; node ${process.version}, ${os.cpus().length} cores, load average at end ${loadAverageText()} (shared machine)`,
    `- command: \`${commandLine()}\``,
    `- slopes: Theil–Sen (median of pairwise slopes) over the forced-GC samples every 10 s after warm-up, in % of the mean per hour`,
    `- one gateway process (--expose-gc, NODE_ENV=production), ${SOCKETS} sockets over ${QUERIES.length} distinct operations, ${RATE} events/s (demo listing events, ~2 KB envelopes, ${PARTITIONS} partitions) written as ingest does (XADD history + PUBLISH), ${MINUTES} min of traffic; every second ${CHURN} clients leave and resubscribe with their last positions (resume through history)`,
    '',
    '| | value |',
    '| --- | --- |',
    `| gateway idle (after GC) | RSS ${mb(idle.rss)} MB, heap ${mb(idle.heapUsed)} MB |`,
    `| ${SOCKETS} subscribed (after GC) | RSS ${mb(subscribed.rss)} MB, heap ${mb(subscribed.heapUsed)} MB |`,
    `| end of traffic (after GC) | RSS ${mb(end.rss)} MB, heap ${mb(end.heapUsed)} MB; raw RSS peak ${mb(rawPeak)} MB |`,
    `| **heap slope after ${WARMUP_MS / 60_000} min warm-up** | **${perHour(heap)}** (${steady.length} samples, target < 1 %/h) |`,
    `| **RSS slope after warm-up** | **${perHour(rss)}** |`,
    `| V8 heap total (committed) slope after warm-up | ${perHour(regression(steady, (s) => s.heapTotal))} |`,
    `| RSS outside the V8 heap (RSS − heap total), first / last steady sample | ${mb((steady[0]?.rss ?? 0) - (steady[0]?.heapTotal ?? 0))} / ${mb(end.rss - end.heapTotal)} MB |`,
    `| all clients left (after GC) | RSS ${mb(after.rss)} MB (${mb(after.rss - idle.rss)} MB above idle), heap ${mb(after.heapUsed)} MB (${mb(after.heapUsed - idle.heapUsed)} MB above idle) |`,
    `| events published | ${published} |`,
    `| deliveries (clients) | ${report.delivered} (${SOCKETS} × ${expectedPerClient} = ${SOCKETS * expectedPerClient} expected) |`,
    `| duplicates / gaps seen by clients | ${report.duplicates} / ${report.gaps} |`,
    `| resumes (recovered / not) | ${report.resumes} (${report.recovered} / ${report.notRecovered}) |`,
    `| closes by the server (code: count), each followed by a resume | ${Object.entries(report.serverCloses).map(([code, n]) => `${code}: ${n}`).join(', ') || 'none'} |`,
    `| gateway: events in, replayed from history, duplicates dropped | ${stats['eventsIn']}, ${stats['replayed']}, ${stats['duplicates']} |`,
    `| client process RSS | ${mb(report.rssBytes)} MB |`,
    '',
    '![gateway memory over the soak](soak.svg)',
    '',
  ];
  console.log(lines.join('\n'));
  if (!values['no-write']) {
    const name = values.report;
    writeFileSync(join(root, `bench/results/${name}.md`), lines.join('\n').replace('(soak.svg)', `(${name}.svg)`));
    writeFileSync(join(root, `bench/results/${name}.svg`), chart(samples, marks));
    log(`wrote bench/results/${name}.md and ${name}.svg`);
  }
  redis.disconnect();
  await gateway.stop();
  await redisServer.stop();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
