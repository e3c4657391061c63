/**
 * The look-up scenario (issue 32): our gateway resolves `seller { display_name rating }` of each
 * listing event through `@lookup` against a real federation subgraph process (the demo's seller
 * service, apps/demo/dist/sellers.js, answering after `latencyMs`), next to the same gateway, schema,
 * sockets and events with an operation that selects no looked-up field (the baseline, projector
 * path). Two parts, variants interleaved per repetition:
 *
 * - saturation, cache warm (TTL longer than the run, the corpus's ≤ 50 sellers): deliveries/s and
 *   gateway CPU per delivery against the baseline (target: within 10 %);
 * - paced traffic, cache warm and cache cold (GATEWAY_LOOKUP_CACHE_TTL_MS=1: every event asks the
 *   subgraph): p99 latency added to the baseline's, against the subgraph's configured latency.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { ExplicitOperation } from '@wirestream/loadgen';
import { auctionSchemaPath } from '@wirestream/schema';
import { markdownTable, median, pairedRatios, readCpuTimesOf, startServerProcess, type ServerProcess } from '@wirestream/bench-kit';
import { publishEvents, type EventCorpus } from './publisher.js';
import { fmtInt, fmtMs, rowNotes, section, serverUsPerDelivery } from './report.js';
import { inRounds, roundTag } from './rounds.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { drainTimeoutMs, textSection, type Scenario } from './scenario.js';
import type { ServerHandle } from './servers.js';

export interface LookupsOptions {
  /** Saturation: sockets on one operation, events back-to-back. */
  readonly saturationSockets: number;
  readonly saturationEvents: number;
  /** Paced: sockets on one operation, events per second for `pacedSeconds`. */
  readonly pacedSockets: number;
  readonly pacedRate: number;
  readonly pacedSeconds: number;
  /** The subgraph answers every request after this long (SELLERS_LATENCY_MS). */
  readonly latencyMs: number;
  readonly repeat: number;
  readonly drainTimeoutMs: number;
  readonly idleMs: number;
  readonly workers: number | undefined;
}

type Variant = 'no look-ups' | 'look-ups, warm' | 'look-ups, cold';

interface LookupRun {
  readonly part: 'saturation' | 'paced';
  readonly variant: Variant;
  readonly repeat: number;
  readonly run: StackRun;
  /** Requests and representations the subgraph counted during the run, and its CPU. */
  readonly subgraphRequests: number;
  readonly subgraphRepresentations: number;
  readonly subgraphCpuMs: number;
}

// `occurred_at` first: the load client finds the producer's timestamp a few bytes into each frame.
// Both select a seller's name and rating: the event's own (baseline) or the seller service's (look-up).
const BASELINE_QUERY = 'subscription { listingUpdated { occurred_at event_id listing_id listing { title seller_info { seller_id display_name rating } } } }';
const LOOKUP_QUERY = 'subscription { listingUpdated { occurred_at event_id listing_id listing { title seller_info { seller_id seller { display_name rating } } } } }';
const TTL_WARM_MS = 600_000;
const TTL_COLD_MS = 1;

/** The auction schema with the demo's look-up (scripts/run-product.mjs adds the same one). */
function lookupSchema(): string {
  const sdl = readFileSync(auctionSchemaPath, 'utf8');
  const sellerInfo = 'type SellerInfo {\n  seller_id: ID!\n';
  if (!sdl.includes(sellerInfo)) throw new Error('the auction schema\'s SellerInfo no longer starts with seller_id: update bench/fanout/src/lookups.ts');
  return (
    sdl.replace(sellerInfo, `${sellerInfo}  seller: Seller @lookup(source: "sellers", key: "id: seller_id")\n`) +
    '\ntype Seller {\n  id: ID!\n  display_name: String!\n  rating: Float\n  is_verified: Boolean!\n  listings_sold: Int!\n}\n'
  );
}

