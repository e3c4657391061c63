import { performance } from 'node:perf_hooks';
import { Kind, OperationTypeNode, parse, validate, type DocumentNode, type FieldNode, type GraphQLFormattedError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import {
  DEFAULT_DOCUMENT_LIMITS,
  checkDocumentLimits,
  checkDocumentNesting,
  checkVariablesShape,
  resolveDocumentLimits,
  type DocumentLimits,
} from './document-limits.js';

const schema = loadWirestreamSchema(auctionSchemaPath).schema;

/** Parses like the gateway (no locations) but without maxTokens, so the limits here are what is tested. */
function check(query: string, limits: DocumentLimits = {}): readonly GraphQLFormattedError[] {
  return checkDocumentLimits(parse(query, { noLocation: true }), resolveDocumentLimits(limits));
}

function only(errors: readonly GraphQLFormattedError[]): GraphQLFormattedError {
  expect(errors).toHaveLength(1);
  const [error] = errors;
  if (!error) throw new Error('unreachable');
  return error;
}

/** Best of a few runs, in ms: the least noisy estimate on a shared machine. */
function bestMs(fn: () => void, runs = 7): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const repeat = (n: number, fn: (i: number) => string): string => Array.from({ length: n }, (_, i) => fn(i)).join(' ');
/** The AST of `subscription { a { a { … x } } }` with `levels` fields nested, built without the parser. */
function nestedDocument(levels: number): DocumentNode {
  let field: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: 'x' } };
  for (let i = 1; i < levels; i++) {
    field = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: 'a' }, selectionSet: { kind: Kind.SELECTION_SET, selections: [field] } };
  }
  return {
    kind: Kind.DOCUMENT,
    definitions: [
      { kind: Kind.OPERATION_DEFINITION, operation: OperationTypeNode.SUBSCRIPTION, selectionSet: { kind: Kind.SELECTION_SET, selections: [field] } },
    ],
  };
}

/** `bidPlaced` (depth 1), then `levels - 1` nested `a`, then leaf `x` at depth `levels + 1`. */
const nested = (levels: number): string => `subscription { bidPlaced { ${'a { '.repeat(levels - 1)}x${' }'.repeat(levels - 1)} } }`;

const FULL_LISTING_EVENT = `subscription($id: ID) {
  listingUpdated(listing_id: $id) {
    event_id event_type listing_id occurred_at __typename
    listing {
      listing_id title description status category_path primary_property_id image_urls
      seller_info { seller_id display_name rating is_verified address { street_line1 address2_line city postal_code country_code } }
      reserve_price { amount_cents currency_code }
      current_price { amount_cents currency_code }
      recent_bids { bid_id bidder_id placed_at is_auto_bid amount { amount_cents currency_code } }
    }
  }
}`;

