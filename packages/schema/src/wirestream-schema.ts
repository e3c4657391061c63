import { readFileSync } from 'node:fs';
import {
  buildASTSchema,
  getNamedType,
  GraphQLError,
  isTypeDefinitionNode,
  Kind,
  parse,
  Source,
  specifiedScalarTypes,
  validateSchema,
  visit,
  type DocumentNode,
  type GraphQLSchema,
  type ScalarTypeDefinitionNode,
} from 'graphql';
// Not re-exported by graphql's index (see buildFromSdl for why it is called directly); graphql is pinned.
import { validateSDL } from 'graphql/validation/validate.js';
import { SchemaError, type SchemaProblem } from './errors.js';
import { bindLookups, type LookupBinding } from './lookup-bindings.js';
import { completeSdl } from './sdl-additions.js';
import { describeOrigin, problemAt, problemOfGraphQLError, SCHEMA_GUIDE, schemaErrorOf, type SdlOrigin } from './schema-problems.js';
import { bindRoutes, MAX_SHARDS, type SubscriptionRoute } from './topic-bindings.js';
import { whereAdditions } from './where-inputs.js';
import { KEY_FORMATS, TOPIC_FORMATS } from './topic-formats.js';

/** The executable schema plus the routing model derived from its `@topic` directives. */
export interface WirestreamSchema {
  readonly schema: GraphQLSchema;
  /** The SDL served (the console builds its schema from it): the user's, then what the loader added. */
  readonly sdl: string;
  /** What the loader added because the SDL did not declare it: `directive @topic`, `type Query`. */
  readonly added: readonly string[];
  /** Routes by Subscription field name. */
  readonly routes: ReadonlyMap<string, SubscriptionRoute>;
  /** Every distinct topic named by the schema, sorted: what ingest consumes. */
  readonly topics: readonly string[];
  /** Routes by topic (several fields may read one topic). */
  routesForTopic(topic: string): readonly SubscriptionRoute[];
  /** Fields resolved by a look-up (`@lookup`, lookup-bindings.ts), checked at load. */
  readonly lookups: readonly LookupBinding[];
}

/** Options of {@link loadWirestreamSchema}. */
export interface WirestreamSchemaOptions {
  /**
   * The setting that names the schema file, e.g. `SCHEMA_PATH`: every message then starts with it,
   * so an operator knows what to change. @default undefined (messages say "schema file")
   */
  readonly setting?: string | undefined;
}

/**
 * Builds the schema from SDL and derives the routing model. The SDL needs only its types and
 * `type Subscription { … @topic(…) }`: `directive @topic` and a `Query` root are added when absent
 * (see {@link WirestreamSchema.added}). Fails fast with one {@link SchemaError} that lists every
 * problem at once, each with its line, column and field: SDL that does not build, a Subscription
 * field without `@topic`, an unknown `@topic` argument, a topic name Kafka refuses, a key field the
 * payload type does not have, a shard count out of range, two fields routing one topic differently.
 */
export function createWirestreamSchema(sdl: string): WirestreamSchema {
  return buildFromSdl(sdl, { path: undefined, setting: undefined });
}

/** Reads the SDL file at `path` and builds it (see {@link createWirestreamSchema}); messages name the file and `options.setting`. */
export function loadWirestreamSchema(path: string, options: WirestreamSchemaOptions = {}): WirestreamSchema {
  const origin: SdlOrigin = { path, setting: options.setting };
  let sdl: string;
  try {
    sdl = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    const fix = options.setting === undefined ? 'give the path of a readable GraphQL SDL file' : `set ${options.setting} to a readable GraphQL SDL file`;
    throw new SchemaError(`${describeOrigin(origin)} cannot be read (${reason}): ${fix} (what it holds: ${SCHEMA_GUIDE})`);
  }
  return buildFromSdl(sdl, origin);
}

function buildFromSdl(sdl: string, origin: SdlOrigin): WirestreamSchema {
  let document: DocumentNode;
  try {
    // With locations, unlike the gateway's per-request parse: this runs once per process, and the
    // locations are what lets every problem name its line.
    document = parse(new Source(sdl, origin.path ?? 'SDL'));
  } catch (err) {
    if (!(err instanceof GraphQLError)) throw err;
    throw schemaErrorOf([problemOfGraphQLError(err, undefined)], origin);
  }
  const completed = completeSdl(sdl, document);
  const problems: SchemaProblem[] = [...completed.problems];
  // validateSDL is what buildASTSchema runs, but buildASTSchema throws its messages joined into one
  // string without their locations; called directly, each error keeps its place in the SDL.
  problems.push(...withoutRepeats(validateSDL(completed.document).map((error) => explained(problemOfGraphQLError(error, document))), problems));
  const { document: buildable, placeholders } = withPlaceholders(completed.document);
  const schema = tryBuild(buildable);
  if (schema instanceof Error) {
    // Only a fault no rule above saw is worth graphql-js's bare message.
    if (problems.length === 0) problems.push(problemAt(undefined, undefined, `the SDL does not build: ${schema.message}`));
    throw schemaErrorOf(problems, origin);
  }
  problems.push(...withoutRepeats(validateSchema(schema).map((error) => problemOfGraphQLError(error, document)), problems));

  const subscriptionType = schema.getSubscriptionType();
  const topicDirective = schema.getDirective('topic');
  let routes = new Map<string, SubscriptionRoute>();
  if (!subscriptionType) {
    problems.push(
      problemAt(
        undefined,
        undefined,
        'the schema has no Subscription type, so nothing to serve: declare `type Subscription { … }` with one field per event stream, ' +
          'each bound to its Kafka topic by @topic(name: "…")',
      ),
    );
  } else if (topicDirective && completed.topicDirectiveUsable) {
    const bindingProblems: SchemaProblem[] = [];
    routes = bindRoutes(subscriptionType, topicDirective, bindingProblems);
    // A field whose type is unknown (already reported) has a placeholder type: nothing more to say about it.
    const onPlaceholder = (coordinate: string | undefined) => {
      const field = coordinate?.startsWith(`${subscriptionType.name}.`) ? subscriptionType.getFields()[coordinate.slice(subscriptionType.name.length + 1)] : undefined;
      return field !== undefined && placeholders.has(getNamedType(field.type).name);
    };
    problems.push(...withoutRepeats(bindingProblems.filter((problem) => !onPlaceholder(problem.coordinate)), problems));
  }
  const lookups = bindLookups(schema, problems);
  if (problems.length > 0) throw schemaErrorOf(problems, origin);
  const served = withWhereArguments(schema, routes, completed.sdl, origin);

  const byTopic = new Map<string, SubscriptionRoute[]>();
  for (const route of routes.values()) {
    const list = byTopic.get(route.topic) ?? [];
    list.push(route);
    byTopic.set(route.topic, list);
  }
  return Object.freeze({
    schema: served.schema,
    sdl: served.sdl,
    added: Object.freeze([...completed.added, ...served.added]),
    routes,
    topics: Object.freeze([...byTopic.keys()].sort()),
    routesForTopic: (topic: string) => byTopic.get(topic) ?? [],
    lookups: Object.freeze(lookups),
  });
}

