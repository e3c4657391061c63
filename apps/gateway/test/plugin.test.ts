// GATEWAY_PLUGIN: a module's resolvers, lazy context, onSubscribe and onEvent, through a real
// gateway on real Redis with graphql-ws clients and JWTs; and the loader's one-line refusals.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, preparePlugin, type SubscribeHookInput } from '@wirestream/plugin';
import { waitFor } from '@wirestream/testkit';
import { createAuthenticator, loadGatewayPlugin } from '../src/index.js';
import { collect, startTestGateway, type TestGateway } from './support/gateway.js';
import { openSse } from './support/sse.js';

const SECRET = 'plugin-test-secret-of-at-least-32-bytes!';

interface Labels {
  label(eventType: string): Promise<string>;
  dispose(): void;
}

let t: TestGateway;
let built = 0;
let disposed = 0;
let eventCalls = 0;
const subscribes: SubscribeHookInput[] = [];

const plugin = definePlugin({
  context: {
    labels: (): Labels => {
      built++;
      return { label: (eventType) => new Promise((resolve) => setTimeout(() => resolve(`label:${eventType}`), Math.random() * 10)), dispose: () => void disposed++ };
    },
  },
  resolvers: {
    ListingEvent: {
      event_type: (source: { event_type: string }, _args: unknown, context: { labels: Labels }) => context.labels.label(source.event_type),
    },
  },
  onSubscribe(input: SubscribeHookInput) {
    subscribes.push(input);
    if (input.principal.claims['plan'] === 'free' && input.fieldName === 'listingUpdated') {
      // A free plan sees only its own listing, whatever it asked for.
      return { variables: { ...input.variables, listing_id: String(input.principal.claims['listing']) } };
    }
    if (input.principal.claims['banned'] === true) return { errors: [{ message: 'banned: ask support', extensions: { code: 'BANNED' } }] };
    return undefined;
  },
  onEvent(event) {
    eventCalls++;
    if (event.payload['event_type'] === 'Hidden') return null;
    if (event.payload['listing_id'] === 'lst-old') return { ...event.payload, listing_id: 'lst-renamed' };
    return undefined;
  },
});

async function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ scope: 'subscribe:*', ...claims }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
}

beforeAll(async () => {
  t = await startTestGateway({}, { plugin: await preparePlugin(plugin, 'test plugin'), authenticator: createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, keepClaims: true }) });
});
afterAll(() => t?.stop());

describe('a plugin given to createGateway', () => {
  it('resolves with its resolvers and lazy context, refuses and narrows on subscribe, drops and rewrites events once each', async () => {
    const QUERY = 'subscription { listingUpdated { listing_id event_type } }';
    const paid = collect(t.connect({ token: await token({ plan: 'paid' }) }), QUERY);
    // A document that takes the key as a variable: what onSubscribe narrows.
    const BY_LISTING = 'subscription($listing_id: ID) { listingUpdated(listing_id: $listing_id) { listing_id event_type } }';
    const free = collect(t.connect({ token: await token({ plan: 'free', listing: 'lst-2' }) }), BY_LISTING);
    const banned = collect(t.connect({ token: await token({ banned: true }) }), QUERY);
    const projected = collect(t.connect({ token: await token({ plan: 'paid' }) }), 'subscription { listingUpdated { listing_id } }');
    await waitFor(() => banned.errors.length === 1 && t.gateway.stats().subscriptions === 3, { message: 'three subscribed, one refused' });
    expect(banned.errors[0]).toEqual([{ message: 'banned: ask support', extensions: { code: 'BANNED' } }]);
    expect(subscribes.map((s) => [s.fieldName, s.transport, s.principal.claims['plan'] ?? null])).toContainEqual(['listingUpdated', 'graphql-transport-ws', 'free']);
    expect(built).toBe(0); // lazy: nothing built before an event needs it

    const offsets = [];
    for (const [id, type] of [['lst-1', 'Created'], ['lst-2', 'Hidden'], ['lst-2', 'Updated'], ['lst-old', 'Updated']] as const) offsets.push(await t.publishListing(id, type));
    await waitFor(() => paid.results.length === 3 && projected.results.length === 3 && free.results.length === 1, { message: 'deliveries' });

    expect(paid.results.map((r) => r.data)).toEqual([
      { listingUpdated: { listing_id: 'lst-1', event_type: 'label:Created' } },
      { listingUpdated: { listing_id: 'lst-2', event_type: 'label:Updated' } },
      { listingUpdated: { listing_id: 'lst-renamed', event_type: 'label:Updated' } },
    ]);
    // The dropped event's position is skipped, the others keep theirs.
    const offsetOf = (r: { extensions?: unknown }): string | undefined => (r.extensions as { position?: { offset: string } } | undefined)?.position?.offset;
    expect(paid.results.map(offsetOf)).toEqual([offsets[0], offsets[2], offsets[3]]);
    expect(projected.results.map((r) => r.data)).toEqual([{ listingUpdated: { listing_id: 'lst-1' } }, { listingUpdated: { listing_id: 'lst-2' } }, { listingUpdated: { listing_id: 'lst-renamed' } }]);
    // Narrowed to its own listing by onSubscribe.
    expect(free.results.map((r) => r.data)).toEqual([{ listingUpdated: { listing_id: 'lst-2', event_type: 'label:Updated' } }]);
    // Once per event however many groups (three) rendered it; one context per group that resolved event_type (two).
    expect(eventCalls).toBe(4);
    expect(built).toBe(2);

    for (const s of [paid, free, projected]) s.dispose();
    await waitFor(() => disposed === 2, { message: 'backends disposed with their groups' });
  });
});

