/**
 * A federation subgraph as a look-up source: one POST of `_entities(representations:)` per batch
 * (the query Apollo's and Cosmo's routers send to resolve an entity), over Node's fetch.
 */
import { isObjectType, type GraphQLSchema } from 'graphql';
import { entitySelection } from './entity-selection.js';
import { createHttpClient, type SourceTls } from './http-client.js';
import { createRequestLimit } from './request-limit.js';
import { LookupError, type EntityResult, type EntitySource, type Representation, type RequestOutcome } from './types.js';

export interface SubgraphSourceOptions {
  readonly name: string;
  /** The subgraph's GraphQL endpoint (http or https). */
  readonly url: string;
  /** The gateway's schema: the entity types' fields it fetches come from there. */
  readonly schema: GraphQLSchema;
  /** Entity types looked up from this source (`@lookup` fields' types). */
  readonly entityTypes: readonly string[];
  /** One request's longest wait before its look-ups fail. @default 2_000 (2 s) */
  readonly timeoutMs?: number;
  /** Requests in flight at once; more wait their turn. @default 8 */
  readonly maxConcurrentRequests?: number;
  /** Sent with every request (e.g. `authorization: Bearer …`); a caller's headers are added per request. @default {} */
  readonly headers?: Readonly<Record<string, string>>;
  /** CA bundle, client certificate and key (mTLS), servername: an https URL only. @default undefined (Node's roots) */
  readonly tls?: SourceTls | undefined;
}

interface GraphQLResponse {
  readonly data?: { readonly _entities?: readonly (Record<string, unknown> | null)[] | null } | null;
  readonly errors?: readonly { readonly message?: unknown; readonly path?: readonly unknown[] }[];
}

export function createSubgraphSource(options: SubgraphSourceOptions): EntitySource {
  const { name, url, schema, entityTypes, timeoutMs = 2_000, maxConcurrentRequests = 8, headers = {}, tls } = options;
  const fragments = entityTypes.map((typeName) => {
    const type = schema.getType(typeName);
    if (!isObjectType(type)) throw new TypeError(`look-up source "${name}": ${typeName} is not an object type of the schema`);
    return `... on ${typeName} ${entitySelection(type)}`;
  });
  // Built once: every request of this source sends the same text (a subgraph may cache its parse).
  const query = `query WirestreamEntities($representations: [_Any!]!) { _entities(representations: $representations) { __typename ${fragments.join(' ')} } }`;
  const limit = createRequestLimit(maxConcurrentRequests);
  const client = createHttpClient({ source: name, url: url, timeoutMs, maxSockets: maxConcurrentRequests, tls });
  const requestHeaders = { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers };

  async function post(representations: readonly Representation[], callerHeaders: Readonly<Record<string, string>> | undefined, outcome: RequestOutcome | undefined): Promise<readonly EntityResult[]> {
    const init = { method: 'POST' as const, headers: callerHeaders === undefined ? requestHeaders : { ...requestHeaders, ...callerHeaders }, body: JSON.stringify({ query, variables: { representations } }) };
    const { status, body } = (await client.request(url, init)) as { status: number; body: GraphQLResponse | null };
    if (outcome !== undefined) outcome.status = status;
    const entities: unknown = body?.data?._entities;
    if (!Array.isArray(entities) || entities.length !== representations.length) {
      const first = body?.errors?.[0]?.message;
      throw new LookupError(`look-up source "${name}" answered HTTP ${status} without entities${typeof first === 'string' ? `: ${first}` : ''}`);
    }
    const answered = entities as readonly (Readonly<Record<string, unknown>> | null)[];
    return answered.map((entity, i): EntityResult => (entity === null ? (errorAt(name, body?.errors, i) ?? null) : entity));
  }

  return { name, fetchEntities: (representations, callerHeaders, outcome) => limit(() => post(representations, callerHeaders, outcome)) };
}

/** The subgraph's error for entity `i` (its path is `["_entities", i, …]`), if it reported one. */
function errorAt(name: string, errors: GraphQLResponse['errors'], i: number): LookupError | undefined {
  const error = errors?.find((e) => e.path?.[0] === '_entities' && e.path[1] === i);
  return error === undefined ? undefined : new LookupError(`look-up source "${name}": ${String(error.message)}`);
}
