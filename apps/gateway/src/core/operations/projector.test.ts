import { describe, expect, it } from 'vitest';
import { GraphQLObjectType } from 'graphql';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { auctionSchemaPath, createWirestreamSchema, loadWirestreamSchema, type WirestreamSchema } from '@wirestream/schema';
import { createKeyTransformer } from '@wirestream/transform';
import { FULL_LISTING, FULL_BID } from '../../../test/support/selections.js';
import { compileSubscription, renderBoth, type BothPaths } from '../../../test/support/render-paths.js';
import { createOperationCompiler, type OperationRequest } from './operations.js';

const auction = loadWirestreamSchema(auctionSchemaPath);
const compiler = createOperationCompiler(auction);

function listingEvent(): Record<string, unknown> {
  const generator = createAuctionEventGenerator({ seed: 7 });
  return JSON.parse(JSON.stringify(createKeyTransformer().transform(generator.listingEvent().value))) as Record<string, unknown>;
}

function render(request: OperationRequest | string, payload: Record<string, unknown>, ws: WirestreamSchema = auction): BothPaths {
  const c = ws === auction ? compiler : createOperationCompiler(ws);
  return renderBoth(ws, compileSubscription(c, typeof request === 'string' ? { query: request } : request), payload);
}

/** The projector wrote it, and it is what execute writes. */
function expectProjected(both: BothPaths): unknown {
  expect(both.projected, `the projector declined: ${both.executed}`).toBeDefined();
  expect(both.rendered).toBe(both.executed);
  return (JSON.parse(both.rendered ?? 'null') as { data: unknown }).data;
}

/** The projector left the event to execute, and the payload is execute's (errors included). */
function expectExecuted(both: BothPaths): { errors?: { message: string; path: unknown[] }[]; data: unknown } {
  expect(both.projected).toBeUndefined();
  expect(both.rendered).toBe(both.executed);
  return JSON.parse(both.rendered ?? 'null') as { errors?: { message: string; path: unknown[] }[]; data: unknown };
}

describe('projector: what it writes, byte for byte as execute', () => {
  it('projects the full selection of demo listing and bid events', () => {
    const generator = createAuctionEventGenerator({ seed: 3 });
    const transformer = createKeyTransformer();
    for (let i = 0; i < 50; i++) {
      const listing = JSON.parse(JSON.stringify(transformer.transform(generator.listingEvent().value))) as Record<string, unknown>;
      expectProjected(render(`subscription { listingUpdated { ${FULL_LISTING} } }`, listing));
      const bid = JSON.parse(JSON.stringify(transformer.transform(generator.bidEvent().value))) as Record<string, unknown>;
      expectProjected(render(`subscription { bidPlaced { ${FULL_BID} } }`, bid));
    }
  });

  it('writes aliases, merges repeated fields in first-occurrence order, and aliases the root field', () => {
    const data = expectProjected(
      render(
        'subscription { ev: listingUpdated { b: listing_id a: event_id listing { title } b: listing_id listing { status t2: title } id2: listing_id } }',
        listingEvent(),
      ),
    );
    expect(Object.keys(data as object)).toEqual(['ev']);
    const ev = (data as { ev: Record<string, unknown> }).ev;
    expect(Object.keys(ev)).toEqual(['b', 'a', 'listing', 'id2']);
    expect(Object.keys(ev['listing'] as object)).toEqual(['title', 'status', 't2']);
  });

  it('expands named and inline fragments, nested and repeated, with and without type conditions', () => {
    const query = `
      subscription { listingUpdated { ...Head listing { ...Price ... on Listing { title } ... { status } ...Price } ...Head } }
      fragment Head on ListingEvent { event_id ... on ListingEvent { listing_id } }
      fragment Price on Listing { current_price { ...Amount } reserve_price { ...Amount } }
      fragment Amount on Money { amount_cents currency_code }`;
    const data = expectProjected(render(query, listingEvent())) as { listingUpdated: Record<string, Record<string, unknown>> };
    expect(Object.keys(data.listingUpdated)).toEqual(['event_id', 'listing_id', 'listing']);
    expect(Object.keys(data.listingUpdated['listing'] ?? {})).toEqual(['current_price', 'reserve_price', 'title', 'status']);
  });

  it('writes __typename at every level', () => {
    const data = expectProjected(
      render('subscription { listingUpdated { __typename listing { __typename t: __typename seller_info { __typename } recent_bids { __typename } } } }', listingEvent()),
    );
    expect(JSON.stringify(data)).toContain('"t":"Listing"');
  });

  it('decides @include and @skip once, from literals and from the operation variables', () => {
    const query = `subscription($yes: Boolean!, $no: Boolean = false) { listingUpdated {
      a: event_id @include(if: $yes) b: event_id @include(if: $no) c: event_id @skip(if: $no) d: event_id @skip(if: true)
      e: event_id @include(if: true) @skip(if: $yes) ... @include(if: $no) { f: event_id } ...F @skip(if: $no) ...G @include(if: false)
    } } fragment F on ListingEvent { g: event_id } fragment G on ListingEvent { h: event_id }`;
    const on = expectProjected(render({ query, variables: { yes: true } }, listingEvent())) as { listingUpdated: object };
    expect(Object.keys(on.listingUpdated)).toEqual(['a', 'c', 'g']);
    const off = expectProjected(render({ query, variables: { yes: false, no: true } }, listingEvent())) as { listingUpdated: object };
    expect(Object.keys(off.listingUpdated)).toEqual(['b', 'e', 'f']);
  });

  it('writes lists of scalars and of objects, empty ones too', () => {
    const payload = listingEvent();
    const listing = payload['listing'] as Record<string, unknown>;
    listing['image_urls'] = [];
    listing['category_path'] = ['a', 'b "quoted"', ''];
    const data = expectProjected(render('subscription { listingUpdated { listing { image_urls category_path recent_bids { bid_id amount { amount_cents } } } } }', payload));
    expect(JSON.stringify(data)).toContain('"image_urls":[]');
  });

  it('writes null for a null or missing nullable field', () => {
    const payload = listingEvent();
    const listing = payload['listing'] as Record<string, unknown>;
    delete listing['description'];
    listing['reserve_price'] = null;
    listing['primary_property_id'] = undefined;
    const data = expectProjected(render('subscription { listingUpdated { listing { description reserve_price { amount_cents } primary_property_id } } }', payload));
    expect(data).toEqual({ listingUpdated: { listing: { description: null, reserve_price: null, primary_property_id: null } } });
  });

  it('writes every JSON string exactly as JSON.stringify escapes it', () => {
    const payload = listingEvent();
    const listing = payload['listing'] as Record<string, unknown>;
    listing['title'] = 'quote " backslash \\ newline \n tab \t nul \u0000 line sep \u2028 emoji 🎉 lone \ud800 é';
    expectProjected(render('subscription { listingUpdated { listing { title } } }', payload));
  });
});

