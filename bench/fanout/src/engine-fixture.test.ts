import { describe, expect, it } from 'vitest';
import { alternate, benchListing, compileSubscription, createCompiler, createFrameSink, demoEvents, feed, feedSides, listingEvents, listingKey, listingUpdated, startEngine, turn } from './engine-fixture.js';

describe('the engine fixture', () => {
  it('delivers every fed event to every subscriber of a real hub, each frame built (string), copied (copy) or only counted (drop)', async () => {
    const events = listingEvents(30, (i) => {
      const key = listingKey(i % 3);
      return { key, payload: listingUpdated(i, key, { listing_id: key, title: `Listing ${i}` }) };
    });
    const operation = compileSubscription(createCompiler(), 'subscription { listingUpdated { listing_id listing { title } } }');
    for (const layout of ['string', 'copy', 'drop'] as const) {
      const sink = createFrameSink<object>({ layout, countBytes: true });
      const { bus, hub } = await startEngine<object>({
        writer: sink.writer,
        subscribe: (h) => {
          for (let i = 0; i < 4; i++) h.subscribe({}, String(i), operation);
        },
      });
      expect(hub.stats().confirmedChannels).toBe(hub.stats().channels);
      await feed(bus, events, { burst: 7 });
      for (let t = 0; t < 100 && sink.frames() < 120; t++) await turn();
      expect(sink.frames()).toBe(30 * 4);
      if (layout === 'drop') expect(sink.bytes()).toBe(0);
      else expect(sink.bytes()).toBeGreaterThan(30 * 4 * 40);
    }
  });

  it('alternates sides after a warm-up of each: mirrored or rotated', async () => {
    const seen: string[] = [];
    const measure = (side: string, round: number): number => {
      seen.push(`${side}${round}`);
      return round;
    };
    const { first, samples } = await alternate(['a', 'b', 'c'], 2, measure);
    expect(seen).toEqual(['a-1', 'b-1', 'c-1', 'a0', 'b0', 'c0', 'c1', 'b1', 'a1']);
    expect(first.get('b')).toBe(-1);
    expect(samples.get('c')).toEqual([0, 1]);
    seen.length = 0;
    await alternate(['a', 'b', 'c'], 2, measure, { order: 'rotate' });
    expect(seen.slice(3)).toEqual(['a0', 'b0', 'c0', 'b1', 'c1', 'a1']);
  });

  it('feeds each side its own engine in alternating rounds, and compiles a request with variables', async () => {
    const events = listingEvents(20, (i) => {
      const key = listingKey(i % 2);
      return { key, payload: listingUpdated(i, key, benchListing(i, key, 10)) };
    });
    const operation = compileSubscription(createCompiler(), { query: 'subscription ($id: ID) { listingUpdated(listing_id: $id) { listing_id } }', variables: { id: listingKey(0) } });
    const sinks = new Map([1, 3].map((n) => [n, createFrameSink<object>()]));
    const { samples, engineOf } = await feedSides([1, 3], 2, events, (n) => ({
      writer: (sinks.get(n) as ReturnType<typeof createFrameSink<object>>).writer,
      subscribe: (hub) => {
        for (let i = 0; i < n; i++) hub.subscribe({}, String(i), operation);
      },
    }));
    expect(samples.get(3)).toHaveLength(2);
    expect(engineOf(3).hub.stats().subscribers).toBe(3);
    // feed returns once the events are published; the hubs deliver over the next turns.
    for (let t = 0; t < 1_000 && ((sinks.get(1)?.frames() ?? 0) < 1 * 10 * 3 || (sinks.get(3)?.frames() ?? 0) < 3 * 10 * 3); t++) await turn();
    // A warm-up and two rounds of 10 events on lst-000000, to each subscriber.
    expect(sinks.get(1)?.frames()).toBe(1 * 10 * 3);
    expect(sinks.get(3)?.frames()).toBe(3 * 10 * 3);
    expect(() => engineOf(2)).toThrow('no engine for side 2');
  });

  it('gives the demo events of a kind, the same for the same count', () => {
    const bids = demoEvents('bid', 3);
    expect(bids.map((e) => e.key)).toEqual(demoEvents('bid', 3).map((e) => e.key));
    expect((JSON.parse(bids[0]?.json ?? '{}') as Record<string, unknown>)['bid_id']).toBeDefined();
    expect(benchListing(7, listingKey(42), 5)).toMatchObject({ listing_id: 'lst-000042', title: 'Listing 42', description: 'xxxxx', current_price: { amount_cents: 1_007 } });
  });
});
