#!/usr/bin/env node
/**
 * Idle RSS of the built gateway and ingest of two worktrees (base and change), in the same run:
 * one redis-server and one Kafka broker (the testkit's, real servers), then per round and worktree
 * a fresh gateway (Redis connected, no socket) and a fresh ingest (joined its group, no traffic),
 * each started as its image runs it (NODE_ENV=production, node dist/main.js) plus --expose-gc and
 * the rss-report preload. After the settle time: VmRSS from /proc, then (SIGUSR2) the process's
 * own memoryUsage() and V8 heap spaces, without and after two forced GCs. Then SIGTERM.
 *
 *   flock /tmp/wirestream-bench.lock node bench/idle-rss/dist/idle-rss.js --base /work/wt-x-base [--change .] [--rounds 3] [--settle-s 15]
 *
 * Prints one JSON line per process, then a table per app (medians).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startKafka, startRedis } from '@wirestream/testkit';
import { markdownTable, median, MiB, parseCli, positiveInts, readRssBytes, startGateway, startServerProcess, type ManagedProcess } from '@wirestream/bench-kit';
import type { MemorySnapshot } from './rss-report.js';

const { values } = parseCli({
  options: { base: { type: 'string' }, change: { type: 'string', default: process.cwd() }, rounds: { type: 'string', default: '3' }, 'settle-s': { type: 'string', default: '15' } },
  help: { base: 'the base worktree (built)', change: 'the changed worktree (built)' },
});
if (values.base === undefined) throw new Error('--base <worktree> is required');
const trees = { base: resolve(values.base), change: resolve(values.change) };
const { rounds: ROUNDS, 'settle-s': SETTLE_S } = positiveInts(values, ['rounds', 'settle-s']);
const preload = fileURLToPath(new URL('./rss-report.js', import.meta.url));

type Variant = keyof typeof trees;
type App = 'gateway' | 'ingest';

interface Row {
  readonly variant: Variant;
  readonly app: App;
  readonly rss: number;
  readonly idle: MemorySnapshot;
  readonly afterGc: MemorySnapshot;
}

/** The app of a worktree as its image runs it, with the report preloaded; resolved once it is ready. */
async function startApp(variant: Variant, app: App, report: string, env: Readonly<Record<string, string>>): Promise<ManagedProcess> {
  const main = join(trees[variant], 'apps', app, 'dist', 'main.js');
  const common = { nodeArgs: ['--expose-gc', '--import', preload], inheritEnv: false, graceMs: 15_000, tailChars: 20_000, readyTimeoutMs: 90_000 } as const;
  const appEnv = { NODE_ENV: 'production', IDLE_RSS_REPORT: report, ...env };
  if (app === 'gateway') return startGateway({ ...common, main, label: `${variant} gateway`, redisUrl: env['REDIS_URL'] ?? '', env: { ...appEnv, GATEWAY_DEBUG_ENDPOINTS: 'false' } });
  const ingest = await startServerProcess(`${variant} ingest`, [...common.nodeArgs, main], { ...common, env: (_host, port) => ({ ...appEnv, INGEST_HTTP_PORT: String(port) }), readyPath: '/healthz' });
  await ingest.waitForLine('joined consumer group', 90_000);
  return ingest;
}

async function measure(variant: Variant, app: App, env: Readonly<Record<string, string>>): Promise<Row> {
  const report = join(tmpdir(), `idle-rss-${process.pid}-${variant}-${app}.json`);
  rmSync(report, { force: true });
  const proc = await startApp(variant, app, report, env);
  try {
    await sleep(SETTLE_S * 1_000);
    const rss = readRssBytes(proc.pid) ?? Number.NaN;
    proc.child.kill('SIGUSR2');
    for (const deadline = Date.now() + 10_000; !existsSync(report); await sleep(100)) {
      if (Date.now() > deadline) throw new Error(`${variant} ${app}: no memory report within 10 s:\n${proc.tail()}`);
    }
    const { idle, afterGc } = JSON.parse(readFileSync(report, 'utf8')) as { idle: MemorySnapshot; afterGc: MemorySnapshot };
    return { variant, app, rss, idle, afterGc };
  } finally {
    await proc.stop();
    rmSync(report, { force: true });
  }
}

const mib = (n: number): number => Number((n / MiB).toFixed(1));
const spaceOf = (m: MemorySnapshot, name: string): number => m.spaces[name]?.size ?? 0;

const redis = await startRedis();
const kafka = await startKafka();
const rows: Row[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which worktree goes first, so a drift of the machine's load does not favour one.
    const order: Variant[] = round % 2 === 0 ? ['base', 'change'] : ['change', 'base'];
    for (const variant of order) {
      rows.push(await measure(variant, 'gateway', { REDIS_URL: redis.url, LOG_LEVEL: 'warn', GATEWAY_AUTH_MODE: 'anonymous' }));
      rows.push(
        await measure(variant, 'ingest', { KAFKA_BROKERS: kafka.brokers.join(','), REDIS_URL: redis.url, KAFKA_GROUP_ID: `idle-rss-${variant}-${round}-${process.pid}`, INGEST_CREATE_TOPICS: 'true', LOG_LEVEL: 'info' }),
      );
      for (const x of rows.slice(-2)) {
        const line = { round, variant: x.variant, app: x.app, rssMiB: mib(x.rss), heapTotalMiB: mib(x.idle.heapTotal), heapUsedMiB: mib(x.idle.heapUsed), newSpaceMiB: mib(spaceOf(x.idle, 'new_space')), oldSpaceMiB: mib(spaceOf(x.idle, 'old_space')), gcRssMiB: mib(x.afterGc.rss), gcHeapTotalMiB: mib(x.afterGc.heapTotal), gcHeapUsedMiB: mib(x.afterGc.heapUsed) };
        process.stdout.write(JSON.stringify(line) + '\n');
      }
    }
  }
} finally {
  await kafka.stop();
  await redis.stop();
}

const f = (n: number): string => (n / MiB).toFixed(1);
const table: string[][] = [['app', 'worktree', 'idle VmRSS MiB median (range)', 'heapTotal / heapUsed MiB', 'new space / old space MiB', 'after 2 GCs: RSS / heapTotal / heapUsed MiB']];
for (const app of ['gateway', 'ingest'] as const) {
  for (const variant of ['base', 'change'] as const) {
    const xs = rows.filter((r) => r.app === app && r.variant === variant);
    const m = (get: (r: Row) => number): string => f(median(xs.map(get)));
    const rss = xs.map((r) => r.rss);
    table.push([
      app,
      variant,
      `${m((r) => r.rss)} (${f(Math.min(...rss))}–${f(Math.max(...rss))})`,
      `${m((r) => r.idle.heapTotal)} / ${m((r) => r.idle.heapUsed)}`,
      `${m((r) => spaceOf(r.idle, 'new_space'))} / ${m((r) => spaceOf(r.idle, 'old_space'))}`,
      `${m((r) => r.afterGc.rss)} / ${m((r) => r.afterGc.heapTotal)} / ${m((r) => r.afterGc.heapUsed)}`,
    ]);
  }
  const rssOf = (variant: Variant): number => median(rows.filter((r) => r.app === app && r.variant === variant).map((r) => r.rss));
  table.push([app, 'change ÷ base', (rssOf('change') / rssOf('base')).toFixed(2), '', '', '']);
}
console.log(`\n${markdownTable(table)}`);
