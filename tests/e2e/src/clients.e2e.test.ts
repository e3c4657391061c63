// Kafka (3 partitions) → ingest (process) → Redis → gateway (process) → clients written to the
// client contract: the starting point makes a resume exact (issue #15), on every WebSocket protocol.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { createClient, type FormattedExecutionResult } from 'graphql-ws';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import { auctionSchemaPath } from '@wirestream/schema';
import { startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

type ExecutionResult = FormattedExecutionResult<Record<string, unknown>, unknown>;
const ext = (r: ExecutionResult | undefined, name: string): unknown => (r?.extensions as Record<string, unknown> | undefined)?.[name];
interface Start {
  readonly epoch: string;
  readonly positions: Record<string, string>;
}
interface Position {
  readonly partition: number;
  readonly offset: string;
}

const QUERY = 'subscription { listingUpdated { listing_id event_id } }';
const PARTITIONS = 3;

let stack: Stack;
let topic: string;
/** Every client still open, closed in afterAll. */
const clients: { close(): Promise<void> }[] = [];
let produced = 0;

/** Produces `count` events on one partition; returns their event ids. */
async function produceOn(partition: number, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `ev-${partition}-${produced++}`);
  const messages = ids.map((eventId, i) => ({ partition, key: `lst-${i % 4}`, value: JSON.stringify({ eventId, listingId: `lst-${i % 4}` }) }));
  await stack.send(topic, messages);
  return ids;
}

type ClientKind = 'graphql-ws' | 'subscriptions-transport-ws';

/** Subscribes with the official client of `kind` (graphql-transport-ws, or the legacy graphql-ws subprotocol). */
function subscribe(kind: ClientKind, extensions?: Record<string, unknown>) {
  const wsUrl = stack.gateway.wsUrl;
  const results: ExecutionResult[] = [];
  const errors: unknown[] = [];
  const request = { query: QUERY, ...(extensions ? { extensions } : {}) };
  let close: () => Promise<void>;
  if (kind === 'graphql-ws') {
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
    const dispose = client.subscribe(request, { next: (r) => results.push(r), error: (e: unknown) => errors.push(e), complete: () => {} });
    close = async () => {
      dispose();
      await client.dispose();
    };
  } else {
    const client = new SubscriptionClient(wsUrl, { reconnect: false }, WebSocket);
    const subscription = client.request(request).subscribe({ next: (r) => results.push(r as ExecutionResult), error: (e: unknown) => errors.push(e) });
    close = () => {
      subscription.unsubscribe();
      client.close();
      return Promise.resolve();
    };
  }
  clients.push({ close: () => close() });
  const eventIds = (): string[] => results.flatMap((r) => (r.data ? [String((r.data['listingUpdated'] as { event_id: string }).event_id)] : []));
  const start = (): Start | undefined => ext(results.find((r) => ext(r, 'start')), 'start') as Start | undefined;
  /** What the contract says to resume with: the start, overlaid per partition with the last offset received. */
  const resumeWith = (): Start => {
    const begin = start() as Start;
    const positions = { ...begin.positions };
    for (const r of results) {
      const position = ext(r, 'position') as Position | undefined;
      if (position) positions[String(position.partition)] = position.offset;
    }
    return { epoch: begin.epoch, positions };
  };
  return { results, errors, eventIds, start, resumeWith, close: () => close() };
}

const gatewayStats = (): Promise<Record<string, number>> => stack.gateway.stats();

beforeAll(async () => {
  topic = `listing-events-${uniqueName('clients')}`;
  const bidTopic = `bid-events-${uniqueName('clients')}`;
  stack = await startStack({
    name: 'clients',
    // Ingest consumes every topic of the schema: both must exist.
    schema: readFileSync(auctionSchemaPath, 'utf8').replace('"listing-events"', JSON.stringify(topic)).replace('"bid-events"', JSON.stringify(bidTopic)),
    topics: [topic, bidTopic].map((t) => ({ topic: t, numPartitions: PARTITIONS })),
  });
  stack.onStop(() => Promise.all(clients.map((c) => c.close())));
});

afterAll(() => stack?.stop());

