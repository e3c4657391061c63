import { describe, expect, it } from 'vitest';
import { createOperationCompiler } from '@wirestream/gateway/internals';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { filterCase, filterPlan, filterQuery, p90AmountOf } from './filter-plans.js';
import { prepareEvents } from './publisher.js';

const schema = loadWirestreamSchema(auctionSchemaPath);
const route = schema.routes.get('listingUpdated');
if (!route) throw new Error('the auction schema has no listingUpdated route');
const EVENTS = 200;
const corpus = prepareEvents(EVENTS, route, 'ws', 50);

describe('filter plans', () => {
  it('filtered-all expects every event for every operation; filtered-10 about a tenth; unfiltered-1 is one operation', () => {
    expect(filterPlan('filtered-all', 300, corpus, EVENTS).expectedPerOperation.every((n) => n === EVENTS)).toBe(true);
    const ten = filterPlan('filtered-10', 300, corpus, EVENTS);
    expect(ten.matchedShare).toBeGreaterThan(0.05);
    expect(ten.matchedShare).toBeLessThan(0.2);
    expect(filterPlan('unfiltered-1', 300, corpus, EVENTS).operations).toHaveLength(1);
  });

  it("the gateway's compiled predicates agree with the reference tests, and the filters are distinct groups", () => {
    const compiler = createOperationCompiler(schema);
    const payloads = Array.from({ length: EVENTS }, (_, i) => corpus.payloadOf(i));
    const p90 = p90AmountOf(corpus, EVENTS);
    const keys = new Set<string>();
    for (const arm of ['filtered-all', 'filtered-10'] as const) {
      for (let i = 0; i < 60; i++) {
        const c = filterCase(arm, i, p90);
        const result = compiler.compile({ query: filterQuery(i, true), operationName: `Listings${i}`, variables: { w: c.where } });
        if (!result.ok || result.operation.kind !== 'subscription') throw new Error(JSON.stringify(result));
        const where = result.operation.where;
        expect(where).toBeDefined();
        keys.add(result.operation.dedupKey);
        for (const p of payloads) expect(where?.({ payload: p, key: null })).toBe(c.test(p));
      }
    }
    expect(keys.size).toBe(120);
  });
});
