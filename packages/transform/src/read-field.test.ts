import { describe, expect, it } from 'vitest';
import { createKeyTransformer } from './index.js';

const t = createKeyTransformer();
const read = (json: string, field = 'listing_id') => {
  const { bytes, value } = t.transformJsonBytesReading(Buffer.from(json), '<', '>', field);
  return { text: bytes.toString(), value };
};

describe('transformJsonBytesReading', () => {
  it('reads the converted top-level field in the same pass, output unchanged', () => {
    const json = '{"eventId":"e1","listingId":"lst-42","listing":{"listingId":"nested"}}';
    expect(read(json)).toEqual({ text: `<${t.transformJson(json)}>`, value: 'lst-42' });
  });

  it('ignores nested occurrences and reads numbers as written', () => {
    expect(read('{"listing":{"listingId":"nested"}}').value).toBeUndefined();
    expect(read('{"listingId": 42}').value).toBe('42');
    expect(read('{"listingId": 12345678901234567890}').value).toBe('12345678901234567890');
  });

  it('gives undefined for absent fields and non-scalar values', () => {
    expect(read('{"other":"x"}').value).toBeUndefined();
    expect(read('{"listingId":{"a":1}}').value).toBeUndefined();
    expect(read('{"listingId":null}').value).toBeUndefined();
    expect(read('{"listingId":["x"]}').value).toBeUndefined();
  });

  it('unescapes escaped string values', () => {
    expect(read('{"listingId":"lst-\\u0034\\"2"}').value).toBe('lst-4"2');
  });

  it('matches an already snake_case key and a key field found after nested objects', () => {
    expect(read('{"a":{"listing_id":"no"},"listing_id":"yes"}').value).toBe('yes');
  });

  it('does not carry a read over to the next call', () => {
    expect(read('{"listingId":"one"}').value).toBe('one');
    expect(read('{"x":1}').value).toBeUndefined();
    expect(() => read('{"listingId":"two", oops}')).toThrow();
    expect(read('{"y":2}').value).toBeUndefined();
  });
});