/** The demo's seller subgraph as its own process (the devDependency makes turbo build it first). */
function startSellers(latencyMs: number): Promise<ServerProcess> {
  const require = createRequire(import.meta.url);
  const main = join(dirname(require.resolve('@wirestream/demo/package.json')), 'dist', 'sellers.js');
  return startServerProcess('the seller subgraph', [main], {
    env: (host, port) => ({ SELLERS_HOST: host, SELLERS_PORT: String(port), SELLERS_LATENCY_MS: String(latencyMs), LOG_LEVEL: 'warn' }),
    readyPath: '/healthz',
    readyTimeoutMs: 15_000,
  });
}

async function subgraphStats(url: string): Promise<{ requests: number; representations: number }> {
  return (await (await fetch(`${url}/stats`)).json()) as { requests: number; representations: number };
}

/** The first event of each distinct seller among the corpus's first `events`: what fills the cache. */
function firstEventPerSeller(corpus: EventCorpus, events: number): EventCorpus {
  const seen = new Set<string>();
  const picked: EventCorpus['events'][number][] = [];
  for (let i = 0; i < events && i < corpus.events.length; i++) {
    const listing = corpus.payloadOf(i)['listing'] as { seller_info: { seller_id: string } };
    if (seen.has(listing.seller_info.seller_id)) continue;
    seen.add(listing.seller_info.seller_id);
    picked.push(corpus.events[i] as EventCorpus['events'][number]);
  }
  return { ...corpus, events: picked };
}

/**
 * Warms a gateway's look-up cache before any load socket connects: one client subscribes with the
 * look-up operation, the first event of each seller is published (offsets below the run's, so
 * they cannot shadow its events), and it waits until the client received them all.
 */
