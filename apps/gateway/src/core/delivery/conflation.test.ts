import { describe, expect, it } from 'vitest';
import { parseConflateRequest, parseMaxRateRequest, withConflated } from './conflation.js';

describe('conflation', () => {
  it('validates extensions.conflate, naming the field', () => {
    expect(parseConflateRequest({ conflate: 'yes' })).toBe('extensions.conflate must be true (the latest value of each key when the connection lags) or false, got "yes"');
    expect(parseConflateRequest({ conflate: true })).toBe(true);
    expect(parseConflateRequest({ conflate: false })).toBe(false);
    expect(parseConflateRequest({})).toBeUndefined();
    expect(parseConflateRequest(null)).toBeUndefined();
  });

  it('adds the count as the last member of the payload extensions', () => {
    const payload = JSON.stringify({ data: { x: 1 }, extensions: { position: { topic: 't', partition: 0, offset: '9' } } });
    expect(JSON.parse(withConflated(payload, 3))).toEqual({ data: { x: 1 }, extensions: { position: { topic: 't', partition: 0, offset: '9' }, conflated: 3 } });
    const deleted = JSON.stringify({ extensions: { deleted: { key: 'k' }, position: { offset: '1' } } });
    expect(JSON.parse(withConflated(deleted, 1))).toMatchObject({ extensions: { conflated: 1 } });
  });
});

describe('parseMaxRateRequest', () => {
  it('takes a positive number of frames per second and names the field otherwise', () => {
    expect(parseMaxRateRequest({ maxRate: 2 })).toBe(2);
    expect(parseMaxRateRequest({ maxRate: 0.5 })).toBe(0.5);
    expect(parseMaxRateRequest({})).toBeUndefined();
    for (const maxRate of [0, -1, '2', Number.POSITIVE_INFINITY, 0.001]) {
      expect(parseMaxRateRequest({ maxRate }), String(maxRate)).toMatch(/^extensions\.maxRate must be a number of frames per second of at least/);
    }
  });
});
