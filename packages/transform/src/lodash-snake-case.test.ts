import fc from 'fast-check';
import snakeCase from 'lodash/snakeCase.js';
import { describe, expect, it } from 'vitest';
import { createKeyTransformer, keyConverter, lodashSnakeCase } from './index.js';

// Pieces keys are made of, chosen to hit every branch of lodash's word rules: camel and Pascal
// case, acronyms and their plurals, digits and ordinals, separators, Latin letters lodash deburrs,
// combining marks, apostrophes and contractions, other scripts, emoji with modifiers and joiners.
const piece = fc.constantFrom(
  'address', 'Line', '2', 'ID', 'IDs', 'URL', 'URLs', 'Value', 'a', 'B', 'x', 'Z', '_', '__', '-', '.', ' ', '$', '@',
  '1st', '2ND', '3rd', '4th', '11TH', 'sha256', 'V2', 'größe', 'Ärger', 'naïve', 'ß', 'Æ', 'þ', 'ŉ', 'ſ', 'Ŀ',
  'e\u0301', '\u20d0', '\ufe20', "'s", '\u2019ll', "'RE", 'Σύνολο', 'τιμής', 'Имя', '名前', '\u00d7', '\u00f7', '\u00a0',
  '\u2014', '\u2700', '\ud83d\udc4d', '\ud83d\udc4d\ud83c\udffd', '\ud83d\udc68\u200d\ud83d\udc69', '\ud83c\uddeb\ud83c\uddf7', '\ufe0f', '\u200d',
);
const builtKey = fc.array(piece, { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));

describe('lodash key style', () => {
  it('is lodash.snakeCase on keys built from the pieces its rules distinguish', () => {
    fc.assert(
      fc.property(builtKey, (key) => {
        expect(lodashSnakeCase(key)).toBe(snakeCase(key));
      }),
      { numRuns: 20_000 },
    );
  });

  it('is lodash.snakeCase on arbitrary strings (UTF-16 units, graphemes, ASCII)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary-ascii' }), fc.string()), (key) => {
        expect(lodashSnakeCase(key)).toBe(snakeCase(key));
      }),
      { numRuns: 20_000 },
    );
  });

  it('publishes the names lodash pipelines did', () => {
    const cases: Record<string, string> = {
      address2Line: 'address_2_line',
      listingId: 'listing_id',
      _id: 'id',
      imageURLs: 'image_ur_ls',
      'Content-Type': 'content_type',
      größeInCm: 'grosse_in_cm',
      already_snake: 'already_snake',
    };
    for (const [key, expected] of Object.entries(cases)) {
      expect(lodashSnakeCase(key)).toBe(expected);
      expect(snakeCase(key)).toBe(expected);
    }
  });

  it('is the rule of every form of the transformer with keyStyle lodash, including keys our rule leaves alone', () => {
    const transformer = createKeyTransformer({ keyStyle: 'lodash' });
    const payload = { address2Line: 'a', line2: 'b', _id: 'c', nested: [{ 'Content-Type': 'd', streetLine1: 1 }] };
    const expected = { address_2_line: 'a', line_2: 'b', id: 'c', nested: [{ content_type: 'd', street_line_1: 1 }] };
    expect(JSON.parse(transformer.transformJson(JSON.stringify(payload)))).toEqual(expected);
    expect(transformer.transform(structuredClone(payload))).toEqual(expected);
    const read = transformer.transformJsonBytesReading(Buffer.from('{"listingId2":"lst-1","v":1}'), '', '', 'listing_id_2');
    expect(read.value).toBe('lst-1');
    // Keys lodash makes equal are a collision, as with ours.
    expect(() => transformer.transformJson('{"fooBar":1,"foo-bar":2}')).toThrow(/both become "foo_bar"/);
  });

  it('matches lodash.snakeCase through the JSON bytes path on generated keys', () => {
    const transformer = createKeyTransformer({ keyStyle: 'lodash' });
    fc.assert(
      fc.property(fc.uniqueArray(builtKey, { maxLength: 6, selector: (k) => snakeCase(k) }), (keys) => {
        const object = Object.fromEntries(keys.map((k, i) => [k, i]));
        const expected = Object.fromEntries(keys.map((k, i) => [snakeCase(k), i]));
        expect(JSON.parse(transformer.transformJson(JSON.stringify(object)))).toEqual(expected);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('none key style', () => {
  it('keeps every key as written (escapes decoded), and still validates', () => {
    const transformer = createKeyTransformer({ keyStyle: 'none' });
    const text = '{"listingId":1,"address2Line":{"URLValue":[{"x\\u0041":2,"q\\"":3}]},"_id":"a"}';
    expect(transformer.transformJson(text)).toBe('{"listingId":1,"address2Line":{"URLValue":[{"xA":2,"q\\"":3}]},"_id":"a"}');
    expect(transformer.transform({ listingId: 1, nested: { URLValue: 2 } })).toEqual({ listingId: 1, nested: { URLValue: 2 } });
    expect(() => transformer.transformJson('{"a":}')).toThrow(/not valid JSON/);
    expect(keyConverter('none')('fooBar')).toBe('fooBar');
  });

  it('refuses an unknown style naming the choices', () => {
    expect(() => createKeyTransformer({ keyStyle: 'kebab' as never })).toThrow('keyStyle must be one of snake, lodash, none, got kebab');
  });
});
