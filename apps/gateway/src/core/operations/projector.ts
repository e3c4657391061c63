/**
 * The projector: one distinct operation compiled once into a plan that writes its `data` JSON
 * straight from an event's payload, with no graphql-js `execute` and no result object per event.
 *
 * It is an exact stand-in for `execute` + `JSON.stringify`, or it declines:
 * - at compile time (no projector; `execute` serves the whole operation) for what it does not
 *   model: a custom resolver or `isTypeOf` on any selected field or type, an abstract (interface or
 *   union) type, a root field other than the route's, a field name that `Object.prototype` has (the
 *   default resolver would call the inherited function), arguments or variables graphql-js rejects;
 * - per event (`project` returns undefined; `execute` serves that event) wherever graphql-js would
 *   report an error or coerce something we do not copy: a null or missing non-null field, a list
 *   that is not an array, an object that is not a plain object, a leaf value its scalar's
 *   `serialize` refuses or turns into a non-primitive. So the errors, their messages, locations,
 *   paths and null propagation always come from graphql-js itself.
 *
 * Fields are collected by graphql-js's own `collectFields` (merging, fragments, `@skip`/`@include`
 * with the operation's variables, first-occurrence order), so field order is graphql-js's.
 * The payload must be JSON data (what `decodeEnvelope` returns): no functions, Errors or Dates.
 */
import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  Kind,
  OperationTypeNode,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
// Not re-exported by graphql's index; graphql is pinned, and reusing it is what makes the order exact.
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js';
import { isRawJson, rawJson } from './raw-json.js';
import { compileBytePlan, type BytePlan } from './byte-plan.js';
import { BOOLEAN, FLOAT, ID, INT, LIST, OBJECT, OTHER_LEAF, STRING, TYPENAME, type FieldPlan, type ValuePlan } from './projection-plan.js';

/** A compiled operation: writes the `data` JSON of one event, or declines that event. */
export interface Projector {
  /**
   * `prefix`, the `data` JSON of this payload, then `suffix`, as one flat string: the data
   * byte-identical to `JSON.stringify(execute(…).data)`. Undefined when graphql-js must execute
   * this event (it would report an error, or coerce a value the projector does not copy).
   */
  project(payload: Readonly<Record<string, unknown>>, prefix?: string, suffix?: string): string | undefined;
  /** The same plan for the WebAssembly projector (byte-projector.ts); undefined when a value needs its scalar's `serialize`. */
  readonly bytes: BytePlan | undefined;
}

/** What {@link compileProjector} needs of an operation (a `CompiledSubscription` has it all). */
export interface ProjectableOperation {
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  /** Coerced variables of the request, as `execute` receives them. */
  readonly variables: Record<string, unknown>;
  /** The Subscription field whose value is the event payload. */
  readonly fieldName: string;
}

const BUILT_IN_KINDS = new Map<GraphQLLeafType, number>([
  [GraphQLString, STRING],
  [GraphQLInt, INT],
  [GraphQLFloat, FLOAT],
  [GraphQLBoolean, BOOLEAN],
  [GraphQLID, ID],
]);

/** Thrown while compiling when the operation needs `execute`; caught by {@link compileProjector}. */
class NotProjectable extends Error {}

interface CompileContext {
  readonly schema: GraphQLSchema;
  readonly fragments: Record<string, FragmentDefinitionNode>;
  readonly variables: { [variable: string]: unknown };
}

/**
 * Compiles an operation into a {@link Projector}, or says why (`reason`) when
 * `execute` must serve it. Runs once per distinct operation.
 */
export function compileProjector(
  schema: GraphQLSchema,
  operation: ProjectableOperation,
): { readonly projector: Projector; readonly reason?: undefined } | { readonly projector?: undefined; readonly reason: string } {
  try {
    return { projector: generateProjector(compileRoot(schema, operation), operation.fieldName) };
  } catch (err) {
    if (err instanceof NotProjectable) return { reason: err.message };
    throw err;
  }
}

function compileRoot(schema: GraphQLSchema, operation: ProjectableOperation): readonly FieldPlan[] {
  const definition = getOperationAST(operation.document, operation.operationName);
  const rootType = schema.getSubscriptionType();
  if (!definition || definition.operation !== OperationTypeNode.SUBSCRIPTION || !rootType) throw new NotProjectable('not a subscription of this schema');
  // execute coerces the variables again; so does the projector, to decide @skip/@include alike.
  const coerced = getVariableValues(schema, definition.variableDefinitions ?? [], operation.variables);
  if (coerced.errors) throw new NotProjectable('its variables do not coerce');
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const def of operation.document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = def;
  }
  const ctx: CompileContext = { schema, fragments, variables: coerced.coerced };
  const fields = compileFields(ctx, rootType, collectFields(schema, fragments, ctx.variables, rootType, definition.selectionSet));
  for (const field of fields) {
    // The root value is `{ [fieldName]: payload }`: any other root field would resolve to undefined.
    if (field.value.kind !== TYPENAME && field.prop !== operation.fieldName) throw new NotProjectable(`root field ${field.prop} is not the route's`);
  }
  return fields;
}

