// Registry topics end to end (issue 33's "must hold"): records written by Confluent's own serializers
// (Avro, Protobuf, JSON Schema), three versions of each subject with the writer switching between them,
// values drawn by fast-check from each type's extremes → Kafka → the built ingest → Redis → the built
// gateway → the official graphql-ws client, through the SDL `wirestream-schema from-registry` writes for
// the three subjects at once, selecting every field; Avro and Protobuf take a type by schema reference
// from another subject. Each frame: data, no error, its position, every value as docs/schema.md's
// mapping says.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AvroSerializer, JsonSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { createWirestreamSchema } from '@wirestream/schema';
import { createTopics, confluentProtobufSerializer, findRepoRoot, startStack, uniqueName, waitFor, type Stack } from '@wirestream/testkit';
import fc from 'fast-check';
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const EVENTS_PER_FORMAT = 60;
const SEED = 33;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** One record: what the writer serializes, which version wrote it, and what the client must get. */
interface Written {
  readonly id: string;
  readonly bytes: Buffer;
  readonly expected: Record<string, Json>;
}

/** The shortest decimal that reads back as the same 32-bit float (docs/schema.md: as Java's Float.toString). */
function float32(x: number): Json {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  const f = Math.fround(x);
  for (let p = 1; p <= 9; p++) if (Math.fround(Number(f.toPrecision(p))) === f) return Number(f.toPrecision(p));
  return f;
}

/** A double as published: a number, or "NaN" / "Infinity" / "-Infinity". */
function double(x: number): Json {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return x;
}

const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('é 😀 "q"\n\\', '\u0000', 'x'.repeat(300)));
const int32 = fc.oneof(fc.constantFrom(0, 2_147_483_647, -2_147_483_648), fc.integer());
// Confluent's Avro serializer (avsc) refuses longs from 2^53 − 1 on; the gateway's exact digits past 2^53 have their own test.
const long52 = fc.oneof(fc.constantFrom(0, 2 ** 52, -(2 ** 52)), fc.integer({ min: -(2 ** 52), max: 2 ** 52 }));
const doubles = fc.oneof(fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_VALUE, Number.MIN_VALUE, 12.5), fc.double({ noNaN: true }).filter((d) => !Object.is(d, -0)));
const floats = fc.oneof(fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 3.4028234663852886e38, 1.401298464324817e-45, 3.9), fc.float({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)));
const finite = fc.oneof(fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 0.1), fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)));

/** `count` samples of `arbitrary`, the same on every run. */
function draw<T>(arbitrary: fc.Arbitrary<T>, count: number, seed: number): T[] {
  return fc.sample(arbitrary, { numRuns: count, seed });
}

// ---- Avro: three versions of one record; v2 adds a field and an enum symbol, v3 drops `tags` and adds `rank`.
// `Inner` is registered under its own subject and referenced by name (a schema reference).
const AVRO_INNER = { type: 'record', name: 'Inner', namespace: 'e2e.common', fields: [{ name: 'label', type: 'string' }, { name: 'weight', type: ['null', 'float'], default: null }] };
const AVRO_INNER_REFERENCE = { name: 'e2e.common.Inner', subject: 'e2e.common.Inner', version: 1 };
const avroVersion = (v: 1 | 2 | 3) => ({
  type: 'record',
  name: 'Reading',
  namespace: 'e2e.avro',
  fields: [
    { name: 'readingId', type: 'string' },
    { name: 'count', type: 'int' },
    { name: 'total', type: 'long' },
    { name: 'ratio', type: 'double' },
    { name: 'small', type: 'float' },
    { name: 'state', type: { type: 'enum', name: 'State', symbols: v === 1 ? ['ON', 'OFF'] : ['ON', 'OFF', 'DIM'] } },
    ...(v === 3 ? [] : [{ name: 'tags', type: { type: 'array', items: 'string' } }]),
    { name: 'inner', type: 'e2e.common.Inner' },
    { name: 'note', type: ['null', 'string'], default: null },
    ...(v === 1 ? [] : [{ name: 'extra', type: ['null', 'long'], default: null }]),
    ...(v === 3 ? [{ name: 'rank', type: 'int', default: 0 }] : []),
  ],
});

