// A field whose resolver is asynchronous (a look-up that takes 0–50 ms, at random) must not
// reorder, lose or repeat events: every operation group delivers a partition's events in offset
// order. Renders in flight are bounded per gateway, and at the bound the gateway stops reading
// Redis (the inbound queue fills and pauses the broker) instead of growing memory. A failed
// resolver is a field error that keeps the event's position. Real Redis, real graphql-ws clients.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GraphQLObjectType } from 'graphql';
import { waitFor } from '@wirestream/testkit';
import { collect, startTestGateway, type TestGateway } from './support/gateway.js';

const MAX_IN_FLIGHT = 16;
const EVENTS = 1_000;

let t: TestGateway;
let resolving = 0;
let peakResolving = 0;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  t = await startTestGateway(
    // The smallest inbound bound: a thousand queued envelopes pass it, so the broker must pause.
    { maxRendersInFlight: MAX_IN_FLIGHT, maxInboundBytes: 65_536 },
    {},
    (ws) => {
      const type = ws.schema.getType('ListingEvent');
      const field = type instanceof GraphQLObjectType ? type.getFields()['event_type'] : undefined;
      if (!field) throw new Error('ListingEvent.event_type missing from the schema');
      field.resolve = async (source: { listing_id: string; event_type: string }) => {
        resolving++;
        peakResolving = Math.max(peakResolving, resolving);
        try {
          await sleep(Math.random() * 50);
          if (source.listing_id.endsWith('-bad')) throw new Error(`label service refused ${source.listing_id}`);
          return source.event_type.toLowerCase();
        } finally {
          resolving--;
        }
      };
    },
  );
});
afterAll(() => t?.stop());

interface Frame {
  readonly data?: { listingUpdated: { listing_id: string; event_type?: string } | null } | null;
  readonly errors?: readonly { message: string; path?: readonly (string | number)[] }[];
  readonly extensions?: { position?: { topic: string; partition: number; offset: string } };
}

it('delivers every event once, in offset order, per group, whatever the resolver takes; bounded in flight', async () => {
  // Two groups that execute (each awaits the resolver), one the projector writes synchronously.
  const slowA = collect(t.connect(), 'subscription { listingUpdated { listing_id event_type } }');
  const slowB = collect(t.connect(), 'subscription { listingUpdated { event_type listing_id } }');
  const plain = collect(t.connect(), 'subscription { listingUpdated { listing_id } }');
  await waitFor(() => t.gateway.stats().subscriptions === 3 && t.gateway.stats().confirmedChannels === 16, { message: 'three subscriptions live' });

  // All at once (each publish's commands are sent in call order, so offsets stay in order): one at a
  // time, a loaded machine's publisher was slower than the gateway and the queue never filled.
  const ids = Array.from({ length: EVENTS }, (_, i) => (i % 7 === 3 ? `lst-${i}-bad` : `lst-${i}`));
  const published = await Promise.all(ids.map((id) => t.publishListing(id)));
  const bad = new Set(published.filter((_, i) => (ids[i] as string).endsWith('-bad')));
  const subs = { slowA, slowB, plain };
  await waitFor(() => Object.values(subs).every((s) => s.results.length >= EVENTS), { timeoutMs: 60_000, message: 'every event to every group' });
  await new Promise((resolve) => setTimeout(resolve, 200)); // nothing more must come

  for (const [name, sub] of Object.entries(subs)) {
    const frames = sub.results as Frame[];
    // Every frame carries its position, errors included: 0 missing, 0 duplicate, 0 out of order.
    expect(frames.map((f) => f.extensions?.position?.offset), name).toEqual(published);
    expect(sub.errors, name).toEqual([]);
  }
  for (const name of ['slowA', 'slowB'] as const) {
    const frames = subs[name].results as Frame[];
    const failed = frames.filter((f) => f.errors !== undefined);
    expect(failed.map((f) => f.extensions?.position?.offset), name).toEqual([...bad]);
    expect(failed[0]?.errors?.[0]?.path, name).toEqual(['listingUpdated', 'event_type']);
    expect(failed[0]?.data, name).toEqual({ listingUpdated: null }); // event_type is non-null
    const ok = frames.find((f) => f.errors === undefined);
    expect(ok?.data?.listingUpdated?.event_type, name).toBe('listingupdated');
  }

  const stats = t.gateway.stats();
  // Two executing groups per event; the bound is checked between messages, so one message's groups may pass it.
  expect(stats.peakRendersInFlight).toBeLessThanOrEqual(MAX_IN_FLIGHT + 1);
  expect(peakResolving).toBeLessThanOrEqual(MAX_IN_FLIGHT + 1);
  expect(stats.asyncRenders).toBe(2 * EVENTS);
  // The queue filled behind the bound and reading from Redis paused, then resumed: nothing was lost.
  expect(stats.pauses).toBeGreaterThan(0);
  expect(stats.inbound.paused).toBe(false);
  for (const s of Object.values(subs)) s.dispose();
}, 90_000);
