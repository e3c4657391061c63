import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getDirectiveValues,
  getNamedType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { SchemaError } from './errors.js';

/** Upper bound on shards per topic: each shard is one Redis channel an unfiltered client listens to. */
const MAX_SHARDS = 1024;

/** One subscription field bound to a Kafka topic by `@topic`. */
export interface SubscriptionRoute {
  /** The Subscription field name, e.g. `listingUpdated`. */
  readonly fieldName: string;
  /** The Kafka topic the events come from. */
  readonly topic: string;
  /** Payload field that routes an event to a shard (its entity id), if any. */
  readonly keyField: string | undefined;
  /** Number of Redis channels the topic is spread over. */
  readonly shards: number;
  /** Field arguments; each filters on the payload field of the same name. */
  readonly filterArgs: readonly string[];
}

/** The executable schema plus the routing model derived from its `@topic` directives. */
export interface WirestreamSchema {
  readonly schema: GraphQLSchema;
  readonly sdl: string;
  /** Routes by Subscription field name. */
  readonly routes: ReadonlyMap<string, SubscriptionRoute>;
  /** Every distinct topic named by the schema, sorted: what ingest consumes. */
  readonly topics: readonly string[];
  /** Routes by topic (several fields may read one topic). */
  routesForTopic(topic: string): readonly SubscriptionRoute[];
}

/**
 * Builds the schema from SDL and derives the routing model. Fails fast, listing every
 * problem at once: a Subscription field without `@topic`, an unknown key field, a bad shard count.
 */
export function createWirestreamSchema(sdl: string): WirestreamSchema {
  let schema: GraphQLSchema;
  try {
    schema = buildSchema(sdl, { noLocation: true });
  } catch (err) {
    throw new SchemaError(`SDL does not build: ${(err as Error).message}`);
  }
  const subscriptionType = schema.getSubscriptionType();
  if (!subscriptionType) {
    throw new SchemaError('the schema has no Subscription type: nothing to serve');
  }
  const topicDirective = schema.getDirective('topic');
  if (!topicDirective) {
    throw new SchemaError(
      'the schema does not declare `directive @topic(name: String!, key: String, shards: Int = 16) on FIELD_DEFINITION`',
    );
  }

  const problems: string[] = [];
  const routes = new Map<string, SubscriptionRoute>();
  for (const field of Object.values(subscriptionType.getFields())) {
    const route = routeOf(field, subscriptionType, topicDirective, problems);
    if (route) routes.set(route.fieldName, route);
  }
  if (problems.length > 0) {
    throw new SchemaError(`invalid @topic bindings:\n  - ${problems.join('\n  - ')}`);
  }

  const byTopic = new Map<string, SubscriptionRoute[]>();
  for (const route of routes.values()) {
    const list = byTopic.get(route.topic) ?? [];
    list.push(route);
    byTopic.set(route.topic, list);
  }
  // Two fields on one topic must agree on how it is sharded, or a publish would miss one of them.
  for (const [topic, list] of byTopic) {
    const first = list[0];
    for (const route of list) {
      if (first && (route.shards !== first.shards || route.keyField !== first.keyField)) {
        throw new SchemaError(
          `fields ${first.fieldName} and ${route.fieldName} read topic "${topic}" with different key/shards; ` +
            'one topic has one routing: give both the same @topic(key:, shards:)',
        );
      }
    }
  }

  return Object.freeze({
    schema,
    sdl,
    routes,
    topics: Object.freeze([...byTopic.keys()].sort()),
    routesForTopic: (topic: string) => byTopic.get(topic) ?? [],
  });
}

/** Reads the SDL file at `path` and builds it (see {@link createWirestreamSchema}). */
export function loadWirestreamSchema(path: string): WirestreamSchema {
  let sdl: string;
  try {
    sdl = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SchemaError(`cannot read schema file ${path}: ${(err as Error).message}`);
  }
  return createWirestreamSchema(sdl);
}

/** Path of the example auction schema shipped with this package. */
export const auctionSchemaPath: string = new URL('../schema/auction.graphql', import.meta.url).pathname;

function routeOf(
  field: GraphQLField<unknown, unknown>,
  subscriptionType: GraphQLObjectType,
  topicDirective: NonNullable<ReturnType<GraphQLSchema['getDirective']>>,
  problems: string[],
): SubscriptionRoute | undefined {
  const where = `${subscriptionType.name}.${field.name}`;
  if (!field.astNode) {
    problems.push(`${where}: no AST node (build the schema from SDL)`);
    return undefined;
  }
  const values = getDirectiveValues(topicDirective, field.astNode);
  if (!values) {
    problems.push(`${where}: missing @topic(name: "...") — every subscription field must name its Kafka topic`);
    return undefined;
  }
  const topic = values['name'];
  const key = values['key'];
  const shards = values['shards'];
  if (typeof topic !== 'string' || !/^[a-zA-Z0-9._-]{1,249}$/.test(topic)) {
    problems.push(`${where}: @topic(name:) must be a legal Kafka topic name ([a-zA-Z0-9._-], 1-249 chars), got ${JSON.stringify(topic)}`);
    return undefined;
  }
  if (typeof shards !== 'number' || !Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
    problems.push(`${where}: @topic(shards:) must be an integer from 1 to ${MAX_SHARDS}, got ${String(shards)}`);
    return undefined;
  }
  const returnType = getNamedType(field.type);
  if (!isObjectType(returnType)) {
    problems.push(`${where}: must return an object type, got ${returnType.name}`);
    return undefined;
  }
  const keyField = typeof key === 'string' ? key : undefined;
  if (keyField !== undefined && !(keyField in returnType.getFields())) {
    problems.push(`${where}: @topic(key: "${keyField}") is not a field of ${returnType.name}`);
    return undefined;
  }
  const filterArgs = field.args.map((arg: GraphQLArgument) => arg.name);
  for (const arg of filterArgs) {
    if (!(arg in returnType.getFields())) {
      problems.push(`${where}: argument "${arg}" filters on payload field "${arg}", which ${returnType.name} does not have`);
    }
  }
  return Object.freeze({
    fieldName: field.name,
    topic,
    keyField,
    shards,
    filterArgs: Object.freeze(filterArgs),
  });
}
