import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  getArgumentValues,
  getOperationAST,
  getNullableType,
  getVariableValues,
  isObjectType,
  parse,
  print,
  validate,
  visit,
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
  checkDocumentLimits,
  checkDocumentNesting,
  checkVariablesShape,
  resolveDocumentLimits,
  type DocumentLimits,
  type VariablesLimits,
} from './document-limits.js';
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
  readonly variables: Record<string, unknown>;
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
  /** Distinct document texts kept parsed and validated. @default GATEWAY_DEFAULTS.maxCachedDocuments (1,000) */
  readonly maxCachedDocuments?: number;
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

interface ParsedDocument {
  readonly document?: DocumentNode;
  readonly errors?: readonly GraphQLFormattedError[];
  /** Normalized text (printed AST), the document part of the dedup key. */
  readonly normalized?: string;
  /**
   * The document part of the dedup key and the projector's key: the printed AST without the root
   * fields' arguments (their coerced values and the `where`'s normalized tree stand in for them) and
   * without the variables only they used.
   */
  readonly keyText?: string;
  /** Variables the document uses outside its root fields' arguments: their values are part of the dedup key. */
  readonly keyVariables?: readonly string[];
}

/**
 * Parses (without locations) and validates each distinct document text once, then binds
 * variables per request. The cache is bounded and keeps errors too, so a client repeating an
 * invalid document costs one Map lookup.
 */