/**
 * The schema again with the generated `where` argument on each routed field (where-inputs.ts): the
 * SDL served gets it too, inserted on the fields' own lines and the inputs appended, so the console
 * and the gateway validate alike. Routes stay those of the user's SDL (`where` is not an equality argument).
 */
function withWhereArguments(
  schema: GraphQLSchema,
  routes: ReadonlyMap<string, SubscriptionRoute>,
  sdl: string,
  origin: SdlOrigin,
): { readonly schema: GraphQLSchema; readonly sdl: string; readonly added: readonly string[] } {
  const problems: SchemaProblem[] = [];
  const additions = whereAdditions(schema, routes, sdl, problems);
  if (problems.length > 0) throw schemaErrorOf(problems, origin);
  if (additions.inputsSdl === '') return { schema, sdl, added: [] };
  const served = `${additions.sdl.trimEnd()}\n\n# Added by Wirestream: the inputs of the \`where\` argument (docs/schema.md).\n${additions.inputsSdl}\n`;
  const rebuilt = buildASTSchema(parse(new Source(served, origin.path ?? 'SDL')));
  return { schema: rebuilt, sdl: served, added: [] };
}

// SDL with errors (already reported) may still build, and then the bindings are checked too, so
// one start reports everything; what still stops the build is reported alone.
function tryBuild(document: DocumentNode): GraphQLSchema | Error {
  try {
    return buildASTSchema(document, { assumeValidSDL: true });
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

// An unknown type (reported by validateSDL) stops buildASTSchema: a placeholder scalar stands in for
// each, so that the build goes on. The schema built is only used to find more problems, never served.
function withPlaceholders(document: DocumentNode): { document: DocumentNode; placeholders: ReadonlySet<string> } {
  const defined = new Set<string>(specifiedScalarTypes.map((type) => type.name));
  for (const definition of document.definitions) if (isTypeDefinitionNode(definition)) defined.add(definition.name.value);
  const placeholders = new Set<string>();
  visit(document, {
    NamedType(node) {
      if (!defined.has(node.name.value)) placeholders.add(node.name.value);
    },
  });
  if (placeholders.size === 0) return { document, placeholders };
  const scalars = [...placeholders].map((name): ScalarTypeDefinitionNode => ({ kind: Kind.SCALAR_TYPE_DEFINITION, name: { kind: Kind.NAME, value: name } }));
  return { document: { ...document, definitions: [...document.definitions, ...scalars] }, placeholders };
}

// One place, one message: our own check of a place explains more than graphql-js's (e.g. the query
// root), and graphql-js's rules see a missing required @topic argument before the bindings do.
function withoutRepeats(found: readonly SchemaProblem[], ours: readonly SchemaProblem[]): SchemaProblem[] {
  const taken = new Set(ours.map((problem) => `${problem.line}:${problem.column}`));
  return found.filter((problem) => problem.line === undefined || !taken.has(`${problem.line}:${problem.column}`));
}

// graphql-js says what is wrong with a use of @topic; add what it takes.
function explained(problem: SchemaProblem): SchemaProblem {
  if (!problem.message.includes('directive "@topic"')) return problem;
  return {
    ...problem,
    message:
      `${problem.message} @topic takes name (the Kafka topic, required), key (the payload field that routes an event), shards (1 to ${MAX_SHARDS}, default 16), ` +
      `format (the values' encoding: ${TOPIC_FORMATS.join(', ')}; default JSON), keyFormat (the keys': ${KEY_FORMATS.join(', ')}; default STRING), ` +
      'subject (the registry subject of the value schema), snapshot (true: keep the latest value per key for subscribers to start from; default false) and headers (the Kafka headers to copy into envelopes for where filters, e.g. ["tenant"])',
  };
}

/** Path of the example auction schema shipped with this package. */
export const auctionSchemaPath: string = new URL('../schema/auction.graphql', import.meta.url).pathname;
