// Replay from a time (decision 0040), end to end: the built ingest and gateway, a real Kafka topic of
// two partitions whose events carry timestamps one second apart over the last twenty minutes, and a
// real redis-server. A @wirestream/client subscription with `since` ten minutes back gets exactly the
// events from that time, then live ones while a producer keeps publishing: 0 missing, 0 duplicate.
// On a second topic whose partition 0 history was trimmed (as retention does), a time older than
// history gets the explicit signal (recovered: false, the oldest time held) and that partition from
// its oldest retained event; the untrimmed partition is replayed whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { createClient as createWsClient } from 'graphql-ws';
import { createWirestreamClient, type Recovery } from '@wirestream/client';
import { historyStreamKey } from '@wirestream/wire';
import { startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

const PARTITIONS = 2;
const HISTORY_EVENTS = 1_200; // 20 minutes at one a second
let stack: Stack;
let topic: string;
let trimmedTopic: string;
let port: number;
const disposers: (() => unknown)[] = [];

interface Produced {
  readonly offset: string;
  readonly ts: number;
}
/** Every message Kafka acknowledged, per topic and partition in offset order. */
const produced = new Map<string, Produced[]>();
const producedOf = (t: string, p: number): Produced[] => produced.get(`${t}/${p}`) ?? [];
let seq = 0;

/** Sends `count` events spread over the partitions, the i-th stamped `ts(i)`. */
async function send(t: string, count: number, ts: (i: number) => number): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => ({ partition: i % PARTITIONS, key: `lst-${i % 50}`, ts: ts(i), seq: seq++ }));
  const metadata = await stack.send(
    t,
    messages.map((m) => ({ key: m.key, partition: m.partition, timestamp: String(m.ts), value: JSON.stringify({ listingId: m.key, seq: m.seq }) })),
  );
  for (const { partition, baseOffset } of metadata) {
    const list = produced.get(`${t}/${partition}`) ?? [];
    messages.filter((m) => m.partition === partition).forEach((m, i) => list.push({ offset: String(BigInt(baseOffset ?? '0') + BigInt(i)), ts: m.ts }));
    produced.set(`${t}/${partition}`, list);
  }
}

/** Waits until a live probe saw `count` events of the topic: ingest wrote them to history. */
async function ingested(query: string, count: number): Promise<void> {
  const probe = createWsClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  let seen = 0;
  await new Promise<void>((resolve) => {
    const stop = probe.subscribe({ query, extensions: { since: '1970-01-01T00:00:00Z' } }, {
      next: (r) => {
        if ((r.extensions as Record<string, unknown> | undefined)?.['position'] && ++seen === count) resolve();
      },
      error: () => {},
      complete: () => {},
    });
    disposers.push(stop);
  });
  await probe.dispose();
}

type Got = Map<number, string[]>;
const record = (got: Got, extensions: unknown): void => {
  const position = (extensions as { position?: { partition: number; offset: string } } | undefined)?.position;
  if (position) got.set(position.partition, [...(got.get(position.partition) ?? []), position.offset]);
};
/** Per partition, what is missing from `want` and what came more than once or was not wanted. */
function compare(got: Got, t: string, want: (p: number) => string[]): { missing: number; duplicates: number; unwanted: number } {
  let missing = 0;
  let duplicates = 0;
  let unwanted = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    const offsets = got.get(p) ?? [];
    const wanted = new Set(want(p));
    missing += [...wanted].filter((o) => !offsets.includes(o)).length;
    duplicates += offsets.length - new Set(offsets).size;
    unwanted += offsets.filter((o) => !wanted.has(o)).length;
    expect(offsets, `partition ${p} of ${t} in offset order`).toEqual([...offsets].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
  }
  return { missing, duplicates, unwanted };
}

beforeAll(async () => {
  topic = uniqueName('since-events');
  trimmedTopic = uniqueName('since-trimmed');
  stack = await startStack({
    name: 'since',
    schema: `type Price { listing_id: ID! seq: Int! }\ntype Subscription {\n  priceChanged(listing_id: ID): Price @topic(name: "${topic}", key: "listing_id")\n  trimmedChanged(listing_id: ID): Price @topic(name: "${trimmedTopic}", key: "listing_id")\n}\n`,
    topics: [topic, trimmedTopic].map((t) => ({ topic: t, numPartitions: PARTITIONS })),
  });
  port = stack.gateway.port;
  stack.onStop(async () => {
    for (const dispose of disposers.reverse()) await Promise.resolve(dispose()).catch(() => {});
  });
});

afterAll(() => stack?.stop());

