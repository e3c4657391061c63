// Property (decision 0039): routing an event by its key through the index delivers exactly what
// testing every group of the channel delivered. Generated subscriptions pin the routing key in every
// way there is (the key argument, a `where` with `eq`/`in` on the key field or on `_key`, a filter
// bound to a claim) or pin nothing (no filter, `or`, `ne`, other fields), on a route with a key
// field and on one without (sharded by the Kafka key); generated events carry the key as text, as a
// number, as null, as a list or not at all, with a Kafka key or none. The reference is the scan: an
// event reaches a subscriber when it arrives on one of its channels and its filters match it.
// Events come with the routing key ingest's batch parts give (or none, as a single envelope or where
// ingest cannot say it exactly), so the hub's early drop of events no group pins is held to it too.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createWirestreamSchema, matchesFilter } from '@wirestream/schema';
import { channelName, encodeEnvelope, ROUTED_ON_KAFKA_KEY, routingKeyText, shardOf, type Envelope, type EnvelopeRoute } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { waitFor } from '@wirestream/testkit';
import { createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter } from '../src/index.js';
import type { AccessScope } from '../src/core/operations/operations.js';
import { parseFilterRules, type BoundFilter } from '../src/core/operations/where-bound.js';

const ws = createWirestreamSchema(`
type Subscription {
  ev(id: ID, kind: String): Ev @topic(name: "evs", key: "id", shards: 3)
  nk(kind: String): Ev @topic(name: "nks", shards: 2)
}
type Ev { id: ID, kind: String, n: Int }
`);
const compiler = createOperationCompiler(ws, { maxCachedDocuments: 100_000 });
const ID_RULE = parseFilterRules(['id=ids'])[0];
const KEY_RULE = parseFilterRules(['_key=keys'])[0];

const ids = fc.constantFrom('1', '2', '10', 'a');
const kinds = fc.constantFrom('x', 'y');
const idList = fc.array(ids, { minLength: 0, maxLength: 3 });

/** A `where` on Ev: pinning the key field or `_key` (eq, in), or not pinning (ne, or, another field), or several ANDed. */
const whereArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  ids.map((id) => ({ id: { eq: id } })),
  idList.map((list) => ({ id: { in: list } })),
  ids.map((id) => ({ _key: { eq: id } })),
  idList.map((list) => ({ _key: { in: list } })),
  fc.tuple(ids, kinds).map(([id, kind]) => ({ id: { eq: id }, kind: { eq: kind } })),
  fc.tuple(ids, ids).map(([a, b]) => ({ or: [{ id: { eq: a } }, { _key: { eq: b } }] })),
  ids.map((id) => ({ id: { ne: id } })),
  kinds.map((kind) => ({ kind: { eq: kind } })),
  fc.tuple(ids, ids).map(([a, b]) => ({ and: [{ _key: { eq: a } }, { id: { in: [a, b] } }] })),
);

interface SubscriptionCase {
  readonly field: 'ev' | 'nk';
  readonly id: string | undefined;
  readonly kind: string | undefined;
  readonly where: Record<string, unknown> | undefined;
  /** A filter bound to a claim: the payload key field's or the Kafka key's values. */
  readonly bound: { readonly rule: 'id' | 'key'; readonly values: string[] } | undefined;
}

const subscriptionArb: fc.Arbitrary<SubscriptionCase> = fc.record({
  field: fc.constantFrom('ev', 'nk'),
  id: fc.option(ids, { nil: undefined }),
  kind: fc.option(kinds, { nil: undefined, freq: 4 }),
  where: fc.option(whereArb, { nil: undefined, freq: 3 }),
  bound: fc.option(fc.record({ rule: fc.constantFrom('id' as const, 'key' as const), values: fc.array(ids, { minLength: 1, maxLength: 2 }) }), { nil: undefined, freq: 4 }),
});

interface EventCase {
  /** The payload's key field: text, a number, null, a list, or absent. */
  readonly id: unknown;
  readonly key: string | null;
  readonly kind: string;
}

const eventArb: fc.Arbitrary<EventCase> = fc.record({
  id: fc.oneof({ weight: 6, arbitrary: ids }, fc.constantFrom(10, 2, null, undefined, ['1'], true)),
  key: fc.oneof({ weight: 4, arbitrary: ids }, fc.constant(null)),
  kind: kinds,
});

