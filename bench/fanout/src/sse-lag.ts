/**
 * SSE streams that lag (issue 18, decision 0030): N raw SSE streams stop reading while E events go
 * out back-to-back, then read again; the gateway's VmRSS before the burst (after forced GCs), at
 * its peak, and every second for S s after every stream got every event — for the --base-gateway
 * build and this checkout's, one after the other in one run. The saturation scenario's load client
 * reads as fast as the gateway writes, so its SSE streams never lag: this one makes them.
 *
 *   flock /tmp/wirestream-bench.lock node bench/fanout/dist/sse-lag.js --base-gateway DIR [--streams 200] [--events 1500] [--settle-s 20]
 */
import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { FULL_SELECTION, createBenchClock } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { startRedis, waitFor } from '@wirestream/testkit';
import { loadAverageText, markdownTable, parseCli, readRssBytes } from '@wirestream/bench-kit';
import { prepareEvents, publishEvents } from './publisher.js';
import { fmtInt } from './report.js';
import { fetchMemory, fetchStats, startServer, useBaseGateway, type StackName } from './servers.js';

const { values } = parseCli({
  options: {
    'base-gateway': { type: 'string' },
    streams: { type: 'string', default: '200' },
    events: { type: 'string', default: '1500' },
    'settle-s': { type: 'string', default: '20' },
  },
});
if (values['base-gateway'] === undefined) throw new RangeError('--base-gateway <checkout with apps/gateway built> is required: the run measures base and change');
useBaseGateway(values['base-gateway']);
const streams = Number(values.streams);
const events = Number(values.events);
const settleS = Number(values['settle-s']);
const QUERY = `subscription { listingUpdated { ${FULL_SELECTION} } }`;
const NEXT = 'event: next\n';
const MB = 1_048_576;

/** A POST stream read by hand: counts `next` events; `pause()` stops reading (the kernel's buffers fill). */
interface RawStream {
  readonly socket: Socket;
  nexts: number;
}

function openStream(port: number): RawStream {
  const body = JSON.stringify({ query: QUERY });
  const socket = connect(port, '127.0.0.1');
  const stream: RawStream = { socket, nexts: 0 };
  let carry = '';
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    const all = carry + text;
    for (let at = all.indexOf(NEXT); at >= 0; at = all.indexOf(NEXT, at + NEXT.length)) stream.nexts++;
    carry = all.slice(-(NEXT.length - 1));
  });
  socket.on('error', () => {});
  socket.write(`POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return stream;
}

interface Row {
  readonly stack: StackName;
  readonly before: number;
  readonly peak: number;
  readonly after: number[];
  readonly afterGc: number;
  readonly delivered: number;
  readonly catchUpMs: number;
}

async function measure(stack: StackName, redisUrl: string, redis: Redis): Promise<Row> {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareEvents(events, route, 'ws', 50);
  // A stream that lags is not a slow consumer here: the limit is far above its backlog.
  const server = await startServer(stack, redisUrl, [], { NODE_ENV: 'production' }, { GATEWAY_MAX_BACKPRESSURE_BYTES: String(256 * MB) });
  const pid = server.process.pid;
  const all = Array.from({ length: streams }, () => openStream(server.port));
  await waitFor(async () => (await fetchStats(server))?.['subscriptions'] === streams, { message: `${streams} SSE streams subscribed`, timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 1_000));
  await fetchMemory(server, true, 10_000);
  const before = readRssBytes(pid) ?? 0;
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, readRssBytes(pid) ?? 0)), 100);
  for (const s of all) s.socket.pause();
  await publishEvents({ redis, corpus, topic: route.topic, clock: createBenchClock(), offsetBase: 0, count: events, ratePerSecond: 0 });
  await new Promise((r) => setTimeout(r, 3_000)); // the gateway writes what it can; the rest waits (uWS or queue)
  const resumed = Date.now();
  for (const s of all) s.socket.resume();
  await waitFor(() => all.every((s) => s.nexts >= events), { message: `every stream got ${events} events`, timeoutMs: 180_000 });
  const catchUpMs = Date.now() - resumed;
  const after: number[] = [];
  for (let i = 0; i < settleS; i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    after.push(readRssBytes(pid) ?? 0);
  }
  clearInterval(sample);
  await fetchMemory(server, true, 10_000);
  const afterGc = readRssBytes(pid) ?? 0;
  const delivered = all.reduce((n, s) => n + Math.min(s.nexts, events), 0);
  for (const s of all) s.socket.destroy();
  await server.process.stop();
  return { stack, before, peak, after, afterGc, delivered, catchUpMs };
}

const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
const loadStart = loadAverageText();
const started = new Date();
const rows: Row[] = [];
try {
  for (const stack of ['ours-base-sse', 'ours-sse'] as const) {
    console.error(`  ${stack} …`);
    rows.push(await measure(stack, redisServer.url, redis));
  }
} finally {
  redis.disconnect();
  await redisServer.stop();
}
const mb = (b: number): string => (b / MB).toFixed(1);
const at = (r: Row, s: number): number => r.after[Math.min(s, r.after.length) - 1] ?? 0;
console.log(`- date: ${started.toISOString()}; load average ${loadStart} at start, ${loadAverageText()} at end`);
console.log(`- ${fmtInt(streams)} SSE streams (raw HTTP, paused while ${fmtInt(events)} events went out back-to-back, then read), settle ${settleS} s\n`);
console.log(
  markdownTable([
    ['stack', 'RSS before burst MB (GC)', 'peak RSS MB', '+10 s MB', `+${settleS} s MB`, `+${settleS} s / before`, 'after forced GC MB', 'delivered / expected', 'catch-up after resume'],
    ...rows.map((r) => [r.stack, mb(r.before), mb(r.peak), mb(at(r, 10)), mb(at(r, settleS)), `${(at(r, settleS) / r.before).toFixed(2)}×`, mb(r.afterGc), `${fmtInt(r.delivered)} / ${fmtInt(streams * events)}`, `${fmtInt(r.catchUpMs)} ms`]),
  ]),
);
