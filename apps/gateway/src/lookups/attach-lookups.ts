/**
 * `@lookup` fields wired to their loaders (decision 0042): on each looked-up field a resolver that
 * builds the entity's representation from its parent and loads it. An answer the cache holds comes
 * back as it is (the render stays synchronous); one still to fetch as a promise, whose order and
 * bound are async-renders.ts's; a failed look-up is that field's error. Types only from
 * @wirestream/lookups: nothing is loaded for a schema without look-ups.
 */
import { GraphQLObjectType } from 'graphql';
import type { EntityLoader, LookupCaller, Representation } from '@wirestream/lookups';
import type { LookupBinding, WirestreamSchema } from '@wirestream/schema';

/** The setting that names the sources, for errors. */
const SOURCES_SETTING = 'GATEWAY_LOOKUP_SOURCES';

/** Sets a resolver on every `@lookup` field; every field's source must have a loader. */
export function attachLookups(ws: WirestreamSchema, loaders: ReadonlyMap<string, EntityLoader>): void {
  for (const binding of ws.lookups) {
    const loader = loaders.get(binding.source);
    if (loader === undefined) throw new Error(`${SOURCES_SETTING}: no look-up source "${binding.source}" for @lookup on ${binding.typeName}.${binding.fieldName}`);
    const type = ws.schema.getType(binding.typeName);
    const field = type instanceof GraphQLObjectType ? type.getFields()[binding.fieldName] : undefined;
    if (field === undefined) throw new Error(`@lookup on ${binding.typeName}.${binding.fieldName}: no such field in the served schema`);
    field.resolve = lookupResolver(binding, loader);
  }
}

/**
 * The representation from the parent's key fields (null when one is missing: nothing to look up),
 * loaded with the caller's headers when the source templates some from claims: the group context's
 * `claims` (in the group's dedup key), rendered once per group and remembered with it.
 */
function lookupResolver(binding: LookupBinding, loader: EntityLoader) {
  const { entityType, key } = binding;
  const headers = loader.requestHeaders !== undefined && loader.requestHeaders.claims.length > 0 ? loader.requestHeaders : undefined;
  const callers = new WeakMap<object, LookupCaller | Error>();
  return (parent: Readonly<Record<string, unknown>>, _args: unknown, context: GroupContext | undefined): ReturnType<EntityLoader['load']> => {
    const representation: Record<string, unknown> = { __typename: entityType };
    for (const { field, from } of key) {
      const value = parent[from];
      if (value === undefined || value === null) return null;
      representation[field] = value;
    }
    if (headers === undefined) return loader.load(representation as Representation);
    let caller = context === undefined ? undefined : callers.get(context);
    if (caller === undefined) {
      caller = headers.caller(context?.claims);
      if (context !== undefined) callers.set(context, caller);
    }
    return caller instanceof Error ? Promise.reject(caller) : loader.load(representation as Representation, caller);
  };
}

/** What the resolver reads of an operation group's context (core/delivery/groups.ts GroupContextBase). */
interface GroupContext {
  readonly claims?: Readonly<Record<string, unknown>>;
}
