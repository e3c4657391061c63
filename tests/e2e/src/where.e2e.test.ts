// Kafka (with record headers) → the built ingest → Redis → the built gateway (JWT, GATEWAY_JWT_FILTER_RULES)
// → official graphql-ws clients: where on the Kafka key, on headers @topic(headers:) copies, on a list
// field, and a filter bound to a token claim (decision 0025). A rule naming no filterable path stops
// the gateway at start with exit 78 and a message naming the setting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import WebSocket from 'ws';
import { SignJWT } from 'jose';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { findRepoRoot, startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';

const SECRET = 'an-e2e-secret-that-is-at-least-32-bytes-long';
const RULES = 'seller.seller_id=partner_id';

let stack: Stack;
let topic: string;
const clients: Client[] = [];

const token = (claims: Record<string, unknown>) =>
  new SignJWT({ scope: 'subscribe:*', ...claims }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));

async function subscribe(claims: Record<string, unknown>, where?: Record<string, unknown>) {
  const client = createClient({ url: stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { token: await token(claims) } });
  clients.push(client);
  const results: FormattedExecutionResult<Record<string, unknown>, unknown>[] = [];
  const errors: unknown[] = [];
  client.subscribe(
    { query: 'subscription($w: ItemWhere) { itemChanged(where: $w) { id } }', variables: where === undefined ? {} : { w: where } },
    { next: (r) => results.push(r), error: (e: unknown) => errors.push(e), complete: () => {} },
  );
  return { results, errors, ids: () => results.map((r) => (r.data?.['itemChanged'] as { id: string } | undefined)?.id) };
}

const stats = (): Promise<Record<string, number>> => stack.gateway.stats();

beforeAll(async () => {
  topic = uniqueName('where-e2e');
  stack = await startStack({
    name: 'where',
    schema: `type Seller { seller_id: ID! }
type Item { id: ID!, tags: [String!], seller: Seller }
type Subscription { itemChanged(id: ID): Item @topic(name: "${topic}", key: "id", shards: 4, headers: ["tenant", "event-type"]) }
`,
    topics: [{ topic, numPartitions: 2 }],
    gatewayEnv: { GATEWAY_AUTH_MODE: 'jwt', GATEWAY_JWT_HS256_SECRET: SECRET, GATEWAY_JWT_FILTER_RULES: RULES },
  });
  stack.onStop(() => Promise.all(clients.map((c) => Promise.resolve(c.dispose()))));
});

afterAll(() => stack?.stop());

describe('where over headers, the key and lists, bound to a claim, through the built apps', () => {
  it('delivers what each filter and the caller’s partner_id allow, and nothing else', async () => {
    const byHeader = await subscribe({ partner_id: '7' }, { _headers: { event_type: { eq: 'BidPlaced' } }, tags: { has: 'red' } });
    const byKey = await subscribe({ partner_id: '7' }, { _key: { eq: 'k-2' } });
    const partner3 = await subscribe({ partner_id: '3' });
    // Without the claim: refused, with the rule named.
    const noClaim = await subscribe({});
    await waitFor(() => noClaim.errors.length > 0, { message: 'the claim-less subscribe refused' });
    expect(JSON.stringify(noClaim.errors)).toContain(`limited by the filter rule ${RULES} (GATEWAY_JWT_FILTER_RULES)`);
    await waitFor(async () => (await stats())['groups'] === 3, { message: 'three groups' });

    const item = (id: string, seller: string, tags: string[]) => JSON.stringify({ id, tags, seller: { sellerId: seller } });
    await stack.send(topic, [
      { key: 'k-1', value: item('a', '7', ['red']), headers: { tenant: 'acme', 'event-type': 'BidPlaced' } },
      { key: 'k-2', value: item('b', '7', ['blue']), headers: { 'event-type': 'ListingUpdated' } },
      { key: 'k-3', value: item('c', '3', ['red']), headers: { 'event-type': 'BidPlaced' } },
      { key: 'k-2', value: item('d', '3', []) },
      { key: 'k-4', value: item('e', '7', ['red', 'green']), headers: { 'event-type': 'BidPlaced' } },
      { key: 'k-2', value: item('f', '7', []) },
    ]);
    await waitFor(() => byHeader.ids().includes('e') && byKey.ids().includes('f') && partner3.ids().includes('d'), { timeoutMs: 30_000, message: 'the last events' });
    // Ids are unique per event and every filter's last match has arrived: order across keys is not asserted.
    expect(byHeader.ids().sort()).toEqual(['a', 'e']);
    expect(byKey.ids().sort()).toEqual(['b', 'f']);
    expect(partner3.ids().sort()).toEqual(['c', 'd']);
    expect([byHeader, byKey, partner3].flatMap((s) => s.errors)).toEqual([]);
  });

  it.each([
    ['a path no subscription field has', 'seller.partner=partner_id', 'GATEWAY_JWT_FILTER_RULES: "seller.partner=partner_id": seller.partner is no filterable field'],
    ['a rule without a claim', 'seller.seller_id', 'GATEWAY_JWT_FILTER_RULES: "seller.seller_id" has no ='],
  ])('refuses at start %s, naming the setting (exit 78)', (_what, rules, message) => {
    const main = join(findRepoRoot(), 'apps', 'gateway', 'dist', 'main.js');
    const env = { PATH: process.env['PATH'] ?? '', REDIS_URL: 'redis://127.0.0.1:1', SCHEMA_PATH: stack.schemaPath ?? '', GATEWAY_PORT: '0', GATEWAY_AUTH_MODE: 'jwt', GATEWAY_JWT_HS256_SECRET: SECRET, GATEWAY_JWT_FILTER_RULES: rules };
    const run = spawnSync(process.execPath, [main], { env, encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(78);
    expect(run.stderr).toContain(message);
  });
});
