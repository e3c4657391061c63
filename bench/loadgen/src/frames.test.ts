import { describe, expect, it } from 'vitest';
import { clientTextFrame, frameSize, headerSize, isoTimeOfDayUs, isoWithMicros, parseDigits, timeOfDayDeltaUs, US_PER_DAY } from './frames.js';
import { bucketOf, createHistogram, lowerBoundOf, quantileUs } from './histogram.js';
import { parseMix, variantOf, variantsOf } from './operations.js';

function serverFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, n]) : n < 65_536 ? Buffer.from([0x81, 126, n >> 8, n & 0xff]) : Buffer.alloc(10);
  if (n >= 65_536) {
    head[0] = 0x81;
    head[1] = 127;
    head.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    head.writeUInt32BE(n >>> 0, 6);
  }
  return Buffer.concat([head, payload]);
}

describe('frames', () => {
  it.each([0, 5, 125, 126, 2_500, 65_535, 65_536, 100_000])('sizes a %i-byte server frame, or says how much header it needs', (n) => {
    const frame = serverFrame(Buffer.alloc(n, 0x61));
    expect(frameSize(frame, 0, frame.length)).toBe(frame.length);
    expect(headerSize(frame, 0) + n).toBe(frame.length);
    expect(frameSize(frame, 0, 1)).toBe(-2);
    if (n >= 126) expect(frameSize(frame, 0, 3)).toBeLessThan(0);
  });

  it('masks client frames with a zero key, so the payload goes out as is', () => {
    const frame = clientTextFrame('{"type":"connection_init"}');
    expect(frame[0]).toBe(0x81);
    expect(frame[1]).toBe(0x80 | 26);
    expect([...frame.subarray(2, 6)]).toEqual([0, 0, 0, 0]);
    expect(frame.subarray(6).toString()).toBe('{"type":"connection_init"}');
  });

  it('reads the µs time of day of the producer timestamp it wrote, and wraps at midnight', () => {
    const wallUs = Date.UTC(2025, 10, 29, 18, 59, 0, 123) * 1_000 + 456;
    const iso = isoWithMicros(wallUs);
    expect(iso).toBe('2025-11-29T18:59:00.123456Z');
    expect(isoTimeOfDayUs(Buffer.from(iso), 0, iso.length)).toBe(wallUs % US_PER_DAY);
    expect(isoTimeOfDayUs(Buffer.from('2025-11-29T18:59:00.5Z'), 0, 22)).toBe(((18 * 60 + 59) * 60) * 1e6 + 500_000);
    expect(Number.isNaN(isoTimeOfDayUs(Buffer.from('now'), 0, 3))).toBe(true);
    expect(timeOfDayDeltaUs(1_000, US_PER_DAY - 1_000)).toBe(2_000);
    expect(parseDigits(Buffer.from('"1000042"'), 1, 9)).toBe(1_000_042);
  });
});

describe('histogram', () => {
  it('keeps every value within 1.6 % of its bucket and percentiles in order', () => {
    for (const v of [0, 1, 127, 128, 129, 1_000, 65_432, 10_000_000, 2 ** 31 - 1]) {
      const b = bucketOf(v);
      expect(lowerBoundOf(b)).toBeLessThanOrEqual(v);
      expect(lowerBoundOf(b + 1)).toBeGreaterThan(v);
      expect(v - lowerBoundOf(b)).toBeLessThanOrEqual(Math.max(1, v * 0.016));
    }
    const h = createHistogram();
    for (let v = 1; v <= 1_000; v++) h[bucketOf(v)]! += 1;
    expect(quantileUs(h, 0.5)).toBeCloseTo(500, -1);
    expect(quantileUs(h, 0.99)).toBeCloseTo(990, -1.5);
    // 20 undelivered out of 1,020 (2 %): p99 falls among them, p50 does not.
    expect(quantileUs(h, 0.99, 20)).toBe(Number.POSITIVE_INFINITY);
    expect(quantileUs(h, 0.5, 20)).toBeLessThan(1_000);
  });
});

describe('operations', () => {
  it('parses a mix and spreads its kinds evenly over any 100 consecutive sockets', () => {
    const plan = { mix: parseMix('shared:85,compact:5,filtered:10'), filterKeys: ['lst-000000', 'lst-000001'] };
    const counts = [0, 0, 0];
    for (let i = 500; i < 600; i++) {
      const v = variantOf(plan, i);
      counts[Math.min(v, 2)]! += 1;
    }
    expect(counts).toEqual([85, 5, 10]);
    expect(variantsOf(plan).map((v) => v.filterKey)).toEqual([-1, -1, 0, 1]);
  });

  it('rejects a mix that does not add up, naming the total', () => {
    expect(() => parseMix('shared:90,filtered:20')).toThrow('adds up to 110 %');
    expect(() => parseMix('everything:100')).toThrow('kind must be one of');
  });

  it('gives D distinct operations that differ by name only', () => {
    const plan = { distinctOperations: 3, filterKeys: [] };
    expect([0, 1, 2, 3].map((i) => variantOf(plan, i))).toEqual([0, 1, 2, 0]);
    expect(new Set(variantsOf(plan).map((v) => v.payload.query)).size).toBe(3);
  });
});
