import {
  getNullableType,
  isEnumType,
  isListType,
  isObjectType,
  isScalarType,
  type FieldDefinitionNode,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import type { SchemaProblem } from './errors.js';
import { problemAt } from './schema-problems.js';
import type { SubscriptionRoute } from './wirestream-schema.js';

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
/** Comparisons of ordered leaves (String, Int, Float, ID): `gt`… compare numbers as numbers, strings (and IDs) as text. */
export const ORDERED_OPERATORS: readonly string[] = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'exists'];
/** Comparisons of every other leaf (Boolean, enums, custom scalars). */
export const EQUALITY_OPERATORS: readonly string[] = ['eq', 'ne', 'in', 'nin', 'exists'];
const ORDERED_LEAVES = new Set(['String', 'Int', 'Float', 'ID']);

/** The input type of a `where` on payloads of `typeName`. */
export function whereInputName(typeName: string): string {
  return `${typeName}Where`;
}

/** The comparison input of a leaf (scalar or enum) type. */
export function comparisonInputName(leafName: string): string {
  return `${leafName}Comparison`;
}

/** Whether `where` can filter on this payload field (not a list, not an abstract type, not a combinator or inherited name). */
export function isFilterableField(name: string, type: GraphQLNamedType, list: boolean): boolean {
  if (list || WHERE_COMBINATORS.includes(name) || name in Object.prototype) return false;
  return isObjectType(type) || isScalarType(type) || isEnumType(type);
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
  for (const route of routes.values()) {
    const field = subscriptionType.getFields()[route.fieldName];
    const node: FieldDefinitionNode | undefined | null = field?.astNode;
    if (!field || !node?.loc || route.filterArgs.includes(WHERE_ARGUMENT)) continue;
    const payloadType = getNullableType(field.type);
    if (!isObjectType(payloadType)) continue;
    const inputName = whereInputName(payloadType.name);
    addWhereInput(schema, payloadType, inputs, problems);
    const lastArgument = node.arguments?.[node.arguments.length - 1];
    if (lastArgument?.loc) insertions.push({ at: lastArgument.loc.end, text: `, ${WHERE_ARGUMENT}: ${inputName}` });
    else if (node.name.loc) insertions.push({ at: node.name.loc.end, text: `(${WHERE_ARGUMENT}: ${inputName})` });
  }
  let text = sdl;
  for (const insertion of insertions.sort((a, b) => b.at - a.at)) text = text.slice(0, insertion.at) + insertion.text + text.slice(insertion.at);
  return { inputsSdl: [...inputs.values()].filter((input) => input !== '').join('\n\n'), sdl: text };
}

function addWhereInput(schema: GraphQLSchema, type: GraphQLObjectType, inputs: Map<string, string>, problems: SchemaProblem[]): void {
  const name = whereInputName(type.name);
  if (inputs.has(name) || !reserve(schema, name, inputs, problems)) return;
  inputs.set(name, ''); // reserved before recursing: a type may contain itself
  const lines: string[] = [];
  for (const field of Object.values(type.getFields())) {
    const nullable = getNullableType(field.type);
    const named = isListType(nullable) ? undefined : nullable;
    if (named === undefined || !isFilterableField(field.name, named, false)) continue;
    if (isObjectType(named)) {
      addWhereInput(schema, named, inputs, problems);
      lines.push(`  ${field.name}: ${whereInputName(named.name)}`);
    } else {
      addComparison(schema, named.name, inputs, problems);
      lines.push(`  ${field.name}: ${comparisonInputName(named.name)}`);
    }
  }
  lines.push(`  "Every filter in the list matches."\n  and: [${name}!]`, `  "At least one filter in the list matches."\n  or: [${name}!]`, `  "The filter does not match."\n  not: ${name}`);
  inputs.set(name, `"Filters ${type.name} events (Wirestream, docs/schema.md): every field given must match."\ninput ${name} {\n${lines.join('\n')}\n}`);
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
