// The web console in Debian's chromium (playwright-core) against the built ingest and gateway as
// processes, a real Kafka broker and redis-server: a subscription started in GraphiQL receives a
// produced Kafka event, the live view tables events with their positions, the vital signs move.
// Takes the README's screenshots (docs/images/ with WIRESTREAM_UPDATE_SCREENSHOTS=1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { auctionSchemaPath } from '@wirestream/schema';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { findRepoRoot, startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

/** Debian's package (scripts/bootstrap.sh installs it); playwright never downloads a browser here. */
const CHROMIUM = '/usr/bin/chromium';
const VIEWPORT = { width: 1440, height: 860 };

const root = findRepoRoot();
/**
 * The README's screenshots are refreshed only when asked (WIRESTREAM_UPDATE_SCREENSHOTS=1); an
 * ordinary run writes them to .wirestream/screenshots so it leaves the work tree clean.
 */
const imagesDir = process.env['WIRESTREAM_UPDATE_SCREENSHOTS'] === '1' ? join(root, 'docs', 'images') : join(root, '.wirestream', 'screenshots');
let stack: Stack;
let page: Page;
let listingTopic: string;
let bidTopic: string;
let base: string;
let background: NodeJS.Timeout | undefined;
const generator = createAuctionEventGenerator({ seed: 8, listings: 12, realTime: true });
/** Every URL the page requested: all must be the gateway's (no CDN, no fonts from the net). */
const requested: string[] = [];
const pageErrors: string[] = [];

async function produce(events: readonly DemoEvent[]): Promise<void> {
  for (const [source, topic] of [['listing-events', listingTopic], ['bid-events', bidTopic]] as const) {
    const messages = events.filter((e) => e.topic === source).map((e) => ({ key: e.key, value: JSON.stringify(e.value) }));
    if (messages.length > 0) await stack.send(topic, messages);
  }
}

function nextOf(topic: DemoEvent['topic']): DemoEvent {
  for (;;) {
    const event = generator.next();
    if (event.topic === topic) return event;
  }
}

const stats = (): Promise<Record<string, number>> => stack.gateway.stats();

/** Waits until the gateway holds `count` subscriptions on confirmed Redis channels (pub/sub drops earlier events). */
function subscriptionsLive(count: number): Promise<unknown> {
  return waitFor(
    async () => {
      const s = await stats();
      return s['subscriptions'] === count && s['channels'] !== undefined && s['channels'] > 0 && s['channels'] === s['confirmedChannels'];
    },
    { timeoutMs: 15_000, message: `${count} subscription(s) on confirmed Redis channels` },
  );
}

beforeAll(async () => {
  const suffix = uniqueName('console');
  listingTopic = `listing-events-${suffix}`;
  bidTopic = `bid-events-${suffix}`;
  stack = await startStack({
    name: 'console',
    schema: readFileSync(auctionSchemaPath, 'utf8').replace('"listing-events"', JSON.stringify(listingTopic)).replace('"bid-events"', JSON.stringify(bidTopic)),
    topics: [listingTopic, bidTopic].map((topic) => ({ topic, numPartitions: 3 })),
    gatewayEnv: { GATEWAY_CONSOLE: 'true', GATEWAY_CONSOLE_DIR: join(root, 'apps', 'console', 'dist') },
  });
  base = stack.gateway.httpUrl;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  stack.onStop(() => browser.close());
  stack.onStop(() => clearInterval(background)); // first: it produces
  page = await browser.newPage({ viewport: VIEWPORT });
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (err) => pageErrors.push(err.message));
  mkdirSync(imagesDir, { recursive: true });
});

afterAll(() => stack?.stop());

