// Property: for generated `where` filters and generated events (missing fields, nulls, wrong types,
// IDs as numbers, lists with odd elements, the Kafka key and copied headers present or not), the
// predicate the operation compiler builds agrees with a straightforward reference evaluator that
// interprets the filter as written; so does the client filter ANDed with filters bound to claims
// (GATEWAY_JWT_FILTER_RULES); and a rewritten equal filter (keys in another order, in-lists
// reversed with repeats, wrapped in and) gets the same dedup key.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createWirestreamSchema } from '@wirestream/schema';
import { createOperationCompiler, type AccessScope, type CompiledSubscription } from '../src/core/operations/operations.js';
import { parseFilterRules, type BoundFilter } from '../src/core/operations/where-bound.js';
import type { WhereEvent } from '../src/core/operations/where-compile.js';

const ws = createWirestreamSchema(`
type Subscription { ev: Ev @topic(name: "evs", key: "id", shards: 4, headers: ["tenant", "event-type"]) }
enum Color { RED GREEN }
type Sub { id: ID, n: Int, s: String, sub: Sub }
type Ev { id: ID!, kind: String, n: Int, x: Float, flag: Boolean, color: Color, sub: Sub, tags: [String], nums: [Int!], subs: [Sub] }
`);
const compiler = createOperationCompiler(ws, { maxCachedDocuments: 100_000, documentLimits: { maxFilterClauses: 1_000, maxFilterDepth: 100, maxFilterInList: 1_000 }, variablesLimits: { maxDepth: 64, maxBytes: 1_000_000 } });

type Leaf = 'ID' | 'String' | 'Int' | 'Float' | 'Boolean' | 'Color';
type Kind = Leaf | 'Sub' | 'String[]' | 'Int[]' | 'Sub[]';
const EV: Record<string, Kind> = { id: 'ID', kind: 'String', n: 'Int', x: 'Float', flag: 'Boolean', color: 'Color', sub: 'Sub', tags: 'String[]', nums: 'Int[]', subs: 'Sub[]' };
const SUB: Record<string, Kind> = { id: 'ID', n: 'Int', s: 'String', sub: 'Sub' };
const ORDERED = new Set<Kind>(['ID', 'String', 'Int', 'Float']);

// --- Filter values, valid for their GraphQL input types -----------------------------------------

const ids = fc.constantFrom('1', '2', '10', 'a');
const strings = fc.constantFrom('a', 'b', 'B', '');
const ints = fc.integer({ min: -2, max: 3 });
const floats = fc.constantFrom(-1.5, 0, 0.5, 2);
const leafValue: Record<Leaf, fc.Arbitrary<unknown>> = {
  ID: ids,
  String: strings,
  Int: ints,
  Float: floats,
  Boolean: fc.boolean(),
  Color: fc.constantFrom('RED', 'GREEN'),
};

function comparison(kind: Leaf): fc.Arbitrary<Record<string, unknown>> {
  const value = leafValue[kind];
  const ops: Record<string, fc.Arbitrary<unknown>> = { eq: value, ne: value, in: fc.array(value, { maxLength: 4 }), nin: fc.array(value, { maxLength: 3 }), exists: fc.boolean() };
  if (ORDERED.has(kind)) Object.assign(ops, { gt: value, gte: value, lt: value, lte: value });
  return fc.subarray(Object.keys(ops), { maxLength: 2 }).chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, ops[key] as fc.Arbitrary<unknown>]))));
}

/** A list field's operators: some/every/none of the element filter, has, isEmpty, exists. */
function listFilter(kind: 'String[]' | 'Int[]' | 'Sub[]', depth: number): fc.Arbitrary<Record<string, unknown>> {
  const element = kind === 'Sub[]' ? (depth > 0 ? whereOn(SUB, depth - 1) : fc.constant({})) : comparison(kind === 'Int[]' ? 'Int' : 'String');
  const ops: Record<string, fc.Arbitrary<unknown>> = { some: element, every: element, none: element, isEmpty: fc.boolean(), exists: fc.boolean() };
  if (kind !== 'Sub[]') ops['has'] = leafValue[kind === 'Int[]' ? 'Int' : 'String'];
  return fc.subarray(Object.keys(ops), { maxLength: 2 }).chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, ops[key] as fc.Arbitrary<unknown>]))));
}

