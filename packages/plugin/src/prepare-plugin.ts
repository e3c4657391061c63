/**
 * A checked plugin made ready for a synchronous `createGateway`: when it has `resolvers`,
 * graphql-tools is imported now (about 1.2 MB of heap, so only when a plugin has resolvers:
 * decision 0031) and the merge is bound, to run on the gateway's schema.
 */
import type { GraphQLSchema } from 'graphql';
import type { GatewayPlugin } from './types.js';

/** A plugin whose resolvers can be merged synchronously (`applyResolvers`), as `createGateway` needs. */
export interface PreparedPlugin extends GatewayPlugin {
  /** Merges `resolvers` onto the schema in place; absent when the plugin has none. */
  readonly applyResolvers?: (schema: GraphQLSchema) => void;
}

export async function preparePlugin(plugin: GatewayPlugin, source: string): Promise<PreparedPlugin> {
  const { resolvers } = plugin;
  if (resolvers === undefined) return plugin;
  const { applyPluginResolvers } = await import('./apply-resolvers.js');
  return Object.freeze({ ...plugin, applyResolvers: (schema: GraphQLSchema) => applyPluginResolvers(schema, resolvers, source) });
}
