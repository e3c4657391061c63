import { describe, expect, it } from 'vitest';
import { parseSinceRequest } from './since-request.js';

describe('parseSinceRequest (extensions.since)', () => {
  it('accepts RFC 3339 times with Z or an offset, fractions, and a space or t for T', () => {
    expect(parseSinceRequest({ since: '2026-12-04T09:00:00Z' })).toEqual({ ms: Date.UTC(2026, 11, 4, 9), text: '2026-12-04T09:00:00Z' });
    expect(parseSinceRequest({ since: '2026-12-04T10:00:00.5+01:00' })).toMatchObject({ ms: Date.UTC(2026, 11, 4, 9, 0, 0, 500) });
    expect(parseSinceRequest({ since: '2026-12-04 09:00:00z' })).toMatchObject({ ms: Date.UTC(2026, 11, 4, 9) });
    expect(parseSinceRequest({ since: '2026-12-04t09:00:00-00:30' })).toMatchObject({ ms: Date.UTC(2026, 11, 4, 9, 30) });
  });

  it('is absent without since (or with null), whatever else the extensions hold', () => {
    expect(parseSinceRequest(undefined)).toBeUndefined();
    expect(parseSinceRequest(null)).toBeUndefined();
    expect(parseSinceRequest({ snapshot: true })).toBeUndefined();
    expect(parseSinceRequest({ since: null })).toBeUndefined();
  });

  it('refuses what is not an RFC 3339 time, naming the field and showing what arrived', () => {
    for (const since of ['2026-12-04', '2026-12-04T09:00', '2026-12-04T09:00:00', '09:00', 'yesterday', '2026-13-01T00:00:00Z', '2026-12-04T24:00:00Z', '1733302800000', `2026-12-04T09:00:00.${'1'.repeat(40)}Z`]) {
      expect(parseSinceRequest({ since }), since).toMatch(/^extensions\.since .*must be an RFC 3339 time/);
    }
    expect(parseSinceRequest({ since: 1_733_302_800_000 })).toContain('got number');
    expect(parseSinceRequest({ since: '2026-02-31T00:00:00Z' })).toMatch(/extensions\.since/);
  });

  it('refuses since with a snapshot: one is the current state, the other a stretch of the past', () => {
    expect(parseSinceRequest({ since: '2026-12-04T09:00:00Z', snapshot: true })).toContain('extensions.since cannot be combined with extensions.snapshot');
    expect(parseSinceRequest({ since: '2026-12-04T09:00:00Z', snapshot: false })).toMatchObject({ text: '2026-12-04T09:00:00Z' });
  });
});
