/**
 * The `where` argument (issue #16, decisions 0022 and 0025): the coerced input normalized once per
 * distinct operation into a canonical tree, whose text is the filter's part of the dedup key and
 * whose compiled closures (where-compile.ts) are the per-event predicate.
 *
 * Semantics (docs/schema.md): a comparison on a missing or null field is false, except `ne`, `nin`
 * and `exists: false`, which are the negations of `eq`, `in` and `exists: true`; a nested object
 * filter is false when the object is missing; `and: []` is true and `or: []` false; operators of
 * one comparison and fields of one object must all match. IDs compare as text (a payload may carry
 * an ID as a number); other leaves compare by type (`gt` on numbers as numbers, strings as text).
 * `_key` is the event's Kafka key and `_headers` the Kafka headers its topic copies, wherever they
 * appear in the tree. A list field's `some`/`every`/`none` test its elements (`every`/`none` true on
 * an empty list); every list operator but `exists: false` is false on a missing or null list.
 */
import { isEnumType, isObjectType, isScalarType, type GraphQLNamedType, type GraphQLObjectType } from 'graphql';
import { filterableShape, HEADERS_FILTER, KEY_FILTER, type FilterableShape } from '@wirestream/schema';
import { ROUTED_ON_KAFKA_KEY } from '@wirestream/wire';


/** The limits on one `where` (gateway settings; see GATEWAY_DEFAULTS). */
export interface WhereLimits {
  /** Comparisons (each operator counts one) plus combinators. */
  readonly maxClauses: number;
  /** Nesting of filter objects: the `where` itself is 1; each nested object, `and`/`or` item, `not`, `_headers` and list `some`/`every`/`none` adds one. */
  readonly maxDepth: number;
  /** Values in one `in` or `nin` list. */
  readonly maxInList: number;
}

export type Leaf = string | number | boolean;

/** What normalization needs besides the payload type: the route's header names by their where field (`event_type` → `event-type`). */
export interface WhereContext {
  readonly headers?: ReadonlyMap<string, string>;
}

/**
 * A normalized filter. `text`: compare as text (IDs). `env`: the item reads the envelope (`key`) or
 * its headers (`h`) instead of the payload. `list`: a quantifier over a list field's elements; `leaf`:
 * the elements are leaves, which the item reads as the field `''`.
 */
