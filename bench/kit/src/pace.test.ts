import { describe, expect, it } from 'vitest';
import { paceStream } from './pace.js';

const nowUs = (): number => performance.now() * 1_000;

describe('paceStream', () => {
  it('sends back-to-back in slices, each answered before the next is made', async () => {
    const sends: [number, number][] = [];
    let open = 0;
    let mostOpen = 0;
    await paceStream({
      count: 10,
      ratePerSecond: 0,
      slice: 3,
      nowUs,
      send: async (from, to) => {
        sends.push([from, to]);
        mostOpen = Math.max(mostOpen, ++open);
        await new Promise((resolve) => setTimeout(resolve, 2));
        open--;
      },
    });
    expect(sends).toEqual([
      [0, 3],
      [3, 6],
      [6, 9],
      [9, 10],
    ]);
    expect(mostOpen).toBe(1);
  });

  it('at a rate, sends every event once, in order, over count ÷ rate, and waits for every answer', async () => {
    const sent: number[] = [];
    let answered = 0;
    const { firstPublishUs, lastPublishUs } = await paceStream({
      count: 40,
      ratePerSecond: 2_000,
      nowUs,
      send: async (from, to) => {
        for (let i = from; i < to; i++) sent.push(i);
        await new Promise((resolve) => setTimeout(resolve, 5));
        answered += to - from;
      },
    });
    expect(sent).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(answered).toBe(40);
    // Event 39 is due 19.5 ms after the first.
    expect(lastPublishUs - firstPublishUs).toBeGreaterThanOrEqual(19_000);
  });

  it('stops once the caller says so, and refuses a negative rate', async () => {
    const sends: number[] = [];
    await paceStream({ count: 10, ratePerSecond: 0, slice: 2, nowUs, send: (from) => Promise.resolve(void sends.push(from)), stopped: () => sends.length >= 2 });
    expect(sends).toEqual([0, 2]);
    await expect(paceStream({ count: 1, ratePerSecond: -1, nowUs, send: () => Promise.resolve() })).rejects.toThrow(/ratePerSecond must be ≥ 0, got -1/);
  });
});
