// Property (decision 0043): an event rendered from its envelope's text by the WebAssembly projector is
// byte for byte what the JavaScript path writes from `decodeEnvelope`'s object, whatever the text's
// spelling (whitespace, escapes, number forms, repeated and escaped keys) and whatever the group's
// filter; and the scan accepts only what decodeEnvelope reads the same way.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createKeyTransformer } from '@wirestream/transform';
import { decodeEnvelope, encodeEnvelopeHead, type Envelope } from '@wirestream/wire';
import { createOperationCompiler, type CompiledSubscription } from '../src/core/operations/operations.js';
import { createRenderer, renderPayload } from '../src/core/delivery/render.js';
import { createHubStats } from '../src/core/delivery/stats.js';
import { createByteProjector, projectBytes, scanEnvelope } from '../src/core/operations/byte-projector.js';
import { compileSubscription, renderFromText } from './support/render-paths.js';
import { FULL_BID, FULL_LISTING } from './support/selections.js';

const ws = loadWirestreamSchema(auctionSchemaPath);
const compiler = createOperationCompiler(ws);
const renderer = createRenderer(ws, createHubStats());

const generator = createAuctionEventGenerator({ seed: 5 });
const transformer = createKeyTransformer();
const listings = Array.from({ length: 30 }, () => transformer.transform<Record<string, unknown>>(generator.listingEvent().value));
const bids = Array.from({ length: 30 }, () => transformer.transform<Record<string, unknown>>(generator.bidEvent().value));

const operations: CompiledSubscription[] = [
  `subscription { listingUpdated { ${FULL_LISTING} } }`,
  `subscription { listingUpdated(listing_id: "lst-000003") { ${FULL_LISTING} } }`,
  `subscription { listingUpdated(listing_id: "lst-000003", event_type: "PriceChanged") { __typename a: listing_id listing { t: title title current_price { amount_cents } } } }`,
  `subscription { bidPlaced { ${FULL_BID} } }`,
  // A number in the payload matches its decimal text; a clause that is not ASCII is compared as UTF-8.
  `subscription { listingUpdated(listing_id: "3") { listing_id event_type } }`,
  `subscription { listingUpdated(event_type: "é") { listing_id } }`,
  `subscription { bidPlaced(listing_id: "lst-000003") { amount { amount_cents } previous_high_bid { amount { amount_cents } __typename } } }`,
].map((query) => compileSubscription(compiler, { query }));

// --- Spellings of one JSON value ----------------------------------------------------------------

const ws0 = fc.constantFrom('', '', '', ' ', '\n', '\t ', '\r\n  ');

/** A string's JSON: each character as is (or as JSON.stringify escapes it), or as an escape JSON.parse reads back the same. */
function stringSpelling(value: string): fc.Arbitrary<string> {
  const chars = [...value];
  return fc.array(fc.nat(7), { minLength: chars.length, maxLength: chars.length }).map((ways) => {
    let out = '"';
    chars.forEach((ch, i) => {
      const way = ways[i] ?? 0;
      const code = ch.codePointAt(0) as number;
      const plain = JSON.stringify(ch).slice(1, -1);
      if (way === 1 && code < 0x10000) out += '\\u' + code.toString(16).padStart(4, '0');
      else if (way === 2 && code < 0x10000) out += '\\u' + code.toString(16).toUpperCase().padStart(4, '0');
      else if (way === 3 && ch === '/') out += '\\/';
      else out += plain;
    });
    return out + '"';
  });
}

/** A number's JSON: its shortest form, or another JSON.parse reads as the same number (1.50, 15e-1, -0…). */
function numberSpelling(value: number): fc.Arbitrary<string> {
  const forms = [String(value), value.toExponential(), value.toExponential().replace('e+', 'E'), `${value}e0`];
  if (Number.isInteger(value)) forms.push(`${value}.0`, `${value}.00`, value === 0 ? '-0' : String(value));
  else forms.push(`${value}0`, value.toPrecision(17));
  return fc.constantFrom(...forms.filter((f) => Number(f) === value || (value === 0 && Number(f) === 0)));
}

