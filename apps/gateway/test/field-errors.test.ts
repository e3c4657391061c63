// A field that fails (a resolver throws, a value its type refuses) yields a `next` with `errors` and
// whatever data there is — and still the event's `extensions.position`, on every transport, so a
// client's resume point moves past it (issue 33: such frames had no position).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GraphQLObjectType } from 'graphql';
import { waitFor } from '@wirestream/testkit';
import { collect, rawSocket, startTestGateway, type TestGateway } from './support/gateway.js';
import { openSse } from './support/sse.js';

const QUERY = 'subscription { listingUpdated { listing_id event_type } }';

let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway({}, {}, (ws) => {
    const type = ws.schema.getType('ListingEvent');
    const field = type instanceof GraphQLObjectType ? type.getFields()['event_type'] : undefined;
    if (!field) throw new Error('ListingEvent.event_type missing from the schema');
    field.resolve = (source: { listing_id: string; event_type: string }) => {
      if (source.listing_id === 'lst-bad') throw new Error('label service refused lst-bad');
      return source.event_type;
    };
  });
});
afterAll(() => t?.stop());

interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

it('keeps extensions.position on a frame with field errors (graphql-transport-ws, legacy graphql-ws, SSE)', async () => {
  const ws = collect(t.connect(), QUERY);
  const legacy = rawSocket(t.url, 'graphql-ws');
  await legacy.opened;
  legacy.ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  legacy.ws.send(JSON.stringify({ id: 'l1', type: 'start', payload: { query: QUERY } }));
  const sse = await openSse(`${t.httpBase}/graphql`, { body: JSON.stringify({ query: QUERY }) });
  await waitFor(() => t.gateway.stats().subscriptions === 3 && t.gateway.stats().confirmedChannels === 16, { message: 'three subscriptions live' });

  const offsets = [await t.publishListing('lst-1'), await t.publishListing('lst-bad'), await t.publishListing('lst-2')];
  const legacyData = () => legacy.messages.filter((m) => (m as { type: string }).type === 'data') as { payload: Record<string, unknown> }[];
  // SSE opens with a data-less frame carrying the stream's starting point (extensions.start): not an event.
  const sseEvents = () =>
    sse.events.filter((e) => e.event === 'next').map((e) => ({ id: e.id, payload: JSON.parse(e.data) as Record<string, unknown> })).filter((e) => (e.payload['extensions'] as { start?: unknown } | undefined)?.start === undefined);
  await waitFor(() => ws.results.length === 3 && legacyData().length === 3 && sseEvents().length === 3, { message: 'three events on every transport' });

  const payloads = { ws: ws.results as Record<string, unknown>[], legacy: legacyData().map((m) => m.payload), sse: sseEvents().map((e) => e.payload) };
  for (const [transport, frames] of Object.entries(payloads)) {
    const positions = frames.map((f) => (f['extensions'] as { position?: Position } | undefined)?.position?.offset);
    expect(positions, transport).toEqual(offsets);
    const failed = frames[1] as { data: unknown; errors?: { message: string; path: unknown[] }[] };
    expect(failed.data, transport).toEqual({ listingUpdated: null }); // event_type is non-null: the error nulls its parent
    expect(failed.errors?.[0]?.message, transport).toBe('label service refused lst-bad');
    expect(failed.errors?.[0]?.path, transport).toEqual(['listingUpdated', 'event_type']);
    expect(frames[2]?.['errors'], transport).toBeUndefined();
  }
  // SSE: the failed event has its cursor like any other, so Last-Event-ID resumes past it.
  const ids = sseEvents().map((e) => e.id);
  expect(ids.map((id) => id?.slice(id.lastIndexOf(':') + 1))).toEqual(offsets);

  ws.dispose();
  legacy.ws.close();
  sse.abort();
});