describe('projector: coercion as graphql-js serializes', () => {
  const cases: [field: string, value: unknown, projected: boolean][] = [
    ['amount_cents', 12, true],
    ['amount_cents', -0, true],
    ['amount_cents', 2147483647, true],
    ['amount_cents', -2147483648, true],
    ['amount_cents', 2147483648, false],
    ['amount_cents', 1.5, false],
    ['amount_cents', '42', true],
    ['amount_cents', '', false],
    ['amount_cents', 'x', false],
    ['amount_cents', true, true],
    ['amount_cents', { n: 1 }, false],
    ['amount_cents', [1], false],
    ['currency_code', 12.5, true],
    ['currency_code', 1e21, true],
    ['currency_code', false, true],
    ['currency_code', { c: 'EUR' }, false],
    ['currency_code', [], false],
  ];
  it.each(cases)('Money.%s = %j', (field, value, projected) => {
    const payload = listingEvent();
    (payload['listing'] as { current_price: Record<string, unknown> }).current_price[field] = value;
    const both = render('subscription { listingUpdated { listing { current_price { amount_cents currency_code } } } }', payload);
    if (projected) expectProjected(both);
    else expect(expectExecuted(both).errors?.[0]?.path).toEqual(['listingUpdated', 'listing', 'current_price', field]);
  });

  const sellerCases: [field: string, value: unknown, projected: boolean][] = [
    ['rating', 4.25, true],
    ['rating', 3, true],
    ['rating', '4.5', true],
    ['rating', 'high', false],
    ['rating', true, true],
    ['seller_id', 17, true],
    ['seller_id', 1.5, false],
    ['seller_id', true, false],
    ['seller_id', 'usr-1', true],
    ['is_verified', 0, true],
    ['is_verified', 2.5, true],
    ['is_verified', 'true', false],
    ['is_verified', null, false],
  ];
  it.each(sellerCases)('SellerInfo.%s = %j', (field, value, projected) => {
    const payload = listingEvent();
    (payload['listing'] as { seller_info: Record<string, unknown> }).seller_info[field] = value;
    const both = render('subscription { listingUpdated { listing { seller_info { seller_id rating is_verified } } } }', payload);
    if (projected) expectProjected(both);
    else expectExecuted(both);
  });
});