function compileFields(ctx: CompileContext, parentType: GraphQLObjectType, collected: Map<string, readonly FieldNode[]>): FieldPlan[] {
  if (parentType.isTypeOf) throw new NotProjectable(`${parentType.name} has an isTypeOf check`);
  const plans: FieldPlan[] = [];
  for (const [responseKey, fieldNodes] of collected) {
    const node = fieldNodes[0];
    if (!node) continue;
    const prefix = (plans.length === 0 ? '' : ',') + JSON.stringify(responseKey) + ':';
    const name = node.name.value;
    if (name === '__typename') {
      plans.push({ prefix, prop: name, value: typenamePlan(parentType) });
      continue;
    }
    if (name.startsWith('__')) throw new NotProjectable(`introspection field ${name}`);
    const fieldDef = parentType.getFields()[name];
    if (!fieldDef) continue; // execute skips a field its type lacks (validation already refused it)
    if (fieldDef.resolve) throw new NotProjectable(`${parentType.name}.${name} has a custom resolver`);
    if (name in Object.prototype) throw new NotProjectable(`${parentType.name}.${name} is inherited by every object`);
    try {
      // execute computes these before resolving; the default resolver ignores them, but they may throw.
      getArgumentValues(fieldDef, node, ctx.variables);
    } catch {
      throw new NotProjectable(`the arguments of ${parentType.name}.${name} do not coerce`);
    }
    plans.push({ prefix, prop: fieldDef.name, value: compileValue(ctx, fieldDef.type, fieldNodes) });
  }
  return plans;
}

function compileValue(ctx: CompileContext, type: GraphQLOutputType, fieldNodes: readonly FieldNode[]): ValuePlan {
  const nonNull = isNonNullType(type);
  const nullable = nonNull ? type.ofType : type;
  if (isListType(nullable)) return plan(LIST, nonNull, { item: compileValue(ctx, nullable.ofType, fieldNodes) });
  if (isLeafType(nullable)) {
    const builtIn = BUILT_IN_KINDS.get(nullable);
    return plan(builtIn ?? OTHER_LEAF, nonNull, { leaf: nullable });
  }
  if (isObjectType(nullable)) {
    const collected = collectSubfields(ctx.schema, ctx.fragments, ctx.variables, nullable, fieldNodes);
    return plan(OBJECT, nonNull, { fields: compileFields(ctx, nullable, collected) });
  }
  throw new NotProjectable(`abstract type ${nullable.name}`);
}

function typenamePlan(type: GraphQLObjectType): ValuePlan {
  return plan(TYPENAME, true, { constant: JSON.stringify(type.name) });
}

function plan(kind: number, nonNull: boolean, parts: Partial<Pick<ValuePlan, 'leaf' | 'fields' | 'item' | 'constant'>>): ValuePlan {
  return { kind, nonNull, leaf: parts.leaf, fields: parts.fields ?? [], item: parts.item, constant: parts.constant ?? '' };
}

/*
 * The writer of each operation is generated code (as protobufjs generates its decoders, and as
 * packages/registry writes Protobuf JSON): one function per plan that reads the payload with
 * named property loads (monomorphic: the payloads of one topic share their shapes) and appends
 * the JSON text to one string, each field's key merged with the punctuation around it into one
 * constant. The generated text holds only JSON-quoted response keys, property names and type
 * names, indexes into the plan's leaf types, and fresh variable names: never data. It returns
 * undefined (let graphql-js execute this event) exactly where the plan says `execute` must answer.
 *
 * The text builds a rope (cheap to build) flattened once at the end: every frame written from a
 * rope would walk its hundreds of pieces again (decision 0010).
 */

/** Text written before a value: a constant known while generating, or an expression of the generated code. */
type Lead = { readonly text: string; readonly code?: undefined } | { readonly text?: undefined; readonly code: string };

const text = (t: string): Lead => ({ text: t });

/** Code of an expression: the lead, then the constant `more`. */
function leadWith(lead: Lead, more: string): string {
  if (lead.text !== undefined) return JSON.stringify(lead.text + more);
  return more === '' ? `(${lead.code})` : `(${lead.code}) + ${JSON.stringify(more)}`;
}

