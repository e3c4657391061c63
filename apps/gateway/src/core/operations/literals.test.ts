// Literals moved into variables before the document cache (issue 37): which texts share a parse, and
// that a compiler that moves them answers every text exactly as one that does not.
import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, createWirestreamSchema, loadWirestreamSchema, type WirestreamSchema } from '@wirestream/schema';
import { normalizeLiterals } from './literals.js';
import { createOperationCompiler, OPEN_ACCESS, type AccessScope, type CompileResult } from './operations.js';

const auction = loadWirestreamSchema(auctionSchemaPath);
const counters = createWirestreamSchema(`type E { id: ID! n: Int name: String big: Float }
type Subscription { changed(id: ID, n: Int, name: String, big: Float): E @topic(name: "e-events", key: "id") }`);
const SELECTION = '{ listing_id event_type listing { title } }';
const MAX_TOKENS = 2_000;

/** Which of these texts were parsed and validated as one document (one miss for all). */
function misses(schema: WirestreamSchema, queries: readonly string[]): number {
  const compiler = createOperationCompiler(schema);
  for (const query of queries) compiler.compile({ query });
  return compiler.documentCache.misses;
}

/** What a client would see of a compile: errors, or what decides its group, routing and payloads. */
function answer(result: CompileResult): unknown {
  if (!result.ok) return { errors: result.errors };
  const op = result.operation;
  if (op.kind === 'query') return { query: op.operationName };
  return { dedupKey: op.dedupKey, filter: op.filter, channels: op.channels, pin: op.pin, snapshotKeys: op.snapshotKeys, route: op.route.fieldName, projected: op.projector !== undefined };
}

describe('normalizeLiterals', () => {
  it('moves a root-field key literal into a variable of the argument type, whatever the formatting', () => {
    const one = normalizeLiterals(auction, `subscription { listingUpdated(listing_id: "lst-004217") ${SELECTION} }`, MAX_TOKENS);
    expect(one?.values).toEqual({ literal0: 'lst-004217' });
    expect(one?.names).toEqual(['literal0']);
    expect(one?.text).toBe('subscription ( $literal0 : ID ) { listingUpdated ( listing_id : $literal0 ) { listing_id event_type listing { title } } }');
    const spaced = normalizeLiterals(auction, `subscription  # mine\n{ listingUpdated(listing_id: """lst-9""",) ${SELECTION} }`, MAX_TOKENS);
    expect(spaced?.text).toBe(one?.text);
    expect(spaced?.values).toEqual({ literal0: 'lst-9' });
    const named = normalizeLiterals(auction, `subscription Mine { listingUpdated(listing_id: "a", event_type: "ListingUpdated") ${SELECTION} }`, MAX_TOKENS);
    expect(named?.text.startsWith('subscription Mine ( $literal0 : ID $literal1 : String ) { listingUpdated ( listing_id : $literal0 event_type : $literal1 )')).toBe(true);
  });

  it('moves integer literals only where they are valid as they stand', () => {
    const q = (args: string) => normalizeLiterals(counters, `subscription { changed(${args}) { id } }`, MAX_TOKENS);
    expect(q('id: 42')?.values).toEqual({ literal0: '42' });
    expect(q('n: -7')?.values).toEqual({ literal0: -7 });
    expect(q('n: 2147483647')?.values).toEqual({ literal0: 2_147_483_647 });
    expect(q('n: 2147483648')).toBeUndefined();
    expect(q('name: 5')).toBeUndefined();
    expect(q('n: "5"')).toBeUndefined();
    expect(q('big: 1')).toBeUndefined();
  });

  it('leaves every other document as it is', () => {
    const untouched = [
      `subscription($id: ID) { listingUpdated(listing_id: $id) ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "a", listing_id: "b") ${SELECTION} }`,
      `subscription { listingUpdated(where: { listing_id: { eq: "a" } }) ${SELECTION} }`,
      `subscription { listingUpdated(nope: "a") ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: null) ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: ["a"]) ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: ACTIVE) ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "a") { ...F } } fragment F on ListingEvent { listing_id }`,
      `subscription { ...F } fragment F on Subscription { listingUpdated(listing_id: "a") { listing_id } }`,
      `subscription { listingUpdated(listing_id: "a") ${SELECTION} bidPlaced(listing_id: "a") { bid_id } }`,
      `subscription @skip(if: true) { listingUpdated(listing_id: "a") ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "a") ${SELECTION} } subscription B { bidPlaced { bid_id } }`,
      `{ topics }`,
      `query { topics }`,
      `subscription { listingUpdated(listing_id: "unterminated) ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "a") ${SELECTION}`,
      `subscription { listingUpdated ${SELECTION} }`,
    ];
    for (const query of untouched) expect(normalizeLiterals(auction, query, MAX_TOKENS), query).toBeUndefined();
    // Over the parser's token limit: the parser refuses it, from the text as sent.
    expect(normalizeLiterals(auction, `subscription { listingUpdated(listing_id: "a") ${SELECTION} }`, 10)).toBeUndefined();
  });
});