/** Any spelling of `value`: whitespace, escapes, number forms, and in objects a decoy before a repeated key, or an escaped key. */
function spelling(value: unknown): fc.Arbitrary<string> {
  // Mostly the spelling JSON.stringify writes (what ingest publishes), sometimes another.
  if (typeof value === 'string') return fc.oneof({ weight: 9, arbitrary: fc.constant(JSON.stringify(value)) }, { weight: 1, arbitrary: stringSpelling(value) });
  if (typeof value === 'number') return fc.oneof({ weight: 9, arbitrary: fc.constant(JSON.stringify(value)) }, { weight: 1, arbitrary: numberSpelling(value) });
  if (value === null || typeof value === 'boolean') return fc.constant(JSON.stringify(value));
  if (Array.isArray(value)) {
    if (value.length === 0) return ws0.map((s) => `[${s}]`);
    return fc.tuple(...value.map((item) => fc.tuple(ws0, spelling(item), ws0))).map((items) => '[' + items.map(([a, v, b]) => a + v + b).join(',') + ']');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return ws0.map((s) => `{${s}}`);
  const member = ([key, item]: [string, unknown]): fc.Arbitrary<string> =>
    fc.tuple(fc.nat(60), ws0, spelling(item), ws0).map(([way, a, v, b]) => {
      const k = way === 0 ? JSON.stringify(key).replace(/[a-z]/, (c) => '\\u00' + c.charCodeAt(0).toString(16)) : JSON.stringify(key);
      const decoy = way === 1 ? `${JSON.stringify(key)}:"decoy",` : way === 2 ? `${JSON.stringify(key)}:{"x":[1,"}"]},` : '';
      return decoy + a + k + b + ':' + a + v + b;
    });
  return fc.tuple(...entries.map(member)).map((members) => '{' + members.join(',') + '}');
}

/** A demo event with some of its values replaced (wrong kinds, edge numbers and strings) and some keys removed. */
const changed = fc.oneof(
  fc.constantFrom<unknown>(null, 0, -1, 3, 3.5, '3', 2 ** 31, -(2 ** 31), 1.5, 0.1, 1e-7, 1e21, 123456789012345680000, 'x', '', 'é', 'a"b', 'a\\b', '\u0007', '\u2028', 'lst-000003', true, false, [], {}),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
);

function mutate(event: Record<string, unknown>, changes: readonly [number, unknown, boolean][]): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(event)) as Record<string, unknown>;
  for (const [at, value, remove] of changes) {
    const slots: [Record<string, unknown> | unknown[], string | number][] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) {
        v.forEach((item, i) => {
          slots.push([v, i]);
          walk(item);
        });
      } else if (v !== null && typeof v === 'object') {
        for (const [k, item] of Object.entries(v)) {
          slots.push([v as Record<string, unknown>, k]);
          walk(item);
        }
      }
    };
    walk(copy);
    const slot = slots[at % slots.length];
    if (slot === undefined) continue;
    const [container, key] = slot;
    if (remove && !Array.isArray(container)) delete container[key as string];
    else (container as Record<string | number, unknown>)[key] = value;
  }
  return copy;
}

const eventOf = (events: Record<string, unknown>[]): fc.Arbitrary<Record<string, unknown>> =>
  fc.tuple(fc.constantFrom(...events), fc.array(fc.tuple(fc.nat(), changed, fc.boolean()), { maxLength: 3 }), fc.constantFrom('lst-000003', 'lst-000004', 3)).map(([event, changes, id]) => ({
    ...mutate(event, changes),
    ...(changes.length % 2 === 0 ? { listing_id: id } : {}),
  }));

const ENVELOPE_FIELDS = ['v', 'topic', 'partition', 'offset', 'key', 'ts', 'tp', 'tr', 'h', 'deleted', 'payload'];
const head = encodeEnvelopeHead({ topic: 'listing-events', partition: 2, offset: '41', key: 'lst-000003', ts: 1_700_000_000_000 });

function renderedBothWays(op: CompiledSubscription, text: string): { fromText: string | undefined; reference: string | undefined } {
  const decoded = decodeEnvelope(text);
  const extensions = { position: { topic: decoded.topic, partition: decoded.partition, offset: decoded.offset } };
  const reference = renderPayload(renderer, { op, context: undefined }, decoded, extensions);
  const { fromText } = renderFromText(renderer, op, decoded, extensions, undefined, text);
  if (typeof reference === 'object') throw new Error('expected a synchronous render');
  return { fromText, reference };
}

