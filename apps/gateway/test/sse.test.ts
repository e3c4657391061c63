// GraphQL over SSE (graphql-sse distinct connections mode) on a real redis-server: one more
// subscriber of the same operation group, cursors in `id:`, Last-Event-ID resume, hostile input.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@wirestream/testkit';
import { collect, startTestGateway, type TestGateway } from './support/gateway.js';
import { openSse, positionOf, type SseResponse } from './support/sse.js';

const QUERY = 'subscription { listingUpdated { listing_id event_id } }';

let t: TestGateway;
let sseUrl: string;
const open: SseResponse[] = [];
beforeAll(async () => {
  t = await startTestGateway({ sseHeartbeatMs: 1_000, allowedOrigins: ['https://app.example.com'] });
  sseUrl = `${t.httpBase}/graphql`;
});
afterAll(async () => {
  await t?.stop();
});
afterEach(async () => {
  for (const s of open.splice(0)) s.abort();
  await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'no subscription left over' });
});

async function stream(url: string, options: Parameters<typeof openSse>[1] = {}): Promise<SseResponse> {
  const s = await openSse(url, options);
  open.push(s);
  return s;
}

const post = (body: unknown, headers: Record<string, string> = {}) => stream(sseUrl, { body: JSON.stringify(body), headers });

async function live(count: number): Promise<void> {
  await waitFor(() => t.gateway.stats().subscriptions === count && t.gateway.stats().confirmedChannels === 16, { message: `${count} subscription(s) live` });
}

async function publishMany(count: number): Promise<string[]> {
  const published: string[] = [];
  for (let i = 0; i < count; i++) published.push(await t.publishListing(`lst-${i % 5}`));
  return published;
}

const offsets = (s: SseResponse): string[] => s.nexts().flatMap((d) => (positionOf(d) ? [positionOf(d)?.offset as string] : []));
/** The `next` events but a stream's starting point (its first event when it does not resume). */
const results = (s: SseResponse): Record<string, unknown>[] => s.nexts().filter((d) => (d['extensions'] as { start?: unknown } | undefined)?.start === undefined);

describe('GraphQL over SSE', () => {
  it('serves POST and GET as subscribers of the same operation group as a WebSocket, with the same payload', async () => {
    const ws = collect(t.connect(), QUERY);
    const byPost = await post({ query: QUERY });
    const byGet = await stream(`${sseUrl}?query=${encodeURIComponent(QUERY)}`);
    expect([byPost.status, byGet.status]).toEqual([200, 200]);
    expect(byPost.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await live(3);
    expect(t.gateway.stats().groups).toBe(1);
    expect(t.gateway.stats().sseStreams).toBe(2);
    const published = await publishMany(4);
    await waitFor(() => results(byPost).length === 4 && results(byGet).length === 4 && ws.results.length === 4, { message: '4 events each' });
    expect(offsets(byPost)).toEqual(published);
    expect(results(byGet)).toEqual(results(byPost));
    expect(results(byPost)).toEqual(ws.results);
    expect(t.gateway.stats().executions).toBe(4); // one execution per event for all three
    const epoch = positionOf(results(byPost)[0] as Record<string, unknown>)?.epoch;
    // First the starting point (its id already a cursor), then one cursor per event.
    expect(byPost.nexts()[0]?.['extensions']).toMatchObject({ start: { epoch } });
    expect(byPost.events[0]?.id).toMatch(new RegExp(`^w1\\.${epoch}\\.`));
    expect(byPost.events.slice(1).map((e) => e.id)).toEqual(published.map((o) => `w1.${epoch}.0:${o}`));
    ws.dispose();
  });

  it('resumes from Last-Event-ID with exactly the events missed, once, then live', async () => {
    const first = await post({ query: QUERY });
    await live(1);
    await publishMany(3);
    await waitFor(() => results(first).length === 3, { message: 'first 3 events' });
    const cursor = first.lastEventId() as string;
    first.abort();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'first stream gone' });
    const missed = await publishMany(5);
    const resumed = await post({ query: QUERY }, { 'last-event-id': cursor });
    await waitFor(() => offsets(resumed).length === 5, { message: '5 missed events' });
    expect((resumed.nexts()[0]?.['extensions'] as { recovery?: { recovered: boolean } }).recovery?.recovered).toBe(true);
    const more = await publishMany(2);
    await waitFor(() => offsets(resumed).length === 7, { message: 'live after the replay' });
    expect(offsets(resumed)).toEqual([...missed, ...more]);
    // GET with the cursor in the query string (a new EventSource cannot set the header).
    const viaQuery = await stream(`${sseUrl}?query=${encodeURIComponent(QUERY)}&lastEventId=${encodeURIComponent(resumed.lastEventId() as string)}`);
    const after = await publishMany(1);
    await waitFor(() => offsets(viaQuery).length === 1, { message: 'only the new event' });
    expect(offsets(viaQuery)).toEqual(after);
  });

  it('replays a long gap in writes larger than the writer\'s 64 KiB buffer, every event intact and in order', async () => {
    // A replay chunk is 64 KiB of payloads; with the id and event lines each write is larger than the
    // buffer the SSE writer lays events out in, so it has to grow it mid-write (keeping what it holds).
    const first = await post({ query: QUERY });
    await live(1);
    await publishMany(1);
    await waitFor(() => results(first).length === 1, { message: 'first event' });
    const cursor = first.lastEventId() as string;
    first.abort();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'first stream gone' });
    const missed = await publishMany(900);
    const resumed = await post({ query: QUERY }, { 'last-event-id': cursor });
    await waitFor(() => offsets(resumed).length === 900, { message: '900 missed events', timeoutMs: 20_000 });
    expect(offsets(resumed)).toEqual(missed);
    expect(results(resumed).slice(1).map((d) => (d['data'] as { listingUpdated: { event_id: string } }).listingUpdated.event_id)).toEqual(missed.map((o) => `e-${o}`));
  }, 30_000);

  it('resumes a stream that received nothing from its starting point: exactly what was published after it became live', async () => {
    await publishMany(2); // history before the stream: never to be replayed to it
    const first = await post({ query: QUERY });
    await live(1);
    await waitFor(() => first.lastEventId() !== undefined, { message: 'the starting point' });
    const cursor = first.lastEventId() as string;
    expect(results(first)).toEqual([]);
    first.abort();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'first stream gone' });
    const missed = await publishMany(3);
    const resumed = await post({ query: QUERY }, { 'last-event-id': cursor });
    await waitFor(() => offsets(resumed).length === 3, { message: '3 missed events' });
    await new Promise((resolve) => setTimeout(resolve, 200)); // nothing more comes
    expect(offsets(resumed)).toEqual(missed);
  });

  it('answers GraphQL errors in the stream (next, complete) and queries at once', async () => {
    const bad = await post({ query: 'subscription { nope }' });
    await bad.ended;
    expect(bad.status).toBe(200);
    expect(bad.events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(bad.nexts()[0]?.['errors']).toBeDefined();
    const query = await post({ query: '{ topics { name } }' });
    await query.ended;
    expect(query.events.map((e) => e.event)).toEqual(['next', 'complete']);
  });

  it('sends heartbeat comments', async () => {
    const s = await post({ query: QUERY });
    await waitFor(() => (s.raw().match(/^:\n/gm) ?? []).length >= 2, { message: 'two heartbeats', timeoutMs: 5_000 });
  });

  it('ends every stream with a reconnect event on drain', async () => {
    // A gateway of its own: drain is final.
    const own = await startTestGateway();
    try {
      const s = await openSse(`${own.httpBase}/graphql`, { body: JSON.stringify({ query: QUERY }) });
      await waitFor(() => own.gateway.stats().subscriptions === 1, { message: 'subscribed' });
      await own.gateway.drain();
      await s.ended;
      const last = s.nexts().at(-1) as { extensions: { reconnect: { code: string } } };
      expect(last.extensions.reconnect.code).toBe('draining');
      expect(s.events.some((e) => e.event === 'complete')).toBe(false);
      expect((await openSse(`${own.httpBase}/graphql`, { body: JSON.stringify({ query: QUERY }) }).catch(() => undefined))?.status ?? 503).toBe(503);
    } finally {
      await own.stop();
    }
  });
});