export type WhereNode =
  | { readonly k: 'true' }
  | { readonly k: 'false' }
  | { readonly k: 'and'; readonly items: readonly WhereNode[] }
  | { readonly k: 'or'; readonly items: readonly WhereNode[] }
  | { readonly k: 'not'; readonly item: WhereNode }
  | { readonly k: 'obj'; readonly field: string; readonly item: WhereNode }
  | { readonly k: 'env'; readonly part: 'key' | 'h'; readonly item: WhereNode }
  | { readonly k: 'list'; readonly field: string; readonly q: 'some' | 'every' | 'none'; readonly leaf: boolean; readonly item: WhereNode }
  | { readonly k: 'cmp'; readonly field: string; readonly op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte'; readonly value: Leaf; readonly text: boolean }
  | { readonly k: 'in'; readonly field: string; readonly values: readonly Leaf[]; readonly text: boolean }
  | { readonly k: 'exists'; readonly field: string };

export const TRUE: WhereNode = { k: 'true' };
export const FALSE: WhereNode = { k: 'false' };
/** The field a leaf list's element test reads (no payload field has an empty name). */
export const ELEMENT = '';

/** The first limit a `where` value on payloads of `type` exceeds, as a message naming it; undefined when within every limit. */
export function whereLimitViolation(where: unknown, type: GraphQLObjectType, limits: WhereLimits): string | undefined {
  let clauses = 0;
  let violation: string | undefined;
  const tooDeep = (depth: number): boolean => {
    if (depth <= limits.maxDepth) return false;
    violation ??= `The where filter is nested deeper than the limit of ${limits.maxDepth} (GATEWAY_MAX_FILTER_DEPTH).`;
    return true;
  };
  const operators = (value: unknown, path: string): void => {
    if (!isRecord(value)) return;
    for (const [op, operand] of Object.entries(value)) {
      if (operand === null || operand === undefined) continue;
      clauses++;
      if (Array.isArray(operand) && operand.length > limits.maxInList) {
        violation ??= `The where filter's ${path}.${op} lists ${operand.length} values, over the limit of ${limits.maxInList} (GATEWAY_MAX_FILTER_IN_LIST).`;
      }
    }
  };
  const list = (value: unknown, name: string, shape: FilterableShape, depth: number): void => {
    if (!isRecord(value)) return;
    for (const [op, operand] of Object.entries(value)) {
      if (operand === null || operand === undefined) continue;
      clauses++;
      if (op !== 'some' && op !== 'every' && op !== 'none') continue;
      if (shape.object) visit(operand, shape.named as GraphQLObjectType, depth + 1);
      else if (!tooDeep(depth + 1)) operators(operand, `${name}.${op}`);
    }
  };
  const visit = (value: unknown, on: GraphQLObjectType, depth: number): void => {
    if (violation !== undefined || !isRecord(value) || tooDeep(depth)) return;
    const fields = on.getFields();
    for (const [name, child] of Object.entries(value)) {
      if (child === null || child === undefined) continue;
      if (name === 'and' || name === 'or') {
        clauses++;
        if (Array.isArray(child)) for (const item of child) visit(item, on, depth + 1);
      } else if (name === 'not') {
        clauses++;
        visit(child, on, depth + 1);
      } else if (name === KEY_FILTER) operators(child, name);
      else if (name === HEADERS_FILTER) {
        if (isRecord(child) && !tooDeep(depth + 1)) for (const [header, ops] of Object.entries(child)) operators(ops, `${name}.${header}`);
      } else {
        const shape = fields[name] === undefined ? undefined : filterableShape(name, fields[name].type);
        if (shape?.list === true) list(child, name, shape, depth);
        else if (shape?.object === true) visit(child, shape.named as GraphQLObjectType, depth + 1);
        else operators(child, name);
      }
      if (clauses > limits.maxClauses) violation ??= `The where filter has more than ${limits.maxClauses} clauses, the limit (GATEWAY_MAX_FILTER_CLAUSES).`;
    }
  };
  visit(where, type, 1);
  return violation;
}

/** The canonical tree of a coerced `where` on payloads of `type`: equal filters give equal trees (see {@link whereKey}). */
export function normalizeWhere(where: unknown, type: GraphQLObjectType, context: WhereContext = {}): WhereNode {
  if (!isRecord(where)) return TRUE;
  const items: WhereNode[] = [];
  const fields = type.getFields();
  for (const [name, value] of Object.entries(where)) {
    if (value === null || value === undefined) continue;
    if (name === 'and' && Array.isArray(value)) items.push(and(value.map((item) => normalizeWhere(item, type, context))));
    else if (name === 'or' && Array.isArray(value)) items.push(or(value.map((item) => normalizeWhere(item, type, context))));
    else if (name === 'not') items.push(not(normalizeWhere(value, type, context)));
    else if (!isRecord(value)) continue; // validation refused it already
    else if (name === KEY_FILTER) items.push(env('key', comparison('key', value, true)));
    else if (name === HEADERS_FILTER) items.push(headersNode(value, context));
    else {
      const field = fields[name];
      const shape = field === undefined ? undefined : filterableShape(name, field.type);
      if (shape === undefined) continue;
      if (shape.list) items.push(listNode(name, value, shape, context));
      else if (isObjectType(shape.named)) items.push(obj(name, normalizeWhere(value, shape.named, context)));
      else if (isLeaf(shape.named)) items.push(comparison(name, value, shape.named.name === 'ID'));
    }
  }
  return and(items);
}

function headersNode(value: Record<string, unknown>, context: WhereContext): WhereNode {
  const parts: WhereNode[] = [];
  for (const [field, operators] of Object.entries(value)) {
    if (isRecord(operators)) parts.push(comparison(context.headers?.get(field) ?? field, operators, true));
  }
  return env('h', and(parts));
}

/** A list field's operators: some/every/none of the element filter, has, isEmpty, exists. */
function listNode(field: string, operators: Record<string, unknown>, shape: FilterableShape, context: WhereContext): WhereNode {
  const leaf = !shape.object;
  const element = (value: unknown): WhereNode =>
    leaf ? comparison(ELEMENT, isRecord(value) ? value : {}, shape.named.name === 'ID') : normalizeWhere(value, shape.named as GraphQLObjectType, context);
  const items: WhereNode[] = [];
  for (const [op, value] of Object.entries(operators)) {
    if (value === null || value === undefined) continue;
    if (op === 'some' || op === 'every' || op === 'none') items.push(quantifier(field, op, leaf, element(value)));
    else if (op === 'has' && leaf) items.push(quantifier(field, 'some', leaf, comparison(ELEMENT, { eq: value }, shape.named.name === 'ID')));
    // Counts any element (an object list's `some: {}` needs an object element): tested as a leaf.
    else if (op === 'isEmpty') items.push(quantifier(field, value === true ? 'none' : 'some', true, TRUE));
    else if (op === 'exists') items.push(value === true ? { k: 'exists', field } : not({ k: 'exists', field }));
  }
  return and(items);
}

/** `some` of a filter nothing matches matches nothing; the others still need a list. */
function quantifier(field: string, q: 'some' | 'every' | 'none', leaf: boolean, item: WhereNode): WhereNode {
  return q === 'some' && item.k === 'false' ? FALSE : { k: 'list', field, q, leaf, item };
}

export function comparison(field: string, operators: Record<string, unknown>, text: boolean): WhereNode {
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

export function inList(field: string, values: Leaf[], text: boolean): WhereNode {
  const sorted = [...new Map(values.map((value) => [JSON.stringify(value), value])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);
  if (sorted.length === 0) return FALSE;
  if (sorted.length === 1) return { k: 'cmp', field, op: 'eq', value: sorted[0] as Leaf, text };
  return { k: 'in', field, values: sorted, text };
}

export function obj(field: string, item: WhereNode): WhereNode {
  return item.k === 'false' ? FALSE : { k: 'obj', field, item };
}

/** The envelope's key or headers; `h` is read as `{}` when the event carries none (so `exists: false` holds). */
export function env(part: 'key' | 'h', item: WhereNode): WhereNode {
  return item.k === 'false' || item.k === 'true' ? item : { k: 'env', part, item };
}

export function not(item: WhereNode): WhereNode {
  if (item.k === 'true') return FALSE;
  if (item.k === 'false') return TRUE;
  if (item.k === 'not') return item.item;
  return { k: 'not', item };
}

export function and(items: readonly WhereNode[]): WhereNode {
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
    case 'env':
      return `@${node.part}{${whereKey(node.item)}}`;
    case 'list':
      return `${node.field}[${node.q}${node.leaf ? '' : ':obj'}]{${whereKey(node.item)}}`;
    case 'cmp':
      return `${node.field}.${node.op}:${JSON.stringify(node.value)}`;
    case 'in':
      return `${node.field}.in:${JSON.stringify(node.values)}`;
    case 'exists':
      return `${node.field}.exists`;
  }
}

/**
 * The routing-key values a filter pins (every matching event has one of them as `keyField`, or as
 * its Kafka key when the route has no key field: ingest then shards by the Kafka key), as text, at
 * most `max`; undefined when it pins none (or more than `max`): then every shard is needed.
 */
export function pinnedKeys(node: WhereNode, keyField: string | undefined, max: number): readonly string[] | undefined {
  const items = node.k === 'and' ? node.items : [node];
  for (const item of items) {
    const target = keyField === undefined ? (item.k === 'env' && item.part === 'key' ? item.item : undefined) : item;
    const field = keyField ?? 'key';
    if (target?.k === 'cmp' && target.op === 'eq' && target.field === field) return [String(target.value)];
    if (target?.k === 'in' && target.field === field && target.values.length <= max) return target.values.map(String);
  }
  return undefined;
}

/**
 * {@link KeyPin.on} of a filter that pins the Kafka key (`_key`): no payload field is so named (SDL
 * names have no `@`). The wire's name for it, so batch parts' routing keys compare with pins as they are.
 */
export const KAFKA_KEY = ROUTED_ON_KAFKA_KEY;

/**
 * The routing-key values every event a subscription matches has, and where they are read: a payload
 * field (`on`: its name, the route's key field) or the Kafka key (`on`: {@link KAFKA_KEY}). The hub
 * finds the subscription's group from an event's key through this (decision 0039).
 */
export interface KeyPin {
  readonly on: string;
  readonly keys: readonly string[];
}

/**
 * What a filter pins: the route's key field if it pins it, else the Kafka key if it pins that (a
 * route without a key field shards by the Kafka key; with one, `_key` still narrows the groups an
 * event can match, not the channels). Undefined: it pins neither.
 */
export function keyPin(node: WhereNode, keyField: string | undefined): KeyPin | undefined {
  const onField = keyField === undefined ? undefined : pinnedKeys(node, keyField, Number.MAX_SAFE_INTEGER);
  if (onField !== undefined) return { on: keyField as string, keys: onField };
  const onKafkaKey = pinnedKeys(node, undefined, Number.MAX_SAFE_INTEGER);
  return onKafkaKey === undefined ? undefined : { on: KAFKA_KEY, keys: onKafkaKey };
}

function isLeaf(type: GraphQLNamedType): boolean {
  return isScalarType(type) || isEnumType(type);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