const HEADERS = fc.subarray(['tenant', 'event_type']).chain((names) => fc.record(Object.fromEntries(names.map((name) => [name, comparison('String')]))));

function whereOn(fields: Record<string, Kind>, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, kind] of Object.entries(fields)) {
    parts[name] = kind === 'Sub' ? (depth > 0 ? whereOn(SUB, depth - 1) : fc.constant({})) : kind.endsWith('[]') ? listFilter(kind as 'String[]', depth) : comparison(kind as Leaf);
  }
  if (fields === EV) Object.assign(parts, { _key: comparison('String'), _headers: HEADERS });
  if (depth > 0) {
    const nested = whereOn(fields, depth - 1);
    Object.assign(parts, { and: fc.array(nested, { maxLength: 3 }), or: fc.array(nested, { maxLength: 3 }), not: nested });
  }
  // Few keys per level (chosen first, then their values: no rejection): filters that sometimes match.
  return fc.subarray(Object.keys(parts), { maxLength: 3 }).chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, parts[key] as fc.Arbitrary<unknown>]))));
}

// --- Events, schema-shaped but loose --------------------------------------------------------------

const anyLeaf = fc.oneof(ids, strings, ints, floats, fc.boolean(), fc.constant(null), fc.constantFrom('RED', 'GREEN'), fc.constant([1]));
function eventOn(fields: Record<string, Kind>, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, kind] of Object.entries(fields)) {
    parts[name] = fc.oneof({ weight: 4, arbitrary: typedValue(kind, depth) }, { weight: 1, arbitrary: anyLeaf });
  }
  return fc.record(parts, { requiredKeys: [] });
}

function typedValue(kind: Kind, depth: number): fc.Arbitrary<unknown> {
  if (kind === 'Sub') return depth > 0 ? eventOn(SUB, depth - 1) : fc.constant(null);
  if (kind === 'ID') return fc.oneof(ids, fc.integer({ min: 0, max: 11 }));
  if (kind.endsWith('[]')) {
    // Mostly elements of the type, sometimes a null or another type among them.
    const element = typedValue(kind.slice(0, -2) as Kind, depth);
    return fc.array(fc.oneof({ weight: 5, arbitrary: element }, { weight: 1, arbitrary: anyLeaf }), { maxLength: 3 });
  }
  return leafValue[kind as Leaf];
}

/** An envelope: the payload, a Kafka key (or none) and the copied headers (or none). */
const envelopeOf = fc.record({
  payload: eventOn(EV, 2),
  key: fc.oneof(strings, fc.constant(null)),
  h: fc.option(fc.record({ tenant: strings, 'event-type': strings }, { requiredKeys: [] }), { nil: undefined }),
});

// --- The reference: the filter interpreted as written ------------------------------------------

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function same(kind: Kind, actual: unknown, expected: unknown): boolean {
  if (kind === 'ID') return (typeof actual === 'string' || typeof actual === 'number') && String(actual) === String(expected);
  return actual === expected;
}

function ordered(kind: Kind, actual: unknown, expected: unknown, test: (a: string | number, b: string | number) => boolean): boolean {
  if (kind === 'ID') return (typeof actual === 'string' || typeof actual === 'number') && test(String(actual), String(expected));
  return typeof actual === typeof expected && test(actual as number, expected as number);
}

function leafOk(kind: Leaf, actual: unknown, operators: Record<string, unknown>): boolean {
  for (const [op, expected] of Object.entries(operators)) {
    const present = actual !== undefined && actual !== null;
    const ok =
      op === 'eq' ? same(kind, actual, expected)
      : op === 'ne' ? !same(kind, actual, expected)
      : op === 'in' ? (expected as unknown[]).some((e) => same(kind, actual, e))
      : op === 'nin' ? !(expected as unknown[]).some((e) => same(kind, actual, e))
      : op === 'exists' ? present === expected
      : op === 'gt' ? ordered(kind, actual, expected, (a, b) => a > b)
      : op === 'gte' ? ordered(kind, actual, expected, (a, b) => a >= b)
      : op === 'lt' ? ordered(kind, actual, expected, (a, b) => a < b)
      : ordered(kind, actual, expected, (a, b) => a <= b);
    if (!ok) return false;
  }
  return true;
}

