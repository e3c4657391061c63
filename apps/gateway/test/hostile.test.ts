// Hostile input: each class gets its documented close code or GraphQL error, the server stays up,
// and a well-behaved client on the same server keeps receiving every event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { waitFor } from '@wirestream/testkit';
import { collect, rawSocket, startTestGateway, type TestGateway } from './support/gateway.js';
import { createAuthenticator } from '../src/index.js';

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';
const AUDIENCE = 'wirestream-test';
const ORIGIN = 'https://app.example.com';
const MAX_PAYLOAD_BYTES = 262_144;

let t: TestGateway;
let good: ReturnType<typeof collect>;
let goodEvents = 0;

async function token(claims: Record<string, unknown> = {}, options: { expiresIn?: string | number; audience?: string; secret?: string } = {}) {
  const jwt = new SignJWT({ scope: 'subscribe:*', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('user-1')
    .setIssuedAt()
    .setAudience(options.audience ?? AUDIENCE)
    .setExpirationTime(options.expiresIn ?? '1h');
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

/** Opens a raw socket, sends connection_init with `payload`, resolves with the close (or the ack). */
async function initWith(payload: unknown) {
  const raw = rawSocket(t.url);
  await raw.opened;
  raw.ws.send(JSON.stringify({ type: 'connection_init', payload }));
  return raw;
}

function errorText(sub: ReturnType<typeof collect>): string {
  return JSON.stringify(sub.errors[0]);
}

beforeAll(async () => {
  t = await startTestGateway(
    {
      connectionInitWaitTimeoutMs: 500,
      maxSubscriptionsPerConnection: 20,
      allowedOrigins: [ORIGIN],
      maxPayloadBytes: MAX_PAYLOAD_BYTES,
      maxConnectionsPerAddress: 60,
      legacyKeepAliveMs: 1_000,
      snapshotMaxKeys: 5,
    },
    {
      authenticator: createAuthenticator({
        mode: 'jwt',
        hs256Secret: SECRET,
        audience: AUDIENCE,
        tenantClaim: 'bidder',
        tenantArgs: ['bidder_id'],
      }),
    },
    undefined,
    // The listing topic keeps a snapshot, so that snapshot requests can be refused here too.
    (sdl) =>
      sdl
        .replace('keyFormat: TopicKeyFormat = STRING) on', 'keyFormat: TopicKeyFormat = STRING, snapshot: Boolean = false) on')
        .replace(/@topic\(name: ("[^"]+"), key: "listing_id"\)/, '@topic(name: $1, key: "listing_id", snapshot: true)'), // the first: listingUpdated
  );
  good = collect(t.connect({ token: await token() }), 'subscription { listingUpdated { listing_id } }');
  await waitFor(() => t.gateway.stats().confirmedChannels === 16, { message: 'the good client subscribed' });
  await t.publishListing('lst-1');
  goodEvents++;
  await waitFor(() => good.results.length === 1, { message: 'first event to the good client' });
});

afterAll(async () => {
  // The well-behaved client still receives, after everything below.
  await t.publishListing('lst-2');
  goodEvents++;
  await waitFor(() => good.results.length === goodEvents, { message: 'the good client to get every event' });
  expect(good.errors).toEqual([]);
  await t?.stop();
});

describe('authentication (JWT in connection_init)', () => {
  it.each([
    ['a missing token', () => Promise.resolve({}), /Forbidden/],
    ['an expired token', () => token({}, { expiresIn: Math.floor(Date.now() / 1000) - 60 }), /expired/],
    ['a forged signature', () => token({}, { secret: 'another-secret-that-is-also-32-bytes-long!!' }), /Forbidden/],
    ['a wrong audience', () => token({}, { audience: 'someone-else' }), /aud/],
  ])('%s is closed with 4403', async (_name, make, reason) => {
    const value = await make();
    const raw = await initWith(typeof value === 'string' ? { token: value } : value);
    const closed = await raw.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(reason);
  });

  it('closes a socket when its token expires', async () => {
    const raw = await initWith({ token: await token({}, { expiresIn: Math.floor(Date.now() / 1000) + 2 }) });
    await waitFor(() => raw.messages.length === 1, { message: 'ack' });
    expect(await raw.closed).toEqual({ code: 4403, reason: 'Forbidden: token expired' });
  });

  it('refuses a field without its scope, naming the scope', async () => {
    const sub = collect(t.connect({ token: await token({ scope: 'subscribe:bidPlaced' }) }), 'subscription { listingUpdated { listing_id } }');
    await waitFor(() => sub.errors.length === 1, { message: 'scope error' });
    expect(errorText(sub)).toContain('subscribe:listingUpdated');
  });

  it('binds the tenant claim to its argument and never shares results across scopes', async () => {
    const query = 'subscription { bidPlaced { bid_id bidder_id } }';
    const partner = collect(t.connect({ token: await token({ bidder: 'usr-7' }) }), query);
    const otherPartner = collect(t.connect({ token: await token({ bidder: 'usr-3' }) }), query);
    await waitFor(() => t.gateway.stats().groups === 3, { message: 'one group per tenant for the same document' });
    await t.publishBid('lst-1', 'usr-3');
    await t.publishBid('lst-1', 'usr-7');
    await waitFor(() => partner.results.length === 1 && otherPartner.results.length === 1, { message: 'deliveries' });
    expect(partner.results[0]?.data).toMatchObject({ bidPlaced: { bidder_id: 'usr-7' } });
    expect(otherPartner.results[0]?.data).toMatchObject({ bidPlaced: { bidder_id: 'usr-3' } });
    // Asking for another tenant's data is an error, not an empty stream; no tenant, no access.
    const foreign = collect(t.connect({ token: await token({ bidder: 'usr-7' }) }), 'subscription { bidPlaced(bidder_id: "usr-3") { bid_id } }');
    const anonymous = collect(t.connect({ token: await token() }), query);
    await waitFor(() => foreign.errors.length === 1 && anonymous.errors.length === 1, { message: 'tenant errors' });
    partner.dispose();
    otherPartner.dispose();
  });
});

describe('transport limits', () => {
  it('refuses a foreign browser Origin at the upgrade', async () => {
    const raw = rawSocket(t.url, 'graphql-transport-ws', { Origin: 'https://evil.example.net' });
    await expect(raw.opened).rejects.toThrow(/403/);
    const allowed = rawSocket(t.url, 'graphql-transport-ws', { Origin: ORIGIN });
    await allowed.opened;
    allowed.ws.close();
  });

  it('closes a socket that sends an oversized frame', async () => {
    const raw = await initWith({ token: await token() });
    await waitFor(() => raw.messages.length === 1, { message: 'ack' });
    raw.ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'x'.repeat(MAX_PAYLOAD_BYTES * 2) } }));
    const closed = await raw.closed;
    expect([1006, 1009]).toContain(closed.code);
  });

  it('refuses connections past the per-address limit with 429', async () => {
    const before = t.gateway.stats().connections;
    const sockets = Array.from({ length: 60 - before }, () => rawSocket(t.url));
    await Promise.all(sockets.map((s) => s.opened));
    const extra = rawSocket(t.url);
    await expect(extra.opened).rejects.toThrow(/429/);
    for (const s of sockets) s.ws.close();
    await waitFor(() => t.gateway.stats().connections === before, { message: 'sockets released' });
  });

  it('survives 10,000 subscribes on one socket: bounded subscriptions, an error for each refused one', async () => {
    const raw = await initWith({ token: await token() });
    await waitFor(() => raw.messages.length === 1, { message: 'ack' });
    const query = 'subscription { listingUpdated { listing_id } }';
    for (let i = 0; i < 10_000; i++) raw.ws.send(JSON.stringify({ id: String(i), type: 'subscribe', payload: { query } }));
    await waitFor(() => raw.messages.length === 10_001 - 20, { timeoutMs: 20_000, message: 'an error for every refused subscribe' });
    expect(t.gateway.stats().subscriptions).toBeLessThanOrEqual(1 + 20);
    const kinds = new Set(raw.messages.slice(1).map((m) => JSON.stringify((m as { payload: unknown[] }).payload[0])));
    expect([...kinds].some((k) => k.includes('Too many'))).toBe(true);
    raw.ws.close();
  });
});

describe('documents and variables are bounded before validation', () => {
  const cases: [string, string, Record<string, unknown> | undefined, RegExp][] = [
    ['token flood', `subscription { listingUpdated { ${'listing_id '.repeat(5_000)} } }`, undefined, /tokens|characters/],
    ['alias flood', `subscription { listingUpdated { ${Array.from({ length: 10_000 }, (_, i) => `a${i}: listing_id`).join(' ')} } }`, undefined, /characters|tokens|alias/i],
    ['alias flood within the length cap', `subscription { listingUpdated { ${Array.from({ length: 100 }, (_, i) => `a${i}: listing_id`).join(' ')} } }`, undefined, /alias/i],
    ['depth 2,400', `subscription { listingUpdated ${'{ listing '.repeat(2_400)} }`, undefined, /characters|nesting|depth/i],
    ['depth within the length cap', `subscription { bidPlaced ${'{ previous_high_bid '.repeat(100)}{ bid_id }${' }'.repeat(100)} }`, undefined, /nesting|depth/i],
    ['directive flood', `subscription { listingUpdated { listing_id ${'@include(if: true) '.repeat(100)} } }`, undefined, /directive/i],
    ['deeply nested variables', 'subscription($id: ID) { listingUpdated(listing_id: $id) { listing_id } }', { id: JSON.parse('['.repeat(100) + ']'.repeat(100)) as unknown }, /depth|nest/i],
    ['introspection', '{ __schema { types { name } } }', undefined, /introspection/i],
  ];

  it.each(cases)('%s gets a GraphQL error naming the limit', async (_name, query, variables, message) => {
    const client = t.connect({ token: await token() });
    const started = performance.now();
    const sub = collect(client, query, variables);
    await waitFor(() => sub.errors.length === 1, { message: 'the error' });
    expect(errorText(sub)).toMatch(message);
    // Refusal is cheap even for the largest documents (generous bound for a noisy shared machine).
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('where filters are bounded before they are normalized or compiled (GATEWAY_MAX_FILTER_*)', () => {
  const BY_WHERE = 'subscription($w: ListingEventWhere) { listingUpdated(where: $w) { listing_id } }';
  const nestedNot = (levels: number): Record<string, unknown> => (levels === 0 ? { event_type: { eq: 'A' } } : { not: nestedNot(levels - 1) });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['an in-list of 101 values', { listing_id: { in: Array.from({ length: 101 }, (_, i) => `lst-${i}`) } }, /listing_id\.in lists 101 values, over the limit of 100 \(GATEWAY_MAX_FILTER_IN_LIST\)/],
    ['an in-list of 101 values in a list element filter', { listing: { category_path: { some: { nin: Array.from({ length: 101 }, (_, i) => `c${i}`) } } } }, /category_path\.some\.nin lists 101 values.*GATEWAY_MAX_FILTER_IN_LIST/],
    ['65 clauses', { or: Array.from({ length: 65 }, (_, i) => ({ listing_id: { eq: `lst-${i}` } })) }, /more than 64 clauses, the limit \(GATEWAY_MAX_FILTER_CLAUSES\)/],
    ['clauses on the key and headers', { _key: { eq: 'a', ne: 'b' }, and: Array.from({ length: 70 }, () => ({ _key: { exists: true } })) }, /GATEWAY_MAX_FILTER_CLAUSES/],
    // Variables deeper than GATEWAY_MAX_VARIABLES_DEPTH (8) are refused before the filter is looked at.
    ['depth 60 of not in a variable', nestedNot(60), /Variables are nested/],
  ];

  it.each(cases)('%s gets a GraphQL error naming the limit, and no group', async (_name, where, message) => {
    const groups = t.gateway.stats().groups;
    const sub = collect(t.connect({ token: await token() }), BY_WHERE, { w: where });
    await waitFor(() => sub.errors.length === 1, { message: 'the error' });
    expect(errorText(sub)).toMatch(message);
    expect(t.gateway.stats().groups).toBe(groups);
  });

  it.each([
    ['depth 9 of not', `${'{ not: '.repeat(8)}{ event_type: { eq: "A" } }${' }'.repeat(8)}`],
    // where 1, five or-items 2-6, listing 7, recent_bids.some 8, amount 9.
    ['depth 9 through a list quantifier', '{ or: [{ or: [{ or: [{ or: [{ or: [{ listing: { recent_bids: { some: { amount: { amount_cents: { eq: 1 } } } } } }] }] }] }] }] }'],
  ])('%s inline gets a GraphQL error naming GATEWAY_MAX_FILTER_DEPTH', async (_name, where) => {
    const sub = collect(t.connect({ token: await token() }), `subscription { listingUpdated(where: ${where}) { listing_id } }`);
    await waitFor(() => sub.errors.length === 1, { message: 'the error' });
    expect(errorText(sub)).toMatch(/nested deeper than the limit of 8 \(GATEWAY_MAX_FILTER_DEPTH\)/);
  });

  it('refuses an inline filter over the limits the same way', async () => {
    const sub = collect(t.connect({ token: await token() }), `subscription { listingUpdated(where: { listing_id: { in: [${Array.from({ length: 101 }, (_, i) => `"l${i}"`).join(', ')}] } }) { listing_id } }`);
    await waitFor(() => sub.errors.length === 1, { message: 'the error' });
    expect(errorText(sub)).toMatch(/GATEWAY_MAX_FILTER_IN_LIST/);
  });
});

describe('snapshot requests are bounded and checked before the subscription starts (GATEWAY_SNAPSHOT_MAX_KEYS)', () => {
  const BY_WHERE = 'subscription($w: ListingEventWhere) { listingUpdated(where: $w) { listing_id } }';

  it('refuses more keys than the limit, naming the setting, and starts no group', async () => {
    const groups = t.gateway.stats().groups;
    const sub = collect(t.connect({ token: await token() }), BY_WHERE, { w: { listing_id: { in: ['a', 'b', 'c', 'd', 'e', 'f'] } } }, { snapshot: true });
    await waitFor(() => sub.errors.length === 1, { message: 'the error' });
    expect(errorText(sub)).toMatch(/names 6 keys, over the limit of 5 \(GATEWAY_SNAPSHOT_MAX_KEYS\)/);
    expect(t.gateway.stats().groups).toBe(groups);
  });

  it.each([
    ['an object', { keys: Array.from({ length: 10_000 }, (_, i) => `k${i}`) }],
    ['a 100 KB string', 'x'.repeat(100_000)],
    ['an array', [true]],
    ['a number', 1],
  ])('answers extensions.snapshot as %s with a GraphQL error naming it', async (_name, value) => {
    const groups = t.gateway.stats().groups;
    const sub = collect(t.connect({ token: await token() }), 'subscription { listingUpdated { listing_id } }', undefined, { snapshot: value });
    await waitFor(() => sub.errors.length === 1, { message: 'the error' });
    expect(errorText(sub)).toMatch(/extensions\.snapshot must be true/);
    expect(t.gateway.stats().groups).toBe(groups);
  });
});

describe('the legacy graphql-ws subprotocol (subscriptions-transport-ws): same auth, limits and engine', () => {
  /** A raw legacy socket after connection_init with `payload`. */
  async function legacyInit(payload: unknown) {
    const raw = rawSocket(t.url, 'graphql-ws');
    await raw.opened;
    raw.ws.send(JSON.stringify({ type: 'connection_init', payload }));
    return raw;
  }
  const types = (raw: ReturnType<typeof rawSocket>): unknown[] => raw.messages.map((m) => (m as { type: string }).type);

  it('says why in connection_error, then closes with 4403, for a missing token', async () => {
    const raw = await legacyInit({});
    const closed = await raw.closed;
    expect(closed.code).toBe(4403);
    expect(raw.messages[0]).toMatchObject({ type: 'connection_error', payload: { message: expect.stringMatching(/Forbidden/) as unknown } });
  });

  it('acks a token with ka, keeps alive every period, binds the tenant and refuses a field without its scope', async () => {
    const raw = await legacyInit({ token: await token({ bidder: 'usr-7', scope: 'subscribe:bidPlaced' }) });
    raw.ws.send(JSON.stringify({ id: 'b', type: 'start', payload: { query: 'subscription { bidPlaced { bid_id bidder_id } }' } }));
    raw.ws.send(JSON.stringify({ id: 'l', type: 'start', payload: { query: 'subscription { listingUpdated { listing_id } }' } }));
    await waitFor(() => types(raw).filter((x) => x === 'ka').length >= 2, { message: 'ka after the ack, then another a period later' });
    expect(types(raw).slice(0, 2)).toEqual(['connection_ack', 'ka']);
    const refusal = raw.messages.find((m) => (m as { id?: string }).id === 'l');
    expect(JSON.stringify(refusal)).toContain('subscribe:listingUpdated');
    await t.publishBid('lst-1', 'usr-3');
    await t.publishBid('lst-1', 'usr-7');
    await waitFor(() => raw.messages.some((m) => (m as { type: string }).type === 'data'), { message: 'a bid' });
    const data = raw.messages.filter((m) => (m as { type: string }).type === 'data');
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ id: 'b', payload: { data: { bidPlaced: { bidder_id: 'usr-7' } } } });
    raw.ws.close();
  });

  it('answers malformed frames and a 60 KB id with protocol errors, closes binary frames with 4400, and stays up', async () => {
    const raw = await legacyInit({ token: await token() });
    await waitFor(() => types(raw).includes('connection_ack'), { message: 'ack' });
    raw.ws.send('{"type":');
    raw.ws.send(JSON.stringify({ id: 'x'.repeat(60_000), type: 'start', payload: { query: 'subscription { listingUpdated { listing_id } }' } }));
    raw.ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: {} }));
    await waitFor(() => raw.messages.filter((m) => ['error', 'connection_error'].includes((m as { type: string }).type)).length === 3, { message: 'three errors' });
    const errors = raw.messages.filter((m) => ['error', 'connection_error'].includes((m as { type: string }).type));
    expect(errors.map((m) => (m as { type: string }).type)).toEqual(['connection_error', 'error', 'error']);
    expect(JSON.stringify(errors[1])).toContain('the limit is 128 (GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH)');
    expect(JSON.stringify(errors[1]).length).toBeLessThan(300); // not echoed back
    raw.ws.send(Buffer.from('{"type":"connection_init"}'), { binary: true });
    expect(await raw.closed).toEqual({ code: 4400, reason: 'Binary frames are not part of graphql-ws; send text' });
  });
});

describe('subscription ids are bounded on every protocol (GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH)', () => {
  it('stores none of 100 subscribes with 60 KB ids per socket: graphql-transport-ws closes with 4400 at the first', async () => {
    const before = t.gateway.stats().subscriptions;
    const sockets = await Promise.all(
      Array.from({ length: 10 }, async (_, n) => {
        const raw = await initWith({ token: await token() });
        await waitFor(() => raw.messages.length === 1, { message: 'ack' });
        for (let i = 0; i < 100; i++) raw.ws.send(JSON.stringify({ id: `${n}-${i}-${'x'.repeat(60_000)}`, type: 'subscribe', payload: { query: 'subscription { listingUpdated { listing_id } }' } }));
        return raw;
      }),
    );
    for (const raw of sockets) {
      const closed = await raw.closed;
      expect(closed.code).toBe(4400);
      expect(closed.reason).toMatch(/^Invalid subscribe: the subscription id has 600\d\d characters; the limit is 128/);
    }
    expect(t.gateway.stats().subscriptions).toBe(before);
  });
});
