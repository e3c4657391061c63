import { createAuctionEventGenerator } from '@wirestream/demo-events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createJsonBytesRewriter } from './json-bytes-rewriter.js';
import type { JsonBytesRewriter } from './rewriter-types.js';
import { mutatedJson } from '../test/support/mutated-json.js';
import type { KeyStyle } from './key-style.js';
import { MAX_INPUT_BYTES } from './wasm-json-rewriter.js';

/** The rewriter's outcome on `text`: its output and capture, or its error message. */
function outcome(rewriter: JsonBytesRewriter, text: string, capture?: string): string {
  try {
    const out = rewriter.rewrite(Buffer.from(text), '{"n":1,"p":', '}', capture === undefined ? undefined : Buffer.from(capture));
    return `${out.toString()} @${rewriter.captureStart}-${rewriter.captureEnd}`;
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

const keys = fc.constantFrom(
  'fooBar', 'foo_bar', 'URLValue', 'a', 'B', 'lst-1', 'x2Y', 'ä', 'Ö', 'listingId', 'imageURLs', '', 'a"B', 'tab\tKey', 'ünïcödeKey',
);
const documents = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(keys, tie('node'), { maxKeys: 5 }),
  ),
})).node;

describe('the WebAssembly rewriter', () => {
  it('writes what the JavaScript rewriter writes, on the demo corpus, without handing anything back', () => {
    const wasm = createJsonBytesRewriter(64, 2048);
    const js = createJsonBytesRewriter(64, 2048, 'snake', 'js');
    const generator = createAuctionEventGenerator({ seed: 11 });
    for (let i = 0; i < 2_000; i++) {
      const text = JSON.stringify(generator.next().value);
      expect(outcome(wasm, text, 'listing_id')).toBe(outcome(js, text, 'listing_id'));
    }
    expect(wasm.fallbacks).toBe(0);
    expect(wasm.cacheSize).toBeGreaterThan(10); // the keys were memoized in the module
  });

  for (const style of ['snake', 'lodash', 'none'] as const satisfies readonly KeyStyle[]) {
    it(`property (${style}): same output, capture offsets and error message as the JavaScript rewriter`, () => {
      const wasm = createJsonBytesRewriter(64, 64, style);
      const js = createJsonBytesRewriter(64, 64, style, 'js');
      fc.assert(
        fc.property(documents, fc.boolean(), fc.constantFrom(undefined, 'foo_bar', 'a', 'b'), (value, pretty, capture) => {
          const text = JSON.stringify(value, null, pretty ? 2 : undefined);
          expect(outcome(wasm, text, capture)).toBe(outcome(js, text, capture));
        }),
        { numRuns: 1_500 },
      );
      // Most documents never left the module (errors and possible collisions do).
      expect(wasm.fallbacks).toBeLessThan(1_500 / 2);
    });
  }

  it('property: mutated JSON text gets the same result or the same error message', () => {
    const wasm = createJsonBytesRewriter(64, 256);
    const js = createJsonBytesRewriter(64, 256, 'snake', 'js');
    const mutated = mutatedJson(documents, ['', ',', '"', '{', '}', '[', ']', ':', '\\', '\\u00', '0', '-', '.', 'e', ' ', 'tru', 'x', '\u0001']);
    fc.assert(
      fc.property(mutated, (text) => {
        expect(outcome(wasm, text)).toBe(outcome(js, text));
      }),
      { numRuns: 3_000 },
    );
  });

  it('stays within maxCacheEntries when every key is new, and keeps converting correctly', () => {
    const wasm = createJsonBytesRewriter(64, 64);
    const js = createJsonBytesRewriter(64, 64, 'snake', 'js');
    for (let n = 0; n < 2_000; n++) {
      const text = JSON.stringify({ [`someKey${n}`]: n, [`otherKey${n % 7}`]: { innerKey: [n] } });
      expect(outcome(wasm, text)).toBe(outcome(js, text));
      expect(wasm.cacheSize).toBeLessThanOrEqual(64);
    }
    expect(wasm.fallbacks).toBe(0);
  });

  it('keeps earlier results intact across a grown input region and inputs it hands back (too large, too deep)', () => {
    const wasm = createJsonBytesRewriter(8, 2048);
    const js = createJsonBytesRewriter(8, 2048, 'snake', 'js');
    const texts = [
      JSON.stringify({ smallKey: 1 }),
      JSON.stringify({ bigValue: 'é'.repeat(150_000), nestedList: [{ innerKey: 1 }] }), // past the first input region
      JSON.stringify({ hugeValue: 'x'.repeat(MAX_INPUT_BYTES) }), // past what the module takes
      JSON.stringify({ tooDeep: [[[[[[[[[1]]]]]]]]] }),
      JSON.stringify({ smallKey: 2 }),
    ];
    const results = texts.map((text) => outcome(wasm, text));
    texts.forEach((text, i) => expect(results[i]).toBe(outcome(js, text)));
    expect(wasm.fallbacks).toBe(2);
  });
});