function listOk(kind: 'String[]' | 'Int[]' | 'Sub[]', actual: unknown, operators: Record<string, unknown>, envelope: WhereEvent): boolean {
  const leaf: Leaf = kind === 'Int[]' ? 'Int' : 'String';
  const element = (filter: unknown) => (el: unknown) => (kind === 'Sub[]' ? isObject(el) && reference(filter as Record<string, unknown>, SUB, el, envelope) : leafOk(leaf, el, filter as Record<string, unknown>));
  for (const [op, value] of Object.entries(operators)) {
    if (op === 'exists') {
      if ((actual !== undefined && actual !== null) !== value) return false;
      continue;
    }
    if (!Array.isArray(actual)) return false;
    const ok =
      op === 'some' ? actual.some(element(value))
      : op === 'every' ? actual.every(element(value))
      : op === 'none' ? !actual.some(element(value))
      : op === 'has' ? actual.some((el) => same(leaf, el, value))
      : /* isEmpty */ (actual.length === 0) === value;
    if (!ok) return false;
  }
  return true;
}

function reference(where: Record<string, unknown>, fields: Record<string, Kind>, payload: Record<string, unknown>, envelope: WhereEvent): boolean {
  for (const [name, filter] of Object.entries(where)) {
    if (filter === null || filter === undefined) continue;
    if (name === 'and' && !(filter as Record<string, unknown>[]).every((w) => reference(w, fields, payload, envelope))) return false;
    if (name === 'or' && !(filter as Record<string, unknown>[]).some((w) => reference(w, fields, payload, envelope))) return false;
    if (name === 'not' && reference(filter as Record<string, unknown>, fields, payload, envelope)) return false;
    if (name === '_key' && !leafOk('String', envelope.key, filter as Record<string, unknown>)) return false;
    if (name === '_headers') {
      for (const [field, ops] of Object.entries(filter as Record<string, Record<string, unknown>>)) {
        if (!leafOk('String', envelope.h?.[field === 'event_type' ? 'event-type' : field], ops)) return false;
      }
    }
    const kind = fields[name];
    if (kind === undefined) continue;
    const actual = payload[name];
    if (kind === 'Sub') {
      if (!isObject(actual) || !reference(filter as Record<string, unknown>, SUB, actual, envelope)) return false;
    } else if (kind.endsWith('[]')) {
      if (!listOk(kind as 'String[]', actual, filter as Record<string, unknown>, envelope)) return false;
    } else if (!leafOk(kind as Leaf, actual, filter as Record<string, unknown>)) return false;
  }
  return true;
}

// --- An equal filter, written differently ----------------------------------------------------------

function rewritten(where: Record<string, unknown>, fields: Record<string, Kind>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(where).reverse()) {
    const kind = fields[name];
    if (name === 'and' || name === 'or') out[name] = (value as Record<string, unknown>[]).map((w) => rewritten(w, fields)).reverse();
    else if (name === 'not') out[name] = rewritten(value as Record<string, unknown>, fields);
    else if (kind === 'Sub') out[name] = rewritten(value as Record<string, unknown>, SUB);
    else if (name === '_headers') out[name] = Object.fromEntries(Object.entries(value as Record<string, Record<string, unknown>>).reverse().map(([h, ops]) => [h, rewrittenLeaf(ops)]));
    else if (kind?.endsWith('[]') === true) {
      out[name] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .reverse()
          .map(([op, v]) => [op, op === 'some' || op === 'every' || op === 'none' ? (kind === 'Sub[]' ? rewritten(v as Record<string, unknown>, SUB) : rewrittenLeaf(v as Record<string, unknown>)) : v]),
      );
    } else out[name] = rewrittenLeaf(value as Record<string, unknown>);
  }
  return { and: [out] };
}

