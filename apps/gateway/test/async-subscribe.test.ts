// A plugin's onSubscribe that answers with a promise, on all three transports (graphql-transport-ws,
// legacy graphql-ws, SSE), on real Redis: events published while it decides reach the subscriber, in
// order and once, when it allows (or narrows); a refusal, a complete or a disconnect meanwhile leaves
// nothing behind in the hub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, preparePlugin, type SubscribeDecision } from '@wirestream/plugin';
import { waitFor } from '@wirestream/testkit';
import { collect, rawSocket, startTestGateway, type TestGateway } from './support/gateway.js';
import { openSse } from './support/sse.js';

/** The decisions asked for and not given yet, oldest first (each test has one at a time), settled by the test. */
const gates: { readonly transport: string; readonly resolve: (decision: SubscribeDecision) => void }[] = [];
const plugin = definePlugin({
  onSubscribe: ({ transport }) => new Promise<SubscribeDecision>((resolve) => gates.push({ transport, resolve })),
});
const asking = (transport: string): boolean => gates[0]?.transport === transport;

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ subscribeBurst: 100, subscribeRatePerSecond: 100 }, { plugin: await preparePlugin(plugin, 'async test plugin') });
});
afterAll(() => t?.stop());

async function decide(transport: string, decision: SubscribeDecision): Promise<void> {
  await waitFor(() => asking(transport), { message: `onSubscribe asked over ${transport}` });
  gates.shift()?.resolve(decision);
}

const offsetOf = (r: { extensions?: unknown }): string | undefined => (r.extensions as { position?: { offset: string } } | undefined)?.position?.offset;
const idle = () => t.gateway.stats().subscriptions === 0 && t.gateway.stats().groups === 0;

