import { describe, expect, it } from 'vitest';
import { execute, parse, type ExecutionResult } from 'graphql';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { COMPACT_SELECTION, FULL_SELECTION, variantsOf } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createKeyTransformer } from '@wirestream/transform';
import { compileSelection } from './selection.js';

const ws = loadWirestreamSchema(auctionSchemaPath);
const generator = createAuctionEventGenerator({ seed: 42, listings: 50 });
const transformer = createKeyTransformer();
/** Demo listing events as a server holds them after JSON.parse of the envelope. */
const payloads = Array.from({ length: 50 }, () => JSON.parse(JSON.stringify(transformer.transform(generator.listingEvent().value))) as Record<string, unknown>);

/** What graphql-js writes for the operation: the bytes the bare projector has to match. */
function viaExecute(query: string, operationName: string | undefined, payload: Record<string, unknown>): string {
  const r = execute({ schema: ws.schema, document: parse(query), rootValue: { listingUpdated: payload }, operationName }) as ExecutionResult;
  expect(r.errors).toBeUndefined();
  return JSON.stringify(r.data);
}

function viaPick(query: string, operationName: string | undefined, payload: Record<string, unknown>): string {
  const op = compileSelection(query, operationName);
  return JSON.stringify({ [op.responseKey]: op.pick(payload) });
}

describe('compileSelection (the bare projector)', () => {
  const cases: [string, string, string | undefined][] = [
    ['the full selection (the sweep operation)', `subscription Listings { listingUpdated { ${FULL_SELECTION} } }`, undefined],
    ['the compact selection', `subscription Compact { listingUpdated { ${COMPACT_SELECTION} } }`, undefined],
    [
      'aliases at the root and inside, a list of objects',
      'subscription A { ev: listingUpdated { id: listing_id listing { name: title bids: recent_bids { amount { c: amount_cents } } } } }',
      undefined,
    ],
    ['one operation of several, by name', `subscription X { listingUpdated { event_id } } subscription Y { listingUpdated { listing_id event_type } }`, 'Y'],
  ];
  for (const [label, query, name] of cases) {
    it(`writes what graphql-js execute writes: ${label}`, () => {
      for (const p of payloads) expect(viaPick(query, name, p)).toBe(viaExecute(query, name, p));
    });
  }

  it("handles every operation of the sweep's plan, each its own operation, all on listingUpdated", () => {
    const variants = variantsOf({ distinctOperations: 1_000, filterKeys: [] });
    const keys = new Set(variants.map((v) => JSON.stringify([v.payload.query, v.payload.variables ?? null, v.payload.operationName ?? null])));
    expect(keys.size).toBe(1_000);
    for (const v of variants) expect(compileSelection(v.payload.query, v.payload.operationName).rootField).toBe('listingUpdated');
  });

  it('writes null for a missing field and a null object, as graphql-js does for nullable fields', () => {
    const op = compileSelection('subscription { listingUpdated { listing_id listing { title } } }');
    expect(op.pick({ listing: null })).toEqual({ listing_id: null, listing: null });
  });

  it('says what it does not handle', () => {
    expect(() => compileSelection('subscription { listingUpdated { ...F } } fragment F on ListingEvent { event_id }')).toThrow(/fragments/);
    expect(() => compileSelection('subscription { a: listingUpdated { event_id } b: listingUpdated { event_id } }')).toThrow(/one root field/);
    expect(() => compileSelection('subscription X { listingUpdated { event_id } } subscription Y { listingUpdated { event_id } }')).toThrow(/operationName/);
  });
});