function rewrittenLeaf(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).reverse().map(([op, v]) => [op, Array.isArray(v) ? [...(v as unknown[]), ...(v as unknown[])].reverse() : v]));
}

function subscribe(where: Record<string, unknown>, access?: AccessScope): CompiledSubscription {
  const result = compiler.compile({ query: 'subscription($w: EvWhere) { ev(where: $w) { id } }', variables: { w: where } }, access);
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`not compiled: ${JSON.stringify(result)}`);
  return result.operation;
}

describe('the compiled where predicate', () => {
  it('agrees with the reference evaluator on generated filters and events', () => {
    let matched = 0;
    let total = 0;
    fc.assert(
      fc.property(whereOn(EV, 2), fc.array(envelopeOf, { minLength: 1, maxLength: 8 }), (where, events) => {
        const op = subscribe(where);
        for (const event of events) {
          const got = op.where === undefined ? true : op.where(event);
          expect(got).toBe(reference(where, EV, event.payload, event));
          total++;
          if (got) matched++;
        }
      }),
      { numRuns: 2_000 },
    );
    // The generators make both outcomes common, so the property says something about each.
    expect(matched / total).toBeGreaterThan(0.1);
    expect(matched / total).toBeLessThan(0.9);
  });

  it('gives an equal filter written differently the same dedup key', () => {
    fc.assert(
      fc.property(whereOn(EV, 2), (where) => {
        const a = subscribe(where);
        const b = subscribe(rewritten(where, EV));
        expect(b.dedupKey).toBe(a.dedupKey);
        expect(b.where).toBe(a.where);
      }),
      { numRuns: 1_000 },
    );
  });

  it('ANDs filters bound to claims after the client filter, as the reference evaluates both', () => {
    const rules = parseFilterRules(['sub.id=team', '_key=keys', '_headers.event-type=kinds', 'tags=groups', 'ev:n=level']);
    // Claim values as tokens carry them: text, numbers, arrays of either.
    const claim = fc.oneof(ids, fc.integer({ min: 0, max: 11 }), fc.array(ids, { minLength: 1, maxLength: 3 }));
    const claims = fc.record({ team: claim, keys: fc.oneof(strings, fc.array(strings, { minLength: 1, maxLength: 2 })), kinds: strings, groups: fc.array(strings, { minLength: 1, maxLength: 2 }), level: fc.oneof(ints, fc.constantFrom('1', '2')) });
    const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
    // Each rule as the reference reads it: the value at its path equals one of the claim's (coerced to the field's type).
    const ruleOk = (claim: string, c: Record<string, unknown>, e: WhereEvent): boolean => {
      const values = asList(c[claim]);
      const sub = e.payload['sub'];
      const tags = e.payload['tags'];
      if (claim === 'team') return isObject(sub) && values.some((v) => same('ID', sub['id'], v));
      if (claim === 'keys') return values.some((v) => e.key === v);
      if (claim === 'kinds') return values.some((v) => e.h?.['event-type'] === v);
      if (claim === 'groups') return Array.isArray(tags) && tags.some((t) => values.includes(t));
      return values.some((v) => e.payload['n'] === Number(v));
    };
    let matched = 0;
    fc.assert(
      fc.property(whereOn(EV, 1), claims, fc.subarray([...rules], { minLength: 1, maxLength: 2 }), fc.array(envelopeOf, { minLength: 1, maxLength: 8 }), (where, c, some, events) => {
        const bound: BoundFilter[] = some.map((rule) => ({ rule, values: asList((c as Record<string, unknown>)[rule.claim]) as (string | number)[] }));
        const access: AccessScope = { key: JSON.stringify(c), authorize: (_route, args) => ({ ok: true, args, bound }) };
        const op = subscribe(where, access);
        expect(op.where).toBeDefined();
        for (const event of events) {
          const expected = reference(where, EV, event.payload, event) && some.every((rule) => ruleOk(rule.claim, c, event));
          expect(op.where?.(event)).toBe(expected);
          if (expected) matched++;
        }
      }),
      { numRuns: 1_000 },
    );
    expect(matched).toBeGreaterThan(0);
  });
});