describe('checkDocumentLimits', () => {
  it('accepts the documents real clients send, which then validate', () => {
    for (const query of [
      FULL_LISTING_EVENT,
      'subscription { bidPlaced(listing_id: "lst-1") { bid_id amount { amount_cents } } }',
      'subscription S { ...Root } fragment Root on Subscription { bidPlaced { ...Bid b2: bid_id @include(if: true) } } fragment Bid on BidEvent { bid_id }',
      '{ topics __typename }',
    ]) {
      const document = parse(query, { noLocation: true });
      expect(checkDocumentLimits(document), query).toEqual([]);
      expect(validate(schema, document), query).toEqual([]);
    }
  });

  it('shares one empty array for accepted documents (nothing allocated per check)', () => {
    const document = parse(FULL_LISTING_EVENT, { noLocation: true });
    expect(checkDocumentLimits(document)).toBe(checkDocumentLimits(document));
  });

  it('uses the documented defaults', () => {
    expect(DEFAULT_DOCUMENT_LIMITS).toEqual({
      maxDepth: 10,
      maxAliases: 30,
      maxFields: 200,
      maxDirectives: 20,
      allowIntrospection: false,
      maxNesting: 32,
      maxFilterClauses: 64,
      maxFilterDepth: 8,
      maxFilterInList: 100,
    });
    expect(resolveDocumentLimits()).toEqual(DEFAULT_DOCUMENT_LIMITS);
  });

  describe('depth', () => {
    it('allows exactly maxDepth and rejects one more, naming the limit, its value and the field', () => {
      expect(check(nested(9))).toEqual([]); // bidPlaced + 8 × a + x = 10 levels
      const error = only(check(nested(10)));
      expect(error.message).toBe('Document depth exceeds the limit of 10 (maxDepth): field "x" reaches depth 11. Select fewer nested levels.');
      expect(error.extensions).toEqual({ code: 'DOCUMENT_LIMIT_EXCEEDED', limit: 'maxDepth', max: 10, found: 11 });
    });

    it('rejects depth 2,400 in well under a millisecond, stopping at the limit', () => {
      // graphql-js parse itself overflows the stack near depth 2,000 (the gateway's maxTokens
      // stops such text long before), so the AST is built directly.
      const document = nestedDocument(2_400);
      const limits = resolveDocumentLimits();
      expect(only(checkDocumentLimits(document, limits)).extensions).toMatchObject({ limit: 'maxDepth', found: 11 });
      expect(bestMs(() => checkDocumentLimits(document, limits))).toBeLessThan(1);
    });

    it('adds a fragment’s depth at the level where it is spread', () => {
      const fragment = 'fragment Deep on Bid { amount { amount_cents } }'; // 2 levels
      const at = (levels: number) =>
        `subscription { bidPlaced { ${'a { '.repeat(levels)}...Deep${' }'.repeat(levels)} } } ${fragment}`;
      expect(check(at(7))).toEqual([]); // 1 + 7 + 2 = 10
      const error = only(check(at(8)));
      expect(error.message).toContain('fragment "Deep" reaches depth 11');
    });

    it('does not count inline fragments as levels', () => {
      const query = `subscription { bidPlaced { ${'... on BidEvent { '.repeat(50)}bid_id${' }'.repeat(50)} } }`;
      expect(check(query)).toEqual([]);
    });
  });

  describe('aliases', () => {
    it('rejects 10,000 aliases in well under a millisecond', () => {
      const document = parse(`subscription { bidPlaced { ${repeat(10_000, (i) => `a${i}: bid_id`)} } }`, { noLocation: true });
      const limits = resolveDocumentLimits();
      const error = only(checkDocumentLimits(document, limits));
      expect(error.message).toBe('Document has more than 30 aliases (maxAliases): counted 31. Use fewer aliases.');
      expect(bestMs(() => checkDocumentLimits(document, limits))).toBeLessThan(1);
    });

    it('counts aliases inside a fragment once per spread', () => {
      const query = `subscription { bidPlaced { ...A ...A ...A } } fragment A on BidEvent { ${repeat(10, (i) => `x${i}: bid_id`)} }`;
      expect(check(query, { maxAliases: 30 })).toEqual([]);
      expect(only(check(query, { maxAliases: 29 })).extensions).toMatchObject({ limit: 'maxAliases', found: 30 });
    });
  });

  describe('fields', () => {
    it('rejects 10,000 fields and names the limit', () => {
      const error = only(check(`subscription { bidPlaced { ${'bid_id '.repeat(10_000)}} }`));
      expect(error.message).toBe(
        'Document has more than 200 selections (maxFields, fragments expanded at each spread): counted 201. Split it into smaller operations.',
      );
    });

    it('measures a fragment bomb at its expanded size in linear time', () => {
      // F0 has 2 fields; F(n) spreads F(n-1) twice: F40 expands to ~2^41 selections.
      const fragments = ['fragment F0 on BidEvent { bid_id event_id }'];
      for (let i = 1; i <= 40; i++) fragments.push(`fragment F${i} on BidEvent { ...F${i - 1} ...F${i - 1} }`);
      const document = parse(`subscription { bidPlaced { ...F40 } } ${fragments.join(' ')}`, { noLocation: true });
      const limits = resolveDocumentLimits();
      const error = only(checkDocumentLimits(document, limits));
      expect(error.extensions).toMatchObject({ limit: 'maxFields' });
      expect(bestMs(() => checkDocumentLimits(document, limits))).toBeLessThan(1);
    });

    it('bounds a long chain of fragment spreads (and so its own recursion)', () => {
      const fragments: string[] = [];
      for (let i = 0; i < 5_000; i++) fragments.push(`fragment F${i} on BidEvent { ...F${i + 1} }`);
      fragments.push('fragment F5000 on BidEvent { bid_id }');
      const error = only(check(`subscription { bidPlaced { ...F0 } } ${fragments.join(' ')}`));
      expect(error.extensions).toMatchObject({ limit: 'maxFields' });
    });

    it('counts fragments the operation never uses (validate() walks them too)', () => {
      const query = `subscription { bidPlaced { bid_id } } fragment Unused on BidEvent { ${repeat(100, (i) => `a${i}: bid_id`)} }`;
      expect(only(check(query)).extensions).toMatchObject({ limit: 'maxAliases' });
    });

    it('rejects fragment cycles, which validate() would otherwise have to untangle', () => {
      expect(only(check('subscription { bidPlaced { ...A } } fragment A on BidEvent { ...B } fragment B on BidEvent { ...A }')).message).toMatch(
        /^Fragment "A" spreads itself/,
      );
      expect(only(check('subscription { bidPlaced { ...A } } fragment A on BidEvent { bid_id ...A }')).extensions).toEqual({
        code: 'FRAGMENT_CYCLE',
        fragment: 'A',
      });
    });

    it('leaves unknown fragments to validate()', () => {
      expect(check('subscription { bidPlaced { ...Missing } }')).toEqual([]);
    });
  });

  describe('directives', () => {
    it('rejects a directive flood', () => {
      const error = only(check(`subscription { bidPlaced ${'@include(if: true) '.repeat(1_000)}{ bid_id } }`));
      expect(error.message).toBe('Document has more than 20 directives (maxDirectives): counted 1000. Use fewer directives.');
    });

    it('counts directives on the operation, variables, fragments and through spreads', () => {
      const query =
        'subscription S($v: Boolean = true @d) @d { bidPlaced @d { ...F @d ...F } } fragment F on BidEvent @d { bid_id @d }';
      // operation 1 + variable 1 + field 1 + spread 1 + (fragment 1 + field 1) × 2 spreads = 8
      expect(check(query, { maxDirectives: 8 })).toEqual([]);
      expect(only(check(query, { maxDirectives: 7 })).extensions).toMatchObject({ limit: 'maxDirectives', max: 7, found: 8 });
    });
  });

  describe('operations', () => {
    it('requires exactly one operation', () => {
      expect(only(check('subscription A { bidPlaced { bid_id } } subscription B { bidPlaced { bid_id } }')).message).toBe(
        'Document must contain exactly one operation, found 2: send one operation per subscribe message.',
      );
      expect(only(check('fragment F on BidEvent { bid_id }')).message).toMatch(/^Document contains no operation/);
    });
  });

  describe('introspection', () => {
    it('is refused by default, naming the field; __typename stays allowed', () => {
      expect(only(check('{ __schema { types { name } } }')).message).toBe(
        'Introspection is disabled on this endpoint: the document selects "__schema". Use the published schema file instead (__typename stays allowed).',
      );
      expect(only(check('{ ...I } fragment I on Query { __type(name: "Bid") { name } }')).extensions).toEqual({
        code: 'INTROSPECTION_DISABLED',
        field: '__type',
      });
      expect(check('subscription { bidPlaced { __typename bid_id } }')).toEqual([]);
    });

    it('is allowed when enabled', () => {
      expect(check('{ __schema { queryType { name } } }', { allowIntrospection: true })).toEqual([]);
    });
  });

  it('fails fast on a limit that is not a positive integer', () => {
    expect(() => resolveDocumentLimits({ maxDepth: 0 })).toThrow('document limit maxDepth must be an integer ≥ 1, got 0');
    expect(() => resolveDocumentLimits({ maxFields: 1.5 })).toThrow(/maxFields/);
    expect(() => resolveDocumentLimits({ maxAliases: -1 })).toThrow(/maxAliases must be an integer ≥ 0/);
    expect(resolveDocumentLimits({ maxAliases: 0, maxDirectives: 0 })).toMatchObject({ maxAliases: 0, maxDirectives: 0 });
  });

  it('with parse maxTokens, bounds every document of the field report', () => {
    const limits = resolveDocumentLimits();
    for (const n of [1, 10, 100, 1_000, 10_000]) {
      const query = `subscription { bidPlaced { ${repeat(n, (i) => `a${i}: bid_id`)} } }`;
      let errors: readonly GraphQLFormattedError[];
      try {
        errors = checkDocumentLimits(parse(query, { noLocation: true, maxLexicalTokens: 2_000 }), limits);
      } catch (err) {
        errors = [{ message: (err as Error).message }];
      }
      if (n <= 30) expect(errors, `${n} aliases`).toEqual([]);
      else expect(errors, `${n} aliases`).toHaveLength(1);
    }
  });
});

