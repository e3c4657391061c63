/**
 * The `where` argument (issue #16, decision 0022): the coerced input normalized once per distinct
 * operation into a canonical tree, whose text is the filter's part of the dedup key and whose
 * compiled closures are the per-event predicate. No per-event walk of the input, no allocation on
 * the usual path (an ID compared with a number payload prints that number).
 *
 * Semantics (docs/schema.md): a comparison on a missing or null field is false, except `ne`, `nin`
 * and `exists: false`, which are the negations of `eq`, `in` and `exists: true`; a nested object
 * filter is false when the object is missing; `and: []` is true and `or: []` false; operators of
 * one comparison and fields of one object must all match. IDs compare as text (a payload may carry
 * an ID as a number); other leaves compare by type (`gt` on numbers as numbers, strings as text).
 */
import { getNullableType, isEnumType, isListType, isObjectType, isScalarType, type GraphQLObjectType } from 'graphql';
import { isFilterableField } from '@wirestream/schema';

/** The limits on one `where` (gateway settings; see GATEWAY_DEFAULTS). */
export interface WhereLimits {
  /** Comparisons (each operator counts one) plus combinators. */
  readonly maxClauses: number;
  /** Nesting of filter objects: the `where` itself is 1; each nested object, `and`/`or` item and `not` adds one. */
  readonly maxDepth: number;
  /** Values in one `in` or `nin` list. */
  readonly maxInList: number;
}

type Leaf = string | number | boolean;

