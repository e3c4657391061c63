import {
  getNullableType,
  isNonNullType,
  isEnumType,
  isListType,
  isObjectType,
  isScalarType,
  type FieldDefinitionNode,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import type { SchemaProblem } from './errors.js';
import { problemAt } from './schema-problems.js';
import { headerFieldName, type SubscriptionRoute } from './topic-bindings.js';

/**
 * The `where` argument every routed Subscription field gets (issue #16, docs/schema.md): one input
 * type per payload object type (`<Type>Where`), one comparison input per leaf type
 * (`<Scalar>Comparison`), and `and`, `or`, `not` at every level. Generated from the built schema,
 * so the gateway and the console see the same argument.
 */

/** The argument's name on each Subscription field. */
export const WHERE_ARGUMENT = 'where';
/** The combinators of every `<Type>Where` input; payload fields of these names are not filterable. */
export const WHERE_COMBINATORS: readonly string[] = ['and', 'or', 'not'];
/**
 * The Kafka key of the event (a `StringComparison`), on the `<Type>Where` of every payload type
 * (decision 0025). A leading `_` cannot come out of the snake_case key styles, and a payload field
 * so named is not filterable.
 */
export const KEY_FILTER = '_key';
/** The Kafka headers a topic copies (`@topic(headers:)`), as `_headers: { <header>: StringComparison }`. */
export const HEADERS_FILTER = '_headers';
/** Names of a `<Type>Where` that are not payload fields. */
const RESERVED_FILTERS: readonly string[] = [...WHERE_COMBINATORS, KEY_FILTER, HEADERS_FILTER];
/**
 * Operators of a list field (Prisma's, decision 0025): `some`/`every`/`none` take the element's
 * filter (`<Type>Where` or `<Leaf>Comparison`), `has` a leaf list's value, `isEmpty` and `exists` a Boolean.
 */
export const LIST_OPERATORS: readonly string[] = ['some', 'every', 'none', 'has', 'isEmpty', 'exists'];
/**
 * Comparisons of ordered leaves (String, Int, Float, ID, and the numeric scalars `from-registry`
 * declares: Double, Long): `gt`… compare numbers as numbers, strings (and IDs) as text. A value of
 * another kind than the filter's ("NaN" in a Double, a Long past 2^53) does not match an order.
 */
export const ORDERED_OPERATORS: readonly string[] = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'exists'];
/** Comparisons of every other leaf (Boolean, enums, custom scalars). */
export const EQUALITY_OPERATORS: readonly string[] = ['eq', 'ne', 'in', 'nin', 'exists'];
const ORDERED_LEAVES = new Set(['String', 'Int', 'Float', 'ID', 'Double', 'Long']);

/** The input type of a `where` on payloads of `typeName`. */
export function whereInputName(typeName: string): string {
  return `${typeName}Where`;
}

/** The comparison input of a leaf (scalar or enum) type. */
export function comparisonInputName(leafName: string): string {
  return `${leafName}Comparison`;
}

/** The input of a list field whose elements are of `elementName`: `<Leaf>ListComparison` or `<Type>ListWhere`. */
export function listInputName(elementName: string, object: boolean): string {
  return object ? `${elementName}ListWhere` : `${elementName}ListComparison`;
}

/** The input of `_headers` on a payload type's `<Type>Where`. */
export function headersInputName(typeName: string): string {
  return `${typeName}Headers`;
}

/** Whether `where` can filter on this payload field (not a list, not an abstract type, not a combinator or inherited name). */
export function isFilterableField(name: string, type: GraphQLNamedType, list: boolean): boolean {
  if (list || RESERVED_FILTERS.includes(name) || name in Object.prototype) return false;
  return isObjectType(type) || isScalarType(type) || isEnumType(type);
}

/** How `where` filters a payload field: an object, a leaf, or a list (of one level) of either. */
export interface FilterableShape {
  readonly named: GraphQLObjectType | GraphQLNamedType;
  readonly object: boolean;
  readonly list: boolean;
}

/** The shape of a payload field `where` can filter on; undefined when it cannot (a list of lists, an abstract type, a reserved name). */
export function filterableShape(name: string, type: GraphQLOutputType): FilterableShape | undefined {
  const nullable = getNullableType(type);
  const list = isListType(nullable);
  const inner = list ? (isNonNullType(nullable.ofType) ? nullable.ofType.ofType : nullable.ofType) : nullable;
  if (isListType(inner) || !isFilterableField(name, inner as GraphQLNamedType, false)) return undefined;
  return { named: inner as GraphQLNamedType, object: isObjectType(inner), list };
}