async function avroRecords(client: MockClient, topic: string): Promise<Written[]> {
  const ids: number[] = [];
  await client.register(AVRO_INNER_REFERENCE.subject, { schemaType: 'AVRO', schema: JSON.stringify(AVRO_INNER) });
  for (const v of [1, 2, 3] as const) ids.push(await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(avroVersion(v)), references: [AVRO_INNER_REFERENCE] }));
  const writers = ids.map((id) => new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: id }));
  const record = fc.record({
    version: fc.constantFrom(1, 2, 3),
    count: int32,
    total: long52,
    ratio: doubles,
    small: floats,
    state: fc.constantFrom('ON', 'OFF', 'DIM'),
    tags: fc.array(text, { maxLength: 3 }),
    label: text,
    weight: fc.option(floats),
    note: fc.option(text),
    extra: fc.option(long52),
    rank: int32,
  });
  const out: Written[] = [];
  for (const [i, r] of draw(record, EVENTS_PER_FORMAT, SEED).entries()) {
    const v = r.version;
    const state = v === 1 && r.state === 'DIM' ? 'OFF' : r.state;
    const id = `avro-${i}`;
    const value: Record<string, unknown> = { readingId: id, count: r.count, total: r.total, ratio: r.ratio, small: r.small, state, inner: { label: r.label, weight: r.weight }, note: r.note };
    if (v !== 3) value['tags'] = r.tags;
    if (v !== 1) value['extra'] = r.extra;
    if (v === 3) value['rank'] = r.rank;
    const bytes = await (writers[v - 1] as AvroSerializer).serialize(topic, value);
    out.push({
      id,
      bytes,
      expected: {
        reading_id: id,
        count: r.count,
        total: r.total,
        ratio: double(r.ratio),
        small: float32(r.small),
        state,
        tags: v === 3 ? null : r.tags,
        inner: { label: r.label, weight: r.weight === null ? null : float32(r.weight) },
        note: r.note,
        extra: v === 1 ? null : r.extra,
        rank: v === 3 ? r.rank : null,
      },
    });
  }
  return out;
}

// ---- Protobuf (proto3): v2 adds a Struct and an enum value, v3 a float and a nested message.
// `Inner` comes from an imported file, which Confluent's serializer registers as the subject
// `e2e/common/inner.proto` (a `/` in a subject: `%2F` in the schema directory) and references.
const PROTO_INNER = `syntax = "proto3";
package e2e.common;
message Inner { string label = 1; uint32 big = 2; }
`;
const protoVersion = (v: 1 | 2 | 3) => `syntax = "proto3";
package e2e.proto;
import "e2e/common/inner.proto";
${v === 1 ? '' : 'import "google/protobuf/struct.proto";'}
message Reading {
  string reading_id = 1; int32 count = 2; int64 total = 3; double ratio = 4; State state = 5;
  repeated string tags = 6; e2e.common.Inner inner = 7; optional string note = 8; map<string, int32> scores = 9;
  ${v === 1 ? '' : 'google.protobuf.Struct attrs = 10;'}
  ${v === 3 ? 'float small = 11; message Part { string name = 1; } repeated Part parts = 12;' : ''}
}
enum State { STATE_UNSPECIFIED = 0; ON = 1; OFF = 2; ${v === 1 ? '' : 'DIM = 3;'} }
`;

const STATE_NAMES = ['STATE_UNSPECIFIED', 'ON', 'OFF', 'DIM'];