/** Code of an expression: the lead, then the value of expression `value`. */
function leadThen(lead: Lead, value: string): string {
  return lead.text === '' ? value : `${leadWith(lead, '')} + ${value}`;
}

class Generator {
  /** OTHER_LEAF types, by the index the code passes to `S`. */
  readonly leaves: GraphQLLeafType[] = [];
  private names = 0;

  fresh(): string {
    return `v${this.names++}`;
  }

  /** Statements appending `lead` and the JSON of the value in variable `x` to `o`; `return;` where execute must answer. */
  value(plan: ValuePlan, x: string, lead: Lead): string {
    const isNull = `if (${x} === null || ${x} === undefined) ${plan.nonNull ? 'return undefined;' : `o += ${leadWith(lead, 'null')};`}`;
    return `${isNull}\nelse ${this.nonNullValue(plan, x, lead)}`;
  }

  private nonNullValue(plan: ValuePlan, x: string, lead: Lead): string {
    switch (plan.kind) {
      case STRING:
      case ID:
        return `if (typeof ${x} === 'string') o += P(${x}) ? ${leadWith(lead, '"')} + ${x} + '"' : ${leadThen(lead, `J(${x})`)};\nelse ${this.serialized(plan, x, lead)}`;
      case INT:
        // In int32 range and integral (-0 | 0 is 0, and both print "0").
        return `if (typeof ${x} === 'number' && (${x} | 0) === ${x}) o += ${leadWith(lead, '')} + ${x};\nelse ${this.serialized(plan, x, lead)}`;
      case FLOAT:
        // Number's toString is JSON's for every finite number.
        return `if (typeof ${x} === 'number' && F(${x})) o += ${leadWith(lead, '')} + ${x};\nelse ${this.serialized(plan, x, lead)}`;
      case BOOLEAN:
        return `if (${x} === true) o += ${leadWith(lead, 'true')};\nelse if (${x} === false) o += ${leadWith(lead, 'false')};\nelse ${this.serialized(plan, x, lead)}`;
      case OBJECT:
        // Arrays and non-objects resolve every field to undefined in graphql-js: let it say so.
        return `if (typeof ${x} !== 'object' || Array.isArray(${x})) return undefined;\nelse {\n${this.fields(plan.fields, (prop) => `${x}[${JSON.stringify(prop)}]`, lead)}\n}`;
      case LIST:
        return this.list(plan.item as ValuePlan, x, lead);
      default:
        return this.serialized(plan, x, lead);
    }
  }

  /** A leaf off the canonical path (or an enum, a custom scalar): the scalar's own `serialize` decides. */
  private serialized(plan: ValuePlan, x: string, lead: Lead): string {
    const s = this.fresh();
    this.leaves.push(plan.leaf as GraphQLLeafType);
    return `{ const ${s} = S(${this.leaves.length - 1}, ${x}); if (${s} === undefined) return undefined; o += ${leadThen(lead, s)}; }`;
  }

  private list(item: ValuePlan, x: string, lead: Lead): string {
    const i = this.fresh();
    const y = this.fresh();
    const itemLead: Lead = { code: `${i} === 0 ? ${leadWith(lead, '[')} : ','` };
    return (
      `if (!Array.isArray(${x})) return undefined;\n` +
      `else if (${x}.length === 0) o += ${leadWith(lead, '[]')};\n` +
      `else {\nfor (let ${i} = 0; ${i} < ${x}.length; ${i}++) {\nconst ${y} = ${x}[${i}];\n${this.value(item, y, itemLead)}\n}\no += ']';\n}`
    );
  }

  /** Statements writing `lead`, `{`, the fields of an object (`read` is the code reading one of its properties) and `}`. */
  fields(fields: readonly FieldPlan[], read: (prop: string) => string, lead: Lead): string {
    const out: string[] = [];
    let pending: Lead = lead.text !== undefined ? text(lead.text + '{') : lead;
    if (pending.code !== undefined) {
      out.push(`o += ${leadWith(pending, '{')};`);
      pending = text('');
    }
    for (const field of fields) {
      const keyed = (pending.text as string) + field.prefix;
      if (field.value.kind === TYPENAME) {
        pending = text(keyed + field.value.constant);
        continue;
      }
      const v = this.fresh();
      out.push(`const ${v} = ${read(field.prop)};`, this.value(field.value, v, text(keyed)));
      pending = text('');
    }
    out.push(`o += ${leadWith(pending, '}')};`);
    return out.join('\n');
  }
}

type ProjectFunction = Projector['project'];
type ProjectFactory = (
  leaves: readonly GraphQLLeafType[],
  serialized: (leaf: GraphQLLeafType, value: unknown) => string | undefined,
  plain: (value: string) => boolean,
) => ProjectFunction;

