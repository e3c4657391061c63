// Replay from a time (extensions.since, SSE's ?since=): history from the first event at or after the
// time, per partition, then live with no gap and no duplicate; the explicit signal when history does
// not reach back. A real redis-server under a real gateway; history written as ingest writes it.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  channelName,
  encodeEnvelope,
  encodeEnvelopeBatch,
  historyAppendArgs,
  historyBatchArgs,
  historyPartitionsKey,
  historyStreamKey,
  shardOf,
} from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { collect, rawSocket, startTestGateway, type ExecutionResult, type TestGateway } from './support/gateway.js';
import { openSse } from './support/sse.js';

const QUERY = 'subscription { listingUpdated { listing_id event_id } }';
/** Event timestamps of the tests: one second apart from here. */
const BASE_MS = Date.parse('2026-12-04T09:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

interface Position {
  partition: number;
  offset: string;
  epoch: string;
}
const positionOf = (r: { extensions?: unknown }): Position | undefined => (r.extensions as { position?: Position } | undefined)?.position;
const recoveryOf = (r: { extensions?: unknown }) => (r.extensions as { recovery?: Record<string, unknown> } | undefined)?.recovery;
const startOf = (r: { extensions?: unknown }) => (r.extensions as { start?: { positions: Record<string, string> } } | undefined)?.start;
const keyed = (results: readonly { extensions?: unknown }[]): string[] =>
  results.flatMap((r) => {
    const p = positionOf(r);
    return p ? [`${p.partition}:${p.offset}`] : [];
  });
const range = (partition: number, from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `${partition}:${from + i}`);

let t: TestGateway;
let redis: Redis;
beforeAll(async () => {
  t = await startTestGateway();
  redis = new Redis(t.redisServer.url);
});
afterAll(async () => {
  redis?.disconnect();
  await t?.stop();
});
/**
 * Each test writes its own partitions: the gateway drops a live event at or below the highest offset
 * it delivered live on a partition, and that mark outlives a test.
 */
let P = 0;
beforeEach(() => {
  P += 2;
});
afterEach(async () => {
  await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'no subscription left over' });
  await redis.flushall(); // every test writes its own history (the epoch goes too: positions are not compared across tests)
});

function envelopeOf(partition: number, offset: number, ts: number): { listingId: string; envelope: string } {
  const listingId = `lst-${offset % 5}`;
  const payload = JSON.stringify({ event_id: `e-${partition}-${offset}`, event_type: 'ListingUpdated', listing_id: listingId, occurred_at: 'now' });
  return { listingId, envelope: encodeEnvelope({ topic: t.topic, partition, offset: String(offset), key: listingId, ts }, payload) };
}

/** One event as ingest's event form stores it (history first), and published live when `live`. */
async function store(partition: number, offset: number, ts: number, live = false): Promise<void> {
  const { listingId, envelope } = envelopeOf(partition, offset, ts);
  const channel = channelName('ws', t.topic, shardOf(listingId, 16));
  await redis.multi().call('XADD', ...historyAppendArgs('wsh', t.topic, partition, String(offset), channel, envelope)).sadd(historyPartitionsKey('wsh', t.topic), String(partition)).exec();
  if (live) await redis.publish(channel, envelope);
}

/** Offsets [from, to] as one batch entry (ingest's default form), history only; event i at BASE_MS + i s. */
async function storeChunk(partition: number, from: number, to: number): Promise<void> {
  const offsets: string[] = [];
  const shards: number[] = [];
  const envelopes: Buffer[] = [];
  for (let i = from; i <= to; i++) {
    const { listingId, envelope } = envelopeOf(partition, i, BASE_MS + i * 1_000);
    offsets.push(String(i));
    shards.push(shardOf(listingId, 16));
    envelopes.push(Buffer.from(envelope));
  }
  const parts = encodeEnvelopeBatch(partition, offsets, shards, envelopes).map((p) => ({ channel: channelName('ws', t.topic, p.shard), bytes: p.bytes }));
  await redis.call('XADD', ...historyBatchArgs(historyStreamKey('wsh', t.topic, partition), String(to), parts));
  await redis.sadd(historyPartitionsKey('wsh', t.topic), String(partition));
}

async function live(count: number): Promise<void> {
  await waitFor(() => t.gateway.stats().subscriptions === count && t.gateway.stats().confirmedChannels === 16, { message: `${count} subscription(s) live` });
}