describe('the document cache with literals moved', () => {
  it('parses and validates once the texts that differ only in root-field literals', () => {
    const keys = Array.from({ length: 50 }, (_, i) => `lst-${i}`);
    expect(misses(auction, keys.map((k) => `subscription { listingUpdated(listing_id: "${k}") ${SELECTION} }`))).toBe(1);
    // Formatting, commas, comments and block strings do not make another entry either.
    expect(misses(auction, [`subscription { listingUpdated(listing_id: "a") ${SELECTION} }`, `subscription{listingUpdated(listing_id:"""b""",)${SELECTION}}# c`])).toBe(1);
    const compiler = createOperationCompiler(auction, { maxCachedDocuments: 10 });
    for (const k of keys) compiler.compile({ query: `subscription { listingUpdated(listing_id: "${k}") ${SELECTION} }` });
    expect(compiler.cachedDocuments).toBe(1);
    expect(compiler.documentCache).toEqual({ hits: 49, misses: 1 });
  });

  it('keeps apart what differs: selection, alias, directives, own variables, fragments, where, enums and lists', () => {
    const base = `subscription { listingUpdated(listing_id: "a") ${SELECTION} }`;
    const others = [
      `subscription { listingUpdated(listing_id: "b") { listing_id } }`,
      `subscription { mine: listingUpdated(listing_id: "b") ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "b") { listing_id @include(if: true) event_type listing { title } } }`,
      `subscription { listingUpdated(listing_id: "b") @include(if: true) ${SELECTION} }`,
      `subscription Named { listingUpdated(listing_id: "b") ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "b", event_type: "ListingUpdated") ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "b", where: { event_type: { eq: "X" } }) ${SELECTION} }`,
    ];
    for (const other of others) expect(misses(auction, [base, other]), other).toBe(2);
    // Not moved at all: each text its own entry, as before.
    const kept = [
      `subscription($id: ID) { listingUpdated(listing_id: $id) ${SELECTION} }`,
      `subscription { listingUpdated(listing_id: "b") { ...F } } fragment F on ListingEvent { listing_id }`,
      `subscription { listingUpdated(where: { listing_id: { in: ["a", "b"] } }) ${SELECTION} }`,
    ];
    for (const other of kept) expect(misses(auction, [base, other, other]), other).toBe(2);
  });

  it('answers every text exactly as a compiler that moves nothing: errors, dedup keys, filters, channels, pins', () => {
    const tenant: AccessScope = { key: 'tenant:lst-9', authorize: (_route, args) => ({ ok: true, args: { ...args, listing_id: 'lst-9' } }) };
    const refusing: AccessScope = { key: 'x', authorize: () => ({ ok: false, message: 'Missing scope subscribe:listingUpdated.' }) };
    const corpus: [WirestreamSchema, string][] = [
      ...['"lst-1"', '"lst-2"', '"""lst-1"""', '"lst-\\u0031"', '17', '-3', '""'].map((v): [WirestreamSchema, string] => [auction, `subscription { listingUpdated(listing_id: ${v}) ${SELECTION} }`]),
      [auction, `subscription { listingUpdated(listing_id: "lst-1", event_type: "ListingUpdated") { listing_id } }`],
      [auction, `subscription Mine { a: listingUpdated(listing_id: "lst-1") @include(if: false) { listing_id @skip(if: true) event_type } }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1", where: { event_type: { in: ["A", "B"] } }) ${SELECTION} }`],
      [auction, `subscription { bidPlaced(listing_id: "lst-1", bidder_id: "usr-2") { bid_id amount { amount_cents } } }`],
      // Invalid texts, each refused with the message the text as sent gets.
      [auction, `subscription { listingUpdated(listing_id: "lst-1") { nope } }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1", event_type: 5) ${SELECTION} }`],
      [auction, `subscription { listingUpdated(listing_id: 1.5) ${SELECTION} }`],
      [auction, `subscription { listingUpdated(listing_id: true) ${SELECTION} }`],
      [auction, `subscription { listingUpdated(listing_id: ["a"]) ${SELECTION} }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1", nope: "x") ${SELECTION} }`],
      [auction, `subscription { listingUpdated(listing_id: "a", listing_id: "b") ${SELECTION} }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") ${SELECTION}`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") ${SELECTION} } }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") { listing_id listing { title { x } } } }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") ${SELECTION} bidPlaced { bid_id } }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") ${SELECTION} } query { topics }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") { listing_id @nope } }`],
      [auction, `subscription { listingUpdated(listing_id: "lst-1") { ${Array.from({ length: 40 }, (_, i) => `a${i}: listing_id`).join(' ')} } }`],
      [counters, `subscription { changed(n: 2147483648) { id } }`],
      [counters, `subscription { changed(n: 2147483647, id: 5) { id n } }`],
      [counters, `subscription { changed(name: 5) { id } }`],
      [counters, `subscription { changed(big: 1, name: "x") { id } }`],
    ];
    const moving = createOperationCompiler(auction);
    const movingCounters = createOperationCompiler(counters);
    for (const access of [OPEN_ACCESS, tenant, refusing]) {
      for (const [schema, query] of corpus) {
        const plain = createOperationCompiler(schema, { normalizeLiterals: false }).compile({ query, variables: { literal0: 'ignored' } }, access);
        const moved = (schema === auction ? moving : movingCounters).compile({ query, variables: { literal0: 'ignored' } }, access);
        expect(answer(moved), query).toEqual(answer(plain));
      }
    }
    // And they were moved: the valid ones above share their documents.
    expect(moving.documentCache.hits).toBeGreaterThan(0);
  });

  it('keeps the literals out of what a plugin is shown, and in what execute reads', () => {
    const result = createOperationCompiler(auction).compile({ query: `subscription { listingUpdated(listing_id: "lst-1") ${SELECTION} }` });
    if (!result.ok || result.operation.kind !== 'subscription') throw new Error(JSON.stringify(result));
    expect(result.operation.literalVariables).toEqual(['literal0']);
    expect(result.operation.variables).toEqual({ literal0: 'lst-1' });
  });
});
