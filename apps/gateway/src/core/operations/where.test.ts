import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, createWirestreamSchema, loadWirestreamSchema } from '@wirestream/schema';
import { shardOf } from '@wirestream/wire';
import { createOperationCompiler, type CompiledSubscription } from './operations.js';

const schema = loadWirestreamSchema(auctionSchemaPath);
const SELECTION = '{ event_id }';

function subscribe(compiler: ReturnType<typeof createOperationCompiler>, where: string, variables?: Record<string, unknown>): CompiledSubscription {
  const result = compiler.compile({ query: `subscription${variables ? '($w: ListingEventWhere)' : ''} { listingUpdated(where: ${where}) ${SELECTION} }`, variables });
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`expected a subscription: ${JSON.stringify(result)}`);
  return result.operation;
}

function refusal(compiler: ReturnType<typeof createOperationCompiler>, where: string): string {
  const result = compiler.compile({ query: `subscription { listingUpdated(where: ${where}) ${SELECTION} }` });
  if (result.ok) throw new Error('expected a refusal');
  return result.errors.map((e) => e.message).join('; ');
}

const event = (over: Record<string, unknown> = {}, price = 1500) => ({
  event_id: 'e-1',
  event_type: 'BidPlaced',
  listing_id: 'lst-1',
  occurred_at: '2026-01-01T00:00:00Z',
  listing: { listing_id: 'lst-1', title: 'Lamp', status: 'ACTIVE', current_price: { amount_cents: price, currency_code: 'EUR' }, seller_info: { seller_id: 7, display_name: 'x', rating: null, is_verified: true } },
  ...over,
});

function matches(op: CompiledSubscription, payload: Record<string, unknown>): boolean {
  return op.where === undefined || op.where({ payload, key: null });
}

