/**
 * A plain HTTP/JSON service as a look-up source, for services that are not GraphQL, in one of two
 * batched forms:
 *
 * - **GET**, every key in the URL, e.g. `http://profiles:8080/profiles?ids={keys}#items`: `{keys}`
 *   is replaced by the batch's key values, URL-encoded and comma-separated;
 * - **POST**, the keys in a JSON body, e.g. URL `http://profiles:8080/profiles/batch#data.items` and
 *   body `{"ids":{keys}}`: `{keys}` in the body template is replaced by the JSON array of the key
 *   values as the event has them (strings stay strings, numbers numbers).
 *
 * In both, the URL's fragment (never sent) is the dot-separated path to the array of entities in the
 * answer (none: the answer is the array), and each entity is matched to its key by its `keyField`
 * (the entity key's one field, e.g. `id`, compared as text); a key without an entity is `null`.
 */
import { createHttpClient, type HttpRequest, type SourceTls } from './http-client.js';
import { createRequestLimit } from './request-limit.js';
import { LookupError, type EntityResult, type EntitySource, type Representation, type RequestOutcome } from './types.js';

export interface HttpJsonSourceOptions {
  readonly name: string;
  /** The URL (GET: a template with `{keys}` in it), an optional `#path.to.array`. */
  readonly url: string;
  /** The entity field holding the key (the representation's one key field). */
  readonly keyField: string;
  /** GET (keys in the URL) or POST (keys in the JSON body). @default 'GET' */
  readonly method?: 'GET' | 'POST';
  /** POST only: the JSON body with `{keys}` where the array of keys goes, e.g. `{"ids":{keys}}`. @default '{"keys":{keys}}' */
  readonly body?: string;
  /** @default 2_000 (2 s) */
  readonly timeoutMs?: number;
  /** @default 8 */
  readonly maxConcurrentRequests?: number;
  /** Sent with every request; a caller's headers are added per request. @default {} */
  readonly headers?: Readonly<Record<string, string>>;
  /** CA bundle, client certificate and key (mTLS), servername: an https URL only. @default undefined (Node's roots) */
  readonly tls?: SourceTls | undefined;
}

const KEYS = '{keys}';

export function createHttpJsonSource(options: HttpJsonSourceOptions): EntitySource {
  const { name, keyField, method = 'GET', body = '{"keys":{keys}}', timeoutMs = 2_000, maxConcurrentRequests = 8, headers = {}, tls } = options;
  const hash = options.url.indexOf('#');
  const template = hash < 0 ? options.url : options.url.slice(0, hash);
  const path = hash < 0 ? [] : options.url.slice(hash + 1).split('.').filter((p) => p !== '');
  if (method === 'GET' && !template.includes(KEYS)) throw new TypeError(`look-up source "${name}": its URL must hold {keys} where the keys go, got ${template}`);
  if (method === 'POST') checkBodyTemplate(name, body);
  const limit = createRequestLimit(maxConcurrentRequests);
  const client = createHttpClient({ source: name, url: template, timeoutMs, maxSockets: maxConcurrentRequests, tls });
  const base = method === 'GET' ? { accept: 'application/json', ...headers } : { accept: 'application/json', 'content-type': 'application/json', ...headers };
  // Split once: the POST body is the parts around {keys} joined by the batch's JSON array.
  const [bodyHead, bodyTail] = [body.slice(0, body.indexOf(KEYS)), body.slice(body.indexOf(KEYS) + KEYS.length)];

  function requestOf(representations: readonly Representation[], callerHeaders: Readonly<Record<string, string>> | undefined): [string, HttpRequest] {
    const requestHeaders = callerHeaders === undefined ? base : { ...base, ...callerHeaders };
    if (method === 'POST') return [template, { method, headers: requestHeaders, body: bodyHead + JSON.stringify(representations.map((r) => r[keyField])) + bodyTail }];
    const keys = representations.map((r) => encodeURIComponent(String(r[keyField])));
    return [template.replace(KEYS, keys.join(',')), { method, headers: requestHeaders }];
  }

  async function fetchBatch(representations: readonly Representation[], callerHeaders: Readonly<Record<string, string>> | undefined, outcome: RequestOutcome | undefined): Promise<readonly EntityResult[]> {
    const [url, init] = requestOf(representations, callerHeaders);
    const { status, body: answer } = await client.request(url, init);
    if (outcome !== undefined) outcome.status = status;
    if (status >= 400) throw new LookupError(`look-up source "${name}" answered HTTP ${status}`);
    let found: unknown = answer;
    for (const step of path) found = typeof found === 'object' && found !== null ? (found as Record<string, unknown>)[step] : undefined;
    if (!Array.isArray(found)) throw new LookupError(`look-up source "${name}" answered without an array at ${path.length > 0 ? path.join('.') : 'the top'}`);
    const byKey = new Map<string, Readonly<Record<string, unknown>>>();
    for (const entity of found as unknown[]) {
      if (typeof entity === 'object' && entity !== null) byKey.set(String((entity as Record<string, unknown>)[keyField]), entity as Readonly<Record<string, unknown>>);
    }
    return representations.map((r) => byKey.get(String(r[keyField])) ?? null);
  }

  return { name, fetchEntities: (representations, callerHeaders, outcome) => limit(() => fetchBatch(representations, callerHeaders, outcome)) };
}

/** `{keys}` exactly once, and JSON once it is replaced by an array. */
function checkBodyTemplate(name: string, body: string): void {
  const at = body.indexOf(KEYS);
  if (at < 0 || body.indexOf(KEYS, at + 1) >= 0) throw new TypeError(`look-up source "${name}": its POST body must hold {keys} once, where the array of keys goes, got ${body}`);
  try {
    JSON.parse(body.replace(KEYS, '[]'));
  } catch {
    throw new TypeError(`look-up source "${name}": its POST body is not JSON once {keys} is an array, got ${body}`);
  }
}
