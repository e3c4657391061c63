import { describe, expect, it } from 'vitest';
import { fmtBytes, fmtInt, fmtMb, fmtMs } from './format.js';

describe('number formats', () => {
  it('writes whole numbers with separators, never as -0, and n/a for what was not measured', () => {
    expect([31_234.5, -0.3, Number.NaN, Number.POSITIVE_INFINITY, undefined].map((n) => fmtInt(n))).toEqual(['31,235', '0', 'n/a', 'n/a', 'n/a']);
  });

  it('picks the unit of a duration by its size, and calls ∞ undelivered', () => {
    expect([12_345, 250, 42.12, 0.523, Number.POSITIVE_INFINITY, Number.NaN].map(fmtMs)).toEqual(['12.3 s', '250 ms', '42.1 ms', '0.52 ms', '∞ (undelivered)', 'n/a']);
  });

  it('writes bytes in binary units, and MiB without one', () => {
    expect([1_572_864, 2_304, 512, undefined].map((b) => fmtBytes(b))).toEqual(['1.5 MB', '2.25 KB', '512 B', 'n/a']);
    expect([1_572_864, undefined].map((b) => fmtMb(b))).toEqual(['1.5', 'n/a']);
  });
});
