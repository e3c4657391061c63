// Property: for every generated selection over the real auction schema and every generated event
// (demo events, mutated ones, schema-shaped random ones with nulls, wrong types, missing fields),
// the payload renderPayload writes with the projector is byte-identical to execute + JSON.stringify,
// and so is what it writes from the envelope's text (the WebAssembly projector, decision 0043).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createKeyTransformer } from '@wirestream/transform';
import { createOperationCompiler } from '../src/core/operations/operations.js';
import { compileSubscription, renderBoth } from './support/render-paths.js';

const ws = loadWirestreamSchema(auctionSchemaPath);
// The gateway's document limits would refuse some generated documents (many directives): the property is about rendering.
const compiler = createOperationCompiler(ws, { maxCachedDocuments: 10_000, documentLimits: { maxDirectives: 1_000, maxAliases: 1_000, maxFields: 1_000 } });
const subscriptionType = ws.schema.getSubscriptionType() as GraphQLObjectType;

// --- Selections ---------------------------------------------------------------------------------

const condition = fc.constantFrom('', '', '', '', ' @include(if: true)', ' @include(if: false)', ' @skip(if: true)', ' @skip(if: false)', ' @include(if: $t)', ' @skip(if: $f)', ' @include(if: $f)');

function aliasOf(field: GraphQLField<unknown, unknown>): fc.Arbitrary<string> {
  // A shared alias on different fields is a conflict graphql-js refuses: rare, so most documents are valid.
  return fc.oneof({ weight: 20, arbitrary: fc.constantFrom('', '', '', `${field.name}A: `, `${field.name}B: `) }, { weight: 1, arbitrary: fc.constant('x: ') });
}

/** A selection set on `type`: fields (aliased, conditional), __typename, inline fragments, spreads. */
function selectionSet(type: GraphQLObjectType, spreads: boolean, depth = 0): fc.Arbitrary<string> {
  const fields = Object.values(type.getFields());
  const fieldItem = fc.oneof(
    ...fields.map((field) => {
      const named = getNamedType(field.type);
      const sub = isObjectType(named) ? selectionSet(named, spreads, depth + 1).map((s) => ` { ${s} }`) : fc.constant('');
      return fc.tuple(aliasOf(field), condition, sub).map(([alias, cond, s]) => `${alias}${field.name}${cond}${s}`);
    }),
  );
  const items: fc.Arbitrary<string>[] = [fieldItem, fieldItem, fieldItem, fc.tuple(fc.constantFrom('', 't: '), condition).map(([a, c]) => `${a}__typename${c}`)];
  if (depth < 3) {
    const inner = fc.array(fieldItem, { minLength: 1, maxLength: 3 }).map((s) => s.join(' '));
    items.push(fc.tuple(fc.constantFrom(`... on ${type.name}`, '...'), condition, inner).map(([head, cond, s]) => `${head}${cond} { ${s} }`));
  }
  if (spreads) items.push(condition.map((cond) => `...F_${type.name}${cond}`));
  return fc.array(fc.oneof(...items), { minLength: 1, maxLength: 5 }).map((s) => s.join(' '));
}

const objectTypes = Object.values(ws.schema.getTypeMap()).filter(
  (t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__') && t !== ws.schema.getQueryType() && t !== subscriptionType,
);

/** A whole subscription document on `fieldName`, with the fragment definitions and variables it uses. */
function documentOn(fieldName: 'listingUpdated' | 'bidPlaced'): fc.Arbitrary<string> {
  const payloadType = getNamedType(subscriptionType.getFields()[fieldName]?.type) as GraphQLObjectType;
  const fragmentBodies = fc.tuple(...objectTypes.map((t) => selectionSet(t, false)));
  return fc.tuple(fc.constantFrom('', 'ev: '), selectionSet(payloadType, true), fragmentBodies).map(([alias, body, bodies]) => {
    let text = `{ ${alias}${fieldName} { ${body} } }`;
    objectTypes.forEach((t, i) => {
      if (new RegExp(`\\.\\.\\.F_${t.name}\\b`).test(text)) text += ` fragment F_${t.name} on ${t.name} { ${bodies[i] ?? ''} }`;
    });
    const vars = [text.includes('$t)') ? '$t: Boolean = true' : '', text.includes('$f)') ? '$f: Boolean! = false' : ''].filter(Boolean);
    return `subscription${vars.length > 0 ? `(${vars.join(', ')})` : ''} ${text}`;
  });
}

// --- Events -------------------------------------------------------------------------------------

const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constantFrom({}, [], '', '12', '-7', '4.5', 'true', 2 ** 31, -(2 ** 31) - 1, 1.5, 0, 1e21, 'ACTIVE'),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 2 }),
  fc.dictionary(fc.constantFrom('amount_cents', 'city', 'bid_id', 'x'), fc.oneof(fc.string(), fc.integer()), { maxKeys: 2 }),
);

const MISSING = Symbol('missing');