describe('projector: errors are execute’s', () => {
  it('leaves a missing non-null field to execute: its message, path and null propagation', () => {
    const payload = listingEvent();
    delete payload['event_id'];
    const result = expectExecuted(render('subscription { listingUpdated { event_id listing_id } }', payload));
    expect(result.errors?.[0]?.message).toBe('Cannot return null for non-nullable field ListingEvent.event_id.');
    expect(result.errors?.[0]?.path).toEqual(['listingUpdated', 'event_id']);
    expect(result.data).toEqual({ listingUpdated: null });
  });

  it('propagates a nested null to the nearest nullable field, as execute does', () => {
    const payload = listingEvent();
    (payload['listing'] as Record<string, unknown>)['reserve_price'] = { currency_code: 'EUR' };
    const result = expectExecuted(render('subscription { listingUpdated { event_id listing { reserve_price { amount_cents } } } }', payload));
    expect(result.errors?.[0]?.message).toBe('Cannot return null for non-nullable field Money.amount_cents.');
  });

  it('leaves wrong shapes to execute: a list that is a string, an object that is an array or a string', () => {
    for (const [field, value] of [
      ['category_path', 'a,b'],
      ['category_path', { 0: 'a' }],
      ['category_path', ['a', null]],
      ['seller_info', ['x']],
      ['seller_info', 'seller'],
      ['seller_info', 7],
    ] as const) {
      const payload = listingEvent();
      (payload['listing'] as Record<string, unknown>)[field] = value;
      expectExecuted(render('subscription { listingUpdated { listing { category_path seller_info { seller_id } } } }', payload));
    }
  });
});

describe('projector: what falls back to execute for the whole operation', () => {
  it('has no projector when a selected field has a custom resolver, and execute still calls it', () => {
    const ws = loadWirestreamSchema(auctionSchemaPath);
    const type = ws.schema.getType('ListingEvent');
    const field = type instanceof GraphQLObjectType ? type.getFields()['event_type'] : undefined;
    if (!field) throw new Error('ListingEvent.event_type missing');
    field.resolve = (source: { event_type: string }) => source.event_type.toLowerCase();
    const custom = render('subscription { listingUpdated { event_type } }', listingEvent(), ws);
    expect(custom.op.projector).toBeUndefined();
    expect(custom.rendered).toBe(custom.executed);
    expect(custom.rendered).toContain('"event_type":"listingupdated"');
    // An operation that does not select the field is still projected.
    expectProjected(render('subscription { listingUpdated { event_id } }', listingEvent(), ws));
  });

  const sdl = `
    enum Status { ACTIVE CLOSED }
    scalar Json
    interface Node { id: ID! }
    type Person implements Node { id: ID! name: String }
    type Thing implements Node {
      id: ID! status: Status kind: Status! data: Json nested: [[Int]] sized(width: Int = 10): String constructor: String owner: Node
    }
    type Subscription { thingChanged(id: ID): Thing @topic(name: "things", key: "id") }`;
  const things = createWirestreamSchema(sdl);

  it('writes enums through the enum type, and leaves an unknown value to execute', () => {
    expectProjected(render('subscription { thingChanged { id status kind } }', { id: 'a', status: 'ACTIVE', kind: 'CLOSED' }, things));
    expectProjected(render('subscription { thingChanged { id status kind } }', { id: 1, kind: 'CLOSED' }, things));
    const result = expectExecuted(render('subscription { thingChanged { id kind } }', { id: 'a', kind: 'OPEN' }, things));
    expect(result.errors?.[0]?.message).toBe('Enum "Status" cannot represent value: "OPEN"');
  });

  it('writes a custom scalar whose serialize returns a primitive, and leaves an object to execute', () => {
    expectProjected(render('subscription { thingChanged { data } }', { data: 'text' }, things));
    expectProjected(render('subscription { thingChanged { data } }', { data: 3.5 }, things));
    const both = render('subscription { thingChanged { data } }', { data: { a: [1, { b: null }] } }, things);
    expect(both.projected).toBeUndefined();
    expect(both.rendered).toBe(both.executed);
    expect(both.rendered).toContain('"data":{"a":[1,{"b":null}]}');
  });

  it('writes nested lists with null items, and fields with arguments (the default resolver ignores them)', () => {
    expectProjected(render('subscription { thingChanged { nested sized(width: 3) s2: sized } }', { nested: [[1, null], null, []], sized: 'x' }, things));
  });

  it('has no projector for an abstract type or a field every object inherits, and execute serves them', () => {
    const node = render('subscription { thingChanged { owner { id ... on Person { name } } } }', { owner: { id: 'n', __typename: 'Person', name: 'p' } }, things);
    expect(node.op.projector).toBeUndefined();
    expect(node.rendered).toBe(node.executed);
    const inherited = render('subscription { thingChanged { constructor } }', { constructor: 'c' }, things);
    expect(inherited.op.projector).toBeUndefined();
    expect(inherited.rendered).toBe(inherited.executed);
  });
});

describe('renderPayload with a projector', () => {
  it('writes the position extensions of each event, and still filters', () => {
    const op = compileSubscription(compiler, { query: 'subscription { listingUpdated(event_type: "ListingCreated") { event_id } }' });
    const payload = listingEvent();
    payload['event_type'] = 'ListingCreated';
    const both = renderBoth(auction, op, payload);
    expectProjected(both);
    expect(both.rendered).toMatch(/^\{"data":\{"listingUpdated":\{"event_id":"[^"]+"\}\},"extensions":\{"position":\{"topic":"listing-events","partition":0,"offset":"1"\}\}\}$/);
    payload['event_type'] = 'ListingUpdated';
    expect(renderBoth(auction, op, payload).rendered).toBeUndefined();
  });
});