describe('onSubscribe over GraphQL over SSE', () => {
  it('refuses with the plugin\'s errors and narrows the variables, as on WebSockets', async () => {
    const body = JSON.stringify({ query: 'subscription($listing_id: ID) { listingUpdated(listing_id: $listing_id) { listing_id } }' });
    const refused = await openSse(`${t.httpBase}/graphql`, { body, headers: { authorization: `Bearer ${await token({ banned: true })}` } });
    await waitFor(() => refused.events.some((e) => e.event === 'next'), { message: 'the refusal' });
    expect(JSON.parse(refused.events.find((e) => e.event === 'next')?.data ?? '{}')).toEqual({ errors: [{ message: 'banned: ask support', extensions: { code: 'BANNED' } }] });
    expect(subscribes.at(-1)?.transport).toBe('graphql-sse');
    refused.abort();

    const narrowed = await openSse(`${t.httpBase}/graphql`, { body, headers: { authorization: `Bearer ${await token({ plan: 'free', listing: 'lst-sse' })}` } });
    await waitFor(() => t.gateway.stats().subscriptions === 1 && t.gateway.stats().confirmedChannels === 1, { message: 'the SSE subscription, on its listing\'s channel only' });
    await t.publishListing('lst-other');
    const offset = await t.publishListing('lst-sse');
    const events = () => narrowed.events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data) as { data?: unknown; extensions?: { position?: { offset: string } } }).filter((p) => p.data !== undefined);
    await waitFor(() => events().length === 1, { message: 'the one event of its listing' });
    expect(events()[0]).toMatchObject({ data: { listingUpdated: { listing_id: 'lst-sse' } }, extensions: { position: { offset } } });
    narrowed.abort();
  });
});

describe('loadGatewayPlugin', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirestream-plugin-'));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('imports a module by path or file: URL and checks its exports', async () => {
    const path = file('ok.mjs', 'export const onEvent = () => null;\n');
    expect(typeof (await loadGatewayPlugin(path)).onEvent).toBe('function');
    expect(typeof (await loadGatewayPlugin('ok.mjs', dir)).onEvent).toBe('function');
    expect(typeof (await loadGatewayPlugin(`file://${path}`)).onEvent).toBe('function');
  });

  it('refuses in one line naming the setting', async () => {
    const typo = file('typo.mjs', 'export function onSubscibe() {}\n');
    await expect(loadGatewayPlugin(typo)).rejects.toThrow(`GATEWAY_PLUGIN=${typo}: unknown export "onSubscibe": a plugin exports only resolvers, context, onSubscribe, onEvent`);
    await expect(loadGatewayPlugin(join(dir, 'missing.mjs'))).rejects.toThrow(/^GATEWAY_PLUGIN=.*missing\.mjs: cannot import it: Cannot find module/);
    const broken = file('broken.mjs', 'export const onEvent = (;\n');
    await expect(loadGatewayPlugin(broken)).rejects.toThrow(/^GATEWAY_PLUGIN=.*broken\.mjs: cannot import it: [^\n]+$/);
  });
});
