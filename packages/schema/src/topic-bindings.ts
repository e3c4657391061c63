import {
  getDirectiveValues,
  getNamedType,
  getNullableType,
  GraphQLError,
  isEnumType,
  isListType,
  isObjectType,
  isScalarType,
  type ASTNode,
  type FieldDefinitionNode,
  type GraphQLDirective,
  type GraphQLField,
  type GraphQLObjectType,
} from 'graphql';
import type { SchemaProblem } from './errors.js';
import { problemAt, problemOfGraphQLError } from './schema-problems.js';
import { KEY_FORMATS, TOPIC_FORMATS, type KeyFormat, type TopicFormat } from './topic-formats.js';

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
  /** How the topic's Kafka values are encoded (`@topic(format:)`). @default 'JSON' */
  readonly format: TopicFormat;
  /** How the topic's Kafka keys are encoded (`@topic(keyFormat:)`). @default 'STRING' */
  readonly keyFormat: KeyFormat;
  /**
   * The registry subject of the topic's value schema (`@topic(subject:)`), what the start-up check
   * compares the payload type with; undefined means Confluent's TopicNameStrategy, `<topic>-value`.
   */
  readonly subject?: string | undefined;
  /**
   * `@topic(snapshot: true)`: ingest keeps the latest envelope per key of the topic in Redis (and
   * turns a Kafka tombstone into a `deleted` event), so a subscriber can start from the current values
   * (redis-layout.ts, snapshot.ts; decision 0023). Absent (routes built before it existed) means false.
   */
  readonly snapshot?: boolean;
  /**
   * `@topic(conflate: true)`: the field's subscriptions get latest-value conflation unless they say
   * `extensions.conflate: false` (the gateway's conflation.ts; a keyed state topic's usual default).
   * Absent means false.
   */
  readonly conflate?: boolean;
  /**
   * `@topic(headers: ["tenant", "event-type"])`: the Kafka headers ingest copies into each envelope
   * (`h`, as text), which `where: { _headers: { … } }` filters on (decision 0025). Absent or empty:
   * none, and the topic's envelopes are as before.
   */
  readonly headers?: readonly string[];
}

/** Upper bound on shards per topic: each shard is one Redis channel an unfiltered client listens to. */
export const MAX_SHARDS = 1024;

// Kafka's own rule (kafka.common.internals.Topic): 1-249 of these characters, and not "." or "..".
const KAFKA_TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/**
 * Reads every Subscription field's `@topic` binding into a route, pushing one problem per broken
 * rule onto `problems` (so that all of them are reported at once) and leaving that field out.
 */
export function bindRoutes(subscriptionType: GraphQLObjectType, topicDirective: GraphQLDirective, problems: SchemaProblem[]): Map<string, SubscriptionRoute> {
  const routes = new Map<string, SubscriptionRoute>();
  for (const field of Object.values(subscriptionType.getFields())) {
    const route = routeOf(field, `${subscriptionType.name}.${field.name}`, topicDirective, problems);
    if (route) routes.set(route.fieldName, route);
  }
  checkTopicsAgree(routes, subscriptionType, problems);
  return routes;
}

