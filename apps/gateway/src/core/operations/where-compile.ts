/**
 * Compiles a normalized `where` (where.ts) into closures, built once per distinct filter and called
 * per event: a few property loads and comparisons, no walk of the input, no allocation except
 * printing a numeric ID to compare it as text. Each closure takes the object it tests and the event
 * (for `_key` and `_headers`, read from the envelope wherever they appear).
 */
import type { Leaf, WhereNode } from './where.js';
import { isRawJson } from './raw-json.js';

/** What a filter sees of an event: the envelope's payload, Kafka key and copied headers. */
export interface WhereEvent {
  readonly payload: Readonly<Record<string, unknown>>;
  readonly key: string | null;
  readonly h?: Readonly<Record<string, string>> | undefined;
}

/** A compiled filter: closures built once, called per event. */
export type WherePredicate = (event: WhereEvent) => boolean;

type Test = (o: Readonly<Record<string, unknown>>, e: WhereEvent) => boolean;
type Reader = (o: Readonly<Record<string, unknown>>) => unknown;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Compiles a normalized filter into closures; `undefined` for a filter that matches everything. */
export function compileWhere(node: WhereNode): WherePredicate | undefined {
  if (node.k === 'true') return undefined;
  const root = compileNode(node);
  return (event) => root(event.payload, event);
}

function compileNode(node: WhereNode): Test {
  switch (node.k) {
    case 'true':
      return () => true;
    case 'false':
      return () => false;
    case 'and': {
      const parts = node.items.map(compileNode);
      if (parts.length === 2) {
        const [a, b] = parts as [Test, Test];
        return (o, e) => a(o, e) && b(o, e);
      }
      return (o, e) => {
        for (let i = 0; i < parts.length; i++) if (!(parts[i] as Test)(o, e)) return false;
        return true;
      };
    }
    case 'or': {
      const parts = node.items.map(compileNode);
      return (o, e) => {
        for (let i = 0; i < parts.length; i++) if ((parts[i] as Test)(o, e)) return true;
        return false;
      };
    }
    case 'not': {
      const inner = compileNode(node.item);
      return (o, e) => !inner(o, e);
    }
    case 'obj': {
      const { field } = node;
      const inner = compileNode(node.item);
      return (o, e) => {
        const child = o[field];
        return child !== null && typeof child === 'object' && !Array.isArray(child) && inner(child as Record<string, unknown>, e);
      };
    }
    case 'env': {
      const inner = compileNode(node.item);
      if (node.part === 'key') return (_o, e) => inner(e as unknown as Readonly<Record<string, unknown>>, e);
      return (_o, e) => inner(e.h ?? NO_HEADERS, e);
    }
    case 'list':
      // A leaf element test of `true` (isEmpty, `some: {}`) counts every element, whatever it holds.
      return compileList(node.field, node.q, node.leaf && node.item.k === 'true' ? undefined : node.leaf, compileNode(node.item));
    case 'exists': {
      const { field } = node;
      return (o) => o[field] !== undefined && o[field] !== null;
    }
    case 'in':
      return compileIn(node.field, node.values, node.text);
    case 'cmp':
      return compileComparison(node.field, node.op, node.value, node.text);
  }
}

/**
 * `some`/`every`/`none` over a list field's elements; false when the field is not a list. A leaf
 * element is tested as the field `''` of one holder object per compiled list (the element tests are
 * synchronous and hold no list of their own, so one holder is never in use twice at once).
 * `leaf` undefined: every element passes (`isEmpty`).
 */
function compileList(field: string, q: 'some' | 'every' | 'none', leaf: boolean | undefined, inner: Test): Test {
  const holder: Record<string, unknown> = { '': undefined };
  const element =
    leaf === undefined
      ? () => true
      : leaf
    ? (value: unknown, e: WhereEvent): boolean => {
        holder[''] = value;
        const ok = inner(holder, e);
        holder[''] = undefined;
        return ok;
      }
    : (value: unknown, e: WhereEvent): boolean => value !== null && typeof value === 'object' && !Array.isArray(value) && inner(value as Record<string, unknown>, e);
  // some: a match ends it true; every: a miss ends it false; none: a match ends it false.
  const stopOn = q !== 'every';
  const stopped = q === 'some';
  return (o, e) => {
    const list = o[field];
    if (!Array.isArray(list)) return false;
    for (let i = 0; i < list.length; i++) if (element(list[i], e) === stopOn) return stopped;
    return !stopped;
  };
}

function compileIn(field: string, values: readonly Leaf[], text: boolean): Test {
  const set = new Set<unknown>(values);
  if (!text) return (o) => set.has(o[field]);
  return (o) => {
    const actual = o[field];
    return typeof actual === 'string' ? set.has(actual) : typeof actual === 'number' ? set.has(String(actual)) : isRawJson(actual) && set.has(actual.rawJSON);
  };
}

function compileComparison(field: string, op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte', value: Leaf, text: boolean): Test {
  if (op === 'eq') {
    if (!text) return (o) => o[field] === value;
    return (o) => {
      const actual = o[field];
      return actual === value || (typeof actual === 'number' ? String(actual) === value : isRawJson(actual) && actual.rawJSON === value);
    };
  }
  const kind = typeof value;
  // The payload value of the filter's type (an ID's number as its text), else undefined: no order.
  const read: Reader = text
    ? (o) => {
        const actual = o[field];
        return typeof actual === 'string' ? actual : typeof actual === 'number' ? String(actual) : isRawJson(actual) ? actual.rawJSON : undefined;
      }
    : (o) => {
        const actual = o[field];
        return typeof actual === kind ? actual : undefined;
      };
  switch (op) {
    case 'gt':
      return (o) => {
        const actual = read(o) as Leaf | undefined;
        return actual !== undefined && actual > value;
      };
    case 'gte':
      return (o) => {
        const actual = read(o) as Leaf | undefined;
        return actual !== undefined && actual >= value;
      };
    case 'lt':
      return (o) => {
        const actual = read(o) as Leaf | undefined;
        return actual !== undefined && actual < value;
      };
    case 'lte':
      return (o) => {
        const actual = read(o) as Leaf | undefined;
        return actual !== undefined && actual <= value;
      };
  }
}
