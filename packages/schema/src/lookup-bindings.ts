/**
 * `@lookup`: a field the event does not carry, resolved from a service the user already runs (the
 * gateway's look-up sources, e.g. a federation subgraph's `_entities`). Declared on a field of an
 * event type (or of any object type below it):
 *
 *   seller: Seller @lookup(source: "sellers", key: "id: seller_id")
 *
 * The representation sent is `{ "__typename": "Seller", "id": <the parent's seller_id> }`: `key`
 * lists the entity's key fields, each `field` (same name in the parent) or `field: parentField`,
 * separated by spaces or commas, as federation's `@key(fields:)` names them. The field's type is the
 * entity type (an object type, nullable or not); the parent must have every key field it reads.
 */
import { getDirectiveValues, getNamedType, getNullableType, isObjectType, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import type { SchemaProblem } from './errors.js';
import { problemAt } from './schema-problems.js';

export const LOOKUP_DIRECTIVE_SDL = 'directive @lookup(source: String!, key: String!) on FIELD_DEFINITION';

/** One key field of a representation: its name there, and the parent field it is read from. */
export interface LookupKeyField {
  readonly field: string;
  readonly from: string;
}

/** A field resolved by a look-up. */
export interface LookupBinding {
  /** `Type.field` of the looked-up field. */
  readonly typeName: string;
  readonly fieldName: string;
  /** The look-up source's name (a gateway setting maps it to its URL). */
  readonly source: string;
  /** The entity's type name: the `__typename` of its representations. */
  readonly entityType: string;
  readonly key: readonly LookupKeyField[];
}

const KEY_PART = /^([_A-Za-z][_0-9A-Za-z]*)(?:\s*:\s*([_A-Za-z][_0-9A-Za-z]*))?$/;

/** Every `@lookup` of the schema, checked; problems are appended to `problems`. */
export function bindLookups(schema: GraphQLSchema, problems: SchemaProblem[]): LookupBinding[] {
  const directive = schema.getDirective('lookup');
  if (directive === undefined || directive === null) return [];
  const bindings: LookupBinding[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const node = field.astNode;
      if (!node) continue;
      const values = getDirectiveValues(directive, node) as { source: string; key: string } | undefined;
      if (values === undefined) continue;
      const binding = bindOne(type, field, values, problems);
      if (binding !== undefined) bindings.push(binding);
    }
  }
  return bindings;
}

function bindOne(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, values: { source: string; key: string }, problems: SchemaProblem[]): LookupBinding | undefined {
  const coordinate = `${parent.name}.${field.name}`;
  const fail = (message: string): undefined => void problems.push(problemAt(field.astNode ?? undefined, coordinate, message));
  const entity = getNullableType(field.type);
  if (!isObjectType(entity)) return fail(`@lookup needs an object type (the entity), but ${coordinate} is ${String(field.type)}: give it the entity's type, e.g. \`seller: Seller @lookup(…)\``);
  if (values.source.trim() === '') return fail('@lookup(source:) is empty: name a look-up source (GATEWAY_LOOKUP_SOURCES)');
  const key: LookupKeyField[] = [];
  for (const part of splitKey(values.key)) {
    const match = KEY_PART.exec(part);
    if (!match) return fail(`@lookup(key: "${values.key}"): "${part}" is not \`field\` or \`field: parentField\``);
    const name = match[1] as string;
    const from = match[2] ?? name;
    const source = parent.getFields()[from];
    if (source === undefined) return fail(`@lookup(key: "${values.key}"): ${parent.name} has no field "${from}" to read the key "${name}" from`);
    if (isObjectType(getNamedType(source.type))) return fail(`@lookup(key: "${values.key}"): ${parent.name}.${from} is an object; a key is read from a scalar field`);
    key.push({ field: name, from });
  }
  if (key.length === 0) return fail('@lookup(key:) names no field: give the entity key, e.g. key: "id: seller_id"');
  return { typeName: parent.name, fieldName: field.name, source: values.source.trim(), entityType: entity.name, key };
}

/** `"id: seller_id region"` → `["id: seller_id", "region"]`: a part is a name, optionally `: name`. */
function splitKey(key: string): string[] {
  const tokens = key.replace(/:/g, ' : ').split(/[\s,]+/).filter((t) => t !== '');
  const parts: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i + 1] === ':' && tokens[i + 2] !== undefined) {
      parts.push(`${tokens[i] as string}: ${tokens[i + 2] as string}`);
      i += 2;
    } else parts.push(tokens[i] as string);
  }
  return parts;
}
