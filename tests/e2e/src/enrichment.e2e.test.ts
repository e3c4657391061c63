// Fields beyond the event, end to end with the built apps (issue 32): Kafka → ingest → Redis → gateway
// (GATEWAY_PLUGIN and a `@lookup` field on GATEWAY_LOOKUP_SOURCES) → a real federation subgraph
// (@apollo/subgraph in its own process, answering in 0–50 ms) → graphql-ws clients. Every partition's
// events in offset order, none missing or repeated; with the subgraph down, field errors and positions.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auctionSchemaPath } from '@wirestream/schema';
import { findRepoRoot, startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

type Result = FormattedExecutionResult<{ listingUpdated: { listing_id: string; event_type: string; profile: { title: string } | null } | null }, unknown>;
interface Position {
  readonly partition: number;
  readonly offset: string;
}

const root = findRepoRoot();
// The gateway's test subgraph (apps/gateway/test/support): spawned by path, it resolves @apollo/subgraph from there.
const SUBGRAPH = join(root, 'apps', 'gateway', 'test', 'support', 'subgraph-server.mjs');
const PROFILE_SDL = '\ntype ListingProfile {\n  id: ID!\n  title: String\n  views: Int\n}\n';
const PLUGIN = `
export const resolvers = { ListingEvent: { event_type: (event) => event.event_type.toUpperCase() } };
export function onEvent(event) { return event.payload.event_type === 'Hidden' ? null : undefined; }
`;

let stack: Stack;
let subgraph: ChildProcess;
let subgraphPort: number;
let topic: string;
const clients: Client[] = [];

async function startSubgraph(port: number, maxDelayMs: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [SUBGRAPH, String(port), String(maxDelayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout ?? child, 'data')) as [Buffer];
  return { child, port: Number(line.toString().trim()) };
}

async function stopSubgraph(): Promise<void> {
  if (subgraph.exitCode !== null) return;
  const exited = once(subgraph, 'exit');
  subgraph.kill('SIGTERM');
  await exited;
}

function subscribe(query: string) {
  const client = createClient({ url: stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  clients.push(client);
  const results: Result[] = [];
  client.subscribe({ query }, { next: (r) => void results.push(r as Result), error: () => {}, complete: () => {} });
  return results;
}

const gatewayStats = (): Promise<Record<string, number>> => stack.gateway.stats();

const positionOf = (r: Result): Position => (r.extensions as { position: Position }).position;

beforeAll(async () => {
  topic = `listing-events-${uniqueName('enrich')}`;
  const bidTopic = `bid-events-${uniqueName('enrich')}`;
  const sdl = readFileSync(auctionSchemaPath, 'utf8')
    .replace('"listing-events"', JSON.stringify(topic))
    .replace('"bid-events"', JSON.stringify(bidTopic))
    .replace('type ListingEvent {', 'type ListingEvent {\n  profile: ListingProfile @lookup(source: "listings", key: "id: listing_id")');
  ({ child: subgraph, port: subgraphPort } = await startSubgraph(0, 50));
  stack = await startStack({
    name: 'enrich',
    schema: sdl + PROFILE_SDL,
    topics: [{ topic, numPartitions: 3 }, { topic: bidTopic, numPartitions: 1 }],
    files: { 'plugin.mjs': PLUGIN },
    gatewayEnv: (s) => ({
      GATEWAY_PLUGIN: s.path('plugin.mjs'),
      GATEWAY_LOOKUP_SOURCES: `listings=http://127.0.0.1:${subgraphPort}/graphql`,
      GATEWAY_LOOKUP_TIMEOUT_MS: '1000',
    }),
  });
  stack.onStop(() => Promise.all(clients.map((c) => Promise.resolve(c.dispose()))));
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (subgraph) await stopSubgraph();
});

describe('a gateway with a plugin and a look-up source', () => {
  it('delivers enriched events in offset order per partition, none missing or repeated, hidden ones dropped', async () => {
    const enriched = subscribe('subscription { listingUpdated { listing_id event_type profile { title } } }');
    const plain = subscribe('subscription { listingUpdated { listing_id } }');
    await waitFor(async () => {
      const stats = await gatewayStats();
      return stats['groups'] === 2 && stats['channels'] === stats['confirmedChannels'];
    }, { message: 'two operations subscribed' });

    const EVENTS = 300;
    const messages = Array.from({ length: EVENTS }, (_, i) => {
      const listingId = `lst-${i % 30}`;
      const eventType = i % 25 === 5 ? 'Hidden' : 'Updated';
      return { key: listingId, value: JSON.stringify({ eventId: `e-${i}`, eventType, listingId, occurredAt: 'now' }) };
    });
    for (let i = 0; i < EVENTS; i += 50) await stack.send(topic, messages.slice(i, i + 50));
    const visible = messages.filter((m) => !m.value.includes('"Hidden"')).length;
    await waitFor(() => enriched.length >= visible && plain.length >= visible, { timeoutMs: 60_000, message: `${visible} events to both operations` });
    await new Promise((resolve) => setTimeout(resolve, 500));

    for (const results of [enriched, plain]) {
      expect(results).toHaveLength(visible);
      const seen = new Set<string>();
      const last = new Map<number, bigint>();
      for (const r of results) {
        const { partition, offset } = positionOf(r);
        const id = `${partition}:${offset}`;
        expect(seen.has(id), `duplicate ${id}`).toBe(false);
        seen.add(id);
        const previous = last.get(partition);
        expect(previous === undefined || BigInt(offset) > previous, `out of order on partition ${partition}`).toBe(true);
        last.set(partition, BigInt(offset));
      }
    }
    for (const r of enriched) {
      const event = r.data?.listingUpdated;
      expect(r.errors).toBeUndefined();
      expect(event?.event_type).toBe('UPDATED'); // the plugin's resolver
      expect(event?.profile?.title).toBe(`Title of ${event?.listing_id}`); // the subgraph's entity
    }
    // Thirty distinct listings: the subgraph was asked for each at most once (the cache holds them).
    const counts = (await (await fetch(`http://127.0.0.1:${subgraphPort}/counts`)).json()) as { representations: number };
    expect(counts.representations).toBeLessThanOrEqual(30);
  }, 120_000);

  it('with the subgraph down, events still arrive with a field error and their position', async () => {
    const results = subscribe('subscription { listingUpdated { listing_id profile { title } } }');
    await waitFor(async () => (await gatewayStats())['groups'] === 3, { message: 'the third operation subscribed' });
    await new Promise((resolve) => setTimeout(resolve, 500)); // its channels confirmed
    await stopSubgraph();
    await stack.send(topic, [{ key: 'lst-new', value: JSON.stringify({ eventId: 'down', eventType: 'Updated', listingId: 'lst-new', occurredAt: 'now' }) }]);
    await waitFor(() => results.length === 1, { timeoutMs: 30_000, message: 'the event while the subgraph is down' });
    const [frame] = results as [Result];
    expect(frame.data).toEqual({ listingUpdated: { listing_id: 'lst-new', profile: null } });
    expect(frame.errors?.[0]?.path).toEqual(['listingUpdated', 'profile']);
    expect(positionOf(frame).offset).toMatch(/^\d+$/);
  }, 60_000);
});

describe('start-up refusals', () => {
  const main = join(root, 'apps', 'gateway', 'dist', 'main.js');
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [main], { env: { PATH: process.env['PATH'] ?? '', GATEWAY_AUTH_MODE: 'anonymous', REDIS_URL: 'redis://127.0.0.1:1', GATEWAY_PORT: '0', ...env }, encoding: 'utf8', timeout: 30_000 });

  it('a plugin with an export it does not know: one line naming GATEWAY_PLUGIN, exit 78', () => {
    const path = stack.writeFile('typo.mjs', 'export function onSubscibe() {}\n');
    const result = run({ GATEWAY_PLUGIN: path });
    expect(result.status, result.stderr).toBe(78);
    expect(result.stderr).toBe(`invalid plugin: GATEWAY_PLUGIN=${path}: unknown export "onSubscibe": a plugin exports only resolvers, context, onSubscribe, onEvent\n`);
  });

  it('a @lookup whose source is not configured: one line naming GATEWAY_LOOKUP_SOURCES, exit 78', () => {
    const result = run({ SCHEMA_PATH: stack.schemaPath ?? '' });
    expect(result.status, result.stderr).toBe(78);
    expect(result.stderr).toBe('invalid look-up settings: GATEWAY_LOOKUP_SOURCES: the schema looks up ListingProfile from source "listings", which it does not name: add listings=<subgraph URL> (or to GATEWAY_LOOKUP_HTTP_SOURCES: listings=<URL with {keys}> or listings=POST <URL> <JSON body with {keys}>)\n');
  });
});