/** The SDL of the generated inputs and the user's text with `where:` added to each field that takes it. */
export interface WhereAdditions {
  /** The input types, one per line block; empty when no field takes a `where`. */
  readonly inputsSdl: string;
  /** `sdl` with `where: <Type>Where` inserted into the argument list of each routed field (on the same line: line numbers keep). */
  readonly sdl: string;
}

/**
 * Generates the `where` inputs for the routes' payload types. A field that already declares an
 * argument named `where` keeps its own (it filters by equality, like every argument). A type of the
 * user's own named like a generated input is a problem: rename it.
 */
export function whereAdditions(schema: GraphQLSchema, routes: ReadonlyMap<string, SubscriptionRoute>, sdl: string, problems: SchemaProblem[]): WhereAdditions {
  const subscriptionType = schema.getSubscriptionType();
  if (!subscriptionType) return { inputsSdl: '', sdl };
  const inputs = new Map<string, string>();
  const insertions: { readonly at: number; readonly text: string }[] = [];
  const roots = payloadRoots(schema, routes);
  for (const route of routes.values()) {
    const field = subscriptionType.getFields()[route.fieldName];
    const node: FieldDefinitionNode | undefined | null = field?.astNode;
    if (!field || !node?.loc || route.filterArgs.includes(WHERE_ARGUMENT)) continue;
    const payloadType = getNullableType(field.type);
    if (!isObjectType(payloadType)) continue;
    const inputName = whereInputName(payloadType.name);
    addWhereInput(schema, payloadType, inputs, problems, roots);
    const lastArgument = node.arguments?.[node.arguments.length - 1];
    if (lastArgument?.loc) insertions.push({ at: lastArgument.loc.end, text: `, ${WHERE_ARGUMENT}: ${inputName}` });
    else if (node.name.loc) insertions.push({ at: node.name.loc.end, text: `(${WHERE_ARGUMENT}: ${inputName})` });
  }
  let text = sdl;
  for (const insertion of insertions.sort((a, b) => b.at - a.at)) text = text.slice(0, insertion.at) + insertion.text + text.slice(insertion.at);
  return { inputsSdl: [...inputs.values()].filter((input) => input !== '').join('\n\n'), sdl: text };
}

/** Payload types of the routes, each with the headers of the topics it is the payload of (a type may be the payload of several). */
function payloadRoots(schema: GraphQLSchema, routes: ReadonlyMap<string, SubscriptionRoute>): ReadonlyMap<string, ReadonlySet<string>> {
  const roots = new Map<string, Set<string>>();
  for (const route of routes.values()) {
    const type = getNullableType(schema.getSubscriptionType()?.getFields()[route.fieldName]?.type);
    if (!isObjectType(type)) continue;
    let headers = roots.get(type.name);
    if (headers === undefined) roots.set(type.name, (headers = new Set()));
    for (const header of route.headers ?? []) headers.add(header);
  }
  return roots;
}

function addWhereInput(schema: GraphQLSchema, type: GraphQLObjectType, inputs: Map<string, string>, problems: SchemaProblem[], roots: ReadonlyMap<string, ReadonlySet<string>>): void {
  const name = whereInputName(type.name);
  if (inputs.has(name) || !reserve(schema, name, inputs, problems)) return;
  inputs.set(name, ''); // reserved before recursing: a type may contain itself
  const lines: string[] = [];
  for (const field of Object.values(type.getFields())) {
    const shape = filterableShape(field.name, field.type);
    if (shape === undefined) continue;
    const { named } = shape;
    if (isObjectType(named)) addWhereInput(schema, named, inputs, problems, roots);
    else addComparison(schema, named.name, inputs, problems);
    if (shape.list) {
      addListInput(schema, named.name, shape.object, inputs, problems);
      lines.push(`  ${field.name}: ${listInputName(named.name, shape.object)}`);
    } else lines.push(`  ${field.name}: ${shape.object ? whereInputName(named.name) : comparisonInputName(named.name)}`);
  }
  const headers = roots.get(type.name);
  if (headers !== undefined) {
    addComparison(schema, 'String', inputs, problems);
    lines.push(`  "The event's Kafka key (Wirestream, docs/schema.md)."\n  ${KEY_FILTER}: ${comparisonInputName('String')}`);
    if (headers.size > 0) {
      addHeadersInput(schema, type.name, headers, inputs, problems);
      lines.push(`  "The event's Kafka headers that @topic(headers:) copies (Wirestream, docs/schema.md)."\n  ${HEADERS_FILTER}: ${headersInputName(type.name)}`);
    }
  }
  lines.push(`  "Every filter in the list matches."\n  and: [${name}!]`, `  "At least one filter in the list matches."\n  or: [${name}!]`, `  "The filter does not match."\n  not: ${name}`);
  inputs.set(name, `"Filters ${type.name} events (Wirestream, docs/schema.md): every field given must match."\ninput ${name} {\n${lines.join('\n')}\n}`);
}