function cacheWarmer(ctx: RunContext, warm: EventCorpus): (server: ServerHandle) => Promise<void> {
  return async (server) => {
    const client = createClient({ url: server.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    let received = 0;
    let failure: unknown;
    const dispose = client.subscribe({ query: LOOKUP_QUERY }, { next: () => void received++, error: (err) => (failure = err), complete: () => {} });
    try {
      const channels = [...new Set(warm.events.map((e) => e.channel))];
      await until(async () => {
        const counts = (await ctx.redis.pubsub('NUMSUB', ...channels)) as (string | number)[];
        return counts.filter((_, i) => i % 2 === 1).every((n) => Number(n) > 0);
      }, 'the warm-up subscription to reach Redis');
      await publishEvents({ redis: ctx.redis, corpus: warm, topic: ctx.route.topic, clock: ctx.clock, offsetBase: 0, count: warm.events.length, ratePerSecond: 0 });
      await until(() => {
        if (failure !== undefined) throw new Error(`the warm-up subscription failed: ${JSON.stringify(failure)}`);
        return Promise.resolve(received >= warm.events.length);
      }, `the warm-up client to receive ${warm.events.length} events`);
    } finally {
      dispose();
      await client.dispose();
    }
  };
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function specOf(query: string, sockets: number, events: number, ratePerSecond: number, options: LookupsOptions): RunSpec {
  const operations: ExplicitOperation[] = [{ label: 'listingUpdated', payload: { query } }];
  return {
    sockets,
    plan: { operations, filterKeys: [] },
    expectedPerOperation: [events],
    events,
    ratePerSecond,
    drainTimeoutMs: options.drainTimeoutMs,
    stallTimeoutMs: 10_000,
    idleMs: options.idleMs,
    ...(options.workers === undefined ? {} : { workers: options.workers }),
  };
}

async function lookupsSection(ctx: RunContext, options: LookupsOptions): Promise<string> {
  const { latencyMs, repeat } = options;
  const pacedEvents = Math.round(options.pacedRate * options.pacedSeconds);
  const title =
    `Look-ups: seller { display_name rating } through @lookup from a subgraph answering in ${latencyMs} ms; ` +
    `saturation N = ${fmtInt(options.saturationSockets)}, ${fmtInt(options.saturationEvents)} events; paced N = ${fmtInt(options.pacedSockets)}, ${options.pacedRate} events/s for ${options.pacedSeconds} s`;
  ctx.log(`\n## ${title}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'wirestream-bench-lookups-'));
  const schemaPath = join(dir, 'schema.graphql');
  writeFileSync(schemaPath, lookupSchema());
  const sellers = await startSellers(latencyMs);
  const runs: LookupRun[] = [];
  try {
    const envOf = (ttlMs: number): Record<string, string> => ({
      ...ctx.gatewayEnv,
      SCHEMA_PATH: schemaPath,
      GATEWAY_LOOKUP_SOURCES: `sellers=${sellers.httpBase}/graphql`,
      GATEWAY_LOOKUP_CACHE_TTL_MS: String(ttlMs),
    });
    const parts = [
      { part: 'saturation' as const, sockets: options.saturationSockets, events: options.saturationEvents, rate: 0, variants: ['no look-ups', 'look-ups, warm'] as Variant[] },
      { part: 'paced' as const, sockets: options.pacedSockets, events: pacedEvents, rate: options.pacedRate, variants: ['no look-ups', 'look-ups, warm', 'look-ups, cold'] as Variant[] },
    ];
    for (const { part, sockets, events, rate, variants } of parts) {
      const partRuns = await inRounds(repeat, variants, async (variant, rep) => {
        ctx.log(`  ${part}, ${variant}${roundTag(rep, repeat)} …`);
        const base = specOf(variant === 'no look-ups' ? BASELINE_QUERY : LOOKUP_QUERY, sockets, events, rate, options);
        // Every variant goes through the same warm-up, so that the baseline's process has done the same work before the run.
        const spec: RunSpec = { ...base, beforeIdle: cacheWarmer(ctx, firstEventPerSeller(ctx.corpus, events)) };
        const before = await subgraphStats(sellers.httpBase);
        const cpuBefore = readCpuTimesOf([sellers.pid]);
        const run = { ...(await runStack('ours', spec, { ...ctx, gatewayEnv: envOf(variant === 'look-ups, cold' ? TTL_COLD_MS : TTL_WARM_MS) })), repeat: rep };
        const after = await subgraphStats(sellers.httpBase);
        const cpuAfter = readCpuTimesOf([sellers.pid]);
        const entry: LookupRun = {
          part,
          variant,
          repeat: rep,
          run,
          subgraphRequests: after.requests - before.requests,
          subgraphRepresentations: after.representations - before.representations,
          subgraphCpuMs: cpuAfter.userMs + cpuAfter.systemMs - cpuBefore.userMs - cpuBefore.systemMs,
        };
        ctx.log(
          `    ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.duplicates)} dup, ${fmtInt(run.deliveriesPerSec)}/s, ${serverUsPerDelivery(run).toFixed(2)} µs CPU/delivery, ` +
            `p50 ${fmtMs(run.latencyMs.p50)}, p99 ${fmtMs(run.latencyMs.p99)}; subgraph ${fmtInt(entry.subgraphRequests)} requests, ${fmtInt(entry.subgraphRepresentations)} representations`,
        );
        return entry;
      });
      runs.push(...partRuns);
    }
  } finally {
    await sellers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const body = [
    ...targetLines(runs, options).map((l) => `- ${l}`),
    '',
    summaryTable(runs),
    '',
    runTable(runs),
    '',
    'How to read: one gateway process per row (`node apps/gateway/dist/main.js`, anonymous, otherwise default settings), all sockets on one ' +
      'operation, the demo listing events published straight into Redis. The schema is the auction schema with ' +
      '`SellerInfo.seller: Seller @lookup(source: "sellers", key: "id: seller_id")` in every row; "no look-ups" selects the event\'s own ' +
      '`seller_info { display_name rating }` (the projector, no execution), the look-up rows `seller_info { seller { display_name rating } } }` ' +
      `(graphql-js execution once per event for the operation group, the seller from the loader). The subgraph is the demo's (\`apps/demo/dist/sellers.js\`, ` +
      `@apollo/subgraph on node:http), its own process, answering every request after ${latencyMs} ms (SELLERS_LATENCY_MS). "warm": ` +
      `GATEWAY_LOOKUP_CACHE_TTL_MS=${TTL_WARM_MS}, and before the load sockets connect one client subscribes with the look-up operation and the ` +
      'first event of each seller of the run is published to it (offsets below the run\'s), so the run finds every seller in the cache (every ' +
      'variant, the baseline too, goes through this warm-up; "subgraph requests" counts its requests); ' +
      `"cold": GATEWAY_LOOKUP_CACHE_TTL_MS=${TTL_COLD_MS}, every event's seller is asked again. "gateway CPU µs / delivery" is the ` +
      'gateway process\'s user + system CPU from the first publish to the end of the drain, per delivery (the subgraph\'s CPU is its own column). ' +
      'Latency is producer timestamp to client receipt.',
    '',
    ...rowNotes(runs, labelOf),
  ].join('\n');
  return section(ctx.log, title, body);
}

