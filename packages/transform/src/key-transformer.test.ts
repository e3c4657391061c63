import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createKeyTransformer, toSnakeCase, TransformError } from './index.js';

type Json = Record<string, unknown>;

function collisionOf(fn: () => unknown): TransformError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TransformError) return error;
    throw error;
  }
  throw new Error('expected a TransformError');
}

describe('createKeyTransformer().transform', () => {
  it('converts keys deeply, through objects and arrays of objects, leaving values untouched', () => {
    const { transform } = createKeyTransformer();
    const input: unknown = JSON.parse(
      '{"listingId":"lst-000001","sellerInfo":{"isVerified":true,"rating":4.5,"address":{"address2Line":null}},' +
        '"recentBids":[{"bidId":"bidId","amount":{"amountCents":100}},{"bidId":"x"}],"categoryPath":["camelCase","B"],' +
        '"nested":[[{"deepKey":1}]],"empty":{},"none":[]}',
    );
    expect(transform(input)).toEqual({
      listing_id: 'lst-000001',
      seller_info: { is_verified: true, rating: 4.5, address: { address2_line: null } },
      recent_bids: [{ bid_id: 'bidId', amount: { amount_cents: 100 } }, { bid_id: 'x' }],
      category_path: ['camelCase', 'B'],
      nested: [[{ deep_key: 1 }]],
      empty: {},
      none: [],
    });
  });

  it('keeps key order', () => {
    const out = createKeyTransformer().transform<Json>({ zZ: 1, a: 2, bB: 3, c_c: 4 });
    expect(Object.keys(out)).toEqual(['z_z', 'a', 'b_b', 'c_c']);
  });

  it('updates arrays in place and keeps objects whose keys are all snake_case already', () => {
    const { transform } = createKeyTransformer();
    const bids = [{ bidId: 'b1' }, { bid_id: 'b2' }];
    const unchanged = { city: 'Lyon', tags: ['a'] };
    const input = { recentBids: bids, address: unchanged };
    const out = transform<{ recent_bids: unknown[]; address: unknown }>(input);
    expect(out.recent_bids).toBe(bids); // the same array, its items replaced in place
    expect(bids[0]).toEqual({ bid_id: 'b1' });
    expect(out.address).toBe(unchanged);
    const snake = { a: { b: [{ c: 1 }] } };
    expect(transform(snake)).toBe(snake);
  });

  it('returns primitives as they are', () => {
    const { transform } = createKeyTransformer();
    for (const value of ['aB', 1, true, null, undefined]) expect(transform(value)).toBe(value);
  });

  it('produces the same keys as toSnakeCase on the demo corpus', () => {
    const generator = createAuctionEventGenerator({ seed: 9 });
    const { transform } = createKeyTransformer();
    const keysOf = (value: unknown, into: string[]): string[] => {
      if (Array.isArray(value)) value.forEach((v) => keysOf(v, into));
      else if (typeof value === 'object' && value !== null) {
        for (const [k, v] of Object.entries(value)) {
          into.push(k);
          keysOf(v, into);
        }
      }
      return into;
    };
    for (let i = 0; i < 200; i++) {
      const text = JSON.stringify(generator.next().value);
      const expected = keysOf(JSON.parse(text), []).map(toSnakeCase);
      expect(keysOf(transform(JSON.parse(text)), [])).toEqual(expected);
    }
  });

  it('reports a key collision with the path and both keys, never overwriting', () => {
    const { transform } = createKeyTransformer();
    const error = collisionOf(() => transform({ listing: { recentBids: [{ ok: 1 }, { fooBar: 1, foo_bar: 2 }] } }));
    expect(error.code).toBe('KEY_COLLISION');
    expect(error.path).toBe('$.listing.recentBids[1]');
    expect(error.retriable).toBe(false);
    expect(error.message).toBe(
      'keys "fooBar" and "foo_bar" at $.listing.recentBids[1] both become "foo_bar" in snake_case; ' +
        'rename one of them in the producer (a retry will not help)',
    );
    expect(collisionOf(() => transform({ fooBar: 1, FooBar: 2 })).message).toContain('"fooBar" and "FooBar"');
    expect(collisionOf(() => transform({ a_b: 1, c: 2, aB: 3 })).code).toBe('KEY_COLLISION');
  });

  it('property: every key is converted, or a collision is reported, never a silent overwrite', () => {
    const key = fc.constantFrom('fooBar', 'foo_bar', 'FooBar', 'fooBAR', 'foo_Bar', 'bar', 'Bar', 'baz', 'id', 'ID', 'Id', '_id');
    const { transform } = createKeyTransformer();
    fc.assert(
      fc.property(fc.dictionary(key, fc.integer(), { maxKeys: 6 }), (object) => {
        const keys = Object.keys(object);
        const converted = keys.map(toSnakeCase);
        const collides = new Set(converted).size !== converted.length;
        const copy = { ...object };
        if (collides) {
          expect(() => transform(copy)).toThrow(TransformError);
        } else {
          const out = transform<Json>(copy);
          expect(Object.keys(out)).toEqual(converted);
          expect(Object.values(out)).toEqual(Object.values(object));
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: transforming twice changes nothing more (idempotent)', () => {
    const { transform } = createKeyTransformer();
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify(value);
        let once: unknown;
        try {
          once = transform(JSON.parse(text));
        } catch (error) {
          expect((error as TransformError).code).toBe('KEY_COLLISION');
          return;
        }
        const onceText = JSON.stringify(once);
        expect(JSON.stringify(transform(JSON.parse(onceText)))).toBe(onceText);
      }),
      { numRuns: 500 },
    );
  });

  it('bounds depth with a clear error instead of a stack overflow', () => {
    const { transform } = createKeyTransformer({ maxDepth: 64 });
    const nest = (depth: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
      return value;
    };
    expect(() => transform(nest(64))).not.toThrow();
    const error = collisionOf(() => transform(nest(65)));
    expect(error.code).toBe('MAX_DEPTH');
    expect(error.message).toMatch(/^payload nests deeper than maxDepth \(64\) at \$(\.a\[0\]|\[0\]\.a)/);
    expect(() => transform(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`))).toThrow(/maxDepth \(64\)/);
  });

  it('cannot pollute prototypes through __proto__, constructor or prototype keys', () => {
    const { transform } = createKeyTransformer();
    const input: unknown = JSON.parse(
      '{"__proto__":{"polluted":1,"aB":1},"constructor":{"prototype":{"polluted":1}},"nestedObj":{"__proto__":{"polluted":1}}}',
    );
    const out = transform<Json>(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: 1, a_b: 1 });
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    const nested = out['nested_obj'] as Json;
    expect(Object.getPrototypeOf(nested)).toBe(Object.prototype);
    expect(Object.hasOwn(nested, '__proto__')).toBe(true);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');

    // An object kept in place whose `__proto__` child is rebuilt and written back.
    const kept = transform<Json>(JSON.parse('{"__proto__":{"aB":1}}'));
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(kept, '__proto__')?.value).toEqual({ a_b: 1 });

    // A key that only becomes `__proto__` after conversion, in a rebuilt object.
    const renamed = transform<Json>(JSON.parse('{"fooBar":1,"__Proto__":{"polluted":1}}'));
    expect(Object.getPrototypeOf(renamed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(renamed, '__proto__')?.value).toEqual({ polluted: 1 });
    expect(JSON.stringify(renamed)).toBe('{"foo_bar":1,"__proto__":{"polluted":1}}');
  });

  it('freezes nothing, the root, or everything', () => {
    const input = () => ({ aB: { cD: [{ eF: 1 }] }, g: { h: 1 } });
    const none = createKeyTransformer().transform<Json>(input());
    expect(Object.isFrozen(none)).toBe(false);
    const shallow = createKeyTransformer({ freeze: 'shallow' }).transform<Json>(input());
    expect(Object.isFrozen(shallow)).toBe(true);
    expect(Object.isFrozen(shallow['a_b'])).toBe(false);
    const deep = createKeyTransformer({ freeze: 'deep' }).transform<{ a_b: { c_d: Json[] }; g: Json }>(input());
    expect(Object.isFrozen(deep)).toBe(true);
    expect(Object.isFrozen(deep.a_b.c_d)).toBe(true);
    expect(Object.isFrozen(deep.a_b.c_d[0])).toBe(true);
    expect(Object.isFrozen(deep.g)).toBe(true); // kept objects are frozen too
  });

  it('fails fast on impossible options, naming the rule', () => {
    expect(() => createKeyTransformer({ maxCacheEntries: -1 })).toThrow('maxCacheEntries must be a non-negative integer (0 disables the memo), got -1');
    expect(() => createKeyTransformer({ maxDepth: 0 })).toThrow('maxDepth must be an integer in 1..1000');
    expect(() => createKeyTransformer({ freeze: 'yes' as 'deep' })).toThrow("freeze must be 'none', 'shallow' or 'deep', got yes");
  });
});

describe('the memo is bounded', () => {
  // Heap numbers need a full GC; --expose-gc is not on in the test runner, so enable it here.
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heapUsed = (): number => {
    gc();
    return process.memoryUsage().heapUsed;
  };

  it('keeps 1,000,000 distinct keys to at most maxCacheEntries and a flat heap', () => {
    const transformer = createKeyTransformer({ maxCacheEntries: 2_048 });
    for (let i = 0; i < 1_000; i++) transformer.convertKey(`warmUpKey${i}`);
    const before = heapUsed();
    let maxSize = 0;
    for (let i = 0; i < 1_000_000; i++) {
      transformer.convertKey(`listingNo${i}Id`);
      if ((i & 0xfff) === 0) maxSize = Math.max(maxSize, transformer.cacheSize);
    }
    const grown = heapUsed() - before;
    expect(Math.max(maxSize, transformer.cacheSize)).toBeLessThanOrEqual(2_048);
    // An unbounded memo holds ~1M entries here (well over 50 MB); ours stays within a few MB.
    expect(grown).toBeLessThan(8 * 1024 * 1024);
    // Business keys are still converted (and memoized again) after the flood.
    expect(transformer.convertKey('listingId')).toBe('listing_id');
  }); // a million conversions: the project's 30 s test timeout (vitest.config.ts)

  it('stays bounded for maps keyed by ids, through transform and transformJsonBytes', () => {
    const transformer = createKeyTransformer({ maxCacheEntries: 512 });
    for (let batch = 0; batch < 100; batch++) {
      const map: Json = {};
      for (let i = 0; i < 1_000; i++) map[`Lst${batch * 1_000 + i}`] = { bidId: i };
      const text = JSON.stringify({ bidsByListing: map });
      transformer.transform(JSON.parse(text));
      transformer.transformJsonBytes(Buffer.from(text));
      // Two memos (objects, JSON bytes), each within maxCacheEntries.
      expect(transformer.cacheSize).toBeLessThanOrEqual(2 * 512);
    }
  });

  it('works with the memo disabled', () => {
    const transformer = createKeyTransformer({ maxCacheEntries: 0 });
    expect(transformer.transform({ aB: 1 })).toEqual({ a_b: 1 });
    expect(transformer.transformJson('{"aB":1}')).toBe('{"a_b":1}');
    expect(transformer.cacheSize).toBe(0);
  });
});