describe('checkDocumentNesting', () => {
  it('accepts real documents, whatever their brackets inside strings and comments', () => {
    expect(checkDocumentNesting(FULL_LISTING_EVENT)).toEqual([]);
    const tricky = `# {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{
      subscription { listingUpdated(event_type: "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\\"{{{{") {
        listing { description } } }
      query Q($a: String = """{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{ \\""" {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{""") { topics }`;
    expect(() => parse(tricky)).not.toThrow(); // it is real GraphQL: the skipped parts are strings and comments
    expect(checkDocumentNesting(tricky)).toEqual([]);
  });

  it('refuses text nested deeper than maxNesting before parsing, in microseconds', () => {
    const limits = resolveDocumentLimits();
    expect(checkDocumentNesting(nested(31), limits)).toEqual([]); // subscription { + bidPlaced { + 30 × a { = 32
    const error = only(checkDocumentNesting(nested(32), limits));
    expect(error.message).toBe('Document nests brackets deeper than 32 (maxNesting), refused before parsing: select fewer nested levels.');
    expect(error.extensions).toEqual({ code: 'DOCUMENT_LIMIT_EXCEEDED', limit: 'maxNesting', max: 32, found: 33 });
    const deep = nested(100_000);
    expect(checkDocumentNesting(deep, limits)).toHaveLength(1);
    expect(bestMs(() => checkDocumentNesting(deep, limits))).toBeLessThan(0.1);
    expect(checkDocumentNesting(`{ f(a: ${'['.repeat(40)}1${']'.repeat(40)}) }`, limits)).toHaveLength(1);
  });

  it('scans unterminated strings and comments to the end without failing', () => {
    expect(checkDocumentNesting('{ f(a: "unterminated')).toEqual([]);
    expect(checkDocumentNesting('{ f(a: """unterminated')).toEqual([]);
    expect(checkDocumentNesting('# only a comment')).toEqual([]);
  });
});

