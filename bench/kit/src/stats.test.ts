import { describe, expect, it } from 'vitest';
import { fitLine, median, pairedRatios, quantile, rotated, spreadOf } from './stats.js';
import { markdownTable, paddedTable } from './table.js';
import { helpText } from './cli.js';

describe('median', () => {
  it('is the middle value of an odd count and the mean of the middle two of an even one', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('leaves NaN out, keeps infinities (an undelivered event is infinitely late) and is NaN for nothing', () => {
    expect(median([Number.NaN, 1, 3])).toBe(2);
    expect(median([1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY])).toBe(Number.POSITIVE_INFINITY);
    expect(median([])).toBeNaN();
  });
});

describe('quantile', () => {
  it('nearest rank on ascending values', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(values, 0.5)).toBe(50);
    expect(quantile(values, 0.99)).toBe(99);
    expect(quantile(values, 1)).toBe(100);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('spreadOf, pairedRatios, fitLine', () => {
  it('spreads the finite values only', () => {
    expect(spreadOf([5, Number.NaN, 1, 2, Number.POSITIVE_INFINITY])).toEqual({ median: 2, min: 1, max: 5, n: 3 });
    expect(spreadOf([]).n).toBe(0);
  });

  it('pairs only where both sides were measured', () => {
    expect(pairedRatios<number>([[2, 3], [undefined, 5], [4, 2]], (x) => x)).toEqual([1.5, 0.5]);
  });

  it('fits a line, NaN without two distinct x', () => {
    expect(fitLine([[0, 1], [1, 3], [2, 5]])).toEqual({ intercept: 1, slope: 2 });
    expect(fitLine([[1, 1], [1, 2]]).slope).toBeNaN();
  });
});

describe('tables and --help', () => {
  it('writes markdown, plain or padded for the terminal', () => {
    expect(markdownTable([['a', 'b'], ['1', '22']])).toBe('| a | b |\n| --- | --- |\n| 1 | 22 |');
    expect(paddedTable(['name', 'n'], [['x', '100']])).toBe('| name |   n |\n| ---- | --: |\n| x    | 100 |');
  });

  it('lists every option with its default', () => {
    const text = helpText({ usage: 'node x.js', options: { rounds: { type: 'string', default: '5' }, quick: { type: 'boolean' } }, help: { rounds: 'interleaved rounds' } });
    expect(text).toContain('--rounds <value>  interleaved rounds (default 5)');
    expect(text).toContain('--quick');
    expect(text).toContain('-h, --help');
  });
});

describe('rotated', () => {
  it('starts round r with item r (1-based, modulo the count) and keeps every item once', () => {
    expect(rotated(['a', 'b', 'c'], 1)).toEqual(['a', 'b', 'c']);
    expect(rotated(['a', 'b', 'c'], 2)).toEqual(['b', 'c', 'a']);
    expect(rotated(['a', 'b', 'c'], 4)).toEqual(['a', 'b', 'c']);
  });
});
