// Idle RSS of the built gateway and ingest of two worktrees (base and change), in the same run:
// one redis-server and one Kafka broker (the testkit's, real servers), then per round and worktree
// a fresh gateway (Redis connected, no socket) and a fresh ingest (joined its group, no traffic),
// each started as its image runs it (NODE_ENV=production, node dist/main.js) plus --expose-gc and
// the rss-report.mjs preload. After the settle time: VmRSS from /proc, then (SIGUSR2) the process's
// own memoryUsage() and V8 heap spaces, without and after two forced GCs. Then SIGTERM.
//
//   flock /tmp/wirestream-bench.lock node bench/idle-rss/idle-rss.mjs --base /work/wt-x-base --change . [--rounds 3] [--settle-s 15]
//
// Prints one JSON line per process, then a table per app (medians).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
// Not a workspace package (plain scripts): the bench kit by path, built (turbo run build).
import { median, MiB, parseCli, readRssBytes, startNodeProcess } from '../kit/dist/index.js';

const { values } = parseCli({ options: { base: { type: 'string' }, change: { type: 'string', default: process.cwd() }, rounds: { type: 'string', default: '3' }, 'settle-s': { type: 'string', default: '15' } } });
if (values.base === undefined) throw new Error('--base <worktree> is required');
const trees = { base: resolve(values.base), change: resolve(values.change) };
const settleMs = Number(values['settle-s']) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const testkit = await import(pathToFileURL(join(trees.change, 'packages', 'testkit', 'dist', 'index.js')).href);
const preload = pathToFileURL(join(trees.change, 'bench', 'idle-rss', 'rss-report.mjs')).href;

function start(tree, app, env) {
  return startNodeProcess(app, ['--expose-gc', '--import', preload, join(tree, 'apps', app, 'dist', 'main.js')], {
    inheritEnv: false,
    env: { NODE_ENV: 'production', ...env },
    graceMs: 15_000,
    tailChars: 20_000,
  });
}

async function until(what, test, ms, proc) {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (proc.exitInfo() !== undefined) throw new Error(`${what}: the process exited:\n${proc.tail()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms:\n${proc.tail()}`);
    await sleep(100);
  }
}

async function measure(variant, app, env, ready) {
  const report = join(tmpdir(), `idle-rss-${process.pid}-${variant}-${app}.json`);
  rmSync(report, { force: true });
  const proc = start(trees[variant], app, { ...env, IDLE_RSS_REPORT: report });
  try {
    await until(`${variant} ${app} ready`, () => ready(proc), 90_000, proc);
    await sleep(settleMs);
    const rss = readRssBytes(proc.pid) ?? Number.NaN;
    proc.child.kill('SIGUSR2');
    await until(`${variant} ${app} memory report`, () => existsSync(report), 10_000, proc);
    const { idle, afterGc } = JSON.parse(readFileSync(report, 'utf8'));
    return { variant, app, rss, idle, afterGc };
  } finally {
    await proc.stop();
    rmSync(report, { force: true });
  }
}

const redis = await testkit.startRedis();
const kafka = await testkit.startKafka();
const rows = [];
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    // Alternate which worktree goes first, so a drift of the machine's load does not favour one.
    const order = round % 2 === 0 ? ['base', 'change'] : ['change', 'base'];
    for (const variant of order) {
      const gwPort = await testkit.freePort();
      rows.push(
        await measure(variant, 'gateway', { GATEWAY_PORT: String(gwPort), GATEWAY_HOST: '127.0.0.1', REDIS_URL: redis.url, LOG_LEVEL: 'warn', GATEWAY_AUTH_MODE: 'anonymous' }, () =>
          fetch(`http://127.0.0.1:${gwPort}/readyz`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false),
        ),
      );
      const ingestPort = await testkit.freePort();
      rows.push(
        await measure(variant, 'ingest', { KAFKA_BROKERS: kafka.brokers.join(','), REDIS_URL: redis.url, KAFKA_GROUP_ID: `idle-rss-${variant}-${round}-${process.pid}`, INGEST_HTTP_PORT: String(ingestPort), INGEST_CREATE_TOPICS: 'true', LOG_LEVEL: 'info' }, (p) =>
          Promise.resolve(p.tail().includes('joined consumer group')),
        ),
      );
      const r = rows.slice(-2);
      for (const x of r) process.stdout.write(JSON.stringify({ round, variant: x.variant, app: x.app, rssMiB: +(x.rss / MiB).toFixed(1), heapTotalMiB: +(x.idle.heapTotal / MiB).toFixed(1), heapUsedMiB: +(x.idle.heapUsed / MiB).toFixed(1), newSpaceMiB: +((x.idle.spaces.new_space?.size ?? 0) / MiB).toFixed(1), oldSpaceMiB: +((x.idle.spaces.old_space?.size ?? 0) / MiB).toFixed(1), gcRssMiB: +(x.afterGc.rss / MiB).toFixed(1), gcHeapTotalMiB: +(x.afterGc.heapTotal / MiB).toFixed(1), gcHeapUsedMiB: +(x.afterGc.heapUsed / MiB).toFixed(1) }) + '\n');
    }
  }
} finally {
  await kafka.stop();
  await redis.stop();
}

const f = (n) => (n / MiB).toFixed(1);
const range = (xs) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;
console.log('\n| app | worktree | idle VmRSS MiB median (range) | heapTotal / heapUsed MiB | new space / old space MiB | after 2 GCs: RSS / heapTotal / heapUsed MiB |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const app of ['gateway', 'ingest']) {
  for (const variant of ['base', 'change']) {
    const xs = rows.filter((r) => r.app === app && r.variant === variant);
    const m = (get) => median(xs.map(get));
    console.log(`| ${app} | ${variant} | ${f(m((r) => r.rss))} (${range(xs.map((r) => r.rss))}) | ${f(m((r) => r.idle.heapTotal))} / ${f(m((r) => r.idle.heapUsed))} | ${f(m((r) => r.idle.spaces.new_space?.size ?? 0))} / ${f(m((r) => r.idle.spaces.old_space?.size ?? 0))} | ${f(m((r) => r.afterGc.rss))} / ${f(m((r) => r.afterGc.heapTotal))} / ${f(m((r) => r.afterGc.heapUsed))} |`);
  }
  const b = median(rows.filter((r) => r.app === app && r.variant === 'base').map((r) => r.rss));
  const c = median(rows.filter((r) => r.app === app && r.variant === 'change').map((r) => r.rss));
  console.log(`| ${app} | change ÷ base | ${(c / b).toFixed(2)} | | | |`);
}