const complete = (r: StackRun): boolean => r.unique === r.expected && r.duplicates === 0;
/**
 * The runs a part's figures are taken from. Saturation measures a rate: a run the drain deadline
 * ended still measured it (its row says how many it delivered), one with duplicates did not. The
 * paced part measures latency, where an undelivered event is infinitely late: complete runs only.
 */
const usable = (part: LookupRun['part'], r: StackRun): boolean => (part === 'saturation' ? r.duplicates === 0 && r.unique > 0 : complete(r));

function labelOf(u: LookupRun | undefined): string {
  return u === undefined ? '?' : `${u.part}, ${u.variant} #${u.repeat}`;
}

/** The baseline's run and `variant`'s of each repetition, where usable (see `usable`). */
function pairsOf(runs: readonly LookupRun[], part: LookupRun['part'], variant: Variant): [StackRun | undefined, StackRun | undefined][] {
  const find = (rep: number, v: Variant): StackRun | undefined => runs.find((u) => u.part === part && u.repeat === rep && u.variant === v && usable(part, u.run))?.run;
  return [...new Set(runs.map((u) => u.repeat))].map((rep) => [find(rep, 'no look-ups'), find(rep, variant)]);
}

function targetLines(runs: readonly LookupRun[], options: LookupsOptions): string[] {
  const mark = (ok: boolean): string => (ok ? '**met**' : '**not met**');
  const lines: string[] = [];
  const saturation = pairsOf(runs, 'saturation', 'look-ups, warm');
  const rate = pairedRatios(saturation, (r) => r.deliveriesPerSec);
  const cpu = pairedRatios(saturation, serverUsPerDelivery);
  if (rate.length > 0 && cpu.length > 0) {
    const r = median(rate);
    const c = median(cpu);
    lines.push(
      `saturation, cache warm vs no look-ups (same repetition): deliveries/s ×${r.toFixed(2)} (runs ${rate.map((x) => `×${x.toFixed(2)}`).join(', ')}) ${mark(r >= 0.9)}; ` +
        `gateway CPU per delivery ×${c.toFixed(2)} (runs ${cpu.map((x) => `×${x.toFixed(2)}`).join(', ')}) ${mark(c <= 1.1)} (within 10 %)`,
    );
    const cut = runs.filter((u) => u.part === 'saturation' && !complete(u.run)).length;
    if (cut > 0) lines.push(`saturation: ${cut} run(s) ended at the drain deadline before every delivery; their rate and CPU per delivery are over what they delivered`);
  } else lines.push('saturation: no repetition measured both variants without duplicates; see the runs below');
  for (const variant of ['look-ups, warm', 'look-ups, cold'] as const) {
    const pairs = pairsOf(runs, 'paced', variant).flatMap(([base, change]) => (base && change ? [change.latencyMs.p99 - base.latencyMs.p99] : []));
    if (pairs.length === 0) {
      lines.push(`paced, ${variant}: no repetition delivered every event in both variants`);
      continue;
    }
    const added = median(pairs);
    lines.push(
      `paced, ${variant}: p99 added to the no-look-up p99 of the same repetition ${fmtMs(added)} (runs ${pairs.map(fmtMs).join(', ')}) ` +
        `against the subgraph's ${options.latencyMs} ms` +
        (variant === 'look-ups, cold' ? `: ${(added / options.latencyMs).toFixed(2)}× its latency ${mark(added <= 2 * options.latencyMs)} (≤ 2× the subgraph's latency)` : ''),
    );
  }
  return lines;
}