/**
 * Generated factories by their source: operations of one shape (the same selection, other names
 * or ids) share one compiled function body, so V8 parses and optimizes it once, and one byte plan. Bounded: past the
 * bound the oldest shape is forgotten (its operations keep their functions).
 */
const factories = new Map<string, { readonly factory: ProjectFactory; readonly bytes: BytePlan | undefined }>();
const MAX_FACTORIES = 2_000;

function generateProjector(root: readonly FieldPlan[], fieldName: string): Projector {
  const g = new Generator();
  // The root value is `{ [fieldName]: payload }`: the route's field resolves to the payload (and
  // compileRoot refused any other root field but __typename).
  const body = g.fields(root, (prop) => (prop === fieldName ? 'p' : 'undefined'), text(''));
  const source =
    `'use strict';\nconst S = (k, x) => serialized(leaves[k], x), J = JSON.stringify, F = Number.isFinite, P = plain;\n` +
    `return function project(p, prefix = "", suffix = "") {\nlet o = prefix;\n${body}\no += suffix;\n` +
    // Reading a character flattens a rope in place (V8 copies it into one flat string once).
    `o.charCodeAt(0);\nreturn o;\n};`;
  let shape = factories.get(source);
  if (shape === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the plan: JSON-quoted names and fresh variables, never data (see above)
    shape = { factory: new Function('leaves', 'serialized', 'plain', source) as ProjectFactory, bytes: compileBytePlan(root) };
    if (factories.size >= MAX_FACTORIES) factories.delete(factories.keys().next().value as string);
    factories.set(source, shape);
  }
  return { project: shape.factory(g.leaves, serializedJson, isPlainString), bytes: shape.bytes };
}

// Every character JSON.stringify escapes: '"', '\\', C0 controls, and surrogates (it escapes lone
// ones; a pair is left to JSON.stringify too, which writes it as is). A plain string (nearly all)
// is quoted directly: a regex test costs half of a JSON.stringify call.
// eslint-disable-next-line no-control-regex -- the C0 controls are exactly what JSON escapes
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * True when JSON.stringify writes the string as it is between quotes. Short strings (ids, names,
 * codes: most leaves) are checked by a loop V8 inlines into the generated writer, long ones by the
 * regex (native, and faster once the call's cost is spread over enough characters).
 */
function isPlainString(value: string): boolean {
  const n = value.length;
  if (n > SHORT_STRING) return !NEEDS_ESCAPING.test(value);
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    // '"', '\\', a C0 control, or a surrogate (0xd800–0xdfff)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c & 0xf800) === 0xd800) return false;
  }
  return true;
}
const SHORT_STRING = 32;

/**
 * A leaf value off the canonical path (an ID as a number, an Int as a string, an enum, a custom
 * scalar): the scalar's own `serialize` decides. A 64-bit integer beyond 2^53 − 1 comes as raw JSON
 * (decodeEnvelope keeps its digits): a custom scalar that passes it through (`Long`) writes its digits.
 */
function serializedJson(leaf: GraphQLLeafType, value: unknown): string | undefined {
  const type = typeof value;
  // Objects go through graphql-js's valueOf/toJSON rules, and their errors come from graphql-js.
  if (isRawJson(value)) return rawIntegerJson(leaf, value.rawJSON);
  if (type !== 'string' && type !== 'number' && type !== 'boolean') return undefined;
  let serialized: unknown;
  try {
    serialized = leaf.serialize(value);
  } catch {
    return undefined;
  }
  // JSON.stringify of a primitive alone is what it writes for it inside the result object.
  if (typeof serialized === 'string' || typeof serialized === 'number' || typeof serialized === 'boolean') return JSON.stringify(serialized);
  if (isRawJson(serialized)) return serialized.rawJSON;
  return undefined;
}

/**
 * An integer beyond 2^53 − 1, as its digits: a String or ID gets every digit as a string, a Float
 * the nearest double (as before), an Int is an error (execute says so); a custom scalar's
 * `serialize` gets the raw value, and one that passes it through (`Long`) writes the digits.
 */
function rawIntegerJson(leaf: GraphQLLeafType, digits: string): string | undefined {
  if (leaf === GraphQLString || leaf === GraphQLID) return `"${digits}"`;
  if (leaf === GraphQLFloat) return String(Number(digits));
  if (BUILT_IN_KINDS.has(leaf)) return undefined;
  let serialized: unknown;
  try {
    serialized = leaf.serialize(rawJson(digits));
  } catch {
    return undefined;
  }
  if (isRawJson(serialized)) return serialized.rawJSON;
  if (typeof serialized === 'string' || typeof serialized === 'number' || typeof serialized === 'boolean') return JSON.stringify(serialized);
  return undefined;
}
