// Fault 7 (issue 32): the look-up source is slow. The demo's seller subgraph (a real federation
// subgraph, apps/demo/dist/sellers.js, its own process) answers every request after 500 ms while the
// fault tests' traffic flows (150 events/s for 40 s) over 5,000 listings, so most events name a
// seller the cache has not seen, and the cache holds 1,000. The gateway must keep its memory bounded
// and its event loop free (delay p99 ≤ 50 ms, measured inside it by its own metric), and deliver
// every event once, in order per partition, each with its seller looked up.
//
// The event-loop delay is judged only on a machine that is not oversubscribed (1-minute load average
// ≤ 2 × cores at the start and end of the traffic): on a shared box running others' builds at a load
// of 10-20 on 2 cores, a process is off-CPU for hundreds of ms at a time (its CPU profile shows a few
// samples per such stretch), which says nothing about the gateway. The test is then marked skipped,
// after every other assertion ran, with the figures in its reason.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sharedKafkaFromEnv, startApp, type AppProcess } from '@wirestream/testkit';
import { createFaultHarness, describeCounts, type Gateway, type RecordingClient } from './harness.js';

const LATENCY_MS = 500;
const EVENTS = 6_000;
const PER_SECOND = 150; // the fault tests' rate: 40 s of traffic
const LISTINGS = 5_000; // each listing has its own seller id (slr-00001 … slr-05000, drawn at random)
const CACHE_MAX_ENTRIES = 1_000;
const EVENT_LOOP_P99_MAX_S = 0.05;
/**
 * The gateway's old space, as deployments cap it (infra/k8s: 320 MiB of a 512 MiB budget), here
 * lower so that 40 s of traffic reach it. Uncapped, V8 lets garbage pile up: heap committed went
 * 57 → 159 MiB with 27 MiB live after GC, RSS +139 MiB still climbing (the same traffic without
 * look-ups: +16 MiB); capped at 96 MiB, RSS +62 MiB and flat over the last two thirds.
 */
const OLD_SPACE_MIB = 96;
/**
 * RSS may grow by this much over its reading right before traffic: the old space's cap (V8's heap,
 * garbage included, cannot pass it; it was ~55 MiB committed before traffic), the young generation
 * (≤ 48 MiB), and what the settings bound outside the heap's live data: received envelopes
 * ≤ GATEWAY_INBOUND_MAX_BYTES (16 MiB, then it stops reading Redis), renders waiting
 * ≤ GATEWAY_MAX_RENDERS_IN_FLIGHT (1,024), the cache ≤ 1,000 sellers, requests ≤ 8 × 100
 * representations. Nothing in it grows with the number of events or of distinct keys.
 */
const RSS_GROWTH_MAX_BYTES = 112 * 1_048_576;
/**
 * Live heap (after two forced GCs) may grow by this much from before to after the traffic: the
 * cache's 1,000 sellers (~0.5 MiB), metric series, the compiled operations (measured +3 to +6 MiB).
 * A leak of 1.4 KB per event (6,000 events) or per key would pass it.
 */
const LIVE_HEAP_GROWTH_MAX_BYTES = 8 * 1_048_576;

const LOOKUP_QUERY = 'subscription { listingUpdated { event_id listing { seller_info { seller_id seller { id display_name rating } } } } }';
// A second operation group asking the same source: its look-ups share the first one's requests.
const OTHER_LOOKUP_QUERY = 'subscription { listingUpdated { listing_id event_id listing { seller_info { seller_id seller { id listings_sold } } } } }';
const PLAIN_QUERY = 'subscription { listingUpdated { event_id } }';

/** The demo's look-up, as scripts/run-product.mjs adds it to the demo schema. */
function withSellerLookup(sdl: string): string {
  const sellerInfo = 'type SellerInfo {\n  seller_id: ID!\n';
  if (!sdl.includes(sellerInfo)) throw new Error('the auction schema\'s SellerInfo no longer starts with seller_id: update this test');
  return (
    sdl.replace(sellerInfo, `${sellerInfo}  seller: Seller @lookup(source: "sellers", key: "id: seller_id")\n`) +
    '\ntype Seller {\n  id: ID!\n  display_name: String!\n  rating: Float\n  is_verified: Boolean!\n  listings_sold: Int!\n}\n'
  );
}

/** The demo's seller subgraph on a free port, answering after `latencyMs`. */
async function startSellers(latencyMs: number): Promise<{ app: AppProcess; url: string }> {
  const app = startApp('demo', { SELLERS_PORT: '0', SELLERS_LATENCY_MS: String(latencyMs) }, 'sellers');
  const listening = await app.waitForLog((line) => line['msg'] === 'seller subgraph listening', 'the seller subgraph listening', 30_000);
  return { app, url: listening['url'] as string };
}

