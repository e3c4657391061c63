import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { serializeError, toError } from './index.js';

describe('serializeError', () => {
  it('keeps type, message, stack, code, retriable and primitive extras', () => {
    const error = Object.assign(new TypeError('bad partition'), {
      code: 'E_PART',
      retriable: true,
      topic: 'listing-events',
      partition: 3,
      payload: { big: 'object' },
    });
    const serialized = serializeError(error);
    expect(serialized).toMatchObject({
      type: 'TypeError',
      message: 'bad partition',
      code: 'E_PART',
      retriable: true,
      topic: 'listing-events',
      partition: 3,
    });
    expect(serialized.stack).toContain('TypeError: bad partition');
    expect(serialized).not.toHaveProperty('payload');
  });

  it('follows causes and aggregate errors, bounded, without looping', () => {
    const looping = new Error('a');
    const b = new Error('b', { cause: looping });
    looping.cause = b;
    expect(serializeError(looping)).toMatchObject({ message: 'a', cause: { message: 'b' } });
    expect(serializeError(looping).cause?.cause).toBeUndefined();

    const aggregate = new AggregateError([new Error('x'), 'y'], 'two failed');
    expect(serializeError(aggregate)).toMatchObject({
      type: 'AggregateError',
      errors: [{ message: 'x' }, { type: 'NonError', message: 'y' }],
    });
  });

  it.each([
    ['boom', 'boom'],
    [42, 'thrown number: 42'],
    [null, 'thrown null: null'],
    [undefined, 'thrown undefined: undefined'],
    [{ message: 'like an error' }, 'like an error'],
    [{ status: 500 }, 'thrown object: {"status":500}'],
  ])('describes non-Error %j', (value, message) => {
    expect(serializeError(value)).toEqual({ type: 'NonError', message });
  });

  it('survives values JSON cannot print', () => {
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expect(serializeError(circular)).toEqual({ type: 'NonError', message: 'thrown object: [object Object]' });
    expect(serializeError(10n).message).toBe('thrown bigint: 10');
  });
});

describe('toError', () => {
  it('returns Errors unchanged, including ones from another realm', () => {
    const error = new RangeError('x');
    expect(toError(error)).toBe(error);
    const foreign = runInNewContext('new Error("from vm")') as unknown;
    expect(toError(foreign)).toBe(foreign);
  });

  it('wraps other values, keeping them as cause', () => {
    const value = { code: 7 };
    const error = toError(value);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('NonError');
    expect(error.message).toBe('thrown object: {"code":7}');
    expect(error.cause).toBe(value);
  });
});