/** A value for `type`: mostly well-formed, sometimes null, missing or of a wrong type. */
function valueFor(type: GraphQLOutputType, depth = 0): fc.Arbitrary<unknown> {
  const inner = isNonNullType(type) ? type.ofType : type;
  let valid: fc.Arbitrary<unknown>;
  if (isListType(inner)) {
    valid = fc.array(valueFor(inner.ofType, depth + 1), { maxLength: 3 });
  } else if (isObjectType(inner)) {
    const fields = Object.values(inner.getFields());
    valid = fc.tuple(...fields.map((f) => valueFor(f.type, depth + 1))).map((values) => {
      const object: Record<string, unknown> = {};
      fields.forEach((f, i) => {
        if (values[i] !== MISSING) object[f.name] = values[i];
      });
      return object;
    });
  } else {
    switch (inner.name) {
      case 'Int':
        valid = fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.constantFrom(0, -1, 2 ** 31 - 1, -(2 ** 31)));
        break;
      case 'Float':
        valid = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
        break;
      case 'Boolean':
        valid = fc.boolean();
        break;
      case 'ID':
        valid = fc.oneof(fc.string(), fc.nat());
        break;
      default:
        valid = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\u2028', '\ud800', '\u0000', '\n'));
    }
  }
  return fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constant(MISSING) }, { weight: 1, arbitrary: wrongValue });
}

/** Snake-cased demo events, as ingest publishes them. */
function demoEvents(kind: 'listing' | 'bid', count: number): Record<string, unknown>[] {
  const generator = createAuctionEventGenerator({ seed: 11 });
  const transformer = createKeyTransformer();
  return Array.from({ length: count }, () => transformer.transform<Record<string, unknown>>((kind === 'listing' ? generator.listingEvent() : generator.bidEvent()).value));
}

interface Mutation {
  readonly at: number;
  readonly action: 'delete' | 'null' | 'replace';
  readonly value: unknown;
}
const mutations = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Mutation[]>([]) },
  { weight: 3, arbitrary: fc.array(fc.record({ at: fc.nat(), action: fc.constantFrom<Mutation['action']>('delete', 'null', 'replace'), value: wrongValue }), { minLength: 1, maxLength: 3 }) },
);

/** Every [container, key] of a JSON value, depth first. */
function slots(value: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []): [Record<string, unknown> | unknown[], string | number][] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([value, i]);
      slots(item, out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, key]);
      slots(item, out);
    }
  }
  return out;
}

function mutated(event: Record<string, unknown>, changes: readonly Mutation[]): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(event)) as Record<string, unknown>;
  for (const change of changes) {
    const all = slots(copy);
    const slot = all[change.at % all.length];
    if (!slot) continue;
    const [container, key] = slot;
    if (change.action === 'delete' && !Array.isArray(container)) delete container[key as string];
    else (container as Record<string | number, unknown>)[key] = change.action === 'null' ? null : change.value;
  }
  return copy;
}

/** What decodeEnvelope would hand over: JSON data (undefined keys dropped, NaN as null, -0 as 0). */
function asJson(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

// --- The property -------------------------------------------------------------------------------

describe.each([
  ['listingUpdated', 'listing'],
  ['bidPlaced', 'bid'],
] as const)('projector ≡ execute on %s', (fieldName, kind) => {
  const events = demoEvents(kind, 40);
  const payloadType = getNamedType(subscriptionType.getFields()[fieldName]?.type) as GraphQLObjectType;
  const eventOf = fc.oneof(
    fc.tuple(fc.constantFrom(...events), mutations).map(([event, changes]) => mutated(event, changes)),
    valueFor(payloadType).map((v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {})),
  );

  it('writes byte-identical payloads for generated selections and events', () => {
    let runs = 0;
    let valid = 0;
    let projected = 0;
    let fromBytes = 0;
    fc.assert(
      fc.property(documentOn(fieldName), fc.array(eventOf, { minLength: 1, maxLength: 4 }), (query, payloads) => {
        runs++;
        const result = compiler.compile({ query });
        // Overlapping aliases make some generated documents invalid: graphql-js refuses them, so does the gateway.
        if (!result.ok) return;
        valid++;
        const op = compileSubscription(compiler, { query });
        expect(op.projector, 'every operation over the auction schema is projectable').toBeDefined();
        for (const payload of payloads) {
          const both = renderBoth(ws, op, asJson(payload));
          if (both.projected !== undefined) projected++;
          if (both.fromBytes !== undefined) fromBytes++;
          expect(both.rendered).toBe(both.executed);
          // From the envelope's text (the WebAssembly projector where it does not decline): the bytes decodeEnvelope's
          // object renders to (`rendered` but for an integer beyond 2^53 − 1, which decodeEnvelope keeps as digits).
          expect(both.fromText).toBe(both.fromDecoded);
          if (both.fromBytes !== undefined) expect(both.fromBytes).toBe(both.fromDecoded);
        }
      }),
      { numRuns: 1_000 },
    );
    console.info(`${fieldName}: ${runs} runs, ${valid} valid documents, ${projected} events projected, ${fromBytes} of them from bytes`);
    // The fast path must be what is tested, not only the fallback.
    expect(valid).toBeGreaterThan(runs / 2);
    expect(projected).toBeGreaterThan(valid / 4);
    expect(fromBytes).toBeGreaterThan(projected / 4);
  });
});