/** The gateway's memory after two forced GCs (GATEWAY_DEBUG_ENDPOINTS, node --expose-gc). */
async function memoryAfterGc(gateway: Gateway): Promise<{ rss: number; heapUsed: number; heapTotal: number; external: number }> {
  return (await (await fetch(`${gateway.httpBase}/debug/memory?gc=1`)).json()) as { rss: number; heapUsed: number; heapTotal: number; external: number };
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1_024 : 0;
}

/** The gateway's Prometheus text: one sample's value by series name and label text (0 for a declared series with no sample yet: prom-client prints none for a labelled counter never incremented). */
async function scrape(gateway: Gateway): Promise<string> {
  return (await fetch(`${gateway.httpBase}/metrics`)).text();
}
function sample(metrics: string, series: string, labels = ''): number {
  const line = metrics.split('\n').find((l) => l.startsWith(series) && l.includes(labels) && !l.startsWith('#'));
  if (line !== undefined) return Number(line.slice(line.lastIndexOf(' ') + 1));
  return metrics.includes(`# TYPE ${series} `) ? 0 : Number.NaN;
}

/** Positions that arrived after a higher offset of the same partition. */
function outOfOrder(client: RecordingClient): number {
  const last = new Map<string, bigint>();
  let count = 0;
  for (const position of client.positions) {
    const [partition = '', offset = '0'] = position.split(':');
    const previous = last.get(partition);
    if (previous !== undefined && BigInt(offset) <= previous) count++;
    else last.set(partition, BigInt(offset));
  }
  return count;
}

interface Seller {
  readonly id: string;
  readonly display_name?: string;
}
interface LookedUp {
  readonly listingUpdated: { readonly listing: { readonly seller_info: { readonly seller_id: string; readonly seller: Seller | null } } };
}

