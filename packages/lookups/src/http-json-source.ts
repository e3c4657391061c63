/**
 * A plain HTTP/JSON service as a look-up source, for services that are not GraphQL: one GET per
 * batch with every key in the URL, e.g. `http://profiles:8080/profiles?ids={keys}#items`:
 *
 * - `{keys}` is replaced by the batch's key values, URL-encoded and comma-separated;
 * - the fragment (never sent) is the dot-separated path to the array of entities in the answer
 *   (none: the answer is the array);
 * - each entity is matched to its key by its `keyField` (the entity key's one field, e.g. `id`);
 *   a key without an entity is `null`.
 */
import { createHttpClient, type SourceTls } from './http-client.js';
import { createRequestLimit } from './request-limit.js';
import { LookupError, type EntityResult, type EntitySource, type Representation } from './types.js';

export interface HttpJsonSourceOptions {
  readonly name: string;
  /** The URL template: `{keys}` somewhere in it, an optional `#path.to.array`. */
  readonly url: string;
  /** The entity field holding the key (the representation's one key field). */
  readonly keyField: string;
  /** @default 2_000 (2 s) */
  readonly timeoutMs?: number;
  /** @default 8 */
  readonly maxConcurrentRequests?: number;
  /** Sent with every request; a caller's headers are added per request. @default {} */
  readonly headers?: Readonly<Record<string, string>>;
  /** CA bundle, client certificate and key (mTLS), servername: an https URL only. @default undefined (Node's roots) */
  readonly tls?: SourceTls | undefined;
}

export function createHttpJsonSource(options: HttpJsonSourceOptions): EntitySource {
  const { name, keyField, timeoutMs = 2_000, maxConcurrentRequests = 8, headers = {}, tls } = options;
  const hash = options.url.indexOf('#');
  const template = hash < 0 ? options.url : options.url.slice(0, hash);
  const path = hash < 0 ? [] : options.url.slice(hash + 1).split('.').filter((p) => p !== '');
  if (!template.includes('{keys}')) throw new TypeError(`look-up source "${name}": its URL must hold {keys} where the keys go, got ${template}`);
  const limit = createRequestLimit(maxConcurrentRequests);
  const client = createHttpClient({ source: name, url: template, timeoutMs, maxSockets: maxConcurrentRequests, tls });
  const init = { method: 'GET' as const, headers: { accept: 'application/json', ...headers } };

  async function get(representations: readonly Representation[], callerHeaders: Readonly<Record<string, string>> | undefined): Promise<readonly EntityResult[]> {
    const keys = representations.map((r) => encodeURIComponent(String(r[keyField])));
    const { status, body } = await client.request(template.replace('{keys}', keys.join(',')), callerHeaders === undefined ? init : { ...init, headers: { ...init.headers, ...callerHeaders } });
    if (status >= 400) throw new LookupError(`look-up source "${name}" answered HTTP ${status}`);
    let found: unknown = body;
    for (const step of path) found = typeof found === 'object' && found !== null ? (found as Record<string, unknown>)[step] : undefined;
    if (!Array.isArray(found)) throw new LookupError(`look-up source "${name}" answered without an array at ${path.length > 0 ? path.join('.') : 'the top'}`);
    const byKey = new Map<string, Readonly<Record<string, unknown>>>();
    for (const entity of found as unknown[]) {
      if (typeof entity === 'object' && entity !== null) byKey.set(String((entity as Record<string, unknown>)[keyField]), entity as Readonly<Record<string, unknown>>);
    }
    return representations.map((r) => byKey.get(String(r[keyField])) ?? null);
  }

  return { name, fetchEntities: (representations, callerHeaders) => limit(() => get(representations, callerHeaders)) };
}
