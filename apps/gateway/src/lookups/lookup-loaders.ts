/**
 * The loaders of the SDL's look-up sources (decision 0042): one batched, cached loader per source
 * (@wirestream/lookups, imported by main.ts only for a schema with look-ups); attach-lookups.ts
 * puts them behind the `@lookup` fields.
 */
import { createEntityLoader, createHttpJsonSource, createSubgraphSource, type EntityLoader, type EntitySource, type RequestHeaders, type SourceTls } from '@wirestream/lookups';
import { HEADERS_SETTING, TLS_SETTINGS } from './lookup-settings.js';
import type { LookupBinding, WirestreamSchema } from '@wirestream/schema';
import type { LookupObservers } from './lookup-metrics.js';
import type { LookupTracers } from './lookup-tracing.js';

/** GATEWAY_LOOKUP_*: where each source is and how it is asked. */
export interface LookupSettings {
  /** Source name → subgraph URL (GATEWAY_LOOKUP_SOURCES). */
  readonly sources: ReadonlyMap<string, string>;
  /** Source name → HTTP/JSON URL template (GATEWAY_LOOKUP_HTTP_SOURCES, http-json-source.ts). @default none */
  readonly httpSources?: ReadonlyMap<string, string>;
  readonly timeoutMs: number;
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
  readonly maxBatchSize: number;
  readonly maxConcurrentRequests: number;
  /** Source name → its request headers, `{claims.<name>}` templated (GATEWAY_LOOKUP_HEADERS, parseLookupHeaders). @default none */
  readonly headers?: ReadonlyMap<string, RequestHeaders>;
  /** Source name → its TLS options, PEM text (GATEWAY_LOOKUP_TLS_*, readLookupTls). @default none */
  readonly tls?: ReadonlyMap<string, SourceTls>;
}

/** The setting that names the sources, for errors. */
const SOURCES_SETTING = 'GATEWAY_LOOKUP_SOURCES';
const HTTP_SOURCES_SETTING = 'GATEWAY_LOOKUP_HTTP_SOURCES';

/** One loader per source the schema's `@lookup` fields name; a source the settings lack stops the start. */
/** How the loaders are built besides the settings: the source per name (default a subgraph), the metrics. */
export interface LookupLoaderDeps {
  readonly makeSource?: (name: string, url: string, entityTypes: readonly string[], headers: Readonly<Record<string, string>>, tls: SourceTls | undefined) => EntitySource;
  /** Per-source observers (`createLookupMetrics`). @default undefined (no metrics) */
  readonly observers?: LookupObservers | undefined;
  /** Per-source request spans (`createLookupTracers`). @default undefined (no spans) */
  readonly tracers?: LookupTracers | undefined;
}

export function createLookupLoaders(ws: WirestreamSchema, settings: LookupSettings, deps: LookupLoaderDeps = {}): Map<string, EntityLoader> {
  const { makeSource = subgraphSource(ws, settings), observers, tracers } = deps;
  const bindingsBySource = new Map<string, LookupBinding[]>();
  for (const binding of ws.lookups) bindingsBySource.set(binding.source, [...(bindingsBySource.get(binding.source) ?? []), binding]);
  const unused = (setting: string, names: Iterable<string>): void => {
    for (const name of names) if (!bindingsBySource.has(name)) throw new Error(`${setting}: no @lookup of the schema uses source "${name}" (sources: ${[...bindingsBySource.keys()].join(', ')})`);
  };
  unused(HEADERS_SETTING, settings.headers?.keys() ?? []);
  unused(TLS_SETTINGS, settings.tls?.keys() ?? []);
  const loaders = new Map<string, EntityLoader>();
  for (const [name, bindings] of bindingsBySource) {
    const requestHeaders = settings.headers?.get(name);
    const fixed = requestHeaders?.fixed ?? {};
    const tls = settings.tls?.get(name);
    const types = [...new Set(bindings.map((b) => b.entityType))];
    const url = settings.sources.get(name);
    const httpUrl = settings.httpSources?.get(name);
    if (url !== undefined && httpUrl !== undefined) throw new Error(`${SOURCES_SETTING} and ${HTTP_SOURCES_SETTING} both name source "${name}": keep one`);
    const sourceUrl = httpUrl === undefined ? url : httpForm(httpUrl).url;
    if (tls !== undefined && sourceUrl !== undefined && !sourceUrl.startsWith('https:')) throw new Error(`${TLS_SETTINGS}: source "${name}" has TLS options but its URL is not https (${sourceUrl.split('://')[0]}://…)`);
    let source: EntitySource;
    if (httpUrl !== undefined) source = httpJsonSource(name, httpUrl, bindings, settings, fixed, tls);
    else if (url !== undefined) source = makeSource(name, url, types, fixed, tls);
    else throw new Error(`${SOURCES_SETTING}: the schema looks up ${types.join(', ')} from source "${name}", which it does not name: add ${name}=<subgraph URL> (or to ${HTTP_SOURCES_SETTING}: ${name}=<URL with {keys}> or ${name}=POST <URL> <JSON body with {keys}>)`);
    loaders.set(name, createEntityLoader(source, { ttlMs: settings.cacheTtlMs, maxEntries: settings.cacheMaxEntries, maxBatchSize: settings.maxBatchSize, observer: observers?.(name), requestHeaders, tracer: tracers?.(name) }));
  }
  return loaders;
}

/** An HTTP/JSON source: its entities have one key field, the same for every field that looks them up. */
function httpJsonSource(name: string, url: string, bindings: readonly LookupBinding[], settings: LookupSettings, headers: Readonly<Record<string, string>>, tls: SourceTls | undefined): EntitySource {
  const keyFields = new Set(bindings.flatMap((b) => (b.key.length === 1 ? [b.key[0]?.field] : [undefined])));
  const [keyField] = keyFields;
  if (keyFields.size !== 1 || keyField === undefined) {
    throw new Error(`${HTTP_SOURCES_SETTING}: source "${name}" takes entities with one key field, the same in every @lookup (${bindings.map((b) => `${b.typeName}.${b.fieldName}`).join(', ')})`);
  }
  try {
    return createHttpJsonSource({ name, ...httpForm(url), keyField, headers, tls, timeoutMs: settings.timeoutMs, maxConcurrentRequests: settings.maxConcurrentRequests });
  } catch (err) {
    throw new Error(`${HTTP_SOURCES_SETTING}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * A GATEWAY_LOOKUP_HTTP_SOURCES value: `<URL with {keys}>` (GET) or `POST <URL> [<JSON body with {keys}>]`
 * (the body defaults to `{"keys":{keys}}`).
 */
function httpForm(value: string): { readonly url: string; readonly method: 'GET' | 'POST'; readonly body?: string } {
  if (!value.startsWith('POST ')) return { url: value, method: 'GET' };
  const rest = value.slice(5).trim();
  const space = rest.search(/\s/);
  return space < 0 ? { url: rest, method: 'POST' } : { url: rest.slice(0, space), method: 'POST', body: rest.slice(space + 1).trim() };
}

function subgraphSource(ws: WirestreamSchema, settings: LookupSettings) {
  return (name: string, url: string, entityTypes: readonly string[], headers: Readonly<Record<string, string>>, tls: SourceTls | undefined): EntitySource =>
    createSubgraphSource({ name, url, schema: ws.schema, entityTypes, headers, tls, timeoutMs: settings.timeoutMs, maxConcurrentRequests: settings.maxConcurrentRequests });
}