describe('an async onSubscribe on graphql-transport-ws', () => {
  it('allowed: the events published while it decided come first, in order, then live ones', async () => {
    const s = collect(t.connect(), 'subscription Allow { listingUpdated { listing_id event_type } }');
    await waitFor(() => asking('graphql-transport-ws') && t.gateway.stats().confirmedChannels > 0, { message: 'held, channels confirmed' });
    const offsets: string[] = [];
    for (let i = 0; i < 5; i++) offsets.push(await t.publishListing(`lst-${i}`));
    await new Promise((resolve) => setTimeout(resolve, 50)); // let them reach the gateway while it waits
    expect(s.results).toEqual([]);
    await decide('graphql-transport-ws', undefined);
    for (let i = 5; i < 10; i++) offsets.push(await t.publishListing(`lst-${i}`));
    await waitFor(() => s.results.length === 10, { message: 'ten events' });
    expect(s.results.map(offsetOf)).toEqual(offsets);
    s.dispose();
    await waitFor(idle, { message: 'released' });
  });

  it('narrowed: the narrowed operation gets its events of the wait from history, then live ones, once each', async () => {
    const s = collect(t.connect(), 'subscription Narrow($listing_id: ID) { listingUpdated(listing_id: $listing_id) { listing_id } }');
    await waitFor(() => asking('graphql-transport-ws') && t.gateway.stats().confirmedChannels > 0, { message: 'held' });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the hold's positions are read
    const mine: string[] = [];
    for (const id of ['lst-n', 'lst-other', 'lst-n', 'lst-other']) {
      const offset = await t.publishListing(id);
      if (id === 'lst-n') mine.push(offset);
    }
    await decide('graphql-transport-ws', { variables: { listing_id: 'lst-n' } });
    for (const id of ['lst-other', 'lst-n']) {
      const offset = await t.publishListing(id);
      if (id === 'lst-n') mine.push(offset);
    }
    await waitFor(() => s.results.length === 3, { message: 'three events of lst-n' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(s.results.map(offsetOf)).toEqual(mine);
    expect(s.results.map((r) => (r.data as { listingUpdated: { listing_id: string } }).listingUpdated.listing_id)).toEqual(['lst-n', 'lst-n', 'lst-n']);
    s.dispose();
    await waitFor(idle, { message: 'released' });
  });

  it('refused: the errors, and the held subscription is gone', async () => {
    const s = collect(t.connect(), 'subscription Refuse { listingUpdated { listing_id } }');
    await waitFor(() => asking('graphql-transport-ws') && t.gateway.stats().subscriptions === 1, { message: 'held' });
    await t.publishListing('lst-r');
    await decide('graphql-transport-ws', { errors: [{ message: 'not your plan' }] });
    await waitFor(() => s.errors.length === 1, { message: 'refused' });
    expect(s.errors[0]).toEqual([{ message: 'not your plan' }]);
    expect(s.results).toEqual([]);
    await waitFor(idle, { message: 'nothing left' });
  });

  it('a complete, or a disconnect, while it decides leaves nothing behind, and the late decision sends nothing', async () => {
    const completed = collect(t.connect(), 'subscription Gone { listingUpdated { listing_id } }');
    await waitFor(() => asking('graphql-transport-ws') && t.gateway.stats().subscriptions === 1, { message: 'held' });
    completed.dispose();
    await waitFor(idle, { message: 'dropped on complete' });
    await decide('graphql-transport-ws', undefined);
    await t.publishListing('lst-late');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(completed.results).toEqual([]);
    expect(idle()).toBe(true);

    const socket = rawSocket(t.url);
    await socket.opened;
    socket.ws.send(JSON.stringify({ type: 'connection_init' }));
    await waitFor(() => socket.messages.length === 1, { message: 'ack' });
    socket.ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription Closed { listingUpdated { listing_id } }' } }));
    await waitFor(() => asking('graphql-transport-ws') && t.gateway.stats().subscriptions === 1, { message: 'held' });
    socket.ws.close();
    await waitFor(idle, { message: 'dropped on disconnect' });
    await decide('graphql-transport-ws', undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(idle()).toBe(true);
  });
});

describe('an async onSubscribe on the legacy graphql-ws protocol', () => {
  it('allowed: the events of the wait, then live ones, in order', async () => {
    const socket = rawSocket(t.url, 'graphql-ws');
    await socket.opened;
    socket.ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    socket.ws.send(JSON.stringify({ id: 'a', type: 'start', payload: { query: 'subscription Legacy { listingUpdated { listing_id } }' } }));
    await waitFor(() => asking('graphql-ws') && t.gateway.stats().confirmedChannels > 0, { message: 'held' });
    const offsets = [await t.publishListing('lst-l1'), await t.publishListing('lst-l2')];
    await decide('graphql-ws', true);
    offsets.push(await t.publishListing('lst-l3'));
    const data = () => socket.messages.filter((m): m is { type: 'data'; payload: { extensions: { position: { offset: string } } } } => (m as { type: string }).type === 'data');
    await waitFor(() => data().length === 3, { message: 'three data messages' });
    expect(data().map((m) => m.payload.extensions.position.offset)).toEqual(offsets);
    socket.ws.close();
    await waitFor(idle, { message: 'released' });
  });
});

describe('an async onSubscribe over SSE', () => {
  it('allowed: the stream resumes from where it arrived, so the events of the wait come first', async () => {
    const body = JSON.stringify({ query: 'subscription Sse { listingUpdated { listing_id } }' });
    const opening = openSse(`${t.httpBase}/graphql`, { body });
    await waitFor(() => asking('graphql-sse'), { message: 'asked' });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the positions at arrival are read
    const offsets = [await t.publishListing('lst-s1'), await t.publishListing('lst-s2')];
    await decide('graphql-sse', undefined);
    const stream = await opening;
    await waitFor(() => t.gateway.stats().subscriptions === 1, { message: 'attached' });
    offsets.push(await t.publishListing('lst-s3'));
    await waitFor(() => stream.nexts().filter((n) => 'data' in n).length === 3, { message: 'three events' });
    expect(stream.nexts().filter((n) => 'data' in n).map((n) => offsetOf(n))).toEqual(offsets);
    stream.abort();
    await waitFor(idle, { message: 'released' });
  });

  it('a client gone while it decides leaves nothing behind', async () => {
    const controller = new AbortController();
    const request = fetch(`${t.httpBase}/graphql`, { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify({ query: 'subscription SseGone { listingUpdated { listing_id } }' }), signal: controller.signal });
    await waitFor(() => asking('graphql-sse'), { message: 'asked' });
    controller.abort();
    await expect(request).rejects.toThrow();
    await decide('graphql-sse', undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(idle()).toBe(true);
    expect(t.gateway.stats().sseStreams).toBe(0);
  });
});