async function protobufRecords(client: MockClient, topic: string): Promise<Written[]> {
  const writers = [];
  for (const v of [1, 2, 3] as const) {
    const writer = confluentProtobufSerializer(client, protoVersion(v), { fileName: 'reading.proto', imports: { 'e2e/common/inner.proto': PROTO_INNER } });
    await writer.serialize(topic, 'e2e.proto.Reading', {}); // registers this version under <topic>-value, in order
    writers.push(writer);
  }
  const json = fc.letrec<{ value: Json }>((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), finite, text, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(text, tie('value'), { maxKeys: 3, noNullPrototype: true })),
  })).value;
  const record = fc.record({
    version: fc.constantFrom(1, 2, 3),
    count: int32,
    total: fc.oneof(fc.constantFrom(-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n, 0n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
    ratio: doubles,
    // A number the enum does not name is kept (proto3 enums are open) and published as the number.
    state: fc.constantFrom(0, 1, 2, 3, 7),
    tags: fc.array(text, { maxLength: 3 }),
    inner: fc.option(fc.record({ label: text, big: fc.oneof(fc.constantFrom(0, 4_294_967_295), fc.nat()) })),
    note: fc.option(text),
    scores: fc.dictionary(text, int32, { maxKeys: 3, noNullPrototype: true }),
    attrs: fc.dictionary(text, json, { maxKeys: 3, noNullPrototype: true }),
    small: floats,
    parts: fc.array(text, { maxLength: 2 }),
  });
  const out: Written[] = [];
  for (const [i, r] of draw(record, EVENTS_PER_FORMAT, SEED).entries()) {
    const v = r.version;
    const state = v === 1 && r.state === 3 ? 7 : r.state;
    const id = `proto-${i}`;
    // protobuf-es takes fields by their JSON (camelCase) names.
    const value: Record<string, unknown> = { readingId: id, count: r.count, total: r.total, ratio: r.ratio, state, tags: r.tags, scores: r.scores };
    if (r.inner !== null) value['inner'] = r.inner;
    if (r.note !== null) value['note'] = r.note;
    if (v !== 1) value['attrs'] = r.attrs;
    if (v === 3) Object.assign(value, { small: r.small, parts: r.parts.map((name) => ({ name })) });
    const bytes = await (writers[v - 1] as (typeof writers)[number]).serialize(topic, 'e2e.proto.Reading', value);
    const named = v === 1 ? state <= 2 : state <= 3;
    out.push({
      id,
      bytes,
      expected: {
        reading_id: id,
        count: r.count,
        total: String(r.total), // 64-bit integers are published as their digits (proto3 JSON)
        ratio: double(r.ratio),
        state: named ? (STATE_NAMES[state] as string) : state,
        tags: r.tags,
        inner: r.inner,
        note: r.note,
        scores: r.scores,
        attrs: v === 1 ? null : r.attrs,
        small: v === 3 ? float32(r.small) : null,
        parts: v === 3 ? r.parts.map((name) => ({ name })) : null,
      },
    });
  }
  return out;
}

// ---- JSON Schema: v2 adds an enum value and a camelCase property (published snake_cased), v3 makes `tags` optional and adds `rank`.
const jsonVersion = (v: 1 | 2 | 3) => ({
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Reading',
  type: 'object',
  properties: {
    readingId: { type: 'string' },
    count: { type: 'integer', minimum: -2_147_483_648, maximum: 2_147_483_647 },
    total: { type: 'integer' },
    ratio: { type: 'number' },
    state: { enum: v === 1 ? ['ON', 'OFF'] : ['ON', 'OFF', 'DIM'] },
    tags: { type: 'array', items: { type: 'string' } },
    inner: { title: 'Inner', type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
    note: { type: ['string', 'null'] },
    ...(v === 1 ? {} : { isLatest: { type: 'boolean' } }),
    ...(v === 3 ? { rank: { type: 'integer', minimum: 0, maximum: 100 } } : {}),
  },
  required: ['readingId', 'count', 'total', 'ratio', 'state', 'inner', ...(v === 3 ? [] : ['tags'])],
});

async function jsonSchemaRecords(client: MockClient, topic: string): Promise<Written[]> {
  const ids: number[] = [];
  for (const v of [1, 2, 3] as const) ids.push(await client.register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(jsonVersion(v)) }));
  const writers = ids.map((id) => new JsonSerializer(client, SerdeType.VALUE, { useSchemaId: id }));
  const record = fc.record({
    version: fc.constantFrom(1, 2, 3),
    count: int32,
    total: fc.oneof(fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER), fc.maxSafeInteger()),
    ratio: finite,
    state: fc.constantFrom('ON', 'OFF', 'DIM'),
    tags: fc.option(fc.array(text, { maxLength: 3 })),
    label: text,
    note: fc.option(text),
    isLatest: fc.option(fc.boolean()),
    rank: fc.option(fc.integer({ min: 0, max: 100 })),
  });
  const out: Written[] = [];
  for (const [i, r] of draw(record, EVENTS_PER_FORMAT, SEED).entries()) {
    const v = r.version;
    const state = v === 1 && r.state === 'DIM' ? 'OFF' : r.state;
    const tags = v === 3 ? r.tags : (r.tags ?? []);
    const id = `json-${i}`;
    const value: Record<string, unknown> = { readingId: id, count: r.count, total: r.total, ratio: r.ratio, state, inner: { label: r.label }, note: r.note };
    if (tags !== null) value['tags'] = tags;
    if (v !== 1 && r.isLatest !== null) value['isLatest'] = r.isLatest;
    if (v === 3 && r.rank !== null) value['rank'] = r.rank;
    const bytes = await (writers[v - 1] as JsonSerializer).serialize(topic, value);
    out.push({
      id,
      bytes,
      expected: {
        reading_id: id,
        count: r.count,
        total: r.total,
        ratio: r.ratio,
        state,
        tags,
        inner: { label: r.label },
        note: r.note,
        is_latest: v !== 1 ? r.isLatest : null,
        rank: v === 3 ? r.rank : null,
      },
    });
  }
  return out;
}