function routeOf(
  field: GraphQLField<unknown, unknown>,
  where: string,
  topicDirective: GraphQLDirective,
  problems: SchemaProblem[],
): SubscriptionRoute | undefined {
  const node = field.astNode;
  if (!node) {
    problems.push(problemAt(undefined, where, 'has no SDL definition: build the schema from SDL'));
    return undefined;
  }
  const directive = node.directives?.find((d) => d.name.value === 'topic');
  const problem = (at: ASTNode | undefined, message: string) => problems.push(problemAt(at ?? directive ?? node, where, message));
  let values: Record<string, unknown> | undefined;
  try {
    values = getDirectiveValues(topicDirective, node);
  } catch (err) {
    // A value of the wrong type, e.g. @topic(shards: "4"): graphql-js says which, with its place.
    if (!(err instanceof GraphQLError)) throw err;
    const problem = problemOfGraphQLError(err, undefined);
    problems.push({
      ...problem,
      coordinate: where,
      message: `@topic: ${problem.message} (name and key take a String, shards an Int, snapshot a Boolean, headers a list of Strings, format one of ${TOPIC_FORMATS.join(', ')} and keyFormat one of ${KEY_FORMATS.join(', ')}, both without quotes, e.g. format: AVRO)`,
    });
    return undefined;
  }
  if (!values) {
    // At the field's name, not its first token, which may be a description.
    problem(node.name, `has no @topic: every subscription field names the Kafka topic its events come from, e.g. ${field.name}: … @topic(name: "my-events")`);
    return undefined;
  }
  const { name: topic, key, shards } = values;
  // Absent from a declaration of the user's own written before formats existed: JSON values, string keys.
  const format = (values['format'] ?? 'JSON') as TopicFormat;
  const keyFormat = (values['keyFormat'] ?? 'STRING') as KeyFormat;
  const subject = values['subject'];
  const snapshot = values['snapshot'] === true;
  const conflate = values['conflate'] === true;
  const headers = Array.isArray(values['headers']) ? [...new Set(values['headers'] as string[])] : [];
  const argument = (name: string) => directive?.arguments?.find((a) => a.name.value === name)?.value;
  let ok = true;
  if (typeof topic !== 'string' || !KAFKA_TOPIC_NAME.test(topic) || topic === '.' || topic === '..') {
    problem(
      argument('name'),
      `@topic(name: ${JSON.stringify(topic)}) is not a valid Kafka topic name: use 1 to 249 of a-z A-Z 0-9 . _ - (and not "." or "..")`,
    );
    ok = false;
  }
  if (typeof shards !== 'number' || !Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
    problem(
      argument('shards'),
      `@topic(shards: ${String(shards)}) must be an integer from 1 to ${MAX_SHARDS}: the Redis channels the topic is spread over ` +
        '(an unfiltered client listens to all of them; leave it out for 16)',
    );
    ok = false;
  }
  if (subject !== undefined && (typeof subject !== 'string' || subject.trim() === '' || format === 'JSON')) {
    problem(
      argument('subject'),
      format === 'JSON'
        ? `@topic(subject: ${JSON.stringify(subject)}) names a registry subject, but the topic is JSON: give format: AVRO (or PROTOBUF, JSON_SCHEMA), or drop subject`
        : `@topic(subject: ${JSON.stringify(subject)}) must name the registry subject of the value schema, e.g. "${typeof topic === 'string' ? topic : 'my-events'}-value"`,
    );
    ok = false;
  }
  if (!checkHeaders(headers, (message) => problem(argument('headers'), message))) ok = false;
  const payloadType = payloadTypeOf(field, node, where, problems);
  if (payloadType === undefined) return undefined;
  const keyField = typeof key === 'string' ? key : undefined;
  if (keyField !== undefined && !checkKeyField(keyField, payloadType, (message) => problem(argument('key'), message))) ok = false;
  const filterArgs = field.args.map((arg) => arg.name);
  for (const arg of field.args) {
    if (!(arg.name in payloadType.getFields())) {
      problems.push(
        problemAt(
          arg.astNode?.name ?? node.name,
          where,
          `argument "${arg.name}" filters on the payload field of the same name, which ${payloadType.name} does not have: ` +
            `rename the argument to one of ${payloadType.name}'s fields or add the field`,
        ),
      );
      // Not `ok = false`: the route still takes part in the checks across fields (routing does not depend on it).
    }
  }
  if (!ok || typeof topic !== 'string' || typeof shards !== 'number') return undefined;
  return Object.freeze({ fieldName: field.name, topic, keyField, shards, filterArgs: Object.freeze(filterArgs), format, keyFormat, subject: typeof subject === 'string' ? subject : undefined, snapshot, ...(conflate ? { conflate } : {}), ...(headers.length > 0 ? { headers: Object.freeze(headers) } : {}) });
}

/** Longest header name `@topic(headers:)` takes. */
const MAX_HEADER_NAME = 128;
/** Most headers one topic copies. */
export const MAX_TOPIC_HEADERS = 32;

/**
 * The field of `where: { _headers: { … } }` that filters on a Kafka header: its name with every
 * character GraphQL names do not allow (`-`, `.`…) as `_`, and a `_` before a leading digit
 * (`event-type` → `event_type`).
 */