describe.each<ClientKind>(['graphql-ws', 'subscriptions-transport-ws'])('resume from the starting point (%s client)', (kind) => {
  it('gets exactly what was published after it became live: partitions it never saw, and a client that received nothing', async () => {
    // A watcher sees everything: once it has an event, that event is in history.
    const watcher = subscribe(kind);
    await waitFor(async () => (await gatewayStats())['confirmedChannels'] === 16 && (await gatewayStats())['subscriptions'] === 1, { message: 'watcher live' });
    const retained = [...(await produceOn(2, 18)), ...(await produceOn(0, 4)), ...(await produceOn(1, 3))];
    await waitFor(() => watcher.eventIds().length === retained.length, { timeoutMs: 30_000, message: 'retained events in history' });

    const seer = subscribe(kind, { start: true });
    const idle = subscribe(kind, { start: true });
    await waitFor(() => seer.start() && idle.start(), { message: 'both starting points' });
    expect(Object.keys(seer.start()?.positions ?? {}).sort()).toEqual(['0', '1', '2']);
    expect(seer.results[0]).toEqual({ extensions: { start: seer.start() } });
    await idle.close(); // received nothing but its start

    const seen = [...(await produceOn(0, 5)), ...(await produceOn(1, 5))];
    await waitFor(() => seer.eventIds().length === seen.length, { timeoutMs: 30_000, message: 'the seer got partitions 0 and 1' });
    await seer.close();
    await waitFor(async () => (await gatewayStats())['subscriptions'] === 1, { message: 'only the watcher left' });
    const missed = [...(await produceOn(0, 4)), ...(await produceOn(1, 4)), ...(await produceOn(2, 6))];
    await waitFor(() => watcher.eventIds().length === retained.length + seen.length + missed.length, { timeoutMs: 30_000, message: 'missed events in history' });

    const seerAgain = subscribe(kind, { resume: seer.resumeWith() });
    const idleAgain = subscribe(kind, { resume: idle.resumeWith() });
    await waitFor(() => seerAgain.eventIds().length >= missed.length && idleAgain.eventIds().length >= seen.length + missed.length, {
      timeoutMs: 30_000,
      message: 'both replayed',
    });
    const live = [...(await produceOn(2, 3)), ...(await produceOn(0, 2))];
    const after = [...seen, ...missed, ...live];
    await waitFor(() => seerAgain.eventIds().length === missed.length + live.length && idleAgain.eventIds().length === after.length, {
      timeoutMs: 30_000,
      message: 'live after the replay',
    });
    // 0 missing, 0 duplicated, none of the 25 published before it became live.
    expect([...seer.eventIds(), ...seerAgain.eventIds()].sort()).toEqual([...after].sort());
    expect(idle.eventIds()).toEqual([]);
    expect([...idleAgain.eventIds()].sort()).toEqual([...after].sort());
    for (const r of [seerAgain, idleAgain]) expect(ext(r.results[0], 'recovery')).toEqual({ recovered: true, epoch: seer.start()?.epoch });
    expect([seer, idle, seerAgain, idleAgain].flatMap((c) => c.errors)).toEqual([]);
    await Promise.all([watcher.close(), seerAgain.close(), idleAgain.close()]);
    await waitFor(async () => (await gatewayStats())['subscriptions'] === 0, { message: 'every subscription gone' });
  });
});

describe('conformance: official clients of both protocols on one path', () => {
  it('delivers every event once to a graphql-ws and a subscriptions-transport-ws client, and counts connections by protocol', async () => {
    const modern = subscribe('graphql-ws');
    const legacy = subscribe('subscriptions-transport-ws');
    await waitFor(async () => (await gatewayStats())['subscriptions'] === 2 && (await gatewayStats())['confirmedChannels'] === 16, { message: 'both live' });
    const metrics = await (await fetch(`${stack.gateway.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/wirestream_gateway_protocol_connections\{protocol="graphql-ws"[^}]*\} 1\b/);
    expect(metrics).toMatch(/wirestream_gateway_protocol_connections\{protocol="graphql-transport-ws"[^}]*\} 1\b/);
    expect(metrics).toMatch(/wirestream_gateway_client_messages_in_total\{protocol="graphql-ws"[^}]*\} [1-9]/);
    const published: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) published.push(...(await produceOn(p, 40)));
    await waitFor(() => modern.eventIds().length >= published.length && legacy.eventIds().length >= published.length, { timeoutMs: 30_000, message: 'every event at both' });
    expect([...legacy.eventIds()].sort()).toEqual([...published].sort());
    expect([...modern.eventIds()].sort()).toEqual([...published].sort());
    // The same payloads, byte for byte: one shared payload per event for both protocols.
    expect(legacy.results).toEqual(modern.results);
    expect([...modern.errors, ...legacy.errors]).toEqual([]);
    await Promise.all([modern.close(), legacy.close()]);
  });
});