/** Every subject of `client`, every version, as a schema directory the apps read (SCHEMA_DIR). */
async function writeSchemaDirectory(client: MockClient, dir: string): Promise<void> {
  const extension = { AVRO: 'avsc', PROTOBUF: 'proto', JSON: 'json' } as const;
  for (const subject of await client.getAllSubjects()) {
    const folder = join(dir, encodeURIComponent(subject));
    mkdirSync(folder, { recursive: true });
    for (const version of await client.getAllVersions(subject)) {
      const meta = await client.getSchemaMetadata(subject, version);
      const file = `v${version}.id${meta.id ?? 0}`;
      writeFileSync(join(folder, `${file}.${extension[(meta.schemaType ?? 'AVRO') as keyof typeof extension]}`), meta.schema);
      const references = (meta.references ?? []).map(({ name, subject: s, version: n }) => ({ name, subject: s, version: n }));
      if (references.length > 0) writeFileSync(join(folder, `${file}.references.json`), JSON.stringify(references));
    }
  }
}

/** `{ a b { c } }`: every field of `type`, objects expanded. */
function selectAll(type: GraphQLObjectType): string {
  return `{ ${Object.values(type.getFields())
    .map((f) => {
      const named = getNamedType(f.type);
      return isObjectType(named) ? `${f.name} ${selectAll(named)}` : f.name;
    })
    .join(' ')} }`;
}

type Frame = FormattedExecutionResult<Record<string, Record<string, Json> | null>, { position?: unknown }>;

let stack: Stack;
let client: Client | undefined;

// The apps start in the test, once the SDL is generated from the registry's subjects.
beforeAll(async () => {
  stack = await startStack({ name: 'formats' });
  stack.onStop(() => client?.dispose());
});

afterAll(() => stack?.stop());