describe('fault 7: a look-up source answering in 500 ms under sustained traffic', () => {
  it('gateway memory stays bounded, its event loop free, every event delivered once in order with its seller', async (ctx) => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: sharedKafkaFromEnv()?.brokers ?? [], schema: withSellerLookup });
    onTestFinished(() => harness.close());
    const sellers = await startSellers(LATENCY_MS);
    onTestFinished(async () => {
      await sellers.app.stop();
    });
    await harness.startIngest();
    const gateway = await harness.startGateway({
      GATEWAY_LOOKUP_SOURCES: `sellers=${sellers.url}`,
      GATEWAY_LOOKUP_CACHE_MAX_ENTRIES: String(CACHE_MAX_ENTRIES),
      // What is tested is the gateway waiting on a slow source, not the timeout: one that a busy
      // machine's scheduling cannot trip (the default 2 s failed 7 of ~550 requests at a load of 15).
      GATEWAY_LOOKUP_TIMEOUT_MS: '10000',
      // /debug/memory?gc=1: live heap after two forced GCs, before and after the traffic.
      GATEWAY_DEBUG_ENDPOINTS: 'true',
      NODE_OPTIONS: `--expose-gc --max-old-space-size=${OLD_SPACE_MIB}`,
    });
    const pid = gateway.app.child.pid as number;
    const lookingUp = await harness.connectClients(gateway, 2, { query: LOOKUP_QUERY, keepResults: true, name: 'seller client' });
    const others = await harness.connectClients(gateway, 1, { query: OTHER_LOOKUP_QUERY, keepResults: true, name: 'other look-up client' });
    const plain = await harness.connectClients(gateway, 1, { query: PLAIN_QUERY, name: 'plain client' });
    const clients = [...lookingUp, ...others, ...plain];

    // Readings while the traffic flows: RSS every 500 ms, the event-loop delay of each 2 s window
    // (the gauge covers the interval since the previous scrape).
    const heapBefore = await memoryAfterGc(gateway);
    await scrape(gateway); // starts the first window now
    const rssBefore = rssBytes(pid);
    const rss: number[] = [];
    const loopP99: number[] = [];
    const loopMax: number[] = [];
    const rssTimer = setInterval(() => rss.push(rssBytes(pid)), 500);
    const loopTimer = setInterval(() => {
      void scrape(gateway).then((m) => {
        loopP99.push(sample(m, 'wirestream_gateway_event_loop_delay_seconds', 'quantile="0.99"'));
        loopMax.push(sample(m, 'wirestream_gateway_event_loop_delay_seconds', 'quantile="1"'));
      });
    }, 2_000);
    const loadAtStart = os.loadavg()[0] ?? 0;
    const stream = harness.startStream({ events: EVENTS, perSecond: PER_SECOND, listings: LISTINGS });
    let counts;
    try {
      counts = await harness.settle(clients, stream, 30_000);
    } finally {
      clearInterval(rssTimer);
      clearInterval(loopTimer);
    }
    const loadAtEnd = os.loadavg()[0] ?? 0;
    const metrics = await scrape(gateway);
    const heapAfter = await memoryAfterGc(gateway);
    const subgraph = (await (await fetch(sellers.url.replace('/graphql', '/stats'))).json()) as { requests: number; representations: number };

    const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;
    const peak = Math.max(...rss);
    const third = Math.floor(rss.length / 3);
    const results = [...lookingUp, ...others].flatMap((c) => c.results);
    const withErrors = results.filter((r) => r.errors !== undefined).length;
    const wrongSeller = results.filter((r) => {
      const info = (r.data as LookedUp | null | undefined)?.listingUpdated.listing.seller_info;
      return info?.seller?.id !== info?.seller_id;
    }).length;
    console.info(describeCounts('slow look-up', counts, startedAt, await harness.gatewayStats(gateway)));
    console.info(
      `[faults] slow look-up: subgraph ${LATENCY_MS} ms, ${subgraph.requests} requests for ${subgraph.representations} representations ` +
        `(gateway: ${sample(metrics, 'wirestream_gateway_lookup_requests_total')} requests, cache hits ${sample(metrics, 'wirestream_gateway_lookup_loads_total', 'cache="hit"')}, ` +
        `misses ${sample(metrics, 'wirestream_gateway_lookup_loads_total', 'cache="miss"')}, errors ${sample(metrics, 'wirestream_gateway_lookup_errors_total')}); ` +
        `Redis reading paused ${sample(metrics, 'wirestream_gateway_redis_paused_total')} times; results with errors ${withErrors}, seller not the event's ${wrongSeller}`,
    );
    const loopP99Max = Math.max(...loopP99);
    const cores = os.cpus().length;
    const load = `load average ${loadAtStart.toFixed(1)} → ${loadAtEnd.toFixed(1)} on ${cores} cores`;
    console.info(`[faults] slow look-up: after two forced GCs, heap used ${mib(heapBefore.heapUsed)} before traffic, ${mib(heapAfter.heapUsed)} after; heap total ${mib(heapBefore.heapTotal)}, ${mib(heapAfter.heapTotal)}; external ${mib(heapBefore.external)}, ${mib(heapAfter.external)}; RSS ${mib(heapBefore.rss)}, ${mib(heapAfter.rss)}`);
    console.info(
      `[faults] slow look-up: gateway RSS ${mib(rssBefore)} before traffic, peak ${mib(peak)} (+${mib(peak - rssBefore)}, bound +${mib(RSS_GROWTH_MAX_BYTES)}); ` +
        `max of thirds ${[rss.slice(0, third), rss.slice(third, 2 * third), rss.slice(2 * third)].map((xs) => mib(Math.max(...xs))).join(' / ')}; ` +
        `${load}; event-loop delay p99 per 2 s window max ${(loopP99Max * 1_000).toFixed(1)} ms (windows ${loopP99.map((s) => (s * 1_000).toFixed(1)).join(', ')} ms), max ${(Math.max(...loopMax) * 1_000).toFixed(1)} ms`,
    );

    for (const count of counts) expect(count, count.client).toMatchObject({ produced: EVENTS, missing: 0, duplicates: 0 });
    for (const client of clients) expect(outOfOrder(client), `${client.name} out of order`).toBe(0);
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    expect(results.length).toBe(3 * EVENTS);
    expect({ withErrors, wrongSeller }).toEqual({ withErrors: 0, wrongSeller: 0 });
    // Look-ups were batched and shared by both looking-up operations: fewer requests than events.
    expect(subgraph.requests).toBeLessThan(EVENTS);
    expect(heapAfter.heapUsed - heapBefore.heapUsed).toBeLessThanOrEqual(LIVE_HEAP_GROWTH_MAX_BYTES);
    expect(peak - rssBefore).toBeLessThanOrEqual(RSS_GROWTH_MAX_BYTES);
    // The gateway answered its metrics endpoint through the traffic (a window every 2 s of ~40 s).
    expect(loopP99.length).toBeGreaterThanOrEqual(15);
    expect(loopP99.every(Number.isFinite)).toBe(true);
    if (Math.max(loadAtStart, loadAtEnd) > 2 * cores) {
      const reason = `event-loop delay not judged on an oversubscribed machine (${load}): p99 per 2 s window max ${(loopP99Max * 1_000).toFixed(1)} ms; every other check passed`;
      console.info(`[faults] slow look-up: ${reason}`); // the reporter does not print a skip's note
      ctx.skip(reason);
    }
    expect(loopP99Max).toBeLessThanOrEqual(EVENT_LOOP_P99_MAX_S);
  });
});
