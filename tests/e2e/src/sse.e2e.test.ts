// GraphQL over SSE end to end: Kafka → ingest (process) → Redis → gateway (process) → the official
// graphql-sse client next to a graphql-ws client, every event once; then a raw stream that
// disconnects and resumes with Last-Event-ID on a three-partition topic: exactly what it missed, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import { startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

const PARTITIONS = 3;
const QUERY = 'subscription { changed { id n } }';

interface Changed {
  id: string;
  n: number;
}
type Result = { data?: { changed?: Changed } | null; extensions?: Record<string, unknown> };

let stack: Stack;
let topic: string;
let httpBase: string;
let sent = 0;
const disposers: (() => unknown)[] = [];

/** Produces `count` events round-robin over the partitions; returns their `n`s. */
async function produce(count: number): Promise<number[]> {
  const ns = Array.from({ length: count }, () => sent++);
  await stack.send(topic, ns.map((n) => ({ key: `k${n}`, partition: n % PARTITIONS, value: JSON.stringify({ id: `k${n}`, n }) })));
  return ns;
}

const nsOf = (results: readonly Result[]): number[] => results.flatMap((r) => (r.data?.changed ? [r.data.changed.n] : []));
const sorted = (ns: readonly number[]): number[] => [...ns].sort((a, b) => a - b);

beforeAll(async () => {
  topic = uniqueName('sse-events');
  stack = await startStack({
    name: 'sse',
    schema: `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${topic}", key: "id") }\n`,
    topics: [{ topic, numPartitions: PARTITIONS }],
  });
  httpBase = stack.gateway.httpUrl;
  stack.onStop(async () => {
    for (const dispose of disposers) await Promise.resolve(dispose());
  });
});

afterAll(() => stack?.stop());

const stats = (): Promise<Record<string, number>> => stack.gateway.stats();

describe('GraphQL over SSE, end to end', () => {
  it('the official graphql-sse client gets every event once, the same as a graphql-ws client, from one execution', async () => {
    const sse: SseClient = createSseClient({ url: `${httpBase}/graphql`, retryAttempts: 0 });
    const ws: WsClient = createWsClient({ url: stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
    disposers.push(() => sse.dispose(), () => ws.dispose());
    const bySse: Result[] = [];
    const byWs: Result[] = [];
    const errors: unknown[] = [];
    disposers.push(sse.subscribe<Result['data']>({ query: QUERY }, { next: (r) => void bySse.push(r as Result), error: (e) => void errors.push(e), complete: () => {} }));
    disposers.push(ws.subscribe({ query: QUERY }, { next: (r) => void byWs.push(r as Result), error: (e) => void errors.push(e), complete: () => {} }));
    await waitFor(async () => (await stats())['subscriptions'] === 2 && (await stats())['groups'] === 1, { message: 'both subscribed, one operation group' });
    const ns = await produce(60);
    await waitFor(() => nsOf(bySse).length >= 60 && nsOf(byWs).length >= 60, { timeoutMs: 60_000, message: '60 events on each' });
    expect(errors).toEqual([]);
    expect(sorted(nsOf(bySse))).toEqual(ns);
    // The SSE stream's first result is its starting point (data-less, extensions.start), then the same events.
    expect(bySse[0]?.data).toBeUndefined();
    expect(bySse[0]?.extensions?.["start"]).toBeDefined();
    expect(bySse.slice(1)).toEqual(byWs);
    sse.dispose();
    void ws.dispose();
  });

  it('a stream that reconnects with Last-Event-ID gets exactly the events it missed, once, then live', async () => {
    await waitFor(async () => (await stats())['subscriptions'] === 0, { message: 'previous clients gone' });
    const first = await openStream({});
    await waitFor(async () => (await stats())['subscriptions'] === 1, { message: 'stream subscribed' });
    // The stream is owed the events after its start (start.ts): under load the start can come after a
    // few events were already in history, so produce only once the start frame has arrived.
    await waitFor(() => first.results[0]?.extensions?.['start'] !== undefined, { timeoutMs: 60_000, message: "the stream's start" });
    const seen = await produce(30);
    await waitFor(() => nsOf(first.results).length === 30, { timeoutMs: 60_000, message: 'first 30' });
    const cursor = first.lastId();
    expect(cursor).toMatch(/^w1\.[0-9a-f-]+\.0:\d+,1:\d+,2:\d+$/);
    first.abort();
    await waitFor(async () => (await stats())['subscriptions'] === 0, { message: 'first stream gone' });
    const missed = await produce(30);
    // Whether ingest wrote them to history before the stream comes back or they arrive live after, each comes once.
    const resumed = await openStream({ 'last-event-id': cursor });
    const live = await produce(15);
    await waitFor(() => nsOf(resumed.results).length >= 45, { timeoutMs: 60_000, message: '30 missed + 15 live' });
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would arrive now
    expect((resumed.results[0]?.extensions as { recovery?: { recovered: boolean } }).recovery?.recovered).toBe(true);
    expect(sorted(nsOf(resumed.results))).toEqual([...missed, ...live]);
    expect(nsOf(first.results).sort((a, b) => a - b)).toEqual(seen);
    resumed.abort();
  });
});

/** A raw event stream (what EventSource does), keeping results and the last `id:`. */
async function openStream(headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await fetch(`${httpBase}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: QUERY }),
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const results: Result[] = [];
  let lastId: string | undefined;
  void (async () => {
    let buffer = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          for (const line of buffer.slice(0, cut).split('\n')) {
            if (line.startsWith('id: ')) lastId = line.slice(4);
            else if (line.startsWith('data: ')) results.push(JSON.parse(line.slice(6)) as Result);
          }
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch {
      // aborted
    }
  })();
  return { results, lastId: () => lastId as string, abort: () => controller.abort() };
}
