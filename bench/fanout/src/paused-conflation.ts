#!/usr/bin/env node
/**
 * What a paused conflating socket costs the gateway (issue #36: "a client that stops reading for 20 s
 * while 50,000 events over 500 keys are published, with conflation on: the socket stays open, RSS
 * growth ≤ 2 MB for that socket"). One socket's share of a process's RSS is below the allocator's
 * noise (the e2e saw 5–25 MB between two gateways given the same burst), so this holds N sockets
 * paused at once and divides: per round, a fresh gateway process with one plain reader (it says
 * when the burst was delivered) and either N paused conflating sockets (`paused`) or none
 * (`baseline`), the same events published while they do not read, RSS and heap after two forced GCs
 * before and after (each after a warm-up burst everyone reads). Per socket: (paused growth − baseline growth) ÷ N. Then the paused sockets read
 * again and each must end with every key's latest event, and be open. Not more sockets by default:
 * each paused one also fills ~10 MB of kernel socket buffers on loopback before the gateway sees any
 * lag, and a hundred of them starve the machine's TCP memory (the plain reader then stalls too).
 *
 *   node bench/fanout/dist/paused-conflation.js [--sockets 20] [--keys 500] [--events 50000]
 *        [--pause-s 20] [--rounds 2] [--rate 5000] [--report paused-conflation]
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createBenchClock } from '@wirestream/loadgen';
import { startRedis, waitFor } from '@wirestream/testkit';
import { loadAverageText, markdownTable, median, parseCli, positiveInts, readRssBytes } from '@wirestream/bench-kit';
import { prepareEvents, publishEvents } from './publisher.js';
import { fmtBytes, fmtInt } from './report.js';
import { fetchMemory, fetchStats, startServer, type MemoryUsage } from './servers.js';

const { values } = parseCli({
  options: {
    sockets: { type: 'string', default: '20' },
    keys: { type: 'string', default: '500' },
    events: { type: 'string', default: '50000' },
    'pause-s': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '5000' },
    report: { type: 'string', default: 'paused-conflation' },
  },
});
const { sockets: SOCKETS, keys: KEYS, events: EVENTS, 'pause-s': PAUSE_S, rounds: ROUNDS, rate: RATE } = positiveInts(values, ['sockets', 'keys', 'events', 'pause-s', 'rounds', 'rate']);
const PAUSE_MS = PAUSE_S * 1_000;
const REPORT = String(values.report);
if (!/^[\w.-]+$/.test(REPORT)) throw new RangeError(`--report must be a plain file name, got "${REPORT}"`);

const QUERY = 'subscription { listingUpdated { listing_id event_id occurred_at listing { title current_price { amount_cents } } } }';
const found = loadWirestreamSchema(auctionSchemaPath).routesForTopic('listing-events')[0];
if (!found) throw new Error('the example schema has no listing-events route');
const route = found;

/** A graphql-transport-ws client that keeps the latest offset per listing it received. */
interface Client {
  readonly ws: WebSocket;
  readonly latest: Map<string, number>;
  frames: number;
  closed: number | undefined;
}

function subscribe(url: string, conflate: boolean): Client {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  const client: Client = { ws, latest: new Map(), frames: 0, closed: undefined };
  ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init' })));
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as {
      type: string;
      payload?: { data?: { listingUpdated?: { listing_id: string } }; extensions?: { position?: { offset: string } } };
    };
    if (message.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY, extensions: { conflate } } }));
    const event = message.payload?.data?.listingUpdated;
    if (message.type === 'next' && event !== undefined) {
      client.frames++;
      client.latest.set(event.listing_id, Number(message.payload?.extensions?.position?.offset));
    }
  });
  ws.on('close', (code) => (client.closed = code));
  return client;
}

