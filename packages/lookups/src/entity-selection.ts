import { getNamedType, isLeafType, isObjectType, type GraphQLObjectType } from 'graphql';

/** Object fields below an entity that are fetched; deeper ones are not (and resolve to null). */
const MAX_DEPTH = 3;

/**
 * The selection set fetched for an entity type: every field the gateway's schema declares on it
 * (object fields to {@link MAX_DEPTH}), so that one fetch, cached, serves every operation whatever
 * it selects. Fields with arguments are left out (a representation fetch has none to give).
 */
export function entitySelection(type: GraphQLObjectType, depth = 0): string {
  const parts: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (field.args.length > 0) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named)) parts.push(field.name);
    else if (isObjectType(named) && depth < MAX_DEPTH) parts.push(`${field.name} ${entitySelection(named, depth + 1)}`);
  }
  return `{ ${parts.length > 0 ? parts.join(' ') : '__typename'} }`;
}