function compile(c: SubscriptionCase): CompiledSubscription {
  const args = [c.field === 'ev' && c.id !== undefined ? `id: "${c.id}"` : '', c.kind === undefined ? '' : `kind: "${c.kind}"`, c.where === undefined ? '' : 'where: $w'].filter((a) => a !== '');
  const query = `subscription${c.where === undefined ? '' : '($w: EvWhere)'} { ${c.field}${args.length > 0 ? `(${args.join(', ')})` : ''} { id kind } }`;
  const bound: BoundFilter[] =
    c.bound === undefined || (c.field === 'nk' && c.bound.rule === 'id') ? [] : [{ rule: (c.bound.rule === 'id' ? ID_RULE : KEY_RULE) as BoundFilter['rule'], values: c.bound.values }];
  const access: AccessScope = { key: JSON.stringify(c.bound ?? null), authorize: (_route, a) => ({ ok: true, args: a, bound }) };
  const result = compiler.compile({ query, variables: c.where === undefined ? {} : { w: c.where } }, access);
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`does not compile: ${JSON.stringify(result)} (${query})`);
  return result.operation;
}

/** The channel ingest publishes an event on: the payload key field's text routes, else the Kafka key. */
function channelOf(topic: string, shards: number, keyField: boolean, e: EventCase): string {
  const route = keyField && (typeof e.id === 'string' || typeof e.id === 'number') ? String(e.id) : e.key;
  return channelName('ws', topic, shardOf(route ?? '', shards));
}

/** The routing key ingest's batch part gives an event (chunk-builder.ts): the key field's value as written, else the Kafka key. */
function routeOf(offset: number, keyField: boolean, e: EventCase): EnvelopeRoute | undefined {
  const written = typeof e.id === 'string' || typeof e.id === 'number' ? JSON.stringify(e.id) : undefined;
  const key = keyField ? routingKeyText(written === undefined ? undefined : typeof e.id === 'string' ? e.id : written) : e.key;
  return key === null ? undefined : { partition: 0, offset: String(offset), on: keyField ? 'id' : ROUTED_ON_KAFKA_KEY, key };
}

/** The scan: every group of the channel tested, as before the index. */
function scanMatches(op: CompiledSubscription, channel: string, envelope: Envelope): boolean {
  return op.channels.includes(channel) && matchesFilter(op.filter, envelope.payload) && (op.where === undefined || op.where(envelope));
}

interface Conn {
  readonly offsets: string[];
}

const writer: ConnectionWriter<Conn> = {
  send: () => undefined,
  sendFrames(c, _head, payloads) {
    for (const payload of payloads) c.offsets.push((JSON.parse(payload) as { extensions: { position: { offset: string } } }).extensions.position.offset);
  },
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

describe('routing by key (decision 0039)', () => {
  it('delivers exactly what testing every group of the channel delivers', async () => {
    let delivered = 0;
    let unwanted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(subscriptionArb, { minLength: 1, maxLength: 12 }), fc.array(eventArb, { minLength: 1, maxLength: 24 }), fc.boolean(), async (subs, events, routed) => {
        const bus = createMemoryBus();
        const hub = createHub<Conn>({ schema: ws, broker: bus.broker, history: undefined, logger: createLogger({ name: 'routing-property', destination: createMemorySink() }), writer });
        const members = subs.map((c, i) => ({ conn: { offsets: [] as string[] }, op: compile(c), id: String(i) }));
        for (const m of members) hub.subscribe(m.conn, m.id, m.op);
        await waitFor(() => hub.stats().confirmedChannels === hub.stats().channels, { timeoutMs: 2_000, intervalMs: 1 });
        const expected = members.map((): string[] => []);
        events.forEach((e, offset) => {
          for (const [field, topic, shards, keyField] of [['ev', 'evs', 3, true], ['nk', 'nks', 2, false]] as const) {
            const payload = JSON.stringify({ id: e.id, kind: e.kind });
            const text = encodeEnvelope({ topic, partition: 0, offset: String(offset), key: e.key, ts: 1 }, payload);
            const channel = channelOf(topic, shards, keyField, e);
            const envelope = JSON.parse(text) as Envelope;
            members.forEach((m, i) => {
              if (m.op.route.fieldName === field && scanMatches(m.op, channel, envelope)) expected[i]?.push(String(offset));
            });
            bus.publish(channel, text, undefined, routed ? routeOf(offset, keyField, e) : undefined);
          }
        });
        const total = expected.reduce((sum, list) => sum + list.length, 0);
        await waitFor(() => members.reduce((sum, m) => sum + m.conn.offsets.length, 0) >= total && hub.stats().inbound.messages === 0, { timeoutMs: 2_000, intervalMs: 1 });
        await new Promise((resolve) => setImmediate(resolve));
        expect(members.map((m) => m.conn.offsets)).toEqual(expected);
        delivered += total;
        unwanted += hub.stats().unwanted;
      }),
      { numRuns: 300 },
    );
    expect(delivered).toBeGreaterThan(100);
    expect(unwanted).toBeGreaterThan(100);
  });
});