describe('replay from a time, end to end', () => {
  it('since ten minutes back: exactly the events from that time, then live, 0 missing / 0 duplicate', async () => {
    const t0 = Date.now() - 20 * 60_000;
    for (let i = 0; i < HISTORY_EVENTS; i += 100) await send(topic, 100, (j) => t0 + (i + j) * 1_000);
    const query = 'subscription { priceChanged { listing_id seq } }';
    await ingested(query, HISTORY_EVENTS);

    const since = t0 + 10 * 60_000 - 500; // ten minutes back, between two events: from the 601st on
    const client = createWirestreamClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket });
    disposers.push(() => client.dispose());
    const got: Got = new Map();
    const recoveries: Recovery[] = [];
    const errors: unknown[] = [];
    // A producer keeps publishing (stamped now) while the replay runs.
    let running = true;
    const live = (async () => {
      while (running) {
        await send(topic, 10, () => Date.now());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    disposers.push(client.subscribe({ query }, { next: (r) => record(got, r.extensions), error: (e) => errors.push(e), complete: () => {}, onRecovery: (r) => recoveries.push(r) }, { since: new Date(since) }));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    running = false;
    await live;
    await waitFor(() => [0, 1].every((p) => (got.get(p) ?? []).includes(producedOf(topic, p).at(-1)?.offset ?? '-')), { timeoutMs: 60_000, message: 'every partition up to its last produced event' });
    const result = compare(got, topic, (p) => producedOf(topic, p).filter((e) => e.ts >= since).map((e) => e.offset));
    const replayed = [0, 1].reduce((n, p) => n + producedOf(topic, p).filter((e) => e.ts >= since && e.ts < t0 + HISTORY_EVENTS * 1_000).length, 0);
    console.info(`[e2e] since: ${replayed} events from history, ${[...got.values()].reduce((n, o) => n + o.length, 0) - replayed} live; ${JSON.stringify(result)}`);
    expect(result).toEqual({ missing: 0, duplicates: 0, unwanted: 0 });
    expect(replayed).toBe(600);
    expect(recoveries).toEqual([expect.objectContaining({ recovered: true })]);
    expect(errors).toEqual([]);
  });

  it('older than history: recovered false with the oldest time held, then that partition from its oldest retained event', async () => {
    const t0 = Date.now() - 60 * 60_000;
    for (let i = 0; i < 400; i += 100) await send(trimmedTopic, 100, (j) => t0 + (i + j) * 1_000);
    const query = 'subscription { trimmedChanged { listing_id seq } }';
    await ingested(query, 400);
    // What ingest's retention does after a while: partition 0 keeps its newest entries only.
    const cut = producedOf(trimmedTopic, 0)[100]?.offset as string;
    execFileSync('redis-cli', ['-u', stack.redis.url, 'XTRIM', historyStreamKey('wsh', trimmedTopic, 0), 'MINID', `${cut}-0`]);

    const client = createWsClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    disposers.push(() => client.dispose());
    const got: Got = new Map();
    const signals: unknown[] = [];
    disposers.push(
      client.subscribe({ query, extensions: { since: new Date(t0 - 60_000).toISOString() } }, {
        next: (r) => {
          const recovery = (r.extensions as Record<string, unknown> | undefined)?.['recovery'];
          if (recovery) signals.push(recovery);
          else record(got, r.extensions);
        },
        error: () => {},
        complete: () => {},
      }),
    );
    await waitFor(() => [0, 1].every((p) => (got.get(p) ?? []).includes(producedOf(trimmedTopic, p).at(-1)?.offset ?? '-')), { timeoutMs: 30_000, message: 'both partitions to their end' });
    const first = (got.get(0) ?? [])[0] as string;
    const oldest = producedOf(trimmedTopic, 0).find((e) => e.offset === first);
    expect(BigInt(first)).toBeGreaterThan(BigInt(producedOf(trimmedTopic, 0)[0]?.offset ?? '0'));
    expect(BigInt(first)).toBeLessThanOrEqual(BigInt(cut));
    expect(signals).toEqual([expect.objectContaining({ recovered: false, partitions: [0], oldest: new Date(oldest?.ts ?? 0).toISOString() })]);
    const result = compare(got, trimmedTopic, (p) => producedOf(trimmedTopic, p).filter((e) => p === 1 || BigInt(e.offset) >= BigInt(first)).map((e) => e.offset));
    console.info(`[e2e] since older than history: partition 0 from offset ${first} (cut at ${cut}); ${JSON.stringify(result)}`);
    expect(result).toEqual({ missing: 0, duplicates: 0, unwanted: 0 });
  });
});
