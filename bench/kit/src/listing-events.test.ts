import { describe, expect, it } from 'vitest';
import { countByKey, prepareListingEvents } from './listing-events.js';
import { positiveInt, positiveInts } from './cli.js';

describe('prepareListingEvents', () => {
  it('splits each payload around occurred_at, so a publish instant put there gives the event back as JSON', () => {
    const { events, meanEnvelopeBytes } = prepareListingEvents({ count: 20, listings: 5 });
    expect(events).toHaveLength(20);
    for (const event of events) {
      const payload = JSON.parse(event.before + '2026-01-01T00:00:00.000000Z' + event.after) as { occurred_at: string; listing_id: string };
      expect(payload.occurred_at).toBe('2026-01-01T00:00:00.000000Z');
      expect(payload.listing_id).toBe(event.key);
    }
    expect(new Set(events.map((e) => e.key)).size).toBeLessThanOrEqual(5);
    expect(meanEnvelopeBytes).toBeGreaterThan(110);
  });

  it('is the same stream for the same seed, and takes the keys it is given', () => {
    const a = prepareListingEvents({ count: 5, listings: 50 });
    const b = prepareListingEvents({ count: 5, listings: 50 });
    expect(b.events).toEqual(a.events);
    const keyed = prepareListingEvents({ count: 3, listings: 50, keyOf: (i) => `lst-${String(i).padStart(6, '0')}` });
    expect(keyed.events.map((e) => e.key)).toEqual(['lst-000000', 'lst-000001', 'lst-000002']);
  });
});

describe('countByKey', () => {
  it('counts the first upTo events per key, in the order of keys, ignoring other keys', () => {
    const events = ['a', 'b', 'a', 'c', 'a'].map((key) => ({ key }));
    expect(countByKey(events, ['a', 'b'], 4)).toEqual([2, 1]);
    expect(countByKey(events, ['a'], 99)).toEqual([3]);
  });
});

describe('positiveInt', () => {
  it('reads a whole number of at least 1 and names the option otherwise', () => {
    expect(positiveInt('rounds', '3')).toBe(3);
    expect(() => positiveInt('rounds', '0')).toThrow('--rounds must be a positive integer, got 0');
    expect(() => positiveInt('rounds', '1.5')).toThrow(RangeError);
    expect(() => positiveInt('rounds', undefined)).toThrow('got undefined');
  });
});

describe('positiveInts', () => {
  it('reads several options by name, and names the first that is not a positive integer', () => {
    const values: Record<string, unknown> = { events: '20', rounds: '3', other: 'x' };
    expect(positiveInts(values, ['events', 'rounds'])).toEqual({ events: 20, rounds: 3 });
    expect(() => positiveInts({ events: '20', rounds: '-1' }, ['events', 'rounds'])).toThrow('--rounds must be a positive integer, got -1');
    expect(() => positiveInts({ events: '20' }, ['events', 'rounds'])).toThrow('--rounds must be a positive integer, got undefined');
  });
});