const until = (message: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<unknown> => waitFor(check, { message, timeoutMs });

interface Round {
  readonly side: 'paused' | 'baseline';
  readonly before: MemoryUsage;
  readonly after: MemoryUsage;
  readonly rawRssGrowth: number;
  /** Paused side: sockets still open after the pause, and those that then got every key's latest event. */
  readonly open: number;
  readonly complete: number;
  readonly framesAfterResume: number;
}

async function runRound(side: Round['side'], redisUrl: string, redis: Redis, offsetBase: number): Promise<Round> {
  const server = await startServer('ours', redisUrl, [], { NODE_ENV: 'production' });
  const corpus = prepareEvents(EVENTS, route, 'ws', KEYS);
  // The offset of each key's last event in a burst from `base` (the publisher's offset is base + i).
  const latestOf = (base: number): Map<string, number> => new Map(corpus.events.slice(0, EVENTS).map((e, i) => [e.key, base + i]));
  const has = (c: Client, latest: ReadonlyMap<string, number>): boolean => [...latest].every(([key, offset]) => c.latest.get(key) === offset);
  try {
    const reader = subscribe(server.wsUrl, false);
    const paused = side === 'paused' ? Array.from({ length: SOCKETS }, () => subscribe(server.wsUrl, true)) : [];
    const wanted = 1 + paused.length;
    await until('every socket subscribed', async () => (await fetchStats(server))?.['subscriptions'] === wanted, 30_000);
    await new Promise((r) => setTimeout(r, 500)); // every shard's SUBSCRIBE confirmed
    // A warm-up burst, everyone reading: V8 sizes its heap and the allocator its arenas for this
    // traffic here, not in the measured window (else that growth, tens of MB, swamps the sockets').
    await publishEvents({ redis, corpus, topic: route.topic, clock: createBenchClock(), offsetBase, count: EVENTS, ratePerSecond: RATE, batch: 64 });
    const warm = latestOf(offsetBase);
    await until("every socket has the warm-up's latest events", () => reader.frames >= EVENTS && paused.every((c) => has(c, warm)), 180_000).catch(async (err: unknown) => {
      const behind = paused.filter((c) => !has(c, warm)).length;
      throw new Error(`${String(err)}: the reader has ${reader.frames} of ${EVENTS} (closed: ${String(reader.closed)}), ${behind} paused-to-be sockets lack a latest event; gateway stats ${JSON.stringify(await fetchStats(server))}`);
    });
    const framesBeforePause = paused.length === 0 ? 0 : median(paused.map((c) => c.frames));
    const before = (await fetchMemory(server, true, 10_000)) as MemoryUsage;
    const rawBefore = readRssBytes(server.process.pid) ?? 0;
    for (const c of paused) c.ws.pause();
    const pausedAt = Date.now();
    await publishEvents({ redis, corpus, topic: route.topic, clock: createBenchClock(), offsetBase: offsetBase + EVENTS, count: EVENTS, ratePerSecond: RATE, batch: 64 });
    await until('the reader got the burst', () => reader.frames >= 2 * EVENTS || reader.closed !== undefined, 120_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}: the reader has ${reader.frames} of ${2 * EVENTS} (closed: ${String(reader.closed)}); gateway stats ${JSON.stringify(await fetchStats(server))}`);
    });
    if (reader.closed !== undefined) throw new Error(`the plain reader was closed (${reader.closed}) after ${reader.frames} of ${2 * EVENTS} frames`);
    await new Promise((r) => setTimeout(r, Math.max(0, PAUSE_MS - (Date.now() - pausedAt))));
    const after = (await fetchMemory(server, true, 10_000)) as MemoryUsage;
    const rawRssGrowth = (readRssBytes(server.process.pid) ?? 0) - rawBefore;
    const open = paused.filter((c) => c.closed === undefined).length;
    for (const c of paused) c.ws.resume();
    const measured = latestOf(offsetBase + EVENTS);
    const done = (c: Client): boolean => has(c, measured);
    await until("every paused socket has every key's latest event", () => paused.every((c) => c.closed !== undefined || done(c)), 120_000).catch(() => undefined);
    const complete = paused.filter((c) => c.closed === undefined && done(c)).length;
    const framesAfterResume = paused.length === 0 ? 0 : median(paused.map((c) => c.frames)) - framesBeforePause;
    for (const c of [reader, ...paused]) c.ws.close();
    return { side, before, after, rawRssGrowth, open, complete, framesAfterResume };
  } finally {
    await server.process.stop();
  }
}

const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
const rounds: Round[] = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of ['baseline', 'paused'] as const) {
      console.log(`round ${r + 1}/${ROUNDS}: ${side} …`);
      const round = await runRound(side, redisServer.url, redis, (rounds.length + 1) * 1_000_000);
      rounds.push(round);
      console.log(`  RSS after GC ${fmtBytes(round.before.rss)} → ${fmtBytes(round.after.rss)}, heap ${fmtBytes(round.before.heapUsed)} → ${fmtBytes(round.after.heapUsed)}`);
    }
  }
} finally {
  redis.disconnect();
  await redisServer.stop();
}

const growth = (side: Round['side'], of: (m: MemoryUsage) => number): number[] => rounds.filter((x) => x.side === side).map((x) => of(x.after) - of(x.before));
const perSocket = (of: (m: MemoryUsage) => number): number => (median(growth('paused', of)) - median(growth('baseline', of))) / SOCKETS;
const pausedRounds = rounds.filter((x) => x.side === 'paused');
const lines = [
  `# Paused conflating sockets: what each costs the gateway`,
  '',
  `- date ${new Date().toISOString()}; node ${process.version}, ${os.cpus().length} cores; load average ${loadAverageText()} at the end (a shared machine: other tenants' work lands in the RSS of neither side)`,
  `- command: \`node bench/fanout/dist/paused-conflation.js --sockets ${SOCKETS} --keys ${KEYS} --events ${EVENTS} --pause-s ${PAUSE_MS / 1_000} --rounds ${ROUNDS} --rate ${RATE}\``,
  `- ${fmtInt(EVENTS)} demo listing events over ${fmtInt(KEYS)} keys published at ${fmtInt(RATE)}/s in ingest's batch form while ${fmtInt(SOCKETS)} sockets subscribed with \`extensions.conflate: true\` do not read for ${PAUSE_MS / 1_000} s; a fresh gateway (default settings) per round; one plain reader in both sides`,
  '',
  `**Per paused socket, after GC: RSS ${fmtBytes(perSocket((m) => m.rss))}, V8 heap ${fmtBytes(perSocket((m) => m.heapUsed))}** (median growth of the paused rounds minus the baseline rounds, ÷ ${fmtInt(SOCKETS)}); the issue's bound is 2 MB.`,
  `Paused sockets still open after the pause: ${pausedRounds.map((x) => `${x.open}/${SOCKETS}`).join(', ')}; with every key's latest event after reading again: ${pausedRounds.map((x) => `${x.complete}/${SOCKETS}`).join(', ')}; frames per paused socket from the measured burst, median: ${pausedRounds.map((x) => fmtInt(x.framesAfterResume)).join(', ')} (of ${fmtInt(EVENTS)} events it would get without conflation; what the kernel's socket buffers took before the gateway saw the lag arrives in full).`,
  '',
  markdownTable([
    ['round', 'side', 'RSS before → after (GC)', 'RSS growth', 'raw RSS growth', 'heap before → after (GC)', 'heap growth'],
    ...rounds.map((x, i) => [
      String(Math.floor(i / 2) + 1),
      x.side,
      `${fmtBytes(x.before.rss)} → ${fmtBytes(x.after.rss)}`,
      fmtBytes(x.after.rss - x.before.rss),
      fmtBytes(x.rawRssGrowth),
      `${fmtBytes(x.before.heapUsed)} → ${fmtBytes(x.after.heapUsed)}`,
      fmtBytes(x.after.heapUsed - x.before.heapUsed),
    ]),
  ]),
  '',
];
const text = lines.join('\n');
console.log(`\n${text}`);
writeFileSync(new URL(`../../results/${REPORT}.md`, import.meta.url), text);
