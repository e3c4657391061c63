import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { shardOf } from '@wirestream/wire';
import { createOperationCompiler, OPEN_ACCESS, type AccessScope, type CompiledSubscription } from './operations.js';

const schema = loadWirestreamSchema(auctionSchemaPath);

function compiled(result: ReturnType<ReturnType<typeof createOperationCompiler>['compile']>): CompiledSubscription {
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`expected a subscription: ${JSON.stringify(result)}`);
  return result.operation;
}

describe('createOperationCompiler', () => {
  it('routes an unfiltered subscription to every shard of its topic', () => {
    const op = compiled(createOperationCompiler(schema).compile({ query: 'subscription { bidPlaced { bid_id } }' }));
    expect(op.route.topic).toBe('bid-events');
    expect(op.channels).toHaveLength(16);
    expect(op.channels[0]).toBe('ws:bid-events:0');
    expect(op.filter).toEqual([]);
  });

  it('routes a key-filtered subscription to one shard and filters on every argument', () => {
    const op = compiled(
      createOperationCompiler(schema).compile({
        query: 'subscription($id: ID, $b: ID) { bidPlaced(listing_id: $id, bidder_id: $b) { bid_id } }',
        variables: { id: 'lst-1', b: 'usr-2' },
      }),
    );
    expect(op.channels).toEqual([`ws:bid-events:${shardOf('lst-1', 16)}`]);
    expect(op.filter).toEqual([
      ['listing_id', 'lst-1'],
      ['bidder_id', 'usr-2'],
    ]);
  });

  it('shares one projector between operations that differ only in their root field arguments, each its own dedup key', () => {
    const compiler = createOperationCompiler(schema);
    const a = compiled(compiler.compile({ query: 'subscription { listingUpdated(listing_id: "lst-1") { listing_id event_type } }' }));
    const b = compiled(compiler.compile({ query: 'subscription { listingUpdated(listing_id: "lst-2") { listing_id event_type } }' }));
    const c = compiled(compiler.compile({ query: 'subscription($id: ID) { listingUpdated(listing_id: $id) { listing_id event_type } }', variables: { id: 'lst-1' } }));
    const other = compiled(compiler.compile({ query: 'subscription { listingUpdated(listing_id: "lst-1") { listing_id } }' }));
    expect(a.projector).toBeDefined();
    expect(b.projector).toBe(a.projector);
    expect(c.projector).toBe(a.projector);
    expect(other.projector).not.toBe(a.projector);
    expect(new Set([a.dedupKey, b.dedupKey]).size).toBe(2);
    // A literal and a variable of equal value are one operation.
    expect(c.dedupKey).toBe(a.dedupKey);
    // Operations that differ only in their key share one document too, unless they declare other variables.
    expect(b.document).toBe(a.document);
    expect(c.document).not.toBe(a.document);
    const required = compiled(compiler.compile({ query: 'subscription($id: ID!) { listingUpdated(listing_id: $id) { listing_id event_type } }', variables: { id: 'lst-4' } }));
    expect(required.projector).toBe(a.projector);
    expect(required.document).not.toBe(a.document);
    // A variable the selection uses still tells projectors apart.
    const query = 'subscription($id: ID, $s: Boolean!) { listingUpdated(listing_id: $id) { listing_id event_type @skip(if: $s) } }';
    const shown = compiled(compiler.compile({ query, variables: { id: 'lst-1', s: false } }));
    const hidden = compiled(compiler.compile({ query, variables: { id: 'lst-2', s: true } }));
    expect(compiled(compiler.compile({ query, variables: { id: 'lst-3', s: false } })).projector).toBe(shown.projector);
    expect(hidden.projector).not.toBe(shown.projector);
  });

  it('looks through fragments for the root field', () => {
    const op = compiled(
      createOperationCompiler(schema).compile({
        query: 'subscription { ...F } fragment F on Subscription { listingUpdated(listing_id: "lst-2") { listing_id } }',
      }),
    );
    expect(op.route.fieldName).toBe('listingUpdated');
    expect(op.filter).toEqual([['listing_id', 'lst-2']]);
  });

  it('gives equal dedup keys to equal operations, whatever the formatting and variable order', () => {
    const compiler = createOperationCompiler(schema);
    const q = 'subscription($a: ID, $b: ID) { bidPlaced(listing_id: $a, bidder_id: $b) { bid_id } }';
    const one = compiled(compiler.compile({ query: q, variables: { a: '1', b: '2' } }));
    const two = compiled(compiler.compile({ query: q.replace(/ /g, '  '), variables: { b: '2', a: '1' } }));
    const other = compiled(compiler.compile({ query: q, variables: { a: '1', b: '3' } }));
    const scoped = compiled(compiler.compile({ query: q, variables: { a: '1', b: '2' } }, { ...OPEN_ACCESS, key: 'tenant-x' }));
    expect(one.dedupKey).toBe(two.dedupKey);
    expect(other.dedupKey).not.toBe(one.dedupKey);
    expect(scoped.dedupKey).not.toBe(one.dedupKey);
  });

  it('caches each distinct document, bounded, errors included', () => {
    const compiler = createOperationCompiler(schema, { maxCachedDocuments: 2 });
    compiler.compile({ query: 'subscription { bidPlaced { bid_id } }' });
    compiler.compile({ query: 'subscription { bidPlaced { bid_id } }' });
    expect(compiler.cachedDocuments).toBe(1);
    compiler.compile({ query: 'subscription { nope }' });
    compiler.compile({ query: 'subscription { bidPlaced { amount { amount_cents } } }' });
    expect(compiler.cachedDocuments).toBe(2);
  });

  it('reports clear errors', () => {
    const compiler = createOperationCompiler(schema, { maxQueryLength: 100, maxTokens: 50 });
    const errorsOf = (query: string, variables?: Record<string, unknown>) => {
      const result = compiler.compile(variables ? { query, variables } : { query });
      return result.ok ? [] : result.errors.map((e) => e.message);
    };
    expect(errorsOf('subscription { bidPlaced { nope } }')[0]).toBe('Cannot query field "nope" on type "BidEvent".');
    expect(errorsOf('x'.repeat(101))[0]).toBe('Document is 101 characters, over the limit of 100.');
    expect(errorsOf(`{${'t '.repeat(49)}}`)[0]).toMatch(/Document contains more th.t 50 tokens/);
    expect(errorsOf('mutation { x }')[0]).toBe('This endpoint serves subscriptions and queries; "mutation" is not supported.');
    expect(errorsOf('subscription($id: ID!) { bidPlaced(listing_id: $id) { bid_id } }')[0]).toBe(
      'Variable "$id" of required type "ID!" was not provided.',
    );
    expect(errorsOf('subscription A { bidPlaced { bid_id } } subscription B { bidPlaced { bid_id } }')[0]).toMatch(
      /Document must contain exactly one operation/,
    );
  });

  it('refuses hostile documents before validation, naming the limit', () => {
    const compiler = createOperationCompiler(schema);
    const errorsOf = (query: string) => {
      const result = compiler.compile({ query });
      return result.ok ? [] : result.errors.map((e) => e.message);
    };
    const aliases = Array.from({ length: 40 }, (_, i) => `a${i}: event_id`).join(' ');
    expect(errorsOf(`subscription { bidPlaced { ${aliases} } }`)[0]).toMatch(/alias/i);
    expect(errorsOf(`subscription { bidPlaced ${'{ previous_high_bid '.repeat(600)}`)[0]).toMatch(/nesting|depth/i);
    expect(errorsOf('{ __schema { types { name } } }')[0]).toMatch(/introspection/i);
    const nested = compiler.compile({ query: 'subscription($id: ID) { bidPlaced(listing_id: $id) { bid_id } }', variables: { id: JSON.parse('['.repeat(50) + ']'.repeat(50)) as unknown } });
    expect(nested.ok).toBe(false);
  });

  it('applies the access scope: refusals name the problem, bound arguments filter and key the group', () => {
    const compiler = createOperationCompiler(schema);
    const partner: AccessScope = {
      key: 'tenant:lst-9',
      authorize: (route, args) =>
        route.fieldName === 'bidPlaced' ? { ok: true, args: { ...args, listing_id: 'lst-9' } } : { ok: false, message: 'Missing scope subscribe:listingUpdated.' },
    };
    const refused = compiler.compile({ query: 'subscription { listingUpdated { listing_id } }' }, partner);
    expect(refused.ok ? [] : refused.errors.map((e) => e.message)).toEqual(['Missing scope subscribe:listingUpdated.']);
    const bound = compiled(compiler.compile({ query: 'subscription { bidPlaced { bid_id } }' }, partner));
    expect(bound.filter).toEqual([['listing_id', 'lst-9']]);
    expect(bound.channels).toHaveLength(1);
    const open = compiled(compiler.compile({ query: 'subscription { bidPlaced { bid_id } }' }));
    expect(open.dedupKey).not.toBe(bound.dedupKey);
  });

  it('passes queries through for one-shot execution', () => {
    const result = createOperationCompiler(schema).compile({ query: '{ topics }' });
    expect(result.ok && result.operation.kind).toBe('query');
  });
});