describe('the where compiler', () => {
  it('compiles the operators over nested paths', () => {
    const compiler = createOperationCompiler(schema);
    const op = subscribe(compiler, '{ event_type: { in: ["BidPlaced", "ListingClosed"] }, listing: { current_price: { amount_cents: { gte: 1000 } } } }');
    expect(matches(op, event())).toBe(true);
    expect(matches(op, event({}, 999))).toBe(false);
    expect(matches(op, event({ event_type: 'ListingUpdated' }))).toBe(false);
    expect(matches(op, event({ listing: null }))).toBe(false);

    const ne = subscribe(compiler, '{ event_type: { ne: "BidPlaced", exists: true } }');
    expect([matches(ne, event()), matches(ne, event({ event_type: 'Other' })), matches(ne, event({ event_type: null }))]).toEqual([false, true, false]);
    const absent = subscribe(compiler, '{ listing: { description: { exists: false } } }');
    expect(matches(absent, event())).toBe(true);
    const range = subscribe(compiler, '{ listing: { current_price: { amount_cents: { gt: 1000, lt: 2000 } } } }');
    expect([matches(range, event({}, 1000)), matches(range, event({}, 1001)), matches(range, event({}, 2000))]).toEqual([false, true, false]);
  });

  it('compares IDs as text, whether the payload carries a string or a number', () => {
    const compiler = createOperationCompiler(schema);
    const op = subscribe(compiler, '{ listing: { seller_info: { seller_id: { eq: 7 } } } }');
    expect(matches(op, event())).toBe(true);
    const inList = subscribe(compiler, '{ listing: { seller_info: { seller_id: { in: ["7", "8"] } } } }');
    expect(matches(inList, event())).toBe(true);
    expect(matches(inList, event({ listing: { seller_info: { seller_id: '9' } } }))).toBe(false);
  });

  it('combines with and, or, not; and: [] matches everything, or: [] nothing', () => {
    const compiler = createOperationCompiler(schema);
    const op = subscribe(compiler, '{ or: [{ event_type: { eq: "A" } }, { not: { listing_id: { eq: "lst-2" } } }] }');
    expect(matches(op, event())).toBe(true);
    expect(matches(op, event({ listing_id: 'lst-2' }))).toBe(false);
    expect(matches(op, event({ listing_id: 'lst-2', event_type: 'A' }))).toBe(true);
    expect(subscribe(compiler, '{ and: [] }').where).toBeUndefined();
    expect(matches(subscribe(compiler, '{ or: [] }'), event())).toBe(false);
  });

  it('keeps the equality arguments working next to where', () => {
    const compiler = createOperationCompiler(schema);
    const result = compiler.compile({ query: `subscription { listingUpdated(event_type: "BidPlaced", where: { listing_id: { eq: "lst-1" } }) ${SELECTION} }` });
    if (!result.ok || result.operation.kind !== 'subscription') throw new Error('expected a subscription');
    expect(result.operation.filter).toEqual([['event_type', 'BidPlaced']]);
    expect(matches(result.operation, event())).toBe(true);
  });

  it('gives equal filters one dedup key and one predicate: keys and in-lists in another order, inline or as a variable', () => {
    const compiler = createOperationCompiler(schema);
    const a = subscribe(compiler, '{ event_type: { in: ["A", "B"] }, listing: { status: { eq: "ACTIVE" } } }');
    const b = subscribe(compiler, '{ listing: { status: { eq: "ACTIVE" } }, event_type: { in: ["B", "A", "B"] } }');
    const c = subscribe(compiler, '$w', { w: { and: [{ listing: { status: { eq: 'ACTIVE' } } }, { event_type: { in: ['B', 'A'] } }] } });
    const other = subscribe(compiler, '{ event_type: { in: ["A", "C"] } }');
    expect(b.dedupKey).toBe(a.dedupKey);
    expect(b.where).toBe(a.where);
    expect(c.where).toBe(a.where);
    expect(other.dedupKey).not.toBe(a.dedupKey);
    // ne is not-eq, a one-value in is eq.
    expect(subscribe(compiler, '{ event_type: { ne: "A" } }').dedupKey).toBe(subscribe(compiler, '{ not: { event_type: { in: ["A"] } } }').dedupKey);
  });

  it('subscribes only the shards of the keys a filter pins', () => {
    const compiler = createOperationCompiler(schema);
    expect(subscribe(compiler, '{ listing_id: { eq: "lst-1" } }').channels).toEqual([`ws:listing-events:${shardOf('lst-1', 16)}`]);
    const two = subscribe(compiler, '{ listing_id: { in: ["lst-1", "lst-2"] }, event_type: { eq: "A" } }').channels;
    expect(two).toEqual([...new Set([shardOf('lst-1', 16), shardOf('lst-2', 16)])].sort((x, y) => x - y).map((s) => `ws:listing-events:${s}`));
    // A key under or/not pins nothing: every shard.
    expect(subscribe(compiler, '{ or: [{ listing_id: { eq: "lst-1" } }, { event_type: { eq: "A" } }] }').channels).toHaveLength(16);
    expect(subscribe(compiler, '{ listing_id: { ne: "lst-1" } }').channels).toHaveLength(16);
  });

  it('refuses a filter over a limit before execution, naming the limit', () => {
    const compiler = createOperationCompiler(schema, { documentLimits: { maxFilterClauses: 3, maxFilterDepth: 3, maxFilterInList: 2 } });
    expect(refusal(compiler, '{ event_type: { eq: "A", ne: "B" }, listing_id: { eq: "x", ne: "y" } }')).toMatch(/more than 3 clauses.*GATEWAY_MAX_FILTER_CLAUSES/);
    expect(refusal(compiler, '{ listing: { seller_info: { address: { city: { eq: "Oslo" } } } } }')).toMatch(/deeper than the limit of 3.*GATEWAY_MAX_FILTER_DEPTH/);
    expect(refusal(compiler, '{ not: { not: { not: { event_type: { eq: "A" } } } } }')).toMatch(/GATEWAY_MAX_FILTER_DEPTH/);
    expect(refusal(compiler, '{ event_type: { in: ["a", "b", "c"] } }')).toMatch(/event_type.in lists 3 values, over the limit of 2.*GATEWAY_MAX_FILTER_IN_LIST/);
    expect(() => createOperationCompiler(schema, { documentLimits: { maxFilterClauses: 0 } })).toThrow(/maxFilterClauses/);
  });

  it('filters list fields: some/every/none of the element filter, has, isEmpty; false on a missing list', () => {
    const compiler = createOperationCompiler(schema);
    const withLists = (categories: unknown, cents: number[]) => event({ listing: { category_path: categories, recent_bids: cents.map((amount_cents) => ({ amount: { amount_cents } })) } });
    const has = subscribe(compiler, '{ listing: { category_path: { has: "lamps" } } }');
    expect([matches(has, withLists(['home', 'lamps'], [])), matches(has, withLists(['home'], [])), matches(has, withLists(null, []))]).toEqual([true, false, false]);
    const some = subscribe(compiler, '{ listing: { recent_bids: { some: { amount: { amount_cents: { gte: 1000 } } } } } }');
    const every = subscribe(compiler, '{ listing: { recent_bids: { every: { amount: { amount_cents: { gte: 1000 } } } } } }');
    const none = subscribe(compiler, '{ listing: { recent_bids: { none: { amount: { amount_cents: { gte: 1000 } } } } } }');
    const cases = [[500, 1500], [1500], []];
    expect(cases.map((c) => [matches(some, withLists([], c)), matches(every, withLists([], c)), matches(none, withLists([], c))])).toEqual([
      [true, false, false],
      [true, true, false],
      [false, true, true],
    ]);
    const empty = subscribe(compiler, '{ listing: { category_path: { isEmpty: true } } }');
    expect([matches(empty, withLists([], [])), matches(empty, withLists(['x'], [])), matches(empty, withLists(undefined, []))]).toEqual([true, false, false]);
    const elements = subscribe(compiler, '{ listing: { category_path: { every: { in: ["a", "b"] } } } }');
    expect([matches(elements, withLists(['a', 'b', 'a'], [])), matches(elements, withLists(['a', 'c'], []))]).toEqual([true, false]);
  });

  it('filters on the Kafka key and pins the shard of a route keyed by it', () => {
    const keyed = createWirestreamSchema('type E { n: Int }\ntype Subscription { e: E @topic(name: "es", shards: 8) }');
    const compiler = createOperationCompiler(keyed);
    const result = compiler.compile({ query: 'subscription { e(where: { _key: { in: ["a", "b"] }, n: { gt: 1 } }) { n } }' });
    if (!result.ok || result.operation.kind !== 'subscription') throw new Error(JSON.stringify(result));
    const op = result.operation;
    expect(op.channels).toEqual([...new Set([shardOf('a', 8), shardOf('b', 8)])].sort((x, y) => x - y).map((s) => `ws:es:${s}`));
    expect([op.where?.({ payload: { n: 2 }, key: 'a' }), op.where?.({ payload: { n: 2 }, key: 'c' }), op.where?.({ payload: { n: 2 }, key: null })]).toEqual([true, false, false]);
  });

  it('counts list operators and _headers against the limits', () => {
    const compiler = createOperationCompiler(schema, { documentLimits: { maxFilterClauses: 3, maxFilterDepth: 3, maxFilterInList: 2 } });
    expect(refusal(compiler, '{ listing: { recent_bids: { some: { amount: { amount_cents: { eq: 1 } } } } } }')).toMatch(/deeper than the limit of 3/);
    expect(refusal(compiler, '{ listing: { category_path: { some: { in: ["a", "b", "c"] } } } }')).toMatch(/category_path.some.in lists 3 values/);
    expect(refusal(compiler, '{ _key: { eq: "a", ne: "b", gt: "c", lt: "d" } }')).toMatch(/more than 3 clauses/);
  });
});
