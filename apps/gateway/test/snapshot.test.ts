// Snapshot, then stream (decision 0024) over a real redis-server written as ingest writes it
// (support/snapshot.ts): the seam under concurrent publishing (0 gap, 0 duplicate, each key's latest
// state), key filters, the whole topic and its cap, tombstones, every transport, the limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { shardOf } from '@wirestream/wire';
import { startRedis, waitFor, type RedisServer } from '@wirestream/testkit';
import { rawSocket } from './support/gateway.js';
import { openSse } from './support/sse.js';
import { checkView, classify, startSnapshotGateway, type Seen, type SnapshotGateway } from './support/snapshot.js';

const QUERY = 'subscription($where: ListingEventWhere) { listingUpdated(where: $where) { listing_id occurred_at } }';
const PARTITIONS = 2;
const partitionOf = (key: string): number => shardOf(key, PARTITIONS);

let redis: RedisServer;
let g: SnapshotGateway;
const clients: Client[] = [];

beforeAll(async () => {
  redis = await startRedis();
  g = await startSnapshotGateway({ snapshotMaxKeys: 5_000 }, redis);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose())));
  await g?.stop();
  await redis?.stop();
});

function connect(url = g.url): Client {
  const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  clients.push(client);
  return client;
}

/** An official graphql-ws subscription recording what it sees. */
function watch(client: Client, variables: Record<string, unknown> = {}, extensions: Record<string, unknown> = { snapshot: true }) {
  const seen: Seen[] = [];
  const errors: unknown[] = [];
  const dispose = client.subscribe({ query: QUERY, variables, extensions }, { next: (r) => seen.push(classify(r)), error: (e: unknown) => errors.push(e), complete: () => {} });
  return { seen, errors, dispose };
}

/** Writes `n` updates of random keys among `keys`, in chunks per partition, as ingest would. */
async function publishUpdates(keys: readonly string[], n: number, seq: { value: number }, chunk = 10): Promise<void> {
  for (let i = 0; i < n; i += chunk) {
    const byPartition = new Map<number, { key: string; seq: number }[]>();
    for (let j = 0; j < chunk; j++) {
      const key = keys[Math.floor(Math.random() * keys.length)] as string;
      const list = byPartition.get(partitionOf(key)) ?? [];
      list.push({ key, seq: seq.value++ });
      byPartition.set(partitionOf(key), list);
    }
    await Promise.all([...byPartition].map(([p, events]) => g.writeChunk(p, events)));
  }
}

/** Waits until the view has every written event of each partition that it matches. */
async function caughtUp(seen: readonly Seen[], matches: (key: string) => boolean = () => true): Promise<void> {
  await waitFor(
    () => {
      const end = seen.find((s): s is Extract<Seen, { kind: 'end' }> => s.kind === 'end');
      if (!end) return false;
      return [...g.written].every(([p, events]) => {
        const last = events.filter((e) => matches(e.key)).at(-1);
        if (!last) return true;
        const top = end.positions[String(p)];
        if (top !== undefined && BigInt(last.offset) <= BigInt(top)) return true;
        return seen.some((s) => (s.kind === 'live' || s.kind === 'deleted') && s.partition === p && s.offset === last.offset);
      });
    },
    { timeoutMs: 20_000, message: 'subscriber caught up with every written event' },
  );
}