export function createOperationCompiler(ws: WirestreamSchema, options: OperationCompilerOptions = {}) {
  const {
    maxCachedDocuments = GATEWAY_DEFAULTS.maxCachedDocuments,
    maxTokens = GATEWAY_DEFAULTS.maxTokens,
    maxQueryLength = GATEWAY_DEFAULTS.maxQueryLength,
    channelPrefix = GATEWAY_DEFAULTS.channelPrefix,
    variablesLimits = {},
  } = options;
  // Fails fast here, at start-up, on contradictory limits.
  const limits = resolveDocumentLimits(options.documentLimits);
  const cache = new Map<string, ParsedDocument>();
  // Projectors by document, operation name and variables (what they depend on), bounded like the
  // documents: one compile per distinct operation, not per subscribe. With each, the document it was
  // compiled from. null: execute serves it.
  const projectors = new Map<string, { readonly projector: Projector; readonly document: DocumentNode } | null>();
  const whereOf = createWhereCompiler(ws, { maxClauses: limits.maxFilterClauses, maxDepth: limits.maxFilterDepth, maxInList: limits.maxFilterInList }, maxCachedDocuments);

  function parseAndValidate(query: string): ParsedDocument {
    const cached = cache.get(query);
    if (cached) {
      // Re-insert to keep Map order = recency (a cheap LRU).
      cache.delete(query);
      cache.set(query, cached);
      return cached;
    }
    let entry: ParsedDocument;
    if (query.length > maxQueryLength) {
      entry = { errors: [{ message: `Document is ${query.length} characters, over the limit of ${maxQueryLength}.` }] };
    } else {
      // Cheapest refusals first; validate() only ever sees documents within every bound, so its
      // cost stays linear (no 10,000-alias overlap checks, no parser stack overflow at depth 2,400).
      const nesting = checkDocumentNesting(query, limits);
      if (nesting.length > 0) {
        entry = { errors: nesting };
      } else {
        try {
          const document = parse(query, { noLocation: true, maxLexicalTokens: maxTokens });
          const shape = checkDocumentLimits(document, limits);
          const errors = shape.length > 0 ? shape : validate(ws.schema, document).map((e) => e.toJSON());
          entry = errors.length > 0 ? { errors } : { document, normalized: print(document), ...withoutRootArguments(document) };
        } catch (err) {
          entry = { errors: [toFormatted(err)] };
        }
      }
    }
    // Oversized texts are not cached: the cache must stay bounded in bytes, not just entries.
    if (query.length <= maxQueryLength) {
      cache.set(query, entry);
      if (cache.size > maxCachedDocuments) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
    }
    return entry;
  }

  function compile(request: OperationRequest, access: AccessScope = OPEN_ACCESS): CompileResult {
    const variableErrors = checkVariablesShape(request.variables, variablesLimits);
    if (variableErrors.length > 0) return { ok: false, errors: variableErrors };
    const parsed = parseAndValidate(request.query);
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
    const coerced = getVariableValues(ws.schema, operation.variableDefinitions ?? [], request.variables ?? {});
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
    const channels =
      where.keys !== undefined && (route.keyField === undefined || args[route.keyField] === undefined || args[route.keyField] === null)
        ? keyChannels(channelPrefix, route, where.keys)
        : subscriptionChannels(channelPrefix, route, args);

    // Forced (tenant-bound) arguments change what is filtered, so the effective arguments are
    // part of the key too, next to the scope; the where filter by its normalized tree.
    const keyVariables = Object.fromEntries((parsed.keyVariables ?? []).filter((name) => name in variables).map((name) => [name, variables[name]]));
    const projectorKey = [parsed.keyText ?? parsed.normalized, operationName ?? '', canonicalJson(keyVariables)].join('\u0000');
    const { [WHERE_ARGUMENT]: _where, ...equalityArgs } = args;
    const dedupKey = [projectorKey, canonicalJson(route.filterArgs.includes(WHERE_ARGUMENT) ? args : equalityArgs), where.key, access.key].join('\u0000');
    const projected = projectorFor(projectorKey, { document, operationName, variables, fieldName: route.fieldName });
    // A projected operation keeps the document its projector was compiled from when it declares the
    // same variables: the two differ at most in the root field's arguments, which are applied above
    // (filter, where, channels) and which execute, used then only for an event graphql-js reports
    // errors for, does not read (the root field has the default resolver, or there would be no
    // projector). Thousands of operations that differ only in their key hold one document, not one each.
    const projector = projected?.projector;
    const shared = projected !== undefined && sameVariableDefinitions(projected.document, document, operationName) ? projected.document : document;
    const keyArg = route.keyField === undefined ? undefined : args[route.keyField];
    const keyed = typeof keyArg === 'string' || typeof keyArg === 'number';
    const snapshotKeys = keyed ? [String(keyArg)] : where.pinned;
    const pin = keyed ? { on: route.keyField ?? KAFKA_KEY, keys: [String(keyArg)] } : where.pin;
    return {
      ok: true,
      operation: { kind: 'subscription', document: shared, operationName, variables, route, filter, where: where.predicate, channels, snapshotKeys, pin, dedupKey, projector, ...(access.claims === undefined ? {} : { claims: access.claims }) },
    };
  }

  function projectorFor(key: string, operation: ProjectableOperation): { readonly projector: Projector; readonly document: DocumentNode } | undefined {
    let projected = projectors.get(key);
    if (projected === undefined) {
      const { projector } = compileProjector(ws.schema, operation);
      projected = projector === undefined ? null : { projector, document: operation.document };
      projectors.set(key, projected);
      if (projectors.size > maxCachedDocuments) {
        const oldest = projectors.keys().next().value;
        if (oldest !== undefined) projectors.delete(oldest);
      }
    }
    return projected ?? undefined;
  }

  return {
    compile,
    /** Number of distinct document texts currently cached. */
    get cachedDocuments(): number {
      return cache.size;
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

/**
 * The document without the arguments of its operations' root fields (and the `where` of a root field
 * in a fragment), printed, and the variables it still uses. The arguments are in the dedup key as
 * their coerced values (and `where` as its normalized tree), so two operations that differ only in
 * how they write equal arguments (a literal or a variable, keys or `in` values in another order) get
 * one dedup key; and operations that differ only in their root field's arguments (each client its
 * own key: unicast) share one projector, which never reads them (decision 0039).
 */
function withoutRootArguments(document: DocumentNode): { readonly keyText: string; readonly keyVariables: readonly string[] } {
  let depth = 0;
  let inOperation = false;
  const stripped = visit(document, {
    OperationDefinition: {
      enter() {
        inOperation = true;
      },
      leave() {
        inOperation = false;
      },
    },
    SelectionSet: {
      enter() {
        depth++;
      },
      leave() {
        depth--;
      },
    },
    Field(node) {
      // Only an operation's own root field: a fragment's depth-1 fields may be of any type.
      return inOperation && depth === 1 && node.arguments !== undefined && node.arguments.length > 0 ? { ...node, arguments: [] } : undefined;
    },
    Argument(node) {
      // Depth 1: an argument of a field directly in an operation's selection set (its root field).
      return depth === 1 && node.name.value === WHERE_ARGUMENT ? null : undefined;
    },
  });
  const used = new Set<string>();
  visit(stripped, {
    VariableDefinition: () => false,
    Variable(node) {
      used.add(node.name.value);
    },
  });
  const unused = visit(stripped, {
    VariableDefinition(node) {
      return used.has(node.variable.name.value) ? undefined : null;
    },
  });
  return { keyText: print(unused), keyVariables: [...used].sort() };
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

function toFormatted(err: unknown): GraphQLFormattedError {
  if (err instanceof GraphQLError) return err.toJSON();
  return { message: err instanceof Error ? err.message : String(err) };
}
