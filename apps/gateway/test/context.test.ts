// Resolver backends are built lazily per operation group: never per connection, never per event.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GraphQLObjectType } from 'graphql';
import { waitFor } from '@wirestream/testkit';
import { collect, startTestGateway, type TestGateway } from './support/gateway.js';

interface Labels {
  label(eventType: string): string;
  dispose(): void;
}

let t: TestGateway;
let built = 0;
let disposed = 0;

beforeAll(async () => {
  t = await startTestGateway(
    {},
    {
      contextFactories: {
        labels: (): Labels => {
          built++;
          return { label: (eventType) => eventType.toUpperCase(), dispose: () => void disposed++ };
        },
      },
    },
    (ws) => {
      // A custom resolver, attached to the SDL-built schema, that reads a lazy backend from the context.
      const type = ws.schema.getType('ListingEvent');
      const field = type instanceof GraphQLObjectType ? type.getFields()['event_type'] : undefined;
      if (!field) throw new Error('ListingEvent.event_type missing from the schema');
      field.resolve = (source: { event_type: string }, _args: unknown, context: { labels: Labels }) => context.labels.label(source.event_type);
    },
  );
});
afterAll(() => t?.stop());

it('builds a backend once per operation group on first use, and disposes it with the group', async () => {
  const withLabels = 'subscription { listingUpdated { listing_id event_type } }';
  const subs = [collect(t.connect(), withLabels), collect(t.connect(), withLabels), collect(t.connect(), withLabels)];
  const plain = collect(t.connect(), 'subscription { listingUpdated { listing_id } }');
  await waitFor(() => t.gateway.stats().subscriptions === 4 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
  // Connections and groups exist, nothing was built yet.
  expect(built).toBe(0);

  for (let i = 0; i < 5; i++) await t.publishListing(`lst-${i}`, 'ListingUpdated');
  await waitFor(() => subs.every((s) => s.results.length === 5) && plain.results.length === 5, { message: 'deliveries' });
  expect(subs[0]?.results[0]?.data).toEqual({ listingUpdated: { listing_id: 'lst-0', event_type: 'LISTINGUPDATED' } });
  // One group used it (three subscribers, five events): built once; the plain group never did.
  expect(built).toBe(1);

  for (const s of subs) s.dispose();
  await waitFor(() => disposed === 1, { message: 'the backend disposed with its group' });
  plain.dispose();
});