describe('hostile SSE input: a clear 4xx, never a crash', () => {
  const cases: [string, () => Promise<SseResponse>, number, RegExp][] = [
    ['bad JSON body', () => stream(sseUrl, { body: '{"query": ' }), 400, /not valid JSON/],
    ['a body that is not an object', () => stream(sseUrl, { body: '[1]' }), 400, /JSON object/],
    ['no query', () => stream(sseUrl, { body: '{}' }), 400, /query must be/],
    ['variables not an object', () => stream(sseUrl, { body: JSON.stringify({ query: QUERY, variables: 'x' }) }), 400, /variables/],
    ['an oversized body', () => stream(sseUrl, { body: JSON.stringify({ query: QUERY, pad: 'x'.repeat(70_000) }) }), 413, /larger than 65536 bytes/],
    ['a bad cursor', () => post({ query: QUERY }, { 'last-event-id': 'w1.abc.0:1,0:2' }), 400, /Last-Event-ID header .*ascending/],
    ['a cursor of another format', () => post({ query: QUERY }, { 'last-event-id': '42' }), 400, /Last-Event-ID header must be an event id/],
    ['a bad cursor in the query string', () => stream(`${sseUrl}?query=${encodeURIComponent(QUERY)}&lastEventId=w1.e.99999:1`), 400, /lastEventId query parameter/],
    ['bad variables JSON in a GET', () => stream(`${sseUrl}?query=${encodeURIComponent(QUERY)}&variables={`), 400, /variables query parameter/],
    ['a bad ticket', () => stream(`${sseUrl}?query=${encodeURIComponent(QUERY)}&ticket=nope`), 401, /ticket/],
    ['no Accept: text/event-stream', () => stream(sseUrl, { body: JSON.stringify({ query: QUERY }), headers: { accept: 'application/json' } }), 406, /text\/event-stream/],
    ['an origin not allowed', () => post({ query: QUERY }, { origin: 'https://evil.example.com' }), 403, /GATEWAY_ALLOWED_ORIGINS/],
  ];
  it.each(cases)('%s', async (_name, request, status, message) => {
    const res = await request();
    await res.ended;
    expect(res.status).toBe(status);
    expect(res.raw()).toMatch(message);
    expect(t.gateway.isReady()).toBe(true);
  });

  it('answers CORS preflights for allowed origins only', async () => {
    const allowed = await fetch(sseUrl, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('last-event-id');
    const denied = await fetch(sseUrl, { method: 'OPTIONS', headers: { origin: 'https://evil.example.com' } });
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
  });
});
