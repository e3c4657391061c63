/**
 * Filters bound to the caller (decision 0025): rules from the token's claims on payload paths
 * (`GATEWAY_JWT_FILTER_RULES`, e.g. `listing.seller_info.seller_id=partner_id`), turned into a
 * normalized `where` tree that the operation compiler ANDs with the client's own filter. The client
 * can narrow it but never widen it; its values are part of the dedup key (through the tree and the
 * principal's scope key), and a rule on the routing key pins shards like the client's `eq` does.
 */
import { getNullableType, isEnumType, isObjectType, isScalarType, type GraphQLNamedType, type GraphQLObjectType } from 'graphql';
import { filterableShape, headerFieldName, HEADERS_FILTER, KEY_FILTER, type SubscriptionRoute, type WirestreamSchema } from '@wirestream/schema';
import { FILTER_RULES_SETTING, type BoundFilter, type FilterRule } from '../../auth/filter-rules.js';
import { and, ELEMENT, env, FALSE, inList, obj, type Leaf, type WhereNode } from './where.js';

export { parseFilterRules, type BoundFilter, type FilterRule } from '../../auth/filter-rules.js';

/** Problems of rules against the schema: a rule no subscription field can apply is a typo; a field-scoped one must apply to its field. */
export function filterRuleProblems(ws: WirestreamSchema, rules: readonly FilterRule[]): string[] {
  const problems: string[] = [];
  for (const rule of rules) {
    const routes = [...ws.routes.values()].filter((route) => rule.fieldName === undefined || route.fieldName === rule.fieldName);
    if (rule.fieldName !== undefined && routes.length === 0) {
      problems.push(`${FILTER_RULES_SETTING}: ${JSON.stringify(rule.text)} names the field ${rule.fieldName}, which is not a subscription field of the schema (${[...ws.routes.keys()].join(', ')})`);
    } else if (!routes.some((route) => pathTarget(rule.path, route, payloadTypeOf(ws, route)) !== undefined)) {
      problems.push(
        `${FILTER_RULES_SETTING}: ${JSON.stringify(rule.text)}: ${rule.path.join('.')} is no filterable field of ${rule.fieldName ?? 'any subscription field'}'s payload ` +
          `(a path of object fields to a leaf or a list of leaves, ${KEY_FILTER}, or ${HEADERS_FILTER}.<a header @topic(headers:) lists>)`,
      );
    }
  }
  return problems;
}

/**
 * The tree the caller's bound filters put on `route`: `true` when none applies; an error when one
 * applies and the token lacks its claim, or holds a value the field's type cannot take.
 */
export function boundWhere(ws: WirestreamSchema, route: SubscriptionRoute, bound: readonly BoundFilter[]): { readonly node: WhereNode } | { readonly error: string } {
  const type = payloadTypeOf(ws, route);
  const items: WhereNode[] = [];
  for (const { rule, values } of bound) {
    if (rule.fieldName !== undefined && rule.fieldName !== route.fieldName) continue;
    const target = pathTarget(rule.path, route, type);
    if (target === undefined) continue;
    if (values === undefined) {
      return { error: `Field ${route.fieldName} is limited by the filter rule ${rule.text} (${FILTER_RULES_SETTING}), but your token has no "${rule.claim}" claim: connect with a token that carries it.` };
    }
    const node = target(values);
    if (node === undefined) {
      return { error: `Field ${route.fieldName} is limited by the filter rule ${rule.text} (${FILTER_RULES_SETTING}), but your token's "${rule.claim}" claim holds ${preview(values)}, which ${rule.path.join('.')} cannot equal: ask for a token with a valid value.` };
    }
    items.push(node);
  }
  return { node: and(items) };
}

type Target = (values: readonly Leaf[]) => WhereNode | undefined;

/** How a rule's path filters `route`'s payloads: a builder of the node from the claim's values; undefined when the path does not apply. */
function pathTarget(path: readonly string[], route: SubscriptionRoute, type: GraphQLObjectType | undefined): Target | undefined {
  if (path[0] === KEY_FILTER) return (values) => env('key', inList('key', values.map(String), true));
  if (path[0] === HEADERS_FILTER) {
    const header = (route.headers ?? []).find((name) => name === path[1] || headerFieldName(name) === path[1]);
    return header === undefined ? undefined : (values) => env('h', inList(header, values.map(String), true));
  }
  return type === undefined ? undefined : fieldTarget(path, 0, type);
}

function fieldTarget(path: readonly string[], at: number, type: GraphQLObjectType): Target | undefined {
  const name = path[at] as string;
  const field = type.getFields()[name];
  const shape = field === undefined ? undefined : filterableShape(name, field.type);
  if (shape === undefined) return undefined;
  const last = at === path.length - 1;
  if (isObjectType(shape.named)) {
    if (last) return undefined;
    const inner = fieldTarget(path, at + 1, shape.named);
    if (inner === undefined) return undefined;
    return (values) => {
      const item = inner(values);
      if (item === undefined) return undefined;
      return shape.list ? (item.k === 'false' ? FALSE : { k: 'list', field: name, q: 'some', leaf: false, item }) : obj(name, item);
    };
  }
  if (!last) return undefined;
  const leaf = shape.named;
  return (values) => {
    const coerced = values.map((value) => coerce(value, leaf));
    if (coerced.some((value) => value === undefined)) return undefined;
    const text = leaf.name === 'ID';
    if (!shape.list) return inList(name, coerced as Leaf[], text);
    const item = inList(ELEMENT, coerced as Leaf[], text);
    return item.k === 'false' ? FALSE : { k: 'list', field: name, q: 'some', leaf: true, item };
  };
}

/** A claim value as the leaf type compares it; undefined when it cannot be one. */
function coerce(value: Leaf, leaf: GraphQLNamedType): Leaf | undefined {
  switch (leaf.name) {
    case 'ID':
      return typeof value === 'boolean' ? undefined : String(value);
    case 'String':
      return typeof value === 'boolean' ? undefined : String(value);
    case 'Int':
    case 'Float': {
      const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof number !== 'number' || !Number.isFinite(number) || (leaf.name === 'Int' && !Number.isInteger(number))) return undefined;
      return number;
    }
    case 'Boolean':
      return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : undefined;
    default:
      if (isEnumType(leaf)) return typeof value === 'string' && leaf.getValue(value) !== undefined ? value : undefined;
      return isScalarType(leaf) ? value : undefined;
  }
}

function payloadTypeOf(ws: WirestreamSchema, route: SubscriptionRoute): GraphQLObjectType | undefined {
  const type = getNullableType(ws.schema.getSubscriptionType()?.getFields()[route.fieldName]?.type);
  return isObjectType(type) ? type : undefined;
}

function preview(values: readonly Leaf[]): string {
  const text = JSON.stringify(values.length === 1 ? values[0] : values);
  return text.length <= 64 ? text : `${text.slice(0, 63)}…`;
}