describe('the web console', () => {
  it('runs a subscription in GraphiQL, streams events into the live view, and charts the vital signs', async () => {
    // 1. Playground: the first ready example (listingUpdated) runs over graphql-ws.
    await page.goto(`${base}/console/#playground`);
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 15_000 });
    const editorText = await page.evaluate(() => (document.querySelector('.graphiql-query-editor .CodeMirror') as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue());
    expect(editorText).toContain('subscription ListingUpdated($listing_id: ID, $event_type: String, $where: ListingEventWhere) {');
    expect(await page.locator('.graphiql-tab').count()).toBe(2); // one example per subscription field
    // Schema docs from the SDL the gateway serves (introspection is off): open them at the Subscription type.
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    await page.locator('.graphiql-doc-explorer').getByText('Subscription', { exact: true }).click();
    await expect(page.locator('.graphiql-doc-explorer').textContent()).resolves.toContain('Bids as they are placed.');
    await page.locator('.graphiql-execute-button').click();
    await subscriptionsLive(1);
    await expect(page.getByTestId('connection').textContent()).resolves.toBe('connected');

    const listing = nextOf('listing-events');
    const listingEventId = String(listing.value['eventId']);
    await produce([listing]);
    const response = await waitFor(
      async () => {
        const text = await page.evaluate(() => (document.querySelector('.graphiql-response .CodeMirror') as unknown as { CodeMirror: { getValue(): string } } | null)?.CodeMirror.getValue() ?? '');
        return text.includes(listingEventId) ? text : undefined;
      },
      { timeoutMs: 20_000, message: `the result pane to show listing event ${listingEventId}` },
    );
    const result = JSON.parse(response) as { data: { listingUpdated: { event_id: string } }; extensions: { position: { topic: string; partition: number; offset: unknown } } };
    expect(result.data.listingUpdated.event_id).toBe(listingEventId);
    expect(result.extensions.position).toMatchObject({ topic: listingTopic, partition: expect.any(Number) as number });
    await page.screenshot({ path: join(imagesDir, 'console-playground.png') });

    // 2. Live view: bids, with position and rate. A steady background stream from here on feeds the rate and the charts.
    await page.getByTestId('nav-live').click();
    await page.getByTestId('live-field').selectOption('bidPlaced');
    // The topic and its format (from @topic in the SDL the gateway serves).
    await expect(page.getByTestId('live-topic').textContent()).resolves.toBe(`${bidTopic} · JSON`);
    await page.getByTestId('live-toggle').click();
    await subscriptionsLive(2);
    const bid = nextOf('bid-events');
    const bidEventId = String(bid.value['eventId']);
    await produce([bid]);
    const row = page.getByTestId('live-row').filter({ hasText: bidEventId });
    await row.waitFor({ timeout: 20_000 });
    expect(Number(await row.getByTestId('live-partition').textContent())).toBeGreaterThanOrEqual(0);
    expect(await row.getByTestId('live-offset').textContent()).toMatch(/^\d+$/);
    expect(await row.textContent()).toContain(bidTopic);

    // The variables box: a variable the document does not declare is refused by name; one it declares filters.
    await page.getByTestId('live-toggle').click(); // Stop
    await page.getByTestId('live-variables').fill('{"listingId": "lst-000001"}');
    await page.getByTestId('live-toggle').click();
    await expect(page.getByTestId('live-error').textContent()).resolves.toContain('the document does not declare $listingId (it declares $listing_id, $bidder_id, $where)');
    const chosen = nextOf('bid-events');
    let other = nextOf('bid-events');
    while (other.key === chosen.key) other = nextOf('bid-events');
    await page.getByTestId('live-variables').fill(JSON.stringify({ listing_id: chosen.key }));
    await page.getByTestId('live-toggle').click();
    await subscriptionsLive(2);
    await produce([other, chosen]);
    await page.getByTestId('live-row').filter({ hasText: String(chosen.value['eventId']) }).waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('live-row').filter({ hasText: String(other.value['eventId']) }).count()).toBe(0);
    await page.getByTestId('live-toggle').click(); // Stop, then every bid again, the latest value per key (conflation)
    await page.getByTestId('live-variables').fill('');
    await page.getByTestId('live-conflate').check();
    await page.getByTestId('live-toggle').click();
    await subscriptionsLive(2);

    let producing = false;
    background = setInterval(() => {
      if (producing) return;
      producing = true;
      void produce([nextOf('bid-events'), nextOf('bid-events'), nextOf('bid-events'), nextOf('listing-events')])
        .catch(() => {})
        .finally(() => (producing = false));
    }, 200);
    await waitFor(async () => Number(/^(\d+)\/s$/.exec((await page.getByTestId('live-rate').locator('strong').textContent()) ?? '')?.[1] ?? 0) >= 5, {
      timeoutMs: 15_000,
      message: 'the live view to show the background stream rate (about 15 bids/s)',
    });
    expect(await page.getByTestId('live-row').count()).toBeGreaterThan(3);
    await page.screenshot({ path: join(imagesDir, 'console-live.png') });

    // 3. Vital signs: every chart has a value, and they move while events flow.
    await page.getByTestId('nav-vitals').click();
    const vital = async (key: string) => (await page.getByTestId(`vital-${key}`).locator('.vital-value').textContent()) ?? '';
    await waitFor(
      async () => {
        expect(Number(await vital('connections'))).toBeGreaterThanOrEqual(1);
        expect(Number(await vital('subscriptions'))).toBe(2);
        expect(Number(await vital('operations'))).toBe(2);
        expect(await vital('events-in')).toMatch(/^[\d.,]+\/s$/);
        expect(parseFloat(await vital('frames-out'))).toBeGreaterThan(0);
        expect(await vital('p99')).toMatch(/^[\d.,]+ ms$/);
        expect(await vital('rss')).toMatch(/^[\d.]+ MiB$/);
        expect(await vital('heap')).toMatch(/^[\d.]+ MiB$/);
        return true;
      },
      { timeoutMs: 15_000, message: 'every vital sign to have a value' },
    );
    const samples = async () => Number(/(\d+) samples/.exec((await page.locator('.vitals-head').textContent()) ?? '')?.[1] ?? 0);
    const before = await samples();
    const framesBefore = (await stats())['framesOut'] ?? 0;
    // A few more samples than needed to see them move, so the committed screenshot shows some history.
    await waitFor(async () => (await samples()) >= Math.max(before + 3, 25), { timeoutMs: 30_000, message: 'vital-sign samples to keep coming' });
    expect((await stats())['framesOut']).toBeGreaterThan(framesBefore);
    // The charts draw a line once there are two samples.
    expect(await page.getByTestId('vital-frames-out').locator('path.line').getAttribute('d')).toMatch(/^M.+L/);
    await page.screenshot({ path: join(imagesDir, 'console-vitals.png') });

    // Nothing came from anywhere but the gateway, and the page threw nothing.
    const foreign = requested.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith('data:'));
    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
