// A browser's own EventSource (Debian's chromium, playwright-core) against the built ingest and
// gateway as processes, a real Kafka broker and redis-server, from a page of another origin: CORS
// with the origin allowlist, a JWT exchanged for a single-use ticket (EventSource sends no headers),
// every event once; then the page closes the stream, events pass, and a new EventSource with a new
// ticket and `lastEventId` gets exactly the missed ones.
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Page } from 'playwright-core';
import { freePort, startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

const CHROMIUM = '/usr/bin/chromium';
const PARTITIONS = 3;
const SECRET = 'an-eventsource-test-secret-of-32-bytes!';
const QUERY = 'subscription { changed { id n } }';

let stack: Stack;
let page: Page;
let topic: string;
let gatewayBase: string;
let sent = 0;

/** An HS256 JWT, signed here (the gateway verifies it with jose). */
function jwt(scope: string): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1_000);
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: 'browser', scope, iat: now, exp: now + 3_600 })}`;
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
}

async function produce(count: number): Promise<number[]> {
  const ns = Array.from({ length: count }, () => sent++);
  await stack.send(topic, ns.map((n) => ({ key: `k${n}`, partition: n % PARTITIONS, value: JSON.stringify({ id: `k${n}`, n }) })));
  return ns;
}

async function subscriptions(): Promise<number> {
  return (await stack.gateway.stats())['subscriptions'] ?? 0;
}

beforeAll(async () => {
  topic = uniqueName('eventsource');
  // The page's origin: another port, so every request to the gateway is cross-origin.
  const sitePort = await freePort();
  stack = await startStack({
    name: 'eventsource',
    schema: `type Changed { id: ID! n: Int }\ntype Subscription { changed(id: ID): Changed @topic(name: "${topic}", key: "id") }\n`,
    topics: [{ topic, numPartitions: PARTITIONS }],
    gatewayEnv: { GATEWAY_AUTH_MODE: 'jwt', GATEWAY_JWT_HS256_SECRET: SECRET, GATEWAY_ALLOWED_ORIGINS: `http://127.0.0.1:${sitePort}` },
  });
  gatewayBase = stack.gateway.httpUrl;
  // Each resource is handed to the stack as soon as it exists: a later failure stops only what is there.
  const site: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>partner page</title>'));
  stack.onStop(() => new Promise((resolve) => site.close(resolve)));
  await new Promise<void>((resolve) => site.listen(sitePort, '127.0.0.1', resolve));
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  stack.onStop(() => browser.close());
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${sitePort}/`);
});

// Before the fixture, this hook awaited `new Promise((resolve) => site?.close(resolve))`: when
// beforeAll failed before the site existed, `site?.close` never called resolve and the hook hung
// for its whole timeout. The stack stops only what was started, each step bounded.
afterAll(() => stack?.stop());

interface PageEvent {
  id: string;
  n: number | undefined;
}

/** In the page: a ticket for the token, then `new EventSource(…?ticket=…[&lastEventId=…])`; events go to window.received. */
async function openEventSource(token: string, lastEventId: string | undefined): Promise<void> {
  await page.evaluate(
    async ({ base, query, token, lastEventId }) => {
      const w = window as unknown as { received: PageEvent[]; source?: EventSource };
      w.received = [];
      const answer = await fetch(`${base}/graphql/ticket`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      const { ticket } = (await answer.json()) as { ticket: string };
      const resume = lastEventId === undefined ? '' : `&lastEventId=${encodeURIComponent(lastEventId)}`;
      const source = new EventSource(`${base}/graphql?query=${encodeURIComponent(query)}&ticket=${ticket}${resume}`);
      source.addEventListener('next', (e) => {
        const data = JSON.parse((e as MessageEvent<string>).data) as { data?: { changed?: { n: number } } };
        w.received.push({ id: e.lastEventId, n: data.data?.changed?.n });
      });
      w.source = source;
    },
    { base: gatewayBase, query: QUERY, token, lastEventId },
  );
}

const received = (): Promise<PageEvent[]> => page.evaluate(() => (window as unknown as { received: PageEvent[] }).received);
const ns = (events: readonly PageEvent[]): number[] => events.flatMap((e) => (e.n === undefined ? [] : [e.n])).sort((a, b) => a - b);

describe('a browser EventSource', () => {
  it('subscribes cross-origin with a ticket, gets every event once, and resumes with lastEventId after closing', async () => {
    const token = jwt('subscribe:changed');
    await openEventSource(token, undefined);
    await waitFor(async () => (await subscriptions()) === 1, { message: 'the EventSource subscribed' });
    const first = await produce(30);
    await waitFor(async () => ns(await received()).length >= 30, { timeoutMs: 30_000, message: '30 events in the page' });
    const seen = await received();
    expect(ns(seen)).toEqual(first);
    const last = seen.at(-1)?.id as string;
    expect(last).toMatch(/^w1\.[0-9a-f-]+\.0:\d+,1:\d+,2:\d+$/);

    await page.evaluate(() => (window as unknown as { source: EventSource }).source.close());
    await waitFor(async () => (await subscriptions()) === 0, { message: 'the closed EventSource released' });
    const missed = await produce(20);
    await openEventSource(token, last);
    await waitFor(async () => (await subscriptions()) === 1, { message: 'resumed' });
    const live = await produce(10);
    await waitFor(async () => ns(await received()).length >= 30, { timeoutMs: 30_000, message: '20 missed + 10 live' });
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would arrive now
    expect(ns(await received())).toEqual([...missed, ...live]);
  });
});
