import {
  getNullableType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  specifiedScalarTypes,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import type { SubscriptionRoute, WirestreamSchema } from '@wirestream/schema';
import { keyConverter, type KeyStyle } from '@wirestream/transform';
import { describeShape, type AvroField, type AvroShape, type AvroSlot } from './avro-shape.js';
import type { SchemaType } from './schema-source.js';
import { readSubjectHistory, SubjectShapeError } from './subject-shape.js';
import type { SubjectSchema, SubjectSchemas } from './subject-schemas.js';

/** One finding: `error` stops the start (exit 78), `warning` is logged. */
export interface SdlCheckFinding {
  readonly level: 'error' | 'warning';
  readonly topic: string;
  readonly subject: string;
  /** The SDL coordinate, e.g. `BidEvent.amount_cents` (empty for the subject as a whole). */
  readonly field: string;
  /** One line naming topic, subject and field, and what to do. */
  readonly message: string;
}

export interface SdlCheckResult {
  readonly errors: readonly SdlCheckFinding[];
  readonly warnings: readonly SdlCheckFinding[];
  /** Subjects compared, e.g. `bid-events-value v2 (id 2)`. */
  readonly checked: readonly string[];
}

export interface SdlCheckOptions {
  /** The key style ingest publishes with (INGEST_KEY_STYLE): Avro field names → payload keys. */
  readonly keyStyle: KeyStyle;
}

/** The `@topic(format:)` values read through a registry, and the registry's schema type for each. */
const SCHEMA_TYPE_OF_FORMAT: Readonly<Record<string, SchemaType>> = { AVRO: 'AVRO', PROTOBUF: 'PROTOBUF', JSON_SCHEMA: 'JSON' };

/** Whether the topic's values (or keys) are read through a registry: what the check compares. */
function isRegistryFormat(format: string): boolean {
  return Object.hasOwn(SCHEMA_TYPE_OF_FORMAT, format);
}

/** Confluent's TopicNameStrategy: the value schema of topic T is registered under `T-value`. */
export function valueSubjectOf(route: Pick<SubscriptionRoute, 'topic' | 'subject'>): string {
  return route.subject ?? `${route.topic}-value`;
}

/**
 * What ingest and the gateway check at start (decision 0019): every field the SDL selects on an
 * `@topic(format: AVRO | PROTOBUF | JSON_SCHEMA)` topic — the payload type's fields, and those of the object types below
 * them — exists in some version of the topic's subject (every registered version is read and merged,
 * decision 0035), under its published name (the key style), with a type whose JSON fits the field's GraphQL type.
 * - **error** (the start stops, exit 78): a field the schema does not have; a shape that cannot
 *   render (an object where the schema has a scalar, a list where it has none, `Int` for a
 *   `string`); a subject that does not exist or is not Avro.
 * - **warning** (logged, the start goes on): a compatible difference — nullable in the registry but
 *   non-null in the SDL (or missing from some version), `Float` for a float that may be NaN, a GraphQL
 *   enum for an open Protobuf enum, fields the SDL does not select, `Int` for a `long`, enum symbols the SDL
 *   enum lacks, a union only some of whose branches fit.
 * A source that cannot answer (registry down) rejects: the caller decides (ingest and the gateway
 * log it and start unchecked, as decoding waits for the registry anyway).
 */
export async function checkSdlAgainstSchemas(schema: WirestreamSchema, subjects: SubjectSchemas, options: SdlCheckOptions): Promise<SdlCheckResult> {
  const name = keyConverter(options.keyStyle);
  const findings: SdlCheckFinding[] = [];
  const checked: string[] = [];
  const subscription = schema.schema.getSubscriptionType();
  const seenSubjects = new Map<string, SubjectSchema[] | null>();
  const keysChecked = new Set<string>();
  const versionsOf = async (subject: string): Promise<SubjectSchema[] | null> => {
    let versions = seenSubjects.get(subject);
    if (versions === undefined) {
      versions = await subjects.versions(subject);
      seenSubjects.set(subject, versions);
      for (const v of versions ?? []) checked.push(`${subject} v${v.version} (id ${v.id})`);
    }
    return versions;
  };
  for (const route of schema.routes.values()) {
    if (subscription === null || subscription === undefined) continue;
    const field = subscription.getFields()[route.fieldName];
    const payloadType = field === undefined ? undefined : getNullableType(field.type);
    if (payloadType === undefined || !isObjectType(payloadType)) continue;
    if (isRegistryFormat(route.format)) {
      const subject = valueSubjectOf(route);
      const add = (level: SdlCheckFinding['level'], coordinate: string, message: string) =>
        findings.push({ level, topic: route.topic, subject, field: coordinate, message: `topic ${route.topic}, subject ${subject}${coordinate === '' ? '' : `, field ${coordinate}`}: ${message}` });
      const versions = await versionsOf(subject);
      const top = await readVersions(versions, route.format, { subjects, add, preferred: payloadType.name, fallbackName: route.topic });
      if (top !== undefined && versions !== null) compareObject(payloadType, top.shape, { name, add, ...labelsOf(versions), visited: new Set() });
    }
    if (route.snapshot && route.keyField !== undefined && isRegistryFormat(route.keyFormat) && !keysChecked.has(route.topic)) {
      keysChecked.add(route.topic);
      const subject = `${route.topic}-key`;
      const add = (level: SdlCheckFinding['level'], coordinate: string, message: string) =>
        findings.push({ level, topic: route.topic, subject, field: coordinate, message: `topic ${route.topic}, subject ${subject}${coordinate === '' ? '' : `, field ${coordinate}`}: ${message}` });
      await compareKeySchema(payloadType, route.keyField, route.keyFormat, { subjects, add, versionsOf, subject });
    }
  }
  return { errors: findings.filter((f) => f.level === 'error'), warnings: findings.filter((f) => f.level === 'warning'), checked };
}

interface ReadContext {
  readonly subjects: SubjectSchemas;
  readonly add: (level: SdlCheckFinding['level'], coordinate: string, message: string) => void;
  /** The SDL's payload type name: a Protobuf message of that name is the one compared (else the file's first). */
  readonly preferred: string;
  readonly fallbackName: string;
}

/** `version 2, id 17` (one version) or `versions 1, 2, 3, latest id 17`, and how messages name the schemas compared. */
function labelsOf(versions: readonly SubjectSchema[]): { version: string; schemas: string } {
  const latest = versions.at(-1);
  if (latest === undefined) return { version: '', schemas: 'the registry' };
  if (versions.length === 1) return { version: `version ${latest.version}, id ${latest.id}`, schemas: `the registry's latest schema (version ${latest.version}, id ${latest.id})` };
  const version = `versions ${versions.map((v) => v.version).join(', ')}, latest id ${latest.id}`;
  return { version, schemas: `any registered version of the subject (${version})` };
}

/**
 * The payload shape of every version of the subject, merged (decision 0035), or undefined after adding
 * the error that says why there is none.
 */
async function readVersions(versions: readonly SubjectSchema[] | null, format: string, context: ReadContext): Promise<AvroSlot | undefined> {
  const { subjects, add } = context;
  if (versions === null || versions.length === 0) {
    add('error', '', `${subjects.description} has no such subject: register the topic's value schema there, or name its subject with @topic(subject: …)`);
    return undefined;
  }
  const other = [...versions].reverse().find((v) => v.schemaType !== SCHEMA_TYPE_OF_FORMAT[format]);
  if (other !== undefined) {
    add('error', '', `${other === versions.at(-1) ? 'the latest schema' : 'schema'} (version ${other.version}, id ${other.id}) is ${other.schemaType}, but @topic says format: ${format}`);
    return undefined;
  }
  try {
    return await readSubjectHistory(versions, subjects, { preferred: context.preferred, fallbackName: context.fallbackName });
  } catch (err) {
    if (!(err instanceof SubjectShapeError)) throw err;
    const latest = versions.at(-1) as SubjectSchema;
    add('error', '', `the schemas (latest version ${latest.version}, id ${latest.id}) cannot be read: ${err.message}`);
    return undefined;
  }
}

/**
 * A snapshot topic's key field comes from the Kafka key in a tombstone's deleted event (and routes
 * it): the key schema's latest version (`<topic>-key`) must publish a value the key field can hold.
 * A record or message key is published as its JSON text, which is not the payload's key value: a warning.
 */
async function compareKeySchema(
  payloadType: GraphQLObjectType,
  keyField: string,
  keyFormat: string,
  context: { subjects: SubjectSchemas; add: ReadContext['add']; versionsOf: (subject: string) => Promise<SubjectSchema[] | null>; subject: string },
): Promise<void> {
  const { add } = context;
  const coordinate = `${payloadType.name}.${keyField}`;
  const versions = await context.versionsOf(context.subject);
  const latest = versions?.at(-1);
  if (versions === null || latest === undefined) {
    add('warning', coordinate, `@topic(keyFormat: ${keyFormat}, snapshot: true): ${context.subjects.description} has no key subject, so the key schema is not compared with the key field, which deleted events take from the Kafka key`);
    return;
  }
  const other = [...versions].reverse().find((v) => v.schemaType !== SCHEMA_TYPE_OF_FORMAT[keyFormat]);
  if (other !== undefined) {
    add('error', coordinate, `the key's ${other === latest ? 'latest ' : ''}schema (version ${other.version}, id ${other.id}) is ${other.schemaType}, but @topic says keyFormat: ${keyFormat}`);
    return;
  }
  const label = versions.length === 1 ? `latest schema (version ${latest.version}, id ${latest.id})` : `schemas (${labelsOf(versions).version})`;
  let top: AvroSlot;
  try {
    top = await readSubjectHistory(versions, context.subjects, { fallbackName: context.subject });
  } catch (err) {
    if (!(err instanceof SubjectShapeError)) throw err;
    add('error', coordinate, `the key's ${label} cannot be read: ${err.message}`);
    return;
  }
  const version = labelsOf(versions).version;
  const field = payloadType.getFields()[keyField];
  if (field === undefined) return; // the loader refuses a key that is not a payload field
  if (top.shape.kind === 'record' || top.shape.kind === 'map' || top.shape.kind === 'array') {
    add(
      'warning',
      coordinate,
      `the key's ${label} is ${describeShape(top.shape)}: a tombstone's deleted event carries its JSON text as ${keyField}, and routes and deletes the snapshot entry by it, not by the value's ${keyField}; key the topic by the ${keyField} value itself (a string key schema, or keyFormat: STRING)`,
    );
    return;
  }
  const fit = fitOf(getNullableType(field.type), top.shape);
  if (fit === 'no') add('error', coordinate, `${String(field.type)} in the SDL cannot hold the key's ${describeShape(top.shape)} (${version}), which deleted events carry as ${keyField}`);
  else if (fit === 'warn') add('warning', coordinate, `${String(field.type)} in the SDL for the key's ${describeShape(top.shape)} (${version}): ${warningOf(getNullableType(field.type), top.shape)}`);
}

interface Context {
  readonly name: (avroName: string) => string;
  readonly add: (level: SdlCheckFinding['level'], coordinate: string, message: string) => void;
  /** `version 2, id 17` (or `versions 1, 2, latest id 17`): which schemas the messages speak of. */
  readonly version: string;
  /** `the registry's latest schema (version 2, id 17)`, or `any registered version of the subject (…)`. */
  readonly schemas: string;
  /** `SdlType|record` pairs already compared: recursive types end. */
  readonly visited: Set<string>;
}

function compareObject(type: GraphQLObjectType, shape: AvroShape, context: Context): void {
  if (shape.kind !== 'record') {
    context.add('error', type.name, `${type.name} is an object type, but ${context.schemas} has ${describeShape(shape)} there`);
    return;
  }
  const pair = `${type.name}|${shape.name}`;
  if (context.visited.has(pair)) return;
  context.visited.add(pair);
  const byPublished = new Map(shape.fields.map((f) => [context.name(f.name), f]));
  const selected = new Set<string>();
  for (const field of Object.values(type.getFields())) {
    const coordinate = `${type.name}.${field.name}`;
    const avro = byPublished.get(field.name);
    if (field.name === '__typename') continue;
    // A @lookup field is resolved from a look-up source, not read from the event (decision 0042).
    if (avro === undefined && field.astNode?.directives?.some((d) => d.name.value === 'lookup') === true) continue;
    if (avro === undefined) {
      const published = [...byPublished.keys()];
      context.add(
        'error',
        coordinate,
        `not in ${context.schemas}, whose record ${shape.name} publishes ${published.slice(0, 12).join(', ')}${published.length > 12 ? ', …' : ''}: ` +
          'remove the field from the SDL, or register a schema version that has it',
      );
      continue;
    }
    selected.add(field.name);
    compareField(field, avro, coordinate, context);
  }
  const extra = [...byPublished.keys()].filter((k) => !selected.has(k));
  if (extra.length > 0) {
    context.add('warning', type.name, `the registry's record ${shape.name} (${context.version}) also has ${extra.join(', ')}, which ${type.name} does not declare (published, but no client can select them)`);
  }
}

function compareField(field: GraphQLField<unknown, unknown>, avro: AvroField, coordinate: string, context: Context): void {
  const absentIn = avro.absentIn ?? [];
  if (absentIn.length > 0 && isNonNullType(field.type)) {
    context.add('warning', coordinate, `non-null in the SDL (${String(field.type)}) but version${absentIn.length === 1 ? '' : 's'} ${absentIn.join(', ')} of the subject (${context.version}) lack${absentIn.length === 1 ? 's' : ''} it: their events, still in the topic, fail to render that field; make it nullable`);
    compareSlot(field.type, { shape: avro.shape, nullable: false }, coordinate, context);
    return;
  }
  compareSlot(field.type, avro, coordinate, context);
}

function compareSlot(type: GraphQLOutputType, avro: AvroSlot, coordinate: string, context: Context): void {
  if (isNonNullType(type) && avro.nullable) {
    context.add('warning', coordinate, `non-null in the SDL (${String(type)}) but nullable in the registry (${context.version}): an event with null there fails to render that field; make it nullable`);
  }
  const inner = getNullableType(type);
  if (isListType(inner)) {
    if (avro.shape.kind !== 'array') {
      context.add('error', coordinate, `a list in the SDL (${String(type)}), but ${describeShape(avro.shape)} in the registry (${context.version})`);
      return;
    }
    compareSlot(inner.ofType, avro.shape.items, `${coordinate}[]`, context);
    return;
  }
  if (avro.shape.kind === 'union') {
    const fits = avro.shape.branches.map((branch) => fitOf(inner, branch));
    if (!fits.includes('ok') && !fits.includes('warn')) {
      context.add('error', coordinate, `${String(type)} in the SDL fits no branch of the registry's ${describeShape(avro.shape)} (${context.version})`);
    } else if (fits.some((f) => f === 'no')) {
      context.add('warning', coordinate, `${String(type)} in the SDL fits only some branches of the registry's ${describeShape(avro.shape)} (${context.version}): events of the others fail to render it`);
    }
    return;
  }
  if (isObjectType(inner)) {
    compareObject(inner, avro.shape, context);
    return;
  }
  if (avro.shape.kind === 'array') {
    context.add('error', coordinate, `${String(type)} in the SDL, but ${describeShape(avro.shape)} (a list) in the registry (${context.version})`);
    return;
  }
  if (isEnumType(inner) && avro.shape.kind === 'enum') {
    if (avro.shape.open === true) {
      context.add('warning', coordinate, `enum ${inner.name} in the SDL for the registry's open enum ${avro.shape.name} (${context.version}): a number the enum does not name is published as the number, which fails to render; declare a scalar (as wirestream-schema from-registry writes it)`);
    }
    const values = new Set(inner.getValues().map((v) => v.name));
    const missing = avro.shape.symbols.filter((s) => !values.has(s));
    if (missing.length > 0) {
      context.add('warning', coordinate, `the registry's enum ${avro.shape.name} (${context.version}) has ${missing.join(', ')}, which enum ${inner.name} lacks: such events fail to render the field`);
    }
    return;
  }
  if (isScalarType(inner) && inner.name === 'Float' && mayBeNonFinite(avro.shape)) {
    context.add('warning', coordinate, `Float in the SDL for the registry's ${describeShape(avro.shape)} (${context.version}): NaN and ±Infinity are published as the strings "NaN", "Infinity", "-Infinity", which Float fails to render; declare a custom scalar (wirestream-schema from-registry writes scalar Double)`);
    return;
  }
  const fit = fitOf(inner, avro.shape);
  if (fit === 'no') context.add('error', coordinate, `${String(type)} in the SDL cannot hold the registry's ${describeShape(avro.shape)} (${context.version}, published as ${jsonOf(avro.shape)})`);
  else if (fit === 'warn') context.add('warning', coordinate, `${String(type)} in the SDL for the registry's ${describeShape(avro.shape)} (${context.version}): ${warningOf(inner, avro.shape)}`);
}

const BUILT_IN_SCALARS = new Set(specifiedScalarTypes.map((s) => s.name));

/** Whether a value of `shape`, as published in JSON (docs/schema.md), renders as the GraphQL type (a named, nullable one). */
function fitOf(type: GraphQLOutputType, shape: AvroShape): 'ok' | 'warn' | 'no' {
  if (isListType(type)) return shape.kind === 'array' ? 'ok' : 'no';
  if (isObjectType(type)) return shape.kind === 'record' ? 'ok' : 'no';
  if (isEnumType(type)) return shape.kind === 'enum' ? 'ok' : shape.kind === 'primitive' && shape.json === 'string' ? 'warn' : 'no';
  if (!isScalarType(type)) return 'ok'; // unions and interfaces: resolved by the schema's own resolvers
  if (!BUILT_IN_SCALARS.has(type.name)) return 'ok'; // a custom scalar takes what it is given
  const json = jsonOf(shape);
  if (json === 'any') return 'warn';
  switch (type.name) {
    case 'String':
      return json === 'object' ? 'no' : 'ok';
    case 'ID':
      return json === 'string' || json === 'int' || json === 'long' ? 'ok' : 'no';
    case 'Int':
      return json === 'int' ? 'ok' : json === 'long' ? 'warn' : 'no';
    case 'Float':
      return json === 'int' || json === 'long' || json === 'float' ? 'ok' : 'no';
    case 'Boolean':
      return json === 'boolean' ? 'ok' : 'no';
    default:
      return 'ok';
  }
}

/** Avro and Protobuf floats and doubles (and their wrappers) may hold NaN or ±Infinity; a JSON Schema `number` cannot. */
function mayBeNonFinite(shape: AvroShape): boolean {
  return shape.kind === 'primitive' && shape.json === 'float' && shape.type !== 'number';
}

function jsonOf(shape: AvroShape): string {
  switch (shape.kind) {
    case 'primitive':
      return shape.json;
    case 'enum':
      return 'string';
    case 'array':
      return 'array';
    default:
      return 'object';
  }
}

function warningOf(type: GraphQLOutputType, shape: AvroShape): string {
  if (jsonOf(shape) === 'any') return `the registry allows any JSON value there, so values that are not ${String(type)} fail to render; declare a custom scalar (e.g. scalar JSON)`;
  if (isEnumType(type)) return `a string in the registry, so values outside enum ${type.name} fail to render; declare an Avro enum or a String`;
  return `GraphQL Int holds 32 bits, a ${describeShape(shape)} may not (past 2^53 it is published as a string): declare Float, String or a custom scalar`;
}

/** What {@link checkSdlAtStart} logs through (pino's signature: an object, then the message). */
export interface SdlCheckLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

/**
 * The start-up step both apps run: compares the SDL's registry-format topics (and snapshot topics' key schemas) with the latest schemas, logs
 * every warning, and returns the errors, one line each (the app writes them to stderr and exits
 * 78). Without a source (`subjects` undefined: the gateway has no SCHEMA_REGISTRY_URL / SCHEMA_DIR)
 * or when the source does not answer, the check is skipped with a warning: decoding does not
 * depend on it, and a registry that blinks must not stop a start.
 */
export async function checkSdlAtStart(schema: WirestreamSchema, subjects: SubjectSchemas | undefined, options: SdlCheckOptions & { readonly log: SdlCheckLog }): Promise<readonly string[]> {
  const { log } = options;
  const topics = [...schema.routes.values()].filter((r) => isRegistryFormat(r.format) || (r.snapshot && isRegistryFormat(r.keyFormat))).map((r) => r.topic);
  if (topics.length === 0) return [];
  if (subjects === undefined) {
    log.warn({ topics: [...new Set(topics)] }, 'schema check skipped: no SCHEMA_REGISTRY_URL or SCHEMA_DIR, so the SDL of the AVRO, PROTOBUF and JSON_SCHEMA topics is not compared with their schemas');
    return [];
  }
  let result: SdlCheckResult;
  try {
    result = await checkSdlAgainstSchemas(schema, subjects, options);
  } catch (err) {
    log.warn({ err, source: subjects.description }, 'schema check skipped: the schema source did not answer; the SDL of the AVRO, PROTOBUF and JSON_SCHEMA topics is not compared with their schemas');
    return [];
  }
  for (const warning of result.warnings) log.warn({ topic: warning.topic, subject: warning.subject, field: warning.field }, `schema check: ${warning.message}`);
  if (result.errors.length === 0) log.info({ subjects: result.checked, warnings: result.warnings.length, keyStyle: options.keyStyle }, 'schema check: the SDL accepts every registered version of each subject');
  return result.errors.map((e) => `schema check: ${e.message}`);
}