/** A normalized filter. `text`: compare as text (IDs). */
export type WhereNode =
  | { readonly k: 'true' }
  | { readonly k: 'false' }
  | { readonly k: 'and'; readonly items: readonly WhereNode[] }
  | { readonly k: 'or'; readonly items: readonly WhereNode[] }
  | { readonly k: 'not'; readonly item: WhereNode }
  | { readonly k: 'obj'; readonly field: string; readonly item: WhereNode }
  | { readonly k: 'cmp'; readonly field: string; readonly op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte'; readonly value: Leaf; readonly text: boolean }
  | { readonly k: 'in'; readonly field: string; readonly values: readonly Leaf[]; readonly text: boolean }
  | { readonly k: 'exists'; readonly field: string };

const TRUE: WhereNode = { k: 'true' };
const FALSE: WhereNode = { k: 'false' };

/** The first limit a `where` value on payloads of `type` exceeds, as a message naming it; undefined when within every limit. */
export function whereLimitViolation(where: unknown, type: GraphQLObjectType, limits: WhereLimits): string | undefined {
  let clauses = 0;
  let violation: string | undefined;
  const visit = (value: unknown, on: GraphQLObjectType, depth: number): void => {
    if (violation !== undefined || !isRecord(value)) return;
    if (depth > limits.maxDepth) {
      violation = `The where filter is nested deeper than the limit of ${limits.maxDepth} (GATEWAY_MAX_FILTER_DEPTH).`;
      return;
    }
    const fields = on.getFields();
    for (const [name, child] of Object.entries(value)) {
      if (child === null || child === undefined) continue;
      const fieldType = fields[name] === undefined ? undefined : getNullableType(fields[name].type);
      if (name === 'and' || name === 'or') {
        clauses++;
        if (Array.isArray(child)) for (const item of child) visit(item, on, depth + 1);
      } else if (name === 'not') {
        clauses++;
        visit(child, on, depth + 1);
      } else if (fieldType !== undefined && isObjectType(fieldType)) {
        visit(child, fieldType, depth + 1);
      } else if (isRecord(child)) {
        for (const [op, operand] of Object.entries(child)) {
          if (operand === null || operand === undefined) continue;
          clauses++;
          if (Array.isArray(operand) && operand.length > limits.maxInList) {
            violation ??= `The where filter's ${name}.${op} lists ${operand.length} values, over the limit of ${limits.maxInList} (GATEWAY_MAX_FILTER_IN_LIST).`;
          }
        }
      }
      if (clauses > limits.maxClauses) violation ??= `The where filter has more than ${limits.maxClauses} clauses, the limit (GATEWAY_MAX_FILTER_CLAUSES).`;
    }
  };
  visit(where, type, 1);
  return violation;
}

/** The canonical tree of a coerced `where` on payloads of `type`: equal filters give equal trees (see {@link whereKey}). */
export function normalizeWhere(where: unknown, type: GraphQLObjectType): WhereNode {
  if (!isRecord(where)) return TRUE;
  const items: WhereNode[] = [];
  const fields = type.getFields();
  for (const [name, value] of Object.entries(where)) {
    if (value === null || value === undefined) continue;
    if (name === 'and' && Array.isArray(value)) items.push(and(value.map((item) => normalizeWhere(item, type))));
    else if (name === 'or' && Array.isArray(value)) items.push(or(value.map((item) => normalizeWhere(item, type))));
    else if (name === 'not') items.push(not(normalizeWhere(value, type)));
    else {
      const field = fields[name];
      if (field === undefined || !isRecord(value)) continue; // validation refused it already
      const fieldType = getNullableType(field.type);
      if (isListType(fieldType) || !isFilterableField(name, fieldType, false)) continue;
      if (isObjectType(fieldType)) items.push(obj(name, normalizeWhere(value, fieldType)));
      else if (isScalarType(fieldType) || isEnumType(fieldType)) items.push(comparison(name, value, fieldType.name === 'ID'));
    }
  }
  return and(items);
}

function comparison(field: string, operators: Record<string, unknown>, text: boolean): WhereNode {
  const leaf = (value: unknown): Leaf => (text ? String(value) : value) as Leaf;
  const items: WhereNode[] = [];
  for (const [op, value] of Object.entries(operators)) {
    if (value === null || value === undefined) continue;
    switch (op) {
      case 'eq':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        items.push({ k: 'cmp', field, op, value: leaf(value), text });
        break;
      case 'ne':
        items.push(not({ k: 'cmp', field, op: 'eq', value: leaf(value), text }));
        break;
      case 'in':
      case 'nin': {
        const found = inList(field, (value as unknown[]).map(leaf), text);
        items.push(op === 'in' ? found : not(found));
        break;
      }
      case 'exists': {
        const present: WhereNode = { k: 'exists', field };
        items.push(value === true ? present : not(present));
        break;
      }
      default:
        break;
    }
  }
  return and(items);
}

function inList(field: string, values: Leaf[], text: boolean): WhereNode {
  const sorted = [...new Map(values.map((value) => [JSON.stringify(value), value])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);
  if (sorted.length === 0) return FALSE;
  if (sorted.length === 1) return { k: 'cmp', field, op: 'eq', value: sorted[0] as Leaf, text };
  return { k: 'in', field, values: sorted, text };
}

function obj(field: string, item: WhereNode): WhereNode {
  return item.k === 'false' ? FALSE : { k: 'obj', field, item };
}

function not(item: WhereNode): WhereNode {
  if (item.k === 'true') return FALSE;
  if (item.k === 'false') return TRUE;
  if (item.k === 'not') return item.item;
  return { k: 'not', item };
}

function and(items: readonly WhereNode[]): WhereNode {
  return combine('and', items, TRUE, FALSE);
}

function or(items: readonly WhereNode[]): WhereNode {
  return combine('or', items, FALSE, TRUE);
}

/** Flattened, without neutral items, short-circuited on an absorbing one, deduplicated and sorted by key. */
function combine(k: 'and' | 'or', items: readonly WhereNode[], neutral: WhereNode, absorbing: WhereNode): WhereNode {
  const byKey = new Map<string, WhereNode>();
  for (const item of items) {
    const flat = item.k === k ? item.items : [item];
    for (const part of flat) {
      if (part.k === absorbing.k) return absorbing;
      if (part.k !== neutral.k) byKey.set(whereKey(part), part);
    }
  }
  const sorted = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);
  if (sorted.length === 0) return neutral;
  if (sorted.length === 1) return sorted[0] as WhereNode;
  return { k, items: sorted };
}

/** The canonical text of a normalized filter: the filter's part of the dedup key. */
export function whereKey(node: WhereNode): string {
  switch (node.k) {
    case 'true':
    case 'false':
      return node.k;
    case 'and':
    case 'or':
      return `${node.k}(${node.items.map(whereKey).join(',')})`;
    case 'not':
      return `not(${whereKey(node.item)})`;
    case 'obj':
      return `${node.field}{${whereKey(node.item)}}`;
    case 'cmp':
      return `${node.field}.${node.op}:${JSON.stringify(node.value)}`;
    case 'in':
      return `${node.field}.in:${JSON.stringify(node.values)}`;
    case 'exists':
      return `${node.field}.exists`;
  }
}

/** A compiled filter: closures built once, called per event. */
export type WherePredicate = (payload: Readonly<Record<string, unknown>>) => boolean;

/** Compiles a normalized filter into closures; `undefined` for a filter that matches everything. */
export function compileWhere(node: WhereNode): WherePredicate | undefined {
  return node.k === 'true' ? undefined : compileNode(node);
}

function compileNode(node: WhereNode): WherePredicate {
  switch (node.k) {
    case 'true':
      return () => true;
    case 'false':
      return () => false;
    case 'and': {
      const parts = node.items.map(compileNode);
      if (parts.length === 2) {
        const [a, b] = parts as [WherePredicate, WherePredicate];
        return (o) => a(o) && b(o);
      }
      return (o) => {
        for (let i = 0; i < parts.length; i++) if (!(parts[i] as WherePredicate)(o)) return false;
        return true;
      };
    }
    case 'or': {
      const parts = node.items.map(compileNode);
      return (o) => {
        for (let i = 0; i < parts.length; i++) if ((parts[i] as WherePredicate)(o)) return true;
        return false;
      };
    }
    case 'not': {
      const inner = compileNode(node.item);
      return (o) => !inner(o);
    }
    case 'obj': {
      const { field } = node;
      const inner = compileNode(node.item);
      return (o) => {
        const child = o[field];
        return child !== null && typeof child === 'object' && !Array.isArray(child) && inner(child as Record<string, unknown>);
      };
    }
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

function compileIn(field: string, values: readonly Leaf[], text: boolean): WherePredicate {
  const set = new Set<unknown>(values);
  if (!text) return (o) => set.has(o[field]);
  return (o) => {
    const actual = o[field];
    return typeof actual === 'string' ? set.has(actual) : typeof actual === 'number' && set.has(String(actual));
  };
}

function compileComparison(field: string, op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte', value: Leaf, text: boolean): WherePredicate {
  if (op === 'eq') {
    if (!text) return (o) => o[field] === value;
    return (o) => {
      const actual = o[field];
      return actual === value || (typeof actual === 'number' && String(actual) === value);
    };
  }
  const kind = typeof value;
  // The payload value of the filter's type (an ID's number as its text), else undefined: no order.
  const read = text
    ? (o: Readonly<Record<string, unknown>>) => {
        const actual = o[field];
        return typeof actual === 'string' ? actual : typeof actual === 'number' ? String(actual) : undefined;
      }
    : (o: Readonly<Record<string, unknown>>) => {
        const actual = o[field];
        return typeof actual === kind ? (actual as Leaf) : undefined;
      };
  switch (op) {
    case 'gt':
      return (o) => {
        const actual = read(o);
        return actual !== undefined && actual > value;
      };
    case 'gte':
      return (o) => {
        const actual = read(o);
        return actual !== undefined && actual >= value;
      };
    case 'lt':
      return (o) => {
        const actual = read(o);
        return actual !== undefined && actual < value;
      };
    case 'lte':
      return (o) => {
        const actual = read(o);
        return actual !== undefined && actual <= value;
      };
  }
}

/**
 * The routing-key values a filter pins (every matching event has one of them as `keyField`), as
 * text, at most `max`; undefined when it pins none (or more than `max`): then every shard is needed.
 */
export function pinnedKeys(node: WhereNode, keyField: string, max: number): readonly string[] | undefined {
  const items = node.k === 'and' ? node.items : [node];
  for (const item of items) {
    if (item.k === 'cmp' && item.op === 'eq' && item.field === keyField) return [String(item.value)];
    if (item.k === 'in' && item.field === keyField && item.values.length <= max) return item.values.map(String);
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
