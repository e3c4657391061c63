/**
 * SSE streams that lag (decision 0030): N raw SSE streams stop reading while E events go out
 * back-to-back, then read again; the gateway's VmRSS before the burst (after forced GCs), at its
 * peak, and every second for S s after every stream got every event — for this checkout's build,
 * after the --base-gateway build's when given, one after the other in one run. The saturation
 * scenario's load client reads as fast as the gateway writes, so its SSE streams never lag: this
 * one makes them.
 */
import { connect, type Socket } from 'node:net';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { waitFor } from '@wirestream/testkit';
import { markdownTable, readRssBytes } from '@wirestream/bench-kit';
import { publishEvents } from './publisher.js';
import { fmtInt, section } from './report.js';
import type { RunContext } from './run-stack.js';
import { textSection, type Scenario } from './scenario.js';
import { fetchMemory, fetchStats, startServer, type StackName } from './servers.js';

const QUERY = `subscription { listingUpdated { ${FULL_SELECTION} } }`;
const NEXT = 'event: next\n';
const MB = 1_048_576;

interface SseLagOptions {
  /** ours-sse, after ours-base-sse with --base-gateway. */
  readonly stacks: readonly StackName[];
  readonly streams: number;
  readonly events: number;
  readonly settleS: number;
}

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

async function measure(ctx: RunContext, stack: StackName, o: SseLagOptions): Promise<Row> {
  const { streams, events, settleS } = o;
  // A stream that lags is not a slow consumer here: the limit is far above its backlog.
  const gatewayEnv = { ...ctx.gatewayEnv, GATEWAY_MAX_BACKPRESSURE_BYTES: String(256 * MB) };
  const server = await startServer(stack, ctx.redisUrl, [], { NODE_ENV: ctx.nodeEnv }, gatewayEnv);
  const pid = server.process.pid;
  const all = Array.from({ length: streams }, () => openStream(server.port));
  await waitFor(async () => (await fetchStats(server))?.['subscriptions'] === streams, { message: `${streams} SSE streams subscribed`, timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 1_000));
  await fetchMemory(server, true, 10_000);
  const before = readRssBytes(pid) ?? 0;
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, readRssBytes(pid) ?? 0)), 100);
  for (const s of all) s.socket.pause();
  await publishEvents({ redis: ctx.redis, corpus: ctx.corpus, topic: ctx.route.topic, clock: ctx.clock, offsetBase: 0, count: events, ratePerSecond: 0 });
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

async function sseLagSection(ctx: RunContext, o: SseLagOptions): Promise<string> {
  const rows: Row[] = [];
  for (const stack of o.stacks) {
    ctx.log(`  ${stack} …`);
    rows.push(await measure(ctx, stack, o));
  }
  const mb = (b: number): string => (b / MB).toFixed(1);
  const at = (r: Row, s: number): number => r.after[Math.min(s, r.after.length) - 1] ?? 0;
  const title = `SSE streams that lag: ${fmtInt(o.streams)} streams paused while ${fmtInt(o.events)} events went out back-to-back, then read; settle ${o.settleS} s`;
  const table = markdownTable([
    ['stack', 'RSS before burst MB (GC)', 'peak RSS MB', '+10 s MB', `+${o.settleS} s MB`, `+${o.settleS} s / before`, 'after forced GC MB', 'delivered / expected', 'catch-up after resume'],
    ...rows.map((r) => [
      r.stack,
      mb(r.before),
      mb(r.peak),
      mb(at(r, 10)),
      mb(at(r, o.settleS)),
      `${(at(r, o.settleS) / r.before).toFixed(2)}×`,
      mb(r.afterGc),
      `${fmtInt(r.delivered)} / ${fmtInt(o.streams * o.events)}`,
      `${fmtInt(r.catchUpMs)} ms`,
    ]),
  ]);
  return section(ctx.log, title, `Raw HTTP SSE streams (one \`POST\` each, the full selection), RSS from /proc.\n\n${table}`);
}

export const sseLagScenario: Scenario = {
  name: 'sse-lag',
  description: "opt-in: SSE streams that stop reading during a burst, then read; the gateway's RSS (with --base-gateway the base first)",
  report: 'sse-lag',
  options: {
    'sse-lag-streams': { arg: 'N', default: '200', quick: '20', help: 'raw SSE streams' },
    'sse-lag-events': { arg: 'E', default: '1500', quick: '200', help: 'events published back-to-back while they lag' },
    'sse-lag-settle-s': { arg: 'S', default: '20', quick: '2', help: 'RSS every 1 s for S s after every stream got every event' },
  },
  prepare(options, common) {
    const o: SseLagOptions = {
      stacks: common.baseGateway === undefined ? ['ours-sse'] : ['ours-base-sse', 'ours-sse'],
      streams: options.positiveInt('sse-lag-streams'),
      events: options.positiveInt('sse-lag-events'),
      settleS: options.positiveInt('sse-lag-settle-s'),
    };
    return textSection(o.events, (env) => sseLagSection(env.ctx, o));
  },
};
