import { createAuctionEventGenerator } from '@wirestream/demo-events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createKeyTransformer, TransformError } from './index.js';
import { mutatedJson } from '../test/support/mutated-json.js';

function errorOf(fn: () => unknown): TransformError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TransformError) return error;
    throw error;
  }
  throw new Error('expected a TransformError');
}

/** The object path, as the reference for the text path. */
function viaObjects(text: string): string {
  return JSON.stringify(createKeyTransformer().transform(JSON.parse(text)));
}

describe('transformJsonBytes / transformJson', () => {
  it('gives the same JSON as parse + transform + stringify on the demo corpus', () => {
    const { transformJson, transformJsonBytes } = createKeyTransformer();
    const generator = createAuctionEventGenerator({ seed: 5 });
    for (let i = 0; i < 500; i++) {
      const text = JSON.stringify(generator.next().value);
      expect(transformJson(text)).toBe(viaObjects(text));
      expect(transformJsonBytes(Buffer.from(text)).toString()).toBe(viaObjects(text));
    }
  });

  it('wraps the result in a prefix and suffix: the Redis envelope in one buffer', () => {
    const { transformJsonBytes } = createKeyTransformer();
    const out = transformJsonBytes(Buffer.from('{"listingId":"lst-1"}'), '{"v":1,"topic":"listing-events","payload":', '}');
    expect(out.toString()).toBe('{"v":1,"topic":"listing-events","payload":{"listing_id":"lst-1"}}');
    expect(transformJsonBytes(Buffer.from('{"aB":"é"}'), '{"k":"ü",', '}').toString()).toBe('{"k":"ü",{"a_b":"é"}}');
  });

  it('keeps values byte for byte: big numbers, number spelling, escapes, non-ASCII; drops whitespace', () => {
    const { transformJson } = createKeyTransformer();
    expect(transformJson('{ "bidId" : 12345678901234567890123, "amountCents": 1.0e2, "noteText": "a\\"b\\u00e9\\n", "cityName": "Zürich" }\n'))
      .toBe('{"bid_id":12345678901234567890123,"amount_cents":1.0e2,"note_text":"a\\"b\\u00e9\\n","city_name":"Zürich"}');
    expect(transformJson(' [ 1 , -0.5 , true , false , null , "x" , { } , [ ] ] ')).toBe('[1,-0.5,true,false,null,"x",{},[]]');
    expect(transformJson('"camelCase"')).toBe('"camelCase"');
    expect(transformJson('{"größeInCm":1,"名前ID":2,"lst-ABC":3}')).toBe('{"größe_in_cm":1,"名前_id":2,"lst-ABC":3}');
  });

  it('decodes escaped keys before converting them', () => {
    const { transformJson } = createKeyTransformer();
    expect(transformJson('{"list\\u0069ngId":1}')).toBe('{"listing_id":1}');
    expect(transformJson('{"a\\"B":1}')).toBe('{"a\\"B":1}'); // not an identifier: kept (re-escaped)
  });

  it('guesses each key from the order seen before, and never trusts a guess that is not the key', () => {
    const { transformJson } = createKeyTransformer();
    const texts = [
      '{"fooBar":1,"bazQux":{"innerKey":2}}',
      '{"fooBar":1,"bazQux":{"innerKey":2}}', // every guess right
      '{"fooBar":1,"bazQuxLonger":3,"bazQu":4,"baz\\u0051ux":5,"innerKey":[]}', // the guess as a prefix, cut short, spelled with an escape
      '{"bazQux":{"innerKey":2},"fooBar":1}', // another order
      '{"fooBar":{"fooBar":{"fooBar":null}},"":0,"bazQux":"fooBar"}', // the same key at every depth, an empty key, a key as a value
    ];
    for (let round = 0; round < 3; round++) for (const text of texts) expect(transformJson(text)).toBe(viaObjects(text));
    // A guess that would hit the first key does not hide the collision of the second.
    expect(errorOf(() => transformJson('{"fooBar":1,"bazQux":6,"baz_qux":7}')).code).toBe('KEY_COLLISION');
  });

  it('keeps every result intact while later ones are written (results are views of shared slabs)', () => {
    const { transformJsonBytes } = createKeyTransformer();
    const generator = createAuctionEventGenerator({ seed: 7 });
    const inputs: string[] = [];
    for (let i = 0; i < 300; i++) inputs.push(JSON.stringify(generator.next().value));
    // One input larger than a slab (256 KiB) between ordinary ones, and one of 20,000 keys that all grow (larger than a slab too).
    inputs.splice(100, 0, JSON.stringify({ bigValue: 'x'.repeat(200_000), nestedList: [{ innerKey: 1 }] }));
    inputs.splice(200, 0, JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`keyNumber${i}`, i]))));
    const outputs = inputs.map((text, i) => transformJsonBytes(Buffer.from(text), `{"n":${i},"payload":`, '}'));
    outputs.forEach((out, i) => expect(out.toString()).toBe(`{"n":${i},"payload":${viaObjects(inputs[i] as string)}}`));
  });

  it('property: same result as the object path, or the same error code (random JSON)', () => {
    const { transformJson } = createKeyTransformer();
    const key = fc.constantFrom('fooBar', 'foo_bar', 'URLValue', 'a', 'B', 'lst-1', '__proto__', 'x2Y', 'ä', 'Ö');
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 1 }),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(key, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        let expected: string | undefined;
        let expectedCode: string | undefined;
        try {
          expected = viaObjects(text);
        } catch (error) {
          expectedCode = (error as TransformError).code;
        }
        if (expectedCode === undefined) expect(transformJson(text)).toBe(expected);
        else expect(errorOf(() => transformJson(text)).code).toBe(expectedCode);
      }),
      { numRuns: 1_000 },
    );
  });

  it('property: rejects exactly what JSON.parse rejects (mutated JSON text)', () => {
    const { transformJson } = createKeyTransformer();
    const mutated = mutatedJson(fc.jsonValue({ maxDepth: 3 }), ['', ',', '"', '{', '}', '[', ']', ':', '\\', '0', '-', '.', 'e', ' ', 'tru', 'x']);
    fc.assert(
      fc.property(mutated, (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        if (parses) {
          try {
            transformJson(text);
          } catch (error) {
            // Valid JSON is only refused for a collision (random keys may collide).
            expect((error as TransformError).code).toBe('KEY_COLLISION');
          }
        } else {
          // Rejected either way; a key collision earlier in the text than the syntax error is
          // reported first (the rewriter stops at the first problem it meets, left to right).
          expect(['INVALID_JSON', 'KEY_COLLISION']).toContain(errorOf(() => transformJson(text)).code);
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('reports invalid JSON with the byte offset and the path', () => {
    const { transformJson } = createKeyTransformer();
    const error = errorOf(() => transformJson('{"listing":{"recentBids":[1,2,}]}}'));
    expect(error.code).toBe('INVALID_JSON');
    expect(error.retriable).toBe(false);
    expect(error.path).toBe('$.listing.recentBids[2]');
    expect(error.message).toBe(
      'payload is not valid JSON: expected a value at byte 30 ($.listing.recentBids[2]), found "}]}}" (a retry will not help)',
    );
    for (const bad of ['', ' ', '{', '{"a"}', '{"a":1,}', '[1,]', '01', '1.', '-', '1e', '"\\x"', '"\\u12g4"', '"a\nb"', 'tru', 'nul', '{"a":1}}', '\uFEFF{}', "{'a':1}", 'NaN']) {
      expect(errorOf(() => transformJson(bad)).code).toBe('INVALID_JSON');
    }
  });

  it('reports collisions like the object path; duplicate keys are kept as JSON.parse would read them', () => {
    const { transformJson } = createKeyTransformer();
    const error = errorOf(() => transformJson('{"listing":{"fooBar":1,"foo_bar":2}}'));
    expect(error.code).toBe('KEY_COLLISION');
    expect(error.path).toBe('$.listing');
    expect(error.message).toBe(
      'keys "fooBar" and "foo_bar" at $.listing both become "foo_bar" in snake_case; rename one of them in the producer (a retry will not help)',
    );
    expect(transformJson('{"fooBar":1,"fooBar":2}')).toBe('{"foo_bar":1,"foo_bar":2}');
    expect(transformJson('{"a":1,"\\u0061":2}')).toBe('{"a":1,"a":2}');
    // Large objects switch to a hash set for the check.
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key${i}Name`, i]));
    expect(() => transformJson(JSON.stringify(many))).not.toThrow();
    expect(errorOf(() => transformJson(JSON.stringify({ ...many, key50_name: 0 }))).code).toBe('KEY_COLLISION');
  });

  it('bounds depth like the object path, at any input depth', () => {
    const { transformJson } = createKeyTransformer({ maxDepth: 64 });
    expect(() => transformJson(`${'['.repeat(64)}${']'.repeat(64)}`)).not.toThrow();
    const error = errorOf(() => transformJson(`{"a":${'['.repeat(64)}${']'.repeat(64)}}`));
    expect(error.code).toBe('MAX_DEPTH');
    expect(error.path).toBe(`$.a${'[0]'.repeat(63)}`);
    expect(errorOf(() => transformJson('['.repeat(1_000_000))).code).toBe('MAX_DEPTH');
  });

  it('passes __proto__ keys through as data that JSON.parse reads as own properties', () => {
    const { transformJson } = createKeyTransformer();
    const out = transformJson('{"__proto__":{"isAdmin":true},"__Proto__x":1,"constructor":{"prototype":{"polluted":1}}}');
    expect(out).toBe('{"__proto__":{"is_admin":true},"__proto__x":1,"constructor":{"prototype":{"polluted":1}}}');
    const parsed = JSON.parse(out) as { isAdmin?: unknown };
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(parsed.isAdmin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
