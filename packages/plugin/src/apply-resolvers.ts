/**
 * A plugin's resolvers merged onto the SDL's executable schema, in place, by graphql-tools'
 * `addResolversToSchema` (the shape every GraphQL server user knows). A field given a resolver is
 * then rendered by `execute` for the operations that select it; every other operation keeps the
 * gateway's projector. A type or field the schema does not have stops the start.
 */
import { addResolversToSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { PluginConfigError } from './validate-plugin.js';
import type { PluginResolvers } from './types.js';

export function applyPluginResolvers(schema: GraphQLSchema, resolvers: PluginResolvers, source: string): void {
  try {
    addResolversToSchema({
      schema,
      resolvers,
      updateResolversInPlace: true,
      resolverValidationOptions: { requireResolversToMatchSchema: 'error' },
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new PluginConfigError(`${source}: resolvers do not match the schema: ${message.split('\n')[0] ?? message}`);
  }
}
