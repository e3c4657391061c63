/**
 * `@lookup` fields wired to their sources (the SDL's look-ups, decision 0041): one batched, cached
 * loader per source (@wirestream/lookups), and on each looked-up field a resolver that builds the
 * entity's representation from its parent and loads it. The core sees only resolvers that return
 * promises: their order and bound are async-renders.ts's; a failed look-up is that field's error.
 */
import { GraphQLObjectType } from 'graphql';
import { createEntityLoader, createSubgraphSource, type EntityLoader, type EntitySource, type Representation } from '@wirestream/lookups';
import type { LookupBinding, WirestreamSchema } from '@wirestream/schema';
import type { LookupObservers } from './lookup-metrics.js';

/** GATEWAY_LOOKUP_*: where each source is and how it is asked. */
export interface LookupSettings {
  /** Source name → subgraph URL (GATEWAY_LOOKUP_SOURCES). */
  readonly sources: ReadonlyMap<string, string>;
  readonly timeoutMs: number;
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
  readonly maxBatchSize: number;
  readonly maxConcurrentRequests: number;
}

/** The setting that names the sources, for errors. */
const SOURCES_SETTING = 'GATEWAY_LOOKUP_SOURCES';

/** One loader per source the schema's `@lookup` fields name; a source the settings lack stops the start. */
/** How the loaders are built besides the settings: the source per name (default a subgraph), the metrics. */
export interface LookupLoaderDeps {
  readonly makeSource?: (name: string, url: string, entityTypes: readonly string[]) => EntitySource;
  /** Per-source observers (`createLookupMetrics`). @default undefined (no metrics) */
  readonly observers?: LookupObservers | undefined;
}

export function createLookupLoaders(ws: WirestreamSchema, settings: LookupSettings, deps: LookupLoaderDeps = {}): Map<string, EntityLoader> {
  const { makeSource = subgraphSource(ws, settings), observers } = deps;
  const typesBySource = new Map<string, Set<string>>();
  for (const binding of ws.lookups) {
    const types = typesBySource.get(binding.source) ?? new Set<string>();
    types.add(binding.entityType);
    typesBySource.set(binding.source, types);
  }
  const loaders = new Map<string, EntityLoader>();
  for (const [name, types] of typesBySource) {
    const url = settings.sources.get(name);
    if (url === undefined) throw new Error(`${SOURCES_SETTING}: the schema looks up ${[...types].join(', ')} from source "${name}", which it does not name: add ${name}=<subgraph URL>`);
    const source = makeSource(name, url, [...types]);
    loaders.set(name, createEntityLoader(source, { ttlMs: settings.cacheTtlMs, maxEntries: settings.cacheMaxEntries, maxBatchSize: settings.maxBatchSize, observer: observers?.(name) }));
  }
  return loaders;
}

function subgraphSource(ws: WirestreamSchema, settings: LookupSettings) {
  return (name: string, url: string, entityTypes: readonly string[]): EntitySource =>
    createSubgraphSource({ name, url, schema: ws.schema, entityTypes, timeoutMs: settings.timeoutMs, maxConcurrentRequests: settings.maxConcurrentRequests });
}

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

/** The representation from the parent's key fields (null when one is missing: nothing to look up). */
function lookupResolver(binding: LookupBinding, loader: EntityLoader) {
  const { entityType, key } = binding;
  return (parent: Readonly<Record<string, unknown>>): Promise<Readonly<Record<string, unknown>> | null> | null => {
    const representation: Record<string, unknown> = { __typename: entityType };
    for (const { field, from } of key) {
      const value = parent[from];
      if (value === undefined || value === null) return null;
      representation[field] = value;
    }
    return loader.load(representation as Representation);
  };
}
