// Kafka → ingest (process) → Redis → gateway (process) → official graphql-ws clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';

type ExecutionResult = FormattedExecutionResult<Record<string, unknown>, unknown>;
import { auctionSchemaPath } from '@wirestream/schema';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';
import { referenceSnakeKeys } from './reference-snake-case.js';

const MONEY = '{ amount_cents currency_code }';
const BID = `{ bid_id bidder_id amount ${MONEY} placed_at is_auto_bid }`;
const LISTING_EVENT = `{ event_id event_type listing_id occurred_at listing {
  listing_id title description status category_path primary_property_id image_urls
  seller_info { seller_id display_name rating is_verified address { street_line1 address2_line city postal_code country_code } }
  reserve_price ${MONEY} current_price ${MONEY} recent_bids ${BID} } }`;
const BID_EVENT = `{ event_id event_type listing_id bid_id bidder_id amount ${MONEY} placed_at is_auto_bid previous_high_bid ${BID} }`;

const FILTERED_LISTING = 'lst-000003';

let stack: Stack;
let listingTopic: string;
let bidTopic: string;
const clients: Client[] = [];

function subscribe(query: string) {
  const client = createClient({ url: stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  clients.push(client);
  const results: ExecutionResult[] = [];
  const errors: unknown[] = [];
  client.subscribe({ query }, { next: (r) => results.push(r), error: (e: unknown) => errors.push(e), complete: () => {} });
  return { results, errors };
}

async function produce(events: readonly DemoEvent[]): Promise<void> {
  // One send per topic keeps each key's events in order within its partition.
  for (const topic of [listingTopic, bidTopic]) {
    const source = topic === listingTopic ? 'listing-events' : 'bid-events';
    const messages = events.filter((e) => e.topic === source).map((e) => ({ key: e.key, value: JSON.stringify(e.value) }));
    if (messages.length > 0) await stack.send(topic, messages);
  }
}

beforeAll(async () => {
  const suffix = uniqueName('e2e');
  listingTopic = `listing-events-${suffix}`;
  bidTopic = `bid-events-${suffix}`;
  stack = await startStack({
    name: 'e2e',
    schema: readFileSync(auctionSchemaPath, 'utf8').replace('"listing-events"', JSON.stringify(listingTopic)).replace('"bid-events"', JSON.stringify(bidTopic)),
    topics: [listingTopic, bidTopic].map((topic) => ({ topic, numPartitions: 3 })),
  });
  stack.onStop(() => Promise.all(clients.map((c) => Promise.resolve(c.dispose()))));
});

afterAll(() => stack?.stop());

describe('the first end-to-end stream', () => {
  it('delivers exactly the snake_cased events, filtered, in per-key order; a non-JSON message goes to the DLQ and the stream goes on', async () => {
    const allListings = subscribe(`subscription { listingUpdated ${LISTING_EVENT} }`);
    const oneListing = subscribe(`subscription { listingUpdated(listing_id: "${FILTERED_LISTING}") ${LISTING_EVENT} }`);
    const allBids = subscribe(`subscription { bidPlaced ${BID_EVENT} }`);
    await waitFor(
      async () => {
        const s = await stack.gateway.stats();
        return s['groups'] === 3 && s['channels'] === s['confirmedChannels'] && s['channels'] === 32;
      },
      { message: 'three operations subscribed to all 32 Redis channels' },
    );

    const generator = createAuctionEventGenerator({ seed: 7, listings: 6 });
    const before = Array.from({ length: 60 }, () => generator.next());
    const after = Array.from({ length: 60 }, () => generator.next());
    await produce(before);
    await stack.send(listingTopic, [{ key: FILTERED_LISTING, value: '{"listingId": "lst-000003", oops' }]);
    await produce(after);
    const events = [...before, ...after];
    const listingEvents = events.filter((e) => e.topic === 'listing-events');
    const bidEvents = events.filter((e) => e.topic === 'bid-events');
    const filteredEvents = listingEvents.filter((e) => e.key === FILTERED_LISTING);
    expect(filteredEvents.length).toBeGreaterThan(0);

    await waitFor(
      () =>
        allListings.results.length >= listingEvents.length &&
        allBids.results.length >= bidEvents.length &&
        oneListing.results.length >= filteredEvents.length,
      { timeoutMs: 60_000, message: `${listingEvents.length} listing, ${bidEvents.length} bid, ${filteredEvents.length} filtered deliveries` },
    );

    const payloads = (results: ExecutionResult[], field: string) =>
      results.map((r) => (r.data as Record<string, Record<string, unknown>>)[field]);
    const byEventId = (list: readonly unknown[]) =>
      [...list].sort((a, b) => String((a as { event_id: string }).event_id).localeCompare((b as { event_id: string }).event_id));

    // Exactly the expected events: nothing missing, nothing extra, every key snake_cased, values intact.
    expect(allListings.errors).toEqual([]);
    expect(byEventId(payloads(allListings.results, 'listingUpdated'))).toEqual(
      byEventId(listingEvents.map((e) => referenceSnakeKeys(e.value))),
    );
    expect(byEventId(payloads(allBids.results, 'bidPlaced'))).toEqual(byEventId(bidEvents.map((e) => referenceSnakeKeys(e.value))));
    // The filter: only the one listing, all of it, in the order produced.
    expect(payloads(oneListing.results, 'listingUpdated')).toEqual(filteredEvents.map((e) => referenceSnakeKeys(e.value)));

    // Per-key order: for every listing, events arrive in the order they were produced.
    for (const [results, source, field] of [
      [allListings.results, listingEvents, 'listingUpdated'],
      [allBids.results, bidEvents, 'bidPlaced'],
    ] as const) {
      const keys = new Set(source.map((e) => e.key));
      for (const key of keys) {
        const produced = source.filter((e) => e.key === key).map((e) => e.value['eventId']);
        const received = payloads(results, field)
          .filter((p) => p?.['listing_id'] === key)
          .map((p) => p?.['event_id']);
        expect(received, `order of ${key}`).toEqual(produced);
      }
    }

    // Every delivery carries its Kafka position; offsets only grow within a partition.
    const lastOffset = new Map<number, bigint>();
    for (const r of allListings.results) {
      const position = (r.extensions as { position: { topic: string; partition: number; offset: string } }).position;
      expect(position.topic).toBe(listingTopic);
      const previous = lastOffset.get(position.partition) ?? -1n;
      expect(BigInt(position.offset)).toBeGreaterThan(previous);
      lastOffset.set(position.partition, BigInt(position.offset));
    }

    // The malformed message is in <topic>.dlq, untouched, with the reason and where it came from.
    const dlq = stack.kafka.consumer({ groupId: uniqueName('dlq-reader') });
    await dlq.connect();
    await dlq.subscribe({ topic: `${listingTopic}.dlq`, fromBeginning: true });
    const dead: { value: string; headers: Record<string, string> }[] = [];
    await dlq.run({
      eachMessage: ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        dead.push({ value: message.value?.toString() ?? '', headers });
        return Promise.resolve();
      },
    });
    await waitFor(() => dead.length === 1, { timeoutMs: 30_000, message: 'the dead letter' });
    await dlq.disconnect();
    expect(dead[0]?.value).toBe('{"listingId": "lst-000003", oops');
    expect(dead[0]?.headers).toMatchObject({
      'wirestream-dlq-reason': 'INVALID_JSON',
      'wirestream-dlq-original-topic': listingTopic,
    });
    expect(dead[0]?.headers['wirestream-dlq-detail']).toMatch(/not valid JSON/);
    expect(
      stack.ingest.lines.some((l) => l['msg'] === 'message dead-lettered' && l['topic'] === listingTopic && typeof l['offset'] === 'string'),
    ).toBe(true);

    // Nothing more trickles in: no duplicates.
    const stats = await stack.gateway.stats();
    expect(allListings.results).toHaveLength(listingEvents.length);
    expect(allBids.results).toHaveLength(bidEvents.length);
    expect(oneListing.results).toHaveLength(filteredEvents.length);
    expect(stats['badEnvelopes']).toBe(0);
  });

  it('commits offsets only after publishing: the group is at the end of every partition', async () => {
    const { admin, ingest } = stack;
    const groupId = ingest.lines.find((l) => l['msg'] === 'joined consumer group')?.['groupId'] as string;
    await waitFor(
      async () => {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [listingTopic] });
        const ends = await admin.fetchTopicOffsets(listingTopic);
        return ends.every((end) => committed?.partitions.find((p) => p.partition === end.partition)?.offset === end.high);
      },
      { timeoutMs: 30_000, message: 'committed offsets to reach the high watermarks' },
    );
  });

  it('an invalid subscription gets a GraphQL error and the gateway stays up', async () => {
    const bad = subscribe('subscription { listingUpdated { nope } }');
    await waitFor(() => bad.errors.length === 1, { message: 'the validation error' });
    expect(JSON.stringify(bad.errors[0])).toContain('Cannot query field \\"nope\\" on type \\"ListingEvent\\"');
    expect((await fetch(`${stack.gateway.httpUrl}/healthz`)).status).toBe(200);
  });

  it('stops cleanly on SIGTERM', async () => {
    const { ingest, gateway } = stack;
    expect(await ingest.stop('SIGTERM')).toBe(0);
    expect(ingest.lines.some((l) => l['msg'] === 'ingest stopped')).toBe(true);
    expect(await gateway.stop('SIGTERM')).toBe(0);
    expect(gateway.lines.some((l) => l['msg'] === 'gateway drained')).toBe(true);
  });
});
