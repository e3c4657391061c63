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
 */
import WebSocket from 'ws';
import { waitFor } from '@wirestream/testkit';
import { markdownTable, median, readRssBytes, startGateway } from '@wirestream/bench-kit';
import { prepareEvents, publishEvents } from './publisher.js';
import { fmtBytes, fmtInt } from './report.js';
import type { RunContext } from './run-stack.js';
import type { OptionSpecs, Scenario } from './scenario.js';
import { fetchMemory, fetchStats, type MemoryUsage } from './servers.js';

type PausedOptions = Readonly<Record<'sockets' | 'keys' | 'events' | 'pauseMs' | 'rounds', number>>;

/** Events per second of both bursts, in ingest's batch form (chunks of 64). */
const RATE = 5_000;

const PAUSED_OPTIONS: OptionSpecs = {
  'paused-sockets': { arg: 'N', default: '20', quick: '4', help: 'paused conflating sockets (each also fills ~10 MB of kernel buffers)' },
  'paused-keys': { arg: 'N', default: '500', quick: '100', help: 'listings the events are spread over' },
  'paused-events': { arg: 'N', default: '50000', quick: '5000', help: `events of the warm-up burst and of the measured one, ${RATE}/s` },
  'paused-pause-s': { arg: 'S', default: '20', quick: '3', help: 'how long the sockets do not read' },
  'paused-rounds': { arg: 'N', default: '2', quick: '1', help: 'rounds of baseline then paused' },
};

export const pausedConflationScenario: Scenario = {
  name: 'paused-conflation',
  description: 'N conflating sockets that stop reading during a burst vs none, a fresh gateway per round: RSS and heap per paused socket (issue #36)',
  report: 'paused-conflation',
  options: PAUSED_OPTIONS,
  prepare(o) {
    const [sockets, keys, events, pauseS, rounds] = ['sockets', 'keys', 'events', 'pause-s', 'rounds'].map((name) => o.positiveInt(`paused-${name}`)) as [number, number, number, number, number];
    const options = { sockets, keys, events, pauseMs: pauseS * 1_000, rounds };
    return { events: 0, run: async ({ ctx }) => ({ markdown: await runPaused(ctx, options), svgs: [] }) };
  },
};

const QUERY = 'subscription { listingUpdated { listing_id event_id occurred_at listing { title current_price { amount_cents } } } }';

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

async function runRound(ctx: RunContext, o: PausedOptions, side: Round['side'], offsetBase: number): Promise<Round> {
  const { events: EVENTS, sockets: SOCKETS } = o;
  const server = await startGateway({ redisUrl: ctx.redisUrl, nodeArgs: ['--expose-gc'], env: { NODE_ENV: ctx.nodeEnv, ...ctx.gatewayEnv } });
  const memory = async (): Promise<MemoryUsage> => (await fetchMemory(server, true, 10_000)) as MemoryUsage;
  const corpus = prepareEvents(EVENTS, ctx.route, 'ws', o.keys);
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
    await publishEvents({ redis: ctx.redis, corpus, topic: ctx.route.topic, clock: ctx.clock, offsetBase, count: EVENTS, ratePerSecond: RATE, batch: 64 });
    const warm = latestOf(offsetBase);
    await until("every socket has the warm-up's latest events", () => reader.frames >= EVENTS && paused.every((c) => has(c, warm)), 180_000).catch(async (err: unknown) => {
      const behind = paused.filter((c) => !has(c, warm)).length;
      throw new Error(`${String(err)}: the reader has ${reader.frames} of ${EVENTS} (closed: ${String(reader.closed)}), ${behind} paused-to-be sockets lack a latest event; gateway stats ${JSON.stringify(await fetchStats(server))}`);
    });
    const framesBeforePause = paused.length === 0 ? 0 : median(paused.map((c) => c.frames));
    const before = await memory();
    const rawBefore = readRssBytes(server.pid) ?? 0;
    for (const c of paused) c.ws.pause();
    const pausedAt = Date.now();
    await publishEvents({ redis: ctx.redis, corpus, topic: ctx.route.topic, clock: ctx.clock, offsetBase: offsetBase + EVENTS, count: EVENTS, ratePerSecond: RATE, batch: 64 });
    await until('the reader got the burst', () => reader.frames >= 2 * EVENTS || reader.closed !== undefined, 120_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}: the reader has ${reader.frames} of ${2 * EVENTS} (closed: ${String(reader.closed)}); gateway stats ${JSON.stringify(await fetchStats(server))}`);
    });
    if (reader.closed !== undefined) throw new Error(`the plain reader was closed (${reader.closed}) after ${reader.frames} of ${2 * EVENTS} frames`);
    await new Promise((r) => setTimeout(r, Math.max(0, o.pauseMs - (Date.now() - pausedAt))));
    const after = await memory();
    const rawRssGrowth = (readRssBytes(server.pid) ?? 0) - rawBefore;
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
    await server.stop();
  }
}


/** Baseline then paused, `rounds` times, each a fresh gateway on the run's redis-server: the report section. */
async function runPaused(ctx: RunContext, o: PausedOptions): Promise<string> {
  const rounds: Round[] = [];
  for (let r = 0; r < o.rounds; r++) {
    for (const side of ['baseline', 'paused'] as const) {
      ctx.log(`round ${r + 1}/${o.rounds}: ${side} …`);
      const round = await runRound(ctx, o, side, (rounds.length + 1) * 1_000_000);
      rounds.push(round);
      ctx.log(`  RSS after GC ${fmtBytes(round.before.rss)} → ${fmtBytes(round.after.rss)}, heap ${fmtBytes(round.before.heapUsed)} → ${fmtBytes(round.after.heapUsed)}`);
    }
  }
  const growth = (side: Round['side'], of: (m: MemoryUsage) => number): number[] => rounds.filter((x) => x.side === side).map((x) => of(x.after) - of(x.before));
  const perSocket = (of: (m: MemoryUsage) => number): number => (median(growth('paused', of)) - median(growth('baseline', of))) / o.sockets;
  const pausedRounds = rounds.filter((x) => x.side === 'paused');
  const body = [
    `- ${fmtInt(o.events)} demo listing events over ${fmtInt(o.keys)} keys published at ${fmtInt(RATE)}/s in ingest's batch form while ${fmtInt(o.sockets)} sockets subscribed with \`extensions.conflate: true\` do not read for ${o.pauseMs / 1_000} s; a fresh gateway (default settings) per round; one plain reader in both sides`,
    '',
    `**Per paused socket, after GC: RSS ${fmtBytes(perSocket((m) => m.rss))}, V8 heap ${fmtBytes(perSocket((m) => m.heapUsed))}** (median growth of the paused rounds minus the baseline rounds, ÷ ${fmtInt(o.sockets)}); the issue's bound is 2 MB.`,
    `Paused sockets still open after the pause: ${pausedRounds.map((x) => `${x.open}/${o.sockets}`).join(', ')}; with every key's latest event after reading again: ${pausedRounds.map((x) => `${x.complete}/${o.sockets}`).join(', ')}; frames per paused socket from the measured burst, median: ${pausedRounds.map((x) => fmtInt(x.framesAfterResume)).join(', ')} (of ${fmtInt(o.events)} events it would get without conflation; what the kernel's socket buffers took before the gateway saw the lag arrives in full).`,
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
  ].join('\n');
  ctx.log(`\n${body}\n`);
  return `## Paused conflating sockets: what each costs the gateway\n\n${body}\n`;
}
