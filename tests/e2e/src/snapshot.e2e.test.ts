// Snapshot, then stream (decision 0024), end to end: the built ingest and gateway, a real Kafka topic
// of 3 partitions and a real redis-server. While a producer publishes continuously over 150 keys,
// subscribers join on every transport with the official clients (graphql-ws, graphql-sse,
// subscriptions-transport-ws) and @wirestream/client: each sees the current values, then every
// later event — per partition 0 gap and 0 duplicate past its seam, and each key's latest state.
// A tombstone reaches them as a deleted frame, and a later snapshot has no such key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import { createWirestreamClient } from '@wirestream/client';
import { startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

const PARTITIONS = 3;
const KEYS = Array.from({ length: 150 }, (_, i) => `lst-${i}`);
const STREAM_KEYS = KEYS.filter((k) => k !== 'lst-7');
const QUERY = 'subscription { priceChanged { listing_id seq } }';
const partitionOf = (key: string): number => Number(key.slice(4)) % PARTITIONS;

let stack: Stack;
let topic: string;
let port: number;
const disposers: (() => unknown)[] = [];

/** Every message Kafka acknowledged, per partition in offset order (`seq` null: a tombstone). */
const produced = new Map<number, { offset: string; key: string; seq: number | null }[]>();
let seq = 0;

/** One batch: `keys` updated (or deleted, `tombstone`), each to its key's partition; records the offsets Kafka gave. */
async function send(keys: readonly string[], tombstone = false): Promise<void> {
  const messages = keys.map((key) => ({ key, partition: partitionOf(key), seq: seq++ }));
  const metadata = await stack.send(
    topic,
    messages.map((m) => ({ key: m.key, partition: m.partition, value: tombstone ? null : JSON.stringify({ listingId: m.key, seq: m.seq }) })),
  );
  for (const { partition, baseOffset } of metadata) {
    const mine = messages.filter((m) => m.partition === partition);
    const list = produced.get(partition) ?? [];
    mine.forEach((m, i) => list.push({ offset: String(BigInt(baseOffset ?? '0') + BigInt(i)), key: m.key, seq: tombstone ? null : m.seq }));
    produced.set(partition, list);
  }
}

/** Publishes 6 random updates every ~15 ms until stopped. */
function startStream() {
  let running = true;
  const loop = (async () => {
    while (running) {
      // lst-7 only gets its first value, then its tombstone.
      await send(Array.from({ length: 6 }, () => STREAM_KEYS[Math.floor(Math.random() * STREAM_KEYS.length)] as string));
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

type Seen =
  | { readonly kind: 'entry' | 'live'; readonly key: string; readonly seq: number; readonly partition: number; readonly offset: string }
  | { readonly kind: 'end'; readonly positions: Record<string, string>; readonly truncated: boolean }
  | { readonly kind: 'deleted'; readonly key: string; readonly partition: number; readonly offset: string }
  | { readonly kind: 'other' };

function classify(payload: unknown): Seen {
  const p = payload as { data?: { priceChanged?: { listing_id: string; seq: number } } | null; extensions?: Record<string, unknown> };
  const ext = p.extensions ?? {};
  const position = ext['position'] as { partition: number; offset: string } | undefined;
  const changed = p.data?.priceChanged;
  if (changed && position) return { kind: ext['snapshot'] === true ? 'entry' : 'live', key: changed.listing_id, seq: changed.seq, partition: position.partition, offset: position.offset };
  if (typeof ext['snapshot'] === 'object' && ext['snapshot'] !== null) return { kind: 'end', ...(ext['snapshot'] as { positions: Record<string, string>; truncated: boolean }) };
  if (ext['deleted'] !== undefined && position) return { kind: 'deleted', key: (ext['deleted'] as { key: string }).key, partition: position.partition, offset: position.offset };
  return { kind: 'other' };
}

/** One subscriber per transport; `seen` is what its application got, in order. */
function subscribe(kind: 'graphql-ws' | 'graphql-sse' | 'legacy' | 'wirestream', query = QUERY) {
  const seen: Seen[] = [];
  const errors: unknown[] = [];
  const url = `ws://127.0.0.1:${port}/graphql`;
  const request = { query, extensions: { snapshot: true } };
  const next = (r: unknown) => void seen.push(classify(r));
  if (kind === 'graphql-ws') {
    const client = createWsClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });
    disposers.push(client.subscribe(request, { next, error: (e: unknown) => errors.push(e), complete: () => {} }), () => client.dispose());
  } else if (kind === 'graphql-sse') {
    const client = createSseClient({ url: `http://127.0.0.1:${port}/graphql`, retryAttempts: 0 });
    disposers.push(client.subscribe(request, { next, error: (e: unknown) => errors.push(e), complete: () => {} }), () => client.dispose());
  } else if (kind === 'legacy') {
    const client = new SubscriptionClient(url, { reconnect: false }, WebSocket);
    // Its request() sends the operation object as the start payload, `extensions` included.
    const subscription = client.request(request).subscribe({ next, error: (e: unknown) => errors.push(e) });
    disposers.push(() => subscription.unsubscribe(), () => client.close());
  } else {
    const client = createWirestreamClient({ url, webSocketImpl: WebSocket });
    disposers.push(
      client.subscribe(
        { query },
        {
          next,
          error: (e: unknown) => errors.push(e),
          complete: () => {},
          onSnapshot: (s) => void seen.push({ kind: 'end', positions: { ...s.positions }, truncated: s.truncated }),
          onDeleted: (d) => void seen.push({ kind: 'deleted', key: String(d.key), partition: d.position.partition, offset: d.position.offset }),
        },
        { snapshot: true },
      ),
      () => client.dispose(),
    );
  }
  return { kind, seen, errors };
}
type Subscriber = ReturnType<typeof subscribe>;

const endOf = (s: Subscriber) => s.seen.find((x): x is Extract<Seen, { kind: 'end' }> => x.kind === 'end');

/** Waits until the subscriber has every produced event past its seam. */
async function caughtUp(s: Subscriber): Promise<void> {
  await waitFor(
    () => {
      const end = endOf(s);
      if (!end) return false;
      return [...produced].every(([p, events]) => {
        const last = events.at(-1);
        const top = end.positions[String(p)];
        if (!last || (top !== undefined && BigInt(last.offset) <= BigInt(top))) return true;
        return s.seen.some((x) => (x.kind === 'live' || x.kind === 'deleted') && x.partition === p && x.offset === last.offset);
      });
    },
    { timeoutMs: 60_000, message: `${s.kind} subscriber to catch up` },
  );
}

/** Per partition: past the seam exactly the produced offsets (0 gap, 0 duplicate); entries then live give each key's latest state. */
function check(s: Subscriber) {
  const end = endOf(s) as Extract<Seen, { kind: 'end' }>;
  const endAt = s.seen.indexOf(end);
  let gaps = 0;
  let duplicates = 0;
  let staleEntries = 0;
  for (const [p, events] of produced) {
    const top = end.positions[String(p)];
    const past = events.filter((e) => top === undefined || BigInt(e.offset) > BigInt(top)).map((e) => e.offset);
    const live = s.seen.slice(endAt + 1).filter((x): x is Extract<Seen, { kind: 'live' | 'deleted' }> => (x.kind === 'live' || x.kind === 'deleted') && x.partition === p);
    const got = live.map((x) => x.offset);
    duplicates += got.length - new Set(got).size + got.filter((o) => !past.includes(o)).length;
    gaps += past.filter((o) => !got.includes(o)).length;
    const latest = new Map(events.filter((e) => top !== undefined && BigInt(e.offset) <= BigInt(top)).map((e) => [e.key, e]));
    for (const x of s.seen.slice(0, endAt)) {
      if (x.kind === 'entry' && x.partition === p && latest.get(x.key)?.offset !== x.offset) staleEntries++;
    }
  }
  const state = new Map<string, number>();
  for (const x of s.seen) {
    if (x.kind === 'entry' || x.kind === 'live') state.set(x.key, x.seq);
    if (x.kind === 'deleted') state.delete(x.key);
  }
  const want = new Map<string, number>();
  for (const events of produced.values()) {
    for (const e of events) {
      if (e.seq === null) want.delete(e.key);
      else want.set(e.key, e.seq);
    }
  }
  const mismatched = [...new Set([...state.keys(), ...want.keys()])].filter((k) => state.get(k) !== want.get(k)).length;
  const entries = s.seen.slice(0, endAt).filter((x) => x.kind === 'entry').length;
  const others = s.seen.filter((x) => x.kind === 'other').length;
  return { gaps, duplicates, staleEntries, mismatched, entries, live: s.seen.length - endAt - 1, others, errors: s.errors };
}

beforeAll(async () => {
  topic = uniqueName('price-snapshot');
  stack = await startStack({
    name: 'snapshot',
    schema: `type Price { listing_id: ID! seq: Int! }\ntype Subscription { priceChanged(listing_id: ID): Price @topic(name: "${topic}", key: "listing_id", snapshot: true) }\n`,
    topics: [{ topic, numPartitions: PARTITIONS }],
  });
  port = stack.gateway.port;
  stack.onStop(async () => {
    for (const dispose of disposers.reverse()) await Promise.resolve(dispose()).catch(() => {});
  });
});

afterAll(() => stack?.stop());

describe('snapshot, then stream, end to end', () => {
  it('subscribers joining on every transport while a producer publishes see the current values, then every later event once', async () => {
    // Every key gets a value, and ingest has written them (a plain live subscriber saw all 150).
    const probe = createWsClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    disposers.push(() => probe.dispose());
    let probed = 0;
    const ready = new Promise<void>((resolve) => {
      disposers.push(probe.subscribe({ query: QUERY, extensions: { start: true } }, { next: (r) => ((r.extensions as Record<string, unknown> | undefined)?.['start'] ? resolve() : probed++), error: () => {}, complete: () => {} }));
    });
    await ready;
    await send(KEYS);
    await waitFor(() => probed >= KEYS.length, { timeoutMs: 30_000, message: 'the first value of every key live' });
    const stop = startStream();
    const subscribers: Subscriber[] = [];
    for (const kind of ['graphql-ws', 'graphql-sse', 'legacy', 'wirestream', 'graphql-ws', 'graphql-sse', 'legacy', 'wirestream'] as const) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      subscribers.push(subscribe(kind));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    await send(['lst-7'], true); // a tombstone mid-stream
    await new Promise((resolve) => setTimeout(resolve, 300));
    await stop();
    for (const s of subscribers) await caughtUp(s);
    const results = subscribers.map((s) => ({ kind: s.kind, ...check(s) }));
    console.info(`[e2e] snapshot: ${results.map((r) => `${r.kind} ${r.entries}+${r.live}`).join(', ')} (entries+live)`);
    for (const r of results) {
      expect({ kind: r.kind, gaps: r.gaps, duplicates: r.duplicates, staleEntries: r.staleEntries, mismatched: r.mismatched, others: r.others, errors: r.errors }).toEqual({
        kind: r.kind,
        gaps: 0,
        duplicates: 0,
        staleEntries: 0,
        mismatched: 0,
        others: 0,
        errors: [],
      });
      expect(r.entries).toBeGreaterThan(100);
    }
    expect(subscribers.every((s) => s.seen.some((x) => x.kind === 'deleted' && x.key === 'lst-7'))).toBe(true);
    // A later snapshot no longer has the deleted key.
    const later = subscribe('graphql-ws', 'subscription { priceChanged(listing_id: "lst-7") { listing_id seq } }');
    await waitFor(() => endOf(later) !== undefined, { message: 'later snapshot ended' });
    expect(later.seen.filter((x) => x.kind === 'entry')).toEqual([]);
  });
});