describe('the WebAssembly projector ≡ the JavaScript path, from any spelling of the envelope', () => {
  it('writes what the JavaScript path writes (or declines) for generated spellings, events and filters', () => {
    let fromBytes = 0;
    let runs = 0;
    const bytes = renderer.bytes;
    if (bytes === undefined) throw new Error('the renderer has no WebAssembly projector');
    fc.assert(
      fc.property(fc.nat(operations.length - 1), fc.oneof(eventOf(listings), eventOf(bids)).chain((e) => fc.oneof({ weight: 2, arbitrary: fc.constant(JSON.stringify(e)) }, { weight: 3, arbitrary: spelling(e) })), ws0, (k, payloadText, space) => {
        const op = operations[k] as CompiledSubscription;
        const text = head + space + payloadText + space + '}';
        const { fromText, reference } = renderedBothWays(op, text);
        expect(fromText).toBe(reference);
        runs++;
        const scanned = scanEnvelope(bytes, text);
        const plan = op.projector?.bytes;
        // Written or filtered out by the module (NO_MATCH), not declined.
        if (scanned !== undefined && plan !== undefined && projectBytes(bytes, scanned, plan, op.filter, '}') !== undefined) fromBytes++;
      }),
      { numRuns: 3_000 },
    );
    console.info(`byte projector: ${runs} events, ${fromBytes} decided from bytes`);
    expect(fromBytes).toBeGreaterThan(runs / 5);
  });

  it('writes every demo event of the full selections from bytes, as the JavaScript path does', () => {
    for (const [query, events] of [[`subscription { listingUpdated { ${FULL_LISTING} } }`, listings], [`subscription { bidPlaced { ${FULL_BID} } }`, bids]] as const) {
      const op = compileSubscription(compiler, { query });
      for (const event of events) {
        const text = head + JSON.stringify(event) + '}';
        const decoded = decodeEnvelope(text);
        const extensions = { position: { topic: decoded.topic, partition: decoded.partition, offset: decoded.offset } };
        const { fromText, fromBytes } = renderFromText(renderer, op, decoded, extensions, undefined, text);
        expect(fromBytes).toBeDefined();
        expect(fromText).toBe(renderPayload(renderer, { op, context: undefined }, decoded, extensions));
      }
    }
  });

  it('grows its regions for a long envelope (input, jump table, output), and leaves one past its bound to JavaScript', () => {
    const op = compileSubscription(compiler, { query: `subscription { listingUpdated { ${FULL_LISTING} } }` });
    const fresh = createRenderer(ws, createHubStats());
    const bytes = fresh.bytes;
    if (bytes === undefined) throw new Error('the renderer has no WebAssembly projector');
    for (const [length, written] of [[100_000, true], [200_000, true], [300_000, false]] as const) {
      const event = { ...(listings[1] as Record<string, unknown>), listing: { ...((listings[1] as Record<string, unknown>)['listing'] as object), description: 'é'.repeat(length) } };
      const text = head + JSON.stringify(event) + '}';
      const decoded = decodeEnvelope(text);
      const extensions = { position: { topic: decoded.topic, partition: decoded.partition, offset: decoded.offset } };
      const { fromText, fromBytes } = renderFromText(fresh, op, decoded, extensions, undefined, text);
      expect(fromText).toBe(renderPayload(fresh, { op, context: undefined }, decoded, extensions));
      expect(fromBytes !== undefined, `${length} characters`).toBe(written);
    }
    expect(bytes.inputCap).toBeGreaterThanOrEqual(600_000);
  });

  it('scans only what decodeEnvelope reads, and reads it the same way', () => {
    const bytes = createByteProjector();
    const valid = head + JSON.stringify(listings[0]) + '}';
    const mutation = fc.tuple(fc.nat(valid.length), fc.nat(3), fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', ' ', '1', '-', '.', 'e', 'n', 'é', '\u0000', '\ud800', 'payload'));
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (changes) => {
        let text = valid;
        for (const [at, cut, insert] of changes) text = text.slice(0, at) + insert + text.slice(at + cut);
        let scanned: Envelope | undefined;
        try {
          scanned = scanEnvelope(bytes, text);
        } catch (err) {
          // A head that breaks the contract: the error decodeEnvelope throws.
          expect(() => decodeEnvelope(text)).toThrow((err as Error).message);
          return;
        }
        if (scanned === undefined) return;
        const decoded = decodeEnvelope(text); // throws (fails the property) where the scan accepted a text decodeEnvelope refuses
        const fields = (e: object): Record<string, unknown> => Object.fromEntries(ENVELOPE_FIELDS.map((f) => [f, (e as Record<string, unknown>)[f]]));
        expect(fields(scanned)).toEqual(fields(decoded));
      }),
      { numRuns: 3_000 },
    );
    // The layouts it leaves to decodeEnvelope: the payload not last, a repeated or escaped "payload", a non-ASCII head.
    for (const text of [
      '{"v":1,"payload":{},"topic":"t","partition":0,"offset":"1","key":null,"ts":1}',
      `${head}{},"payload":{}}`,
      '{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":1,"p\\u0061yload":{"a":1},"payload":{}}',
      '{"v":1,"topic":"té","partition":0,"offset":"1","key":null,"ts":1,"payload":{}}',
      '{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":1,"h":{"id":"12345678901234567"},"payload":{}}',
    ]) {
      expect(scanEnvelope(bytes, text), text).toBeUndefined();
      expect(() => decodeEnvelope(text)).not.toThrow();
    }
  });
});