function summaryTable(runs: readonly LookupRun[]): string {
  const rows: string[][] = [['part', 'variant', 'runs used', 'deliveries/s median', 'gateway CPU µs / delivery median', 'p50 median', 'p99 median', 'subgraph requests median']];
  for (const part of ['saturation', 'paced'] as const) {
    for (const variant of ['no look-ups', 'look-ups, warm', 'look-ups, cold'] as const) {
      const all = runs.filter((u) => u.part === part && u.variant === variant);
      if (all.length === 0) continue;
      const xs = all.filter((u) => usable(part, u.run));
      const med = (f: (u: LookupRun) => number): number => median(xs.map(f));
      rows.push([
        part,
        variant,
        `${xs.length} of ${all.length}`,
        fmtInt(med((u) => u.run.deliveriesPerSec)),
        xs.length === 0 ? 'n/a' : med((u) => serverUsPerDelivery(u.run)).toFixed(2),
        fmtMs(med((u) => u.run.latencyMs.p50)),
        fmtMs(med((u) => u.run.latencyMs.p99)),
        fmtInt(med((u) => u.subgraphRequests)),
      ]);
    }
  }
  return markdownTable(rows);
}

function runTable(runs: readonly LookupRun[]): string {
  const rows: string[][] = [
    ['part', 'variant', 'rep', 'delivered / expected', 'dup', 'deliveries/s', 'p50', 'p99', 'gateway CPU µs / delivery', 'executions / event', 'subgraph requests', 'representations', 'subgraph CPU', "others' CPU"],
  ];
  for (const u of runs) {
    const { run } = u;
    rows.push([
      u.part,
      u.variant,
      String(u.repeat),
      `${fmtInt(run.unique)} / ${fmtInt(run.expected)}`,
      fmtInt(run.duplicates),
      fmtInt(run.deliveriesPerSec),
      fmtMs(run.latencyMs.p50),
      fmtMs(run.latencyMs.p99),
      serverUsPerDelivery(run).toFixed(2),
      run.executions === undefined ? 'n/a' : (run.executions / run.spec.events).toFixed(2),
      fmtInt(u.subgraphRequests),
      fmtInt(u.subgraphRepresentations),
      `${fmtInt(u.subgraphCpuMs)} ms`,
      `${run.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  return markdownTable(rows);
}

export const lookupsScenario: Scenario = {
  name: 'lookups',
  description:
    'opt-in: look-ups through the demo seller subgraph (apps/demo/dist/sellers.js, its own process) against none: ' +
    'saturation with a warm cache (deliveries/s, gateway CPU), then paced with no look-ups, a warm and a cold cache (p99 added)',
  report: 'lookups',
  options: {
    'lookups-sockets': { arg: 'N', default: '10000', quick: '500', help: 'saturation: sockets on one operation' },
    'lookups-events': { arg: 'E', default: '1000', quick: '200', help: 'saturation: events back-to-back' },
    'lookups-paced-sockets': { arg: 'N', default: '2000', quick: '200', help: 'paced: sockets' },
    'lookups-rate': { arg: 'EV/S', default: '20', help: 'paced: events per second (above 0)' },
    'lookups-seconds': { arg: 'S', default: '10', quick: '2', help: 'paced: seconds of traffic' },
    'lookups-latency-ms': { arg: 'L', default: '20', help: 'the seller subgraph answers after L ms' },
  },
  prepare(options, common) {
    const lookupsOptions: LookupsOptions = {
      saturationSockets: options.number('lookups-sockets'),
      saturationEvents: options.number('lookups-events'),
      pacedSockets: options.number('lookups-paced-sockets'),
      pacedRate: options.number('lookups-rate'),
      pacedSeconds: options.number('lookups-seconds'),
      latencyMs: options.number('lookups-latency-ms'),
      repeat: common.repeat,
      drainTimeoutMs: drainTimeoutMs(common, 30_000, 10_000),
      idleMs: common.idleMs,
      workers: common.workers,
    };
    if (lookupsOptions.pacedRate <= 0) throw new RangeError(`--lookups-rate must be above 0 (the paced part measures latency), got ${options.string('lookups-rate')}`);
    const events = Math.max(lookupsOptions.saturationEvents, Math.round(lookupsOptions.pacedRate * lookupsOptions.pacedSeconds));
    return textSection(events, (env) => lookupsSection(env.ctx, lookupsOptions));
  },
};
