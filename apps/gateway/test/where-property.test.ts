// Property: for generated `where` filters and generated events (missing fields, nulls, wrong types,
// IDs as numbers), the predicate the operation compiler builds agrees with a straightforward
// reference evaluator that interprets the filter as written; and a rewritten equal filter (keys in
// another order, in-lists reversed with repeats, wrapped in and) gets the same dedup key.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createWirestreamSchema } from '@wirestream/schema';
import { createOperationCompiler, type CompiledSubscription } from '../src/core/operations.js';

const ws = createWirestreamSchema(`
type Subscription { ev: Ev @topic(name: "evs", key: "id", shards: 4) }
enum Color { RED GREEN }
type Sub { id: ID, n: Int, s: String, sub: Sub }
type Ev { id: ID!, kind: String, n: Int, x: Float, flag: Boolean, color: Color, sub: Sub }
`);
const compiler = createOperationCompiler(ws, { maxCachedDocuments: 100_000, documentLimits: { maxFilterClauses: 1_000, maxFilterDepth: 100, maxFilterInList: 1_000 }, variablesLimits: { maxDepth: 64, maxBytes: 1_000_000 } });

type Kind = 'ID' | 'String' | 'Int' | 'Float' | 'Boolean' | 'Color' | 'Sub';
const EV: Record<string, Kind> = { id: 'ID', kind: 'String', n: 'Int', x: 'Float', flag: 'Boolean', color: 'Color', sub: 'Sub' };
const SUB: Record<string, Kind> = { id: 'ID', n: 'Int', s: 'String', sub: 'Sub' };
const ORDERED = new Set<Kind>(['ID', 'String', 'Int', 'Float']);

// --- Filter values, valid for their GraphQL input types -----------------------------------------

const ids = fc.constantFrom('1', '2', '10', 'a');
const strings = fc.constantFrom('a', 'b', 'B', '');
const ints = fc.integer({ min: -2, max: 3 });
const floats = fc.constantFrom(-1.5, 0, 0.5, 2);
const leafValue: Record<Exclude<Kind, 'Sub'>, fc.Arbitrary<unknown>> = {
  ID: ids,
  String: strings,
  Int: ints,
  Float: floats,
  Boolean: fc.boolean(),
  Color: fc.constantFrom('RED', 'GREEN'),
};

function comparison(kind: Exclude<Kind, 'Sub'>): fc.Arbitrary<Record<string, unknown>> {
  const value = leafValue[kind];
  const ops: Record<string, fc.Arbitrary<unknown>> = { eq: value, ne: value, in: fc.array(value, { maxLength: 4 }), nin: fc.array(value, { maxLength: 3 }), exists: fc.boolean() };
  if (ORDERED.has(kind)) Object.assign(ops, { gt: value, gte: value, lt: value, lte: value });
  return fc.subarray(Object.keys(ops), { maxLength: 2 }).chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, ops[key] as fc.Arbitrary<unknown>]))));
}

function whereOn(fields: Record<string, Kind>, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, kind] of Object.entries(fields)) parts[name] = kind === 'Sub' ? (depth > 0 ? whereOn(SUB, depth - 1) : fc.constant({})) : comparison(kind);
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
    const typed = kind === 'Sub' ? (depth > 0 ? eventOn(SUB, depth - 1) : fc.constant(null)) : kind === 'ID' ? fc.oneof(ids, fc.integer({ min: 0, max: 11 })) : leafValue[kind];
    parts[name] = fc.oneof({ weight: 4, arbitrary: typed }, { weight: 1, arbitrary: anyLeaf });
  }
  return fc.record(parts, { requiredKeys: [] });
}

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

function reference(where: Record<string, unknown>, fields: Record<string, Kind>, payload: Record<string, unknown>): boolean {
  for (const [name, filter] of Object.entries(where)) {
    if (filter === null || filter === undefined) continue;
    if (name === 'and' && !(filter as Record<string, unknown>[]).every((w) => reference(w, fields, payload))) return false;
    if (name === 'or' && !(filter as Record<string, unknown>[]).some((w) => reference(w, fields, payload))) return false;
    if (name === 'not' && reference(filter as Record<string, unknown>, fields, payload)) return false;
    const kind = fields[name];
    if (kind === undefined) continue;
    const actual = payload[name];
    if (kind === 'Sub') {
      if (!isObject(actual) || !reference(filter as Record<string, unknown>, SUB, actual)) return false;
      continue;
    }
    for (const [op, expected] of Object.entries(filter as Record<string, unknown>)) {
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
    else out[name] = Object.fromEntries(Object.entries(value as Record<string, unknown>).reverse().map(([op, v]) => [op, Array.isArray(v) ? [...(v as unknown[]), ...(v as unknown[])].reverse() : v]));
  }
  return { and: [out] };
}

function subscribe(where: Record<string, unknown>): CompiledSubscription {
  const result = compiler.compile({ query: 'subscription($w: EvWhere) { ev(where: $w) { id } }', variables: { w: where } });
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`not compiled: ${JSON.stringify(result)}`);
  return result.operation;
}

describe('the compiled where predicate', () => {
  it('agrees with the reference evaluator on generated filters and events', () => {
    let matched = 0;
    let total = 0;
    fc.assert(
      fc.property(whereOn(EV, 2), fc.array(eventOn(EV, 2), { minLength: 1, maxLength: 8 }), (where, events) => {
        const op = subscribe(where);
        for (const event of events) {
          const got = op.where === undefined ? true : op.where({ payload: event, key: null });
          expect(got).toBe(reference(where, EV, event));
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
});