describe('replay from a time (extensions.since)', () => {
  it('event form: exactly the events from that time, then live, no gap and no duplicate', async () => {
    for (let i = 0; i < 40; i++) await store(P, i, BASE_MS + i * 1_000);
    const sub = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS + 25_500) });
    await waitFor(() => keyed(sub.results).length === 14, { message: 'offsets 26…39 from history' });
    expect(recoveryOf(sub.results[0] as ExecutionResult)).toMatchObject({ recovered: true });
    for (let i = 40; i < 45; i++) await store(P, i, BASE_MS + i * 1_000, true);
    await waitFor(() => keyed(sub.results).length === 19, { message: 'then live' });
    expect(keyed(sub.results)).toEqual(range(P, 26, 44));
    expect(t.gateway.stats().replaysByTime).toBeGreaterThan(0);
    sub.dispose();
  });

  it('batch form, several partitions, a time inside a chunk; with start, the start is where the replay begins', async () => {
    for (let from = 0; from < 300; from += 50) await storeChunk(P, from, from + 49);
    for (let from = 0; from < 120; from += 30) await storeChunk(P + 1, from, from + 29);
    const since = BASE_MS + 117_000; // offset 117 of partition 0 (inside the chunk 100…149), 117 of partition 1 (inside 90…119)
    const sub = collect(t.connect(), QUERY, undefined, { since: iso(since), start: true });
    const expected = [...range(P, 117, 299), ...range(P + 1, 117, 119)];
    await waitFor(() => keyed(sub.results).length === expected.length, { message: 'every event from the time' });
    expect(keyed(sub.results).sort()).toEqual(expected.sort());
    expect(recoveryOf(sub.results[0] as ExecutionResult)).toMatchObject({ recovered: true });
    expect(startOf(sub.results[1] as ExecutionResult)?.positions).toEqual({ [P]: '116', [P + 1]: '116' });
    sub.dispose();
  });

  it('a time older than every event replays all of an untrimmed history (recovered); a time after them all, nothing but live', async () => {
    for (let i = 0; i < 10; i++) await store(P, i, BASE_MS + i * 1_000);
    const all = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS - 3_600_000) });
    await waitFor(() => keyed(all.results).length === 10, { message: 'all of history' });
    expect(recoveryOf(all.results[0] as ExecutionResult)).toMatchObject({ recovered: true });
    all.dispose();
    const later = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS + 3_600_000) });
    await waitFor(() => later.results.length === 1, { message: 'the recovery signal' });
    await live(1);
    await store(P, 9, BASE_MS + 9_000, true); // a late re-publish of an old offset: not sent
    await store(P, 10, BASE_MS + 10_000, true);
    await waitFor(() => keyed(later.results).length === 1, { message: 'the live event' });
    expect(keyed(later.results)).toEqual([`${P}:10`]);
    later.dispose();
  });

  it('history that no longer reaches back says so: recovered false, the oldest time it holds, then its oldest events', async () => {
    for (let i = 0; i < 20; i++) await store(P, i, BASE_MS + i * 1_000);
    await redis.xtrim(historyStreamKey('wsh', t.topic, P), 'MAXLEN', 5);
    const sub = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS + 2_000) });
    await waitFor(() => keyed(sub.results).length === 5, { message: 'the 5 retained events' });
    expect(recoveryOf(sub.results[0] as ExecutionResult)).toMatchObject({ recovered: false, partitions: [P], oldest: iso(BASE_MS + 15_000) });
    expect(keyed(sub.results)).toEqual(range(P, 15, 19));
    expect(t.gateway.stats().replaysByTimeNotRecovered).toBeGreaterThan(0);
    sub.dispose();
  });

  it('meets live traffic published during the replay with no gap and no duplicate', async () => {
    for (let from = 0; from < 2_000; from += 100) await storeChunk(P, from, from + 99);
    const sub = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS + 500_000) });
    for (let i = 2_000; i < 2_200; i++) await store(P, i, BASE_MS + i * 1_000, true);
    await waitFor(() => keyed(sub.results).length === 1_700, { message: 'offsets 500…2199', timeoutMs: 20_000 });
    expect(keyed(sub.results)).toEqual(range(P, 500, 2_199));
    sub.dispose();
  });

  it('a resume wins over since; since with a snapshot, or not RFC 3339, is refused naming the field', async () => {
    for (let i = 0; i < 10; i++) await store(P, i, BASE_MS + i * 1_000);
    const first = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS) });
    await waitFor(() => keyed(first.results).length === 10, { message: 'all 10' });
    const epoch = positionOf(first.results[1] as ExecutionResult)?.epoch as string;
    first.dispose();
    const resumed = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS), resume: { epoch, positions: { [P]: '7' } } });
    await waitFor(() => keyed(resumed.results).length === 2, { message: 'after the position, not the time' });
    expect(keyed(resumed.results)).toEqual([`${P}:8`, `${P}:9`]);
    resumed.dispose();
    const withSnapshot = collect(t.connect(), QUERY, undefined, { since: iso(BASE_MS), snapshot: true });
    const malformed = collect(t.connect(), QUERY, undefined, { since: '2026-12-04 9:00' });
    await waitFor(() => withSnapshot.errors.length === 1 && malformed.errors.length === 1, { message: 'two errors' });
    expect(JSON.stringify(withSnapshot.errors[0])).toContain('extensions.since cannot be combined with extensions.snapshot');
    expect(JSON.stringify(malformed.errors[0])).toContain('must be an RFC 3339 time');
  });

  it('works on the legacy protocol (start payload extensions) and on SSE (?since=)', async () => {
    for (let i = 0; i < 10; i++) await store(P, i, BASE_MS + i * 1_000);
    const legacy = rawSocket(t.url, 'graphql-ws');
    await legacy.opened;
    legacy.ws.send(JSON.stringify({ type: 'connection_init' }));
    legacy.ws.send(JSON.stringify({ id: '1', type: 'start', payload: { query: QUERY, extensions: { since: iso(BASE_MS + 6_000) } } }));
    const dataOf = () => (legacy.messages as { type: string; payload?: { extensions?: unknown } }[]).filter((m) => m.type === 'data').map((m) => m.payload ?? {});
    await waitFor(() => keyed(dataOf()).length === 4, { message: 'legacy: offsets 6…9' });
    expect(keyed(dataOf())).toEqual(range(P, 6, 9));
    legacy.ws.close();

    const search = new URLSearchParams({ query: QUERY, since: iso(BASE_MS + 8_000) });
    const sse = await openSse(`${t.httpBase}/graphql?${search.toString()}`);
    await waitFor(() => keyed(sse.nexts()).length === 2, { message: 'SSE: offsets 8, 9' });
    expect(keyed(sse.nexts())).toEqual([`${P}:8`, `${P}:9`]);
    expect(recoveryOf(sse.nexts()[0] as { extensions?: unknown })).toMatchObject({ recovered: true });
    // The cursor after the replay resumes exactly: nothing before 9 again.
    expect(sse.lastEventId()).toContain(`${P}:9`);
    sse.abort();
  });
});