export function headerFieldName(header: string): string {
  const name = header.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** Header names must be non-empty, short, and distinct as where fields. */
function checkHeaders(headers: readonly string[], problem: (message: string) => void): boolean {
  if (headers.length > MAX_TOPIC_HEADERS) {
    problem(`@topic(headers:) lists ${headers.length} headers; at most ${MAX_TOPIC_HEADERS} (each one is copied into every envelope of the topic)`);
    return false;
  }
  const byField = new Map<string, string>();
  for (const header of headers) {
    const field = headerFieldName(header);
    if (header.trim() === '' || header.length > MAX_HEADER_NAME || field.startsWith('__')) {
      problem(`@topic(headers:) lists ${JSON.stringify(header)}: a header name must be 1 to ${MAX_HEADER_NAME} characters and not start with "__"`);
      return false;
    }
    const clash = byField.get(field);
    if (clash !== undefined) {
      problem(`@topic(headers:) lists ${JSON.stringify(clash)} and ${JSON.stringify(header)}, which filter as one field (_headers.${field}): keep one`);
      return false;
    }
    byField.set(field, header);
  }
  return true;
}

/** The object type an event payload has: the field's type itself, not a list and not a scalar. */
function payloadTypeOf(
  field: GraphQLField<unknown, unknown>,
  node: FieldDefinitionNode,
  where: string,
  problems: SchemaProblem[],
): GraphQLObjectType | undefined {
  const type = getNamedType(field.type);
  if (isListType(getNullableType(field.type))) {
    problems.push(problemAt(node.type, where, `returns ${String(field.type)}, a list: each event is one payload, so return ${type.name} itself`));
    return undefined;
  }
  if (!isObjectType(type)) {
    problems.push(problemAt(node.type, where, `returns ${type.name}; it must return an object type that describes the event payload`));
    return undefined;
  }
  return type;
}

/** The key must be a top-level scalar of the payload: ingest reads it from the event to pick the shard. */
function checkKeyField(keyField: string, payloadType: GraphQLObjectType, problem: (message: string) => void): boolean {
  const fields = payloadType.getFields();
  const target = fields[keyField];
  if (target === undefined) {
    const scalars = Object.values(fields)
      .filter((f) => isScalarType(getNullableType(f.type)) || isEnumType(getNullableType(f.type)))
      .map((f) => f.name);
    problem(
      `@topic(key: "${keyField}") is not a field of ${payloadType.name}: the key names the top-level payload field that routes an event` +
        ` (its entity id)${scalars.length > 0 ? `, one of ${scalars.slice(0, 12).join(', ')}` : ''}`,
    );
    return false;
  }
  const keyType = getNullableType(target.type);
  if (!isScalarType(keyType) && !isEnumType(keyType)) {
    problem(`@topic(key: "${keyField}") is ${payloadType.name}.${keyField} of type ${String(target.type)}: the key must be a scalar field (ID, String, Int or an enum)`);
    return false;
  }
  return true;
}

/**
 * Several fields may read one topic, but a topic has one routing (ingest publishes each event once,
 * to one shard). And Kafka refuses two topics that differ only in `.` against `_` (their metric names collide).
 */
function checkTopicsAgree(routes: ReadonlyMap<string, SubscriptionRoute>, subscriptionType: GraphQLObjectType, problems: SchemaProblem[]): void {
  const firstByTopic = new Map<string, SubscriptionRoute>();
  const byMetricName = new Map<string, SubscriptionRoute>();
  for (const route of routes.values()) {
    const node = subscriptionType.getFields()[route.fieldName]?.astNode ?? undefined;
    const where = `${subscriptionType.name}.${route.fieldName}`;
    const first = firstByTopic.get(route.topic);
    if (first === undefined) {
      firstByTopic.set(route.topic, route);
      const metricName = route.topic.replaceAll('.', '_');
      const clash = byMetricName.get(metricName);
      if (clash !== undefined) {
        problems.push(
          problemAt(node, where, `topic "${route.topic}" collides with "${clash.topic}" (${subscriptionType.name}.${clash.fieldName}): Kafka treats . and _ alike in topic names and refuses to create both; rename one`),
        );
      }
      byMetricName.set(metricName, route);
    } else if (route.shards !== first.shards || route.keyField !== first.keyField || route.format !== first.format || route.keyFormat !== first.keyFormat || route.snapshot !== first.snapshot || headersOf(route) !== headersOf(first)) {
      problems.push(
        problemAt(
          node,
          where,
          `reads topic "${route.topic}" with ${routingOf(route)}, but ${subscriptionType.name}.${first.fieldName} reads it with ${routingOf(first)}; ` +
            (headersOf(route) === '' && headersOf(first) === ''
              ? 'one topic has one routing, one encoding and one snapshot setting: give both the same @topic(key:, shards:, format:, keyFormat:, snapshot:)'
              : 'one topic has one routing, one encoding, one snapshot setting and one header list: give both the same @topic(key:, shards:, format:, keyFormat:, snapshot:, headers:)'),
        ),
      );
    }
  }
}

function routingOf(route: SubscriptionRoute): string {
  return `${route.keyField === undefined ? 'no key' : `key "${route.keyField}"`}, ${route.shards} shards, format ${route.format}, keyFormat ${route.keyFormat}${headersOf(route) === '' ? ' and' : ','} snapshot ${String(route.snapshot === true)}${headersOf(route) === '' ? '' : ` and headers [${headersOf(route)}]`}`;
}

function headersOf(route: SubscriptionRoute): string {
  return [...(route.headers ?? [])].sort().join(', ');
}