describe('registry formats from the serializer to a graphql-ws client', () => {
  it('Avro, Protobuf and JSON Schema over three versions each: 0 data null, every value as the mapping says, every frame with its position', async () => {
    const suffix = uniqueName('fmt');
    const topics = { avro: `avro-${suffix}`, proto: `proto-${suffix}`, json: `json-${suffix}` };
    const registry = new MockClient();
    const written = {
      avro: await avroRecords(registry, topics.avro),
      proto: await protobufRecords(registry, topics.proto),
      json: await jsonSchemaRecords(registry, topics.json),
    };
    const schemaDir = stack.path('schemas');
    await writeSchemaDirectory(registry, schemaDir);
    // The referenced subjects are in the directory, and the topics' versions name them.
    expect(readdirSync(schemaDir).sort()).toEqual([`${topics.avro}-value`, 'e2e%2Fcommon%2Finner.proto', 'e2e.common.Inner', `${topics.json}-value`, `${topics.proto}-value`].sort());
    for (const topic of [topics.avro, topics.proto]) expect(readdirSync(join(schemaDir, `${topic}-value`)).filter((f) => f.endsWith('.references.json'))).toHaveLength(3);

    // One SDL for the three subjects, as a user would write it: the three formats each write Reading, Inner and State.
    const cli = join(findRepoRoot(), 'packages', 'registry', 'dist', 'bin', 'wirestream-schema.js');
    const fields = { avro: 'avroReading', proto: 'protoReading', json: 'jsonReading' } as const;
    const generated = spawnSync(process.execPath, [cli, 'from-registry', '--schema-dir', schemaDir, ...Object.entries(topics).flatMap(([k, t]) => ['--topic', `${t}:${fields[k as keyof typeof fields]}`]), '--prefix-types'], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });
    expect(generated.status, generated.stderr).toBe(0);
    const sdlPath = stack.writeFile('schema.graphql', generated.stdout);
    await createTopics(stack.admin, Object.values(topics).map((topic) => ({ topic, numPartitions: 2 })));

    const env = { SCHEMA_PATH: sdlPath, SCHEMA_DIR: schemaDir };
    const [ingest, gateway] = await Promise.all([stack.startIngest({ env }), stack.startGateway({ env })]);

    const { schema } = createWirestreamSchema(generated.stdout);
    const subscription = schema.getSubscriptionType() as GraphQLObjectType;
    client = createClient({ url: gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
    const frames: Record<keyof typeof topics, Frame[]> = { avro: [], proto: [], json: [] };
    const failures: unknown[] = [];
    for (const format of Object.keys(topics) as (keyof typeof topics)[]) {
      const field = subscription.getFields()[fields[format]];
      if (field === undefined) throw new Error(`no Subscription.${fields[format]} in\n${generated.stdout}`);
      const query = `subscription { ${field.name} ${selectAll(getNamedType(field.type) as GraphQLObjectType)} }`;
      client.subscribe<Record<string, Record<string, Json> | null>, { position?: unknown }>({ query }, { next: (f) => frames[format].push(f), error: (e: unknown) => failures.push(e), complete: () => {} });
    }
    await waitFor(async () => {
      const stats = await gateway.stats();
      return stats['groups'] === 3 && stats['channels'] === stats['confirmedChannels'];
    }, { message: 'three operations subscribed' });

    for (const format of Object.keys(topics) as (keyof typeof topics)[]) {
      await stack.send(topics[format], written[format].map((w) => ({ key: w.id, value: w.bytes })));
    }

    const total = () => frames.avro.length + frames.proto.length + frames.json.length;
    // On a shortfall the assertions below name the records missing; ingest's warnings say why (a dead letter, a refused schema).
    await waitFor(() => total() >= 3 * EVENTS_PER_FORMAT || failures.length > 0, { timeoutMs: 60_000 }).catch(() => undefined);
    expect(failures).toEqual([]);
    const warnings = JSON.stringify(ingest.lines.filter((l) => l['level'] === 'warn' || l['level'] === 'error'));
    for (const format of Object.keys(topics) as (keyof typeof topics)[]) {
      const got = frames[format];
      expect(got.filter((f) => f.errors !== undefined || f.data?.[fields[format]] == null), `${format}: frames with errors or data null`).toEqual([]);
      expect(got.filter((f) => f.extensions?.position === undefined), `${format}: frames without a position`).toEqual([]);
      const byId = new Map(got.map((f) => [(f.data?.[fields[format]] as Record<string, Json>)['reading_id'], f.data?.[fields[format]]]));
      expect(byId.size, `${format}: distinct records; ingest said ${warnings}`).toBe(EVENTS_PER_FORMAT);
      for (const w of written[format]) expect(byId.get(w.id), `${format} ${w.id}`).toEqual(w.expected);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(total(), 'no duplicate frame').toBe(3 * EVENTS_PER_FORMAT);
  });
});