describe('snapshot, then stream', () => {
  it('joins the stream with no gap and no duplicate while producers publish: 12 subscribers (whole topic and key filters) see each key\'s latest state', async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `lst-${i}`);
    const seq = { value: 0 };
    await publishUpdates(keys, 600, seq);
    const picked = new Set(keys.slice(0, 40));
    const watchers: { seen: Seen[]; errors: unknown[]; matches: (key: string) => boolean }[] = [];
    // Producers keep publishing while subscribers join, one every few chunks.
    const producing = publishUpdates(keys, 1_500, seq, 10);
    for (let i = 0; i < 12; i++) {
      await publishUpdates(keys, 40, seq, 10);
      const filtered = i % 3 === 2;
      const w = watch(connect(), filtered ? { where: { listing_id: { in: [...picked] } } } : {});
      watchers.push({ ...w, matches: filtered ? (k) => picked.has(k) : () => true });
    }
    await producing;
    let totalLive = 0;
    for (const w of watchers) {
      await caughtUp(w.seen, w.matches);
      const view = checkView(w.seen, g.written, w.matches);
      expect(w.errors).toEqual([]);
      expect({ gaps: view.gaps, duplicates: view.duplicates, stateMismatches: view.stateMismatches, problems: view.problems, truncated: view.end.truncated }).toEqual({
        gaps: 0,
        duplicates: 0,
        stateMismatches: 0,
        problems: [],
        truncated: false,
      });
      expect(view.end.keys).toBe(view.entries);
      totalLive += view.live;
    }
    // The seam really was crossed: subscribers joined mid-stream and got live events after their snapshot.
    expect(totalLive).toBeGreaterThan(0);
    console.info(`[snapshot] 12 subscribers: ${watchers.map((w) => checkView(w.seen, g.written, w.matches)).map((v) => `${v.entries}+${v.live}`).join(', ')} (entries+live), 0 gap, 0 duplicate`);
  });

  it('reads only the keys of a key argument or a where, and sends a tombstone as a deleted frame; a later snapshot has no such key', async () => {
    await g.writeChunk(partitionOf('del-1'), [{ key: 'del-1', seq: 1 }]);
    await g.writeChunk(partitionOf('del-2'), [{ key: 'del-2', seq: 2 }]);
    const byArgument = connect().subscribe(
      { query: 'subscription { listingUpdated(listing_id: "del-1") { listing_id occurred_at } }', extensions: { snapshot: true } },
      { next: (r) => argSeen.push(classify(r)), error: () => {}, complete: () => {} },
    );
    const argSeen: Seen[] = [];
    const byWhere = watch(connect(), { where: { listing_id: { in: ['del-1', 'del-2', 'del-none'] } } });
    await waitFor(() => argSeen.some((s) => s.kind === 'end') && byWhere.seen.some((s) => s.kind === 'end'), { message: 'both snapshots ended' });
    expect(argSeen.filter((s) => s.kind === 'entry').map((s) => (s as { key: string }).key)).toEqual(['del-1']);
    expect(byWhere.seen.filter((s) => s.kind === 'entry').map((s) => (s as { key: string }).key).sort()).toEqual(['del-1', 'del-2']);
    const [offset] = await g.writeChunk(partitionOf('del-1'), [{ key: 'del-1', deleted: true }]);
    await waitFor(() => argSeen.some((s) => s.kind === 'deleted') && byWhere.seen.some((s) => s.kind === 'deleted'), { message: 'deleted frames' });
    expect(argSeen.at(-1)).toEqual({ kind: 'deleted', key: 'del-1', partition: partitionOf('del-1'), offset });
    const later = watch(connect(), { where: { listing_id: { in: ['del-1', 'del-2'] } } });
    await waitFor(() => later.seen.some((s) => s.kind === 'end'), { message: 'later snapshot ended' });
    expect(later.seen.filter((s) => s.kind === 'entry').map((s) => (s as { key: string }).key)).toEqual(['del-2']);
    byArgument();
  });

  it('caps a whole-topic snapshot at GATEWAY_SNAPSHOT_MAX_KEYS (truncated) and refuses more named keys, a topic without a snapshot and a malformed value', async () => {
    const small = await startSnapshotGateway({ snapshotMaxKeys: 20 }, redis);
    try {
      await small.writeChunk(0, Array.from({ length: 30 }, (_, i) => ({ key: `k-${i}`, seq: i })));
      const whole = watch(connect(small.url));
      await waitFor(() => whole.seen.some((s) => s.kind === 'end'), { message: 'snapshot ended' });
      const end = whole.seen.find((s) => s.kind === 'end') as Extract<Seen, { kind: 'end' }>;
      expect({ keys: end.keys, truncated: end.truncated, entries: whole.seen.filter((s) => s.kind === 'entry').length }).toEqual({ keys: 20, truncated: true, entries: 20 });
      const many = watch(connect(small.url), { where: { listing_id: { in: Array.from({ length: 21 }, (_, i) => `k-${i}`) } } });
      const bids = watch(connect(small.url), {}, { snapshot: true });
      const bidsErrors: unknown[] = [];
      connect(small.url).subscribe({ query: 'subscription { bidPlaced { bid_id } }', extensions: { snapshot: true } }, { next: () => {}, error: (e: unknown) => bidsErrors.push(e), complete: () => {} });
      const malformed = watch(connect(small.url), {}, { snapshot: 'yes' });
      await waitFor(() => many.errors.length > 0 && bidsErrors.length > 0 && malformed.errors.length > 0, { message: 'three refusals' });
      const message = (errors: unknown[]) => (errors[0] as { message: string }[])[0]?.message;
      expect(message(many.errors)).toBe('extensions.snapshot: the subscription names 21 keys, over the limit of 20 (GATEWAY_SNAPSHOT_MAX_KEYS); ask for fewer keys.');
      expect(message(bidsErrors)).toMatch(/bidPlaced reads topic "bid-events", which keeps no snapshot; declare the field with @topic\(snapshot: true\)/);
      expect(message(malformed.errors)).toMatch(/^extensions\.snapshot must be true/);
      bids.dispose();
    } finally {
      await small.stop();
    }
  });

  it('composes with extensions.start (the start is the seam, in the end frame) and lets extensions.resume win', async () => {
    await g.writeChunk(0, [{ key: 'lst-start', seq: 7 }]);
    const started = watch(connect(), { where: { listing_id: { eq: 'lst-start' } } }, { snapshot: true, start: true });
    await waitFor(() => started.seen.some((s) => s.kind === 'end'), { message: 'snapshot ended' });
    const end = started.seen.find((s) => s.kind === 'end') as Extract<Seen, { kind: 'end' }>;
    expect(end.start).toEqual({ epoch: expect.any(String) as string, positions: end.positions });
    const epoch = (end.start as { epoch: string }).epoch;
    const resumed = watch(connect(), { where: { listing_id: { eq: 'lst-start' } } }, { snapshot: true, resume: { epoch, positions: end.positions } });
    const [offset] = await g.writeChunk(0, [{ key: 'lst-start', seq: 8 }]);
    await waitFor(() => resumed.seen.some((s) => s.kind === 'live'), { message: 'resumed subscription live' });
    expect(resumed.seen.map((s) => s.kind)).toEqual(['other', 'live']); // the recovery signal, then the event: no snapshot
    expect((resumed.seen[0] as { payload: { extensions: { recovery: { recovered: boolean } } } }).payload.extensions.recovery.recovered).toBe(true);
    expect(resumed.seen[1]).toMatchObject({ kind: 'live', key: 'lst-start', offset });
  });

  it('serves the snapshot, the end frame and deleted frames on the legacy protocol and over SSE', async () => {
    await g.writeChunk(partitionOf('tx-1'), [{ key: 'tx-1', seq: 1 }]);
    const where = { listing_id: { in: ['tx-1'] } };
    const legacy = rawSocket(g.url, 'graphql-ws');
    await legacy.opened;
    legacy.ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    legacy.ws.send(JSON.stringify({ id: '1', type: 'start', payload: { query: QUERY, variables: { where }, extensions: { snapshot: true } } }));
    const sse = await openSse(`${g.httpBase}/graphql`, { body: JSON.stringify({ query: QUERY, variables: { where }, extensions: { snapshot: true } }) });
    const legacyData = () => (legacy.messages as { type: string; payload: unknown }[]).filter((m) => m.type === 'data').map((m) => classify(m.payload));
    const sseSeen = () => sse.nexts().map(classify);
    await waitFor(() => legacyData().some((s) => s.kind === 'end') && sseSeen().some((s) => s.kind === 'end'), { message: 'both snapshots ended' });
    await g.writeChunk(partitionOf('tx-1'), [{ key: 'tx-1', seq: 2 }]);
    await g.writeChunk(partitionOf('tx-1'), [{ key: 'tx-1', deleted: true }]);
    await waitFor(() => legacyData().some((s) => s.kind === 'deleted') && sseSeen().some((s) => s.kind === 'deleted'), { message: 'deleted on both' });
    for (const seen of [legacyData(), sseSeen()]) expect(seen.map((s) => s.kind)).toEqual(['entry', 'end', 'live', 'deleted']);
    // SSE: entries carry no id (a stream cut mid-snapshot asks again); the end frame's id is the seam.
    const ids = sse.events.filter((e) => e.event === 'next').map((e) => e.id);
    expect(ids[0]).toBeUndefined();
    expect(ids.slice(1).every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    sse.abort();
    legacy.ws.close();
  });

  it('sends 5,000 entries to a socket with a 64 KiB backpressure limit without tripping it (chunks wait for room)', async () => {
    const tight = await startSnapshotGateway({ maxBackpressureBytes: 65_536 }, redis);
    try {
      for (let i = 0; i < 5_000; i += 500) await tight.writeChunk(0, Array.from({ length: 500 }, (_, j) => ({ key: `big-${i + j}`, seq: i + j })));
      const w = watch(connect(tight.url));
      await waitFor(() => w.seen.some((s) => s.kind === 'end'), { timeoutMs: 30_000, message: 'big snapshot ended' });
      expect(w.errors).toEqual([]);
      expect(w.seen.filter((s) => s.kind === 'entry')).toHaveLength(5_000);
      expect(tight.gateway.stats()).toMatchObject({ snapshots: 1, snapshotEntries: 5_000 });
    } finally {
      await tight.stop();
    }
  });
});
