import { createHash } from 'node:crypto';
import {
  Kind,
  OperationTypeNode,
  getArgumentValues,
  getOperationAST,
  getNullableType,
  getVariableValues,
  isObjectType,
  print,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLFormattedError,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { filterClauses, headerFieldName, keyChannels, subscriptionChannels, WHERE_ARGUMENT, type FilterClause, type SubscriptionRoute, type WirestreamSchema } from '@wirestream/schema';
import { GATEWAY_DEFAULTS } from '../../defaults.js';
import {
  checkVariablesShape,
  resolveDocumentLimits,
  type DocumentLimits,
  type VariablesLimits,
} from './document-limits.js';
import { createDocumentCache, toFormatted } from './document-cache.js';
import { compileProjector, type ProjectableOperation, type Projector } from './projector.js';
import { and, KAFKA_KEY, keyPin, normalizeWhere, pinnedKeys, TRUE, whereKey, whereLimitViolation, type KeyPin, type WhereLimits, type WhereNode } from './where.js';
import { compileWhere, type WherePredicate } from './where-compile.js';
import { boundWhere, type BoundFilter } from './where-bound.js';

/** A subscribe request as it arrives in a graphql-ws `subscribe` message payload. */
export interface OperationRequest {
  readonly query: string;
  readonly operationName?: string | null | undefined;
  readonly variables?: Record<string, unknown> | null | undefined;
}

/** A subscription ready to fan out: everything decided once, at subscribe time. */
export interface CompiledSubscription {
  readonly kind: 'subscription';
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  /** Values of the document's variables (those of moved literals included): what execute reads. */
  readonly variables: Record<string, unknown>;
  /**
   * The variables that stand for literals of the text as sent (literals.ts), not sent by the client:
   * a plugin's onSubscribe is not shown them. Absent when no literal moved.
   */
  readonly literalVariables?: readonly string[];
  readonly route: SubscriptionRoute;
  readonly filter: readonly FilterClause[];
  /** The compiled `where` argument (where.ts), shared by every operation with an equal filter; undefined: no filter. */
  readonly where: WherePredicate | undefined;
  /** Redis channels that carry every event this subscription can match. */
  readonly channels: readonly string[];
  /**
   * The routing-key values every event it matches has, as text: its key argument's, else the keys its
   * `where` pins (eq, or an `in` within GATEWAY_MAX_FILTER_IN_LIST); undefined: any key. What a
   * snapshot reads (snapshot-request.ts).
   */
  readonly snapshotKeys: readonly string[] | undefined;
  /**
   * The routing keys every event it matches has, and where they are read (its key argument's, else
   * the payload key field or the Kafka key its `where` pins); undefined: any key. The hub indexes its
   * group by them, so that an event costs a lookup, not a test of every group (decision 0039).
   */
  readonly pin: KeyPin | undefined;
  /** Subscriptions with equal keys receive byte-identical payloads and share one execution per event. */
  readonly dedupKey: string;
  /**
   * Writes the payload's `data` JSON directly, byte-identical to `execute` (see projector.ts);
   * undefined when `execute` must serve this operation (a custom resolver, an abstract type…).
   */
  readonly projector: Projector | undefined;
  /** The caller's claims the dedup key includes (AccessScope.claims): its group context shows them to resolvers. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

/** A query answered once from the schema's static data (e.g. `{ topics }`). */
export interface CompiledQuery {
  readonly kind: 'query';
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  readonly variables: Record<string, unknown>;
}

/**
 * What the caller may do, decided at `connection_init`. Operations with different `key`s never
 * share an execution, so one client's permissions never shape another's results.
 */
export interface AccessScope {
  /** Part of the dedup key (e.g. sorted scopes + tenant). */
  readonly key: string;
  /**
   * Claim values `key` includes (the authenticator's `keyClaims`, read by look-up headers): every
   * principal of this scope has them, so the operation's group context may show them to resolvers.
   */
  readonly claims?: Readonly<Record<string, unknown>>;
  /**
   * Checks the field may be used and returns the arguments to use (tenant binding may set some) and
   * the filters the caller's claims bind (where-bound.ts), ANDed with the client's `where`.
   */
  authorize(
    route: SubscriptionRoute,
    args: Readonly<Record<string, unknown>>,
  ): { readonly ok: true; readonly args: Readonly<Record<string, unknown>>; readonly bound?: readonly BoundFilter[] } | { readonly ok: false; readonly message: string };
}

/** Everyone may use everything: the scope of an anonymous-mode gateway. */
export const OPEN_ACCESS: AccessScope = Object.freeze({
  key: '',
  authorize: (_route: SubscriptionRoute, args: Readonly<Record<string, unknown>>) => ({ ok: true as const, args }),
});

export type CompileResult =
  | { readonly ok: true; readonly operation: CompiledSubscription | CompiledQuery }
  | { readonly ok: false; readonly errors: readonly GraphQLFormattedError[] };

export interface OperationCompilerOptions {
  /**
   * Distinct document texts kept parsed and validated; a subscription's root-field literals are moved
   * into variables first (literals.ts), so texts that differ only in them count once.
   * @default GATEWAY_DEFAULTS.maxCachedDocuments (1,000)
   */
  readonly maxCachedDocuments?: number;
  /**
   * Move a subscription's root-field literals into variables before the document cache (literals.ts).
   * Off: each text is its own entry (what bench/fanout's unicast-compile compares against).
   * @default true
   */
  readonly normalizeLiterals?: boolean;
  /** Parser token limit: bounds parse work before validation runs. @default GATEWAY_DEFAULTS.maxTokens (2,000) */
  readonly maxTokens?: number;
  /** Document text limit in UTF-16 code units. @default GATEWAY_DEFAULTS.maxQueryLength (16,384) */
  readonly maxQueryLength?: number;
  /** Must match ingest's channel prefix. @default GATEWAY_DEFAULTS.channelPrefix ('ws') */
  readonly channelPrefix?: string;
  /** Shape limits checked before validation (depth, aliases, fields, directives, introspection). */
  readonly documentLimits?: DocumentLimits;
  /** Bounds on the variables object of a request. */
  readonly variablesLimits?: VariablesLimits;
}

/** What operations with one projector key share: the projector (undefined: execute serves them), the document it was compiled from, the key's digest. */
interface ProjectedDocument {
  readonly projector: Projector | undefined;
  readonly document: DocumentNode;
  /** SHA-256 of the projector key, base64url: the document part of the dedup key (43 characters, whatever the document's size). */
  readonly digest: string;
}

/**
 * Parses (without locations) and validates each distinct document text once (document-cache.ts),
 * then binds variables per request.
 */
export function createOperationCompiler(ws: WirestreamSchema, options: OperationCompilerOptions = {}) {
  const {
    maxCachedDocuments = GATEWAY_DEFAULTS.maxCachedDocuments,
    maxTokens = GATEWAY_DEFAULTS.maxTokens,
    maxQueryLength = GATEWAY_DEFAULTS.maxQueryLength,
    channelPrefix = GATEWAY_DEFAULTS.channelPrefix,
    variablesLimits = {},
    normalizeLiterals: normalize = true,
  } = options;
  // Fails fast here, at start-up, on contradictory limits.
  const limits = resolveDocumentLimits(options.documentLimits);
  const documents = createDocumentCache(ws, { maxCachedDocuments, maxTokens, maxQueryLength, limits, normalizeLiterals: normalize });
  // Projectors by document, operation name and variables (what they depend on), bounded like the
  // documents: one compile per distinct operation, not per subscribe. With each, the document it was
  // compiled from and the digest of its key.
  const projectors = new Map<string, ProjectedDocument>();
  // Shared channel lists (sharedChannels): one per shard of each topic and one per topic, so bounded by the schema.
  const channelLists = new Map<string, readonly string[]>();
  const whereOf = createWhereCompiler(ws, { maxClauses: limits.maxFilterClauses, maxDepth: limits.maxFilterDepth, maxInList: limits.maxFilterInList }, maxCachedDocuments);

  function compile(request: OperationRequest, access: AccessScope = OPEN_ACCESS): CompileResult {
    const variableErrors = checkVariablesShape(request.variables, variablesLimits);
    if (variableErrors.length > 0) return { ok: false, errors: variableErrors };
    const { parsed, literals } = documents.documentOf(request.query);
    if (!parsed.document || parsed.normalized === undefined) {
      return { ok: false, errors: parsed.errors ?? [{ message: 'Invalid document.' }] };
    }
    const { document } = parsed;
    const operationName = request.operationName ?? undefined;
    const operation = getOperationAST(document, operationName);
    if (!operation) {
      return fail(
        operationName
          ? `Unknown operation named "${operationName}".`
          : 'Must provide operationName when the document contains multiple operations.',
      );
    }
    // A normalized document declares only the literals' variables: the request's own were ignored as unused before.
    const coerced = getVariableValues(ws.schema, operation.variableDefinitions ?? [], literals?.values ?? request.variables ?? {});
    if (coerced.errors) return { ok: false, errors: coerced.errors.map((e) => e.toJSON()) };
    const variables = coerced.coerced;

    if (operation.operation === OperationTypeNode.QUERY) {
      return { ok: true, operation: { kind: 'query', document, operationName, variables } };
    }
    if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
      return fail(`This endpoint serves subscriptions and queries; "${operation.operation}" is not supported.`);
    }

    const fieldNode = rootField(document, operation);
    const fieldDef = fieldNode && ws.schema.getSubscriptionType()?.getFields()[fieldNode.name.value];
    const route = fieldNode && ws.routes.get(fieldNode.name.value);
    if (!fieldNode || !fieldDef || !route) {
      return fail('Subscription must select exactly one field of the Subscription type.');
    }
    let requested: Record<string, unknown>;
    try {
      requested = getArgumentValues(fieldDef, fieldNode, variables);
    } catch (err) {
      return { ok: false, errors: [toFormatted(err)] };
    }
    const allowed = access.authorize(route, requested);
    if (!allowed.ok) return fail(allowed.message);
    const { args } = allowed;

    const filter: FilterClause[] = filterClauses(route, args);
    const bound = allowed.bound === undefined || allowed.bound.length === 0 ? { node: TRUE } : boundWhere(ws, route, allowed.bound);
    if ('error' in bound) return fail(bound.error);
    const where = whereOf(route, fieldDef.args.some((arg) => arg.name === WHERE_ARGUMENT), args, bound.node);
    if ('error' in where) return fail(where.error);
    // A filter on the routing key needs only the shards that carry that key (an argument's, else the where's).
    const channels = sharedChannels(
      route,
      where.keys !== undefined && (route.keyField === undefined || args[route.keyField] === undefined || args[route.keyField] === null)
        ? keyChannels(channelPrefix, route, where.keys)
        : subscriptionChannels(channelPrefix, route, args),
    );

    // Forced (tenant-bound) arguments change what is filtered, so the effective arguments are
    // part of the key too, next to the scope; the where filter by its normalized tree.
    const keyVariables = Object.fromEntries((parsed.keyVariables ?? []).filter((name) => name in variables).map((name) => [name, variables[name]]));
    const projectorKey = [parsed.keyText ?? parsed.normalized, operationName ?? '', canonicalJson(keyVariables)].join('\u0000');
    const { [WHERE_ARGUMENT]: _where, ...equalityArgs } = args;
    const projected = projectorFor(projectorKey, { document, operationName, variables, fieldName: route.fieldName });
    // The document part by its digest: each group holds its key, and ten thousand unicast groups would
    // otherwise hold ten thousand copies of the printed document (decision 0039).
    const dedupKey = [projected.digest, canonicalJson(route.filterArgs.includes(WHERE_ARGUMENT) ? args : equalityArgs), where.key, access.key].join('\u0000');
    // A projected operation keeps the document its projector was compiled from when it declares the
    // same variables: the two differ at most in the root field's arguments, which are applied above
    // (filter, where, channels) and which execute, used then only for an event graphql-js reports
    // errors for, does not read (the root field has the default resolver, or there would be no
    // projector). Thousands of operations that differ only in their key hold one document, not one each.
    const { projector } = projected;
    const shared = projector !== undefined && sameVariableDefinitions(projected.document, document, operationName) ? projected.document : document;
    const keyArg = route.keyField === undefined ? undefined : args[route.keyField];
    const keyed = typeof keyArg === 'string' || typeof keyArg === 'number';
    // One array of the key for both: each is read only.
    const keyList = keyed ? [String(keyArg)] : undefined;
    const snapshotKeys = keyList ?? where.pinned;
    const pin = keyList !== undefined ? { on: route.keyField ?? KAFKA_KEY, keys: keyList } : where.pin;
    return {
      ok: true,
      operation: {
        kind: 'subscription',
        document: shared,
        operationName,
        variables,
        ...(literals === undefined ? {} : { literalVariables: literals.names }),
        route,
        filter,
        where: where.predicate,
        channels,
        snapshotKeys,
        pin,
        dedupKey,
        projector,
        ...(access.claims === undefined ? {} : { claims: access.claims }),
      },
    };
  }

  /**
   * One array per channel list that many operations have: one shard's channel (each key of a unicast
   * topic lands on one of a few shards), or every shard of a topic. Ten thousand operations then hold
   * a few arrays and channel names, not ten thousand of each. Other lists (several shards of a
   * `where … in`) are each operation's own: their number is not bounded by the topics.
   */
  function sharedChannels(route: SubscriptionRoute, channels: string[]): readonly string[] {
    const [first] = channels;
    if (first === undefined || (channels.length > 1 && channels.length !== route.shards)) return channels;
    // A channel name has no NUL: the key of a topic's every shard cannot be a channel's.
    const key = channels.length === 1 ? first : `\u0000${route.topic}`;
    let shared = channelLists.get(key);
    if (shared === undefined) channelLists.set(key, (shared = Object.freeze(channels)));
    return shared;
  }

  function projectorFor(key: string, operation: ProjectableOperation): ProjectedDocument {
    let projected = projectors.get(key);
    if (projected === undefined) {
      const { projector } = compileProjector(ws.schema, operation);
      projected = { projector, document: operation.document, digest: createHash('sha256').update(key).digest('base64url') };
      projectors.set(key, projected);
      if (projectors.size > maxCachedDocuments) {
        const oldest = projectors.keys().next().value;
        if (oldest !== undefined) projectors.delete(oldest);
      }
    }
    return projected;
  }

  return {
    compile,
    /** Number of distinct document texts currently cached. */
    get cachedDocuments(): number {
      return documents.size;
    },
    /** Requests answered from the document cache, and texts parsed and validated, since start. */
    get documentCache(): { readonly hits: number; readonly misses: number } {
      return { hits: documents.hits, misses: documents.misses };
    },
  };
}

export type OperationCompiler = ReturnType<typeof createOperationCompiler>;

type WhereOutcome =
  | { readonly error: string }
  | {
      readonly key: string;
      readonly predicate: WherePredicate | undefined;
      /** Pinned keys, at most one per shard: the channels to subscribe. */
      readonly keys: readonly string[] | undefined;
      /** Every pinned key (an `in` list is bounded by GATEWAY_MAX_FILTER_IN_LIST): what a snapshot reads. */
      readonly pinned: readonly string[] | undefined;
      /** The key field's (or else the Kafka key's) pinned values: what the hub indexes the group by. */
      readonly pin: KeyPin | undefined;
    };

/**
 * The route's generated `where` (not one of the user's own arguments so named): limits, normalized
 * key, compiled predicate. Compiled filters are kept by their normalized key, bounded like the
 * documents: equal filters share one predicate.
 */
function createWhereCompiler(ws: WirestreamSchema, whereLimits: WhereLimits, maxCached: number) {
  const predicates = new Map<string, WherePredicate>();
  const headersByRoute = new Map<string, ReadonlyMap<string, string>>();
  const headersOf = (route: SubscriptionRoute): ReadonlyMap<string, string> => {
    let headers = headersByRoute.get(route.fieldName);
    if (headers === undefined) headersByRoute.set(route.fieldName, (headers = new Map((route.headers ?? []).map((header) => [headerFieldName(header), header]))));
    return headers;
  };
  /** `bound`: the caller's bound filters (where-bound.ts), ANDed after the client's own. */
  return function whereOf(route: SubscriptionRoute, generated: boolean, args: Readonly<Record<string, unknown>>, bound: WhereNode): WhereOutcome {
    const value = args[WHERE_ARGUMENT];
    const payloadType = getNullableType(ws.schema.getSubscriptionType()?.getFields()[route.fieldName]?.type);
    const own = generated && !route.filterArgs.includes(WHERE_ARGUMENT) && value !== undefined && value !== null && isObjectType(payloadType);
    if (!own && bound.k === 'true') return { key: '', predicate: undefined, keys: undefined, pinned: undefined, pin: undefined };
    if (own) {
      const violation = whereLimitViolation(value, payloadType, whereLimits);
      if (violation !== undefined) return { error: violation };
    }
    const node = and([own ? normalizeWhere(value, payloadType, { headers: headersOf(route) }) : TRUE, bound]);
    const key = whereKey(node);
    let predicate = predicates.get(key);
    if (predicate === undefined && node.k !== 'true') {
      predicate = compileWhere(node);
      if (predicate !== undefined) {
        predicates.set(key, predicate);
        if (predicates.size > maxCached) {
          const oldest = predicates.keys().next().value;
          if (oldest !== undefined) predicates.delete(oldest);
        }
      }
    }
    // At most one key per shard is worth naming: more than `shards` keys may still be every shard.
    const keys = pinnedKeys(node, route.keyField, route.shards);
    const pinned = pinnedKeys(node, route.keyField, Number.MAX_SAFE_INTEGER);
    return { key, predicate, keys, pinned, pin: keyPin(node, route.keyField) };
  };
}

/** The single root field of a subscription, looking through fragments (validation guarantees one). */
function rootField(document: DocumentNode, operation: OperationDefinitionNode): FieldNode | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  let selectionSet: SelectionSetNode | undefined = operation.selectionSet;
  for (let hops = 0; selectionSet && hops < 16; hops++) {
    const selection: SelectionSetNode['selections'][number] | undefined = selectionSet.selections[0];
    if (!selection) return undefined;
    if (selection.kind === Kind.FIELD) return selection;
    selectionSet =
      selection.kind === Kind.INLINE_FRAGMENT
        ? selection.selectionSet
        : fragments.get(selection.name.value)?.selectionSet;
  }
  return undefined;
}

/** Whether two documents' operations declare the same variables (names, types, defaults, in order). */
function sameVariableDefinitions(a: DocumentNode, b: DocumentNode, operationName: string | undefined): boolean {
  if (a === b) return true;
  const printed = (document: DocumentNode): string => (getOperationAST(document, operationName)?.variableDefinitions ?? []).map((definition) => print(definition)).join(',');
  return printed(a) === printed(b);
}

/** JSON with sorted object keys, so `{a,b}` and `{b,a}` variables dedup together. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fail(message: string): CompileResult {
  return { ok: false, errors: [{ message }] };
}