/** `<Leaf>ListComparison` or `<Type>ListWhere`: some/every/none of the element's filter, has (leaves), isEmpty, exists. */
function addListInput(schema: GraphQLSchema, element: string, object: boolean, inputs: Map<string, string>, problems: SchemaProblem[]): void {
  const name = listInputName(element, object);
  if (inputs.has(name) || !reserve(schema, name, inputs, problems)) return;
  const filter = object ? whereInputName(element) : comparisonInputName(element);
  const lines = [
    `  "At least one element matches."\n  some: ${filter}`,
    `  "Every element matches (true for an empty list)."\n  every: ${filter}`,
    `  "No element matches (true for an empty list)."\n  none: ${filter}`,
    ...(object ? [] : [`  "The list holds this value (some: { eq: … })."\n  has: ${element}`]),
    '  "true: the list is empty; false: it holds at least one element."\n  isEmpty: Boolean',
    '  "true: the list is present (not null); false: it is absent or null."\n  exists: Boolean',
  ];
  inputs.set(name, `"Filters a list of ${element} (Wirestream, docs/schema.md): on an absent or null list every operator but exists: false is false."\ninput ${name} {\n${lines.join('\n')}\n}`);
}

/** `<Type>Headers`: one `StringComparison` per header the type's topics copy, named by {@link headerFieldName}. */
function addHeadersInput(schema: GraphQLSchema, typeName: string, headers: ReadonlySet<string>, inputs: Map<string, string>, problems: SchemaProblem[]): void {
  const name = headersInputName(typeName);
  if (inputs.has(name) || !reserve(schema, name, inputs, problems)) return;
  const fields = [...new Map([...headers].map((header) => [headerFieldName(header), header])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = fields.map(([field, header]) => `  ${JSON.stringify(`Kafka header ${header}.`)}\n  ${field}: ${comparisonInputName('String')}`);
  inputs.set(name, `"The Kafka headers of a ${typeName} event (Wirestream, docs/schema.md); a header the record does not carry is absent."\ninput ${name} {\n${lines.join('\n')}\n}`);
}

function addComparison(schema: GraphQLSchema, leaf: string, inputs: Map<string, string>, problems: SchemaProblem[]): void {
  const name = comparisonInputName(leaf);
  if (inputs.has(name) || !reserve(schema, name, inputs, problems)) return;
  const operators = ORDERED_LEAVES.has(leaf) ? ORDERED_OPERATORS : EQUALITY_OPERATORS;
  const lines = operators.map((op) => `  ${op}: ${op === 'exists' ? 'Boolean' : op === 'in' || op === 'nin' ? `[${leaf}!]` : leaf}`);
  inputs.set(name, `"Compares a ${leaf} payload field (Wirestream, docs/schema.md); several operators must all match."\ninput ${name} {\n${lines.join('\n')}\n}`);
}

/** A generated name must be free: a type of the user's own so named is reported (once). */
function reserve(schema: GraphQLSchema, name: string, inputs: Map<string, string>, problems: SchemaProblem[]): boolean {
  const own = schema.getType(name);
  if (own === undefined) return true;
  inputs.set(name, '');
  problems.push(
    problemAt(
      own.astNode ?? undefined,
      name,
      `${name} is a name Wirestream gives the input of the generated \`where\` argument (docs/schema.md): rename this type`,
    ),
  );
  return false;
}