describe('checkVariablesShape', () => {
  it('accepts ordinary variables and no variables', () => {
    expect(checkVariablesShape({ id: 'lst-1', n: 3, ok: true, none: null, tags: ['a', 'b'], input: { a: { b: 1 } } })).toEqual([]);
    expect(checkVariablesShape(undefined)).toEqual([]);
    expect(checkVariablesShape(null)).toEqual([]);
    expect(checkVariablesShape({})).toBe(checkVariablesShape({ a: 1 }));
  });

  it('rejects variables that are not an object', () => {
    expect(only(checkVariablesShape([1, 2])).message).toBe('Variables must be a JSON object of name → value, got an array.');
    expect(only(checkVariablesShape('x')).message).toMatch(/got string/);
  });

  it('allows maxDepth levels and rejects one more', () => {
    const deep = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 1; i < levels; i++) value = { v: value };
      return { v: value };
    };
    expect(checkVariablesShape(deep(8))).toEqual([]);
    const error = only(checkVariablesShape(deep(9)));
    expect(error.message).toBe('Variables are nested more than 8 levels deep (variables maxDepth). Send flatter input values.');
    expect(error.extensions).toEqual({ code: 'VARIABLES_LIMIT_EXCEEDED', limit: 'maxDepth', max: 8 });
  });

  it('rejects deep nesting (10,000 arrays) quickly and without recursing through it', () => {
    let value: unknown = [];
    for (let i = 0; i < 10_000; i++) value = [value];
    expect(only(checkVariablesShape({ v: value })).extensions).toMatchObject({ limit: 'maxDepth' });
    expect(bestMs(() => checkVariablesShape({ v: value }))).toBeLessThan(1);
  });

  it('rejects huge variables by budget, without serializing them', () => {
    const wide = { list: Array.from({ length: 1_000_000 }, (_, i) => i) };
    const error = only(checkVariablesShape(wide));
    expect(error.message).toBe('Variables are larger than 8192 bytes as JSON (variables maxBytes). Send smaller input values.');
    expect(bestMs(() => checkVariablesShape(wide))).toBeLessThan(1);
    const long = { s: 'x'.repeat(10_000_000) };
    expect(only(checkVariablesShape(long)).extensions).toMatchObject({ limit: 'maxBytes' });
    expect(bestMs(() => checkVariablesShape(long))).toBeLessThan(1);
  });

  it('charges roughly the JSON size, UTF-8 strings included', () => {
    const value = { s: 'é'.repeat(100) }; // 200 bytes of UTF-8 + quotes + key
    const json = Buffer.byteLength(JSON.stringify(value));
    expect(checkVariablesShape(value, { maxBytes: json + 2 })).toEqual([]);
    expect(checkVariablesShape(value, { maxBytes: 150 })).toHaveLength(1);
  });

  it('rejects values JSON cannot carry', () => {
    expect(only(checkVariablesShape({ n: 1n })).message).toBe('Variables must be JSON values; found a bigint.');
  });
});
