import { describe, expect, it } from 'vitest';
import { alternate, compileSubscription, createCompiler, createFrameSink, feed, listingEvents, listingKey, listingUpdated, startEngine, turn } from './engine-fixture.js';

describe('the engine fixture', () => {
  it('delivers every fed event to every subscriber of a real hub, each frame built (string) or copied (copy)', async () => {
    const events = listingEvents(30, (i) => {
      const key = listingKey(i % 3);
      return { key, payload: listingUpdated(i, key, { listing_id: key, title: `Listing ${i}` }) };
    });
    const operation = compileSubscription(createCompiler(), 'subscription { listingUpdated { listing_id listing { title } } }');
    for (const layout of ['string', 'copy'] as const) {
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
      expect(sink.bytes()).toBeGreaterThan(30 * 4 * 40);
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
});
