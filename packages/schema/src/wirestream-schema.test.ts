import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSchema } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { auctionSchemaPath, createWirestreamSchema, loadWirestreamSchema, SchemaError, TOPIC_DIRECTIVE_SDL } from './index.js';

describe('loadWirestreamSchema (auction example)', () => {
  const ws = loadWirestreamSchema(auctionSchemaPath);

  it('derives the topics ingest consumes', () => {
    expect(ws.topics).toEqual(['bid-events', 'listing-events']);
  });

  it('derives one route per subscription field, with key, shards and filter args', () => {
    expect(ws.routes.get('listingUpdated')).toEqual({
      fieldName: 'listingUpdated',
      topic: 'listing-events',
      keyField: 'listing_id',
      shards: 16,
      filterArgs: ['listing_id', 'event_type'],
      format: 'JSON',
      keyFormat: 'STRING',
      snapshot: false,
    });
    expect(ws.routesForTopic('bid-events').map((r) => r.fieldName)).toEqual(['bidPlaced']);
    expect(ws.routesForTopic('nope')).toEqual([]);
  });
});

/** The SchemaError `run` throws (fails the test if it does not throw one). */
function schemaError(run: () => unknown): SchemaError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SchemaError);
    return err as SchemaError;
  }
  throw new Error('expected a SchemaError');
}

/** `line:column coordinate: message` of each problem, for compact expectations. */
function problemsOf(sdl: string): string[] {
  return schemaError(() => createWirestreamSchema(sdl)).problems.map((p) => `${p.line}:${p.column} ${p.coordinate}: ${p.message}`);
}

describe('createWirestreamSchema: what a user may leave out', () => {
  const minimal = `type E { id: ID! name: String }
type Subscription { changed(id: ID): E @topic(name: "e-events", key: "id") }`;

  it('adds directive @topic and type Query to SDL that has only its types and Subscription', () => {
    const ws = createWirestreamSchema(minimal);
    expect(ws.added).toEqual(['directive @topic', 'enum TopicFormat', 'enum TopicKeyFormat', 'type Query']);
    expect(ws.routes.get('changed')).toEqual({ fieldName: 'changed', topic: 'e-events', keyField: 'id', shards: 16, filterArgs: ['id'], format: 'JSON', keyFormat: 'STRING', snapshot: false });
    expect(ws.schema.getQueryType()?.getFields()['topics']?.type.toString()).toBe('[String!]!');
    expect(ws.schema.getDirective('topic')?.args.map((a) => `${a.name}: ${a.type.toString()}`)).toEqual([
      'name: String!',
      'key: String',
      'shards: Int',
      'format: TopicFormat',
      'keyFormat: TopicKeyFormat',
      'subject: String',
      'snapshot: Boolean',
      'headers: [String!]',
      'conflate: Boolean',
    ]);
  });

  it('serves the SDL with the additions after the user\'s text, so it builds on its own and keeps the user\'s line numbers', () => {
    const ws = createWirestreamSchema(minimal);
    // The user's text, with only the generated `where` argument inserted into its field's own line.
    expect(ws.sdl.replace(/, where: \w+Where|\(where: \w+Where\)/g, '').startsWith(minimal)).toBe(true);
    expect(ws.sdl).toContain(TOPIC_DIRECTIVE_SDL);
    expect(() => buildSchema(ws.sdl)).not.toThrow();
  });

  it('adds nothing the SDL declares itself (the auction example declares @topic and Query); a Query root of its own is kept', () => {
    expect(loadWirestreamSchema(auctionSchemaPath).added).toEqual(['enum TopicFormat', 'enum TopicKeyFormat']);
    const ws = createWirestreamSchema(`type Query { hello: String }\n${minimal}`);
    expect(ws.added).toEqual(['directive @topic', 'enum TopicFormat', 'enum TopicKeyFormat']);
    expect(Object.keys(ws.schema.getQueryType()?.getFields() ?? {})).toEqual(['hello']);
  });

  it('accepts its own @topic declaration with another default for shards', () => {
    const ws = createWirestreamSchema(`directive @topic(name: String!, key: String, shards: Int = 4) on FIELD_DEFINITION\n${minimal}`);
    expect(ws.added).toEqual(['enum TopicFormat', 'enum TopicKeyFormat', 'type Query']);
    expect(ws.routes.get('changed')?.shards).toBe(4);
  });

  it('accepts its own @topic declaration with format and keyFormat, and with the enums declared too', () => {
    const own = `directive @topic(name: String!, key: String, shards: Int = 16, format: TopicFormat = AVRO, keyFormat: TopicKeyFormat = STRING) on FIELD_DEFINITION
enum TopicFormat { JSON AVRO PROTOBUF JSON_SCHEMA }
${minimal}`;
    const ws = createWirestreamSchema(own);
    expect(ws.added).toEqual(['enum TopicKeyFormat', 'type Query']);
    expect(ws.routes.get('changed')?.format).toBe('AVRO');
  });

  it('refuses a type of its own named like a format enum that is not that enum', () => {
    expect(problemsOf(`enum TopicFormat { JSON XML }\n${minimal}`)).toEqual([
      '1:1 TopicFormat: TopicFormat is the enum @topic takes (JSON, AVRO, PROTOBUF, JSON_SCHEMA); this SDL declares a different enum (JSON, XML) of that name: delete it (the loader adds the enum) or rename it',
    ]);
  });

  it('refuses a @topic declaration of another shape, and a schema block without a query root, saying what to do', () => {
    const problems = problemsOf(`directive @topic(name: String) on FIELD_DEFINITION
schema { subscription: Subscription }
${minimal}`);
    expect(problems[0]).toMatch(/^1:1 @topic: declared as `directive @topic\(name: String\) on FIELD_DEFINITION`, which is not Wirestream's .*delete the declaration \(the loader adds it\)/);
    expect(problems[1]).toMatch(/^2:1 schema: the schema \{ … \} block names no query root.*add `query: Query`/);
    // graphql-js's "Query root type must be provided" at the same place is not repeated.
    expect(problems.filter((p) => p.includes('Query root type'))).toEqual([]);
  });
});

describe('createWirestreamSchema: formats per topic', () => {
  const types = 'type E { id: ID! name: String }\n';

  it('reads format and keyFormat into the route; JSON values and string keys by default', () => {
    const ws = createWirestreamSchema(`${types}type Subscription {
  a: E @topic(name: "a", key: "id", format: AVRO)
  b: E @topic(name: "b", format: PROTOBUF, keyFormat: AVRO)
  c: E @topic(name: "c", format: JSON_SCHEMA, keyFormat: PROTOBUF)
  d: E @topic(name: "d")
}`);
    const formats = [...ws.routes.values()].map((r) => `${r.topic}:${r.format}/${r.keyFormat}`);
    expect(formats).toEqual(['a:AVRO/STRING', 'b:PROTOBUF/AVRO', 'c:JSON_SCHEMA/PROTOBUF', 'd:JSON/STRING']);
  });

  it('reads snapshot into the route (false unless asked), and refuses two fields of one topic that disagree on it', () => {
    const ws = createWirestreamSchema(`${types}type Subscription {
  a: E @topic(name: "a", key: "id", snapshot: true)
  b: E @topic(name: "b")
}`);
    expect(ws.routes.get('a')?.snapshot).toBe(true);
    expect(ws.routes.get('b')?.snapshot).toBe(false);
    expect(problemsOf(`${types}type Subscription {
  a: E @topic(name: "t", key: "id", snapshot: true)
  b: E @topic(name: "t", key: "id")
}`)).toEqual([
      '4:3 Subscription.b: reads topic "t" with key "id", 16 shards, format JSON, keyFormat STRING and snapshot false, but Subscription.a reads it with key "id", 16 shards, format JSON, keyFormat STRING and snapshot true; one topic has one routing, one encoding and one snapshot setting: give both the same @topic(key:, shards:, format:, keyFormat:, snapshot:)',
    ]);
    expect(problemsOf(`${types}type Subscription {\n  a: E @topic(name: "a", snapshot: "yes")\n}`)[0]).toMatch(/snapshot a Boolean/);
  });

  it('reads conflate into the route (absent unless asked); fields of one topic may differ on it', () => {
    const ws = createWirestreamSchema(`${types}type Subscription {
  a: E @topic(name: "t", key: "id", conflate: true)
  b: E @topic(name: "t", key: "id")
}`);
    expect(ws.routes.get('a')?.conflate).toBe(true);
    expect(ws.routes.get('b')?.conflate).toBeUndefined();
    expect(problemsOf(`${types}type Subscription {\n  a: E @topic(name: "a", conflate: 1)\n}`)[0]).toMatch(/Argument "conflate" has invalid value 1/);
  });

  it('reads subject into the route (the registry subject the start-up check reads); undefined means <topic>-value', () => {
    const ws = createWirestreamSchema(`${types}type Subscription {
  a: E @topic(name: "a", format: AVRO, subject: "com.example.E")
  b: E @topic(name: "b", format: AVRO)
}`);
    expect(ws.routes.get('a')?.subject).toBe('com.example.E');
    expect(ws.routes.get('b')?.subject).toBeUndefined();
  });

  it('a subject on a JSON topic, or an empty one, is refused naming the fix', () => {
    expect(problemsOf(`${types}type Subscription {
  a: E @topic(name: "a", subject: "a-value")
  b: E @topic(name: "b", format: AVRO, subject: " ")
}`)).toEqual([
      '3:35 Subscription.a: @topic(subject: "a-value") names a registry subject, but the topic is JSON: give format: AVRO (or PROTOBUF, JSON_SCHEMA), or drop subject',
      '4:49 Subscription.b: @topic(subject: " ") must name the registry subject of the value schema, e.g. "b-value"',
    ]);
  });

  it('a format that is not one of them, or written as a string, names the field and the formats', () => {
    const problems = problemsOf(`${types}type Subscription {
  a: E @topic(name: "a", format: XML)
  b: E @topic(name: "b", format: "AVRO")
  c: E @topic(name: "c", keyFormat: JSON)
}`);
    expect(problems).toHaveLength(3);
    const hint = '(name and key take a String, shards an Int, snapshot a Boolean, headers a list of Strings, format one of JSON, AVRO, PROTOBUF, JSON_SCHEMA and keyFormat one of STRING, AVRO, PROTOBUF, JSON_SCHEMA, both without quotes, e.g. format: AVRO)';
    expect(problems).toEqual([
      `3:34 Subscription.a: @topic: Argument "format" has invalid value XML. ${hint}`,
      `4:34 Subscription.b: @topic: Argument "format" has invalid value "AVRO". ${hint}`,
      `5:37 Subscription.c: @topic: Argument "keyFormat" has invalid value JSON. ${hint}`,
    ]);
  });

  it('two fields reading one topic in two formats', () => {
    expect(problemsOf(`${types}type Subscription {
  a: E @topic(name: "t", format: AVRO)
  b: E @topic(name: "t")
}`)).toEqual([
      '4:3 Subscription.b: reads topic "t" with no key, 16 shards, format JSON, keyFormat STRING and snapshot false, but Subscription.a reads it with no key, 16 shards, format AVRO, keyFormat STRING and snapshot false; one topic has one routing, one encoding and one snapshot setting: give both the same @topic(key:, shards:, format:, keyFormat:, snapshot:)',
    ]);
  });
});

describe('createWirestreamSchema: every problem at once, each with its place and what to fix', () => {
  const sdl = `type E { id: ID! obj: E }
type Subscription {
  a(id: ID): E
  b(nope: ID): E @topic(name: "t")
  c: E @topic(name: "t2", key: "missing")
  d: E @topic(name: "bad topic!")
  e: E @topic(name: "t3", shards: 0)
  f: E @topic(name: "t4", shard: 4)
  g: E @topic(name: "t5", shards: "4")
  h: [E] @topic(name: "t6")
  i: String @topic(name: "t7")
  j: E @topic(name: "t8", key: "obj")
  k: E @topic(name: "a.b")
  l: E @topic(name: "a_b")
  m: E @topic(name: "t", shards: 4)
  n: E @topic(key: "id")
  o: Missing @topic(name: "x")
  p: E @topic(name: "${'x'.repeat(250)}")
}`;
  const problems = problemsOf(sdl);
  const about = (field: string) => problems.filter((p) => p.includes(` Subscription.${field}: `));

  it('lists one problem per broken rule, in SDL order', () => {
    expect(problems).toHaveLength(15);
    expect(problems.map((p) => p.split(' ')[1])).toEqual('abcdefghijlmnop'.split('').map((f) => `Subscription.${f}:`));
  });

  it('a subscription field without @topic', () => {
    expect(about('a')).toEqual(['3:3 Subscription.a: has no @topic: every subscription field names the Kafka topic its events come from, e.g. a: … @topic(name: "my-events")']);
  });

  it('a filter argument the payload does not have', () => {
    expect(about('b')[0]).toMatch(/^4:5 .*argument "nope" filters on the payload field of the same name, which E does not have/);
  });

  it('a key field the payload does not have, and one that is not a scalar', () => {
    expect(about('c')).toEqual(['5:32 Subscription.c: @topic(key: "missing") is not a field of E: the key names the top-level payload field that routes an event (its entity id), one of id']);
    expect(about('j')[0]).toMatch(/^12:32 .*@topic\(key: "obj"\) is E.obj of type E: the key must be a scalar field/);
  });

  it('topic names Kafka refuses: characters, length, and two names that differ only in . against _', () => {
    expect(about('d')[0]).toMatch(/^6:21 .*@topic\(name: "bad topic!"\) is not a valid Kafka topic name: use 1 to 249 of a-z A-Z 0-9 \. _ -/);
    expect(about('p')[0]).toMatch(/is not a valid Kafka topic name/);
    expect(about('l')).toEqual([
      '14:3 Subscription.l: topic "a_b" collides with "a.b" (Subscription.k): Kafka treats . and _ alike in topic names and refuses to create both; rename one',
    ]);
  });

  it('shard counts out of range or of the wrong type', () => {
    expect(about('e')[0]).toMatch(/^7:35 .*@topic\(shards: 0\) must be an integer from 1 to 1024/);
    expect(about('g')[0]).toMatch(/^9:35 .*@topic: Argument "shards" has invalid value "4"\. \(name and key take a String, shards an Int, snapshot a Boolean, headers a list of Strings, format one of JSON, AVRO.*e\.g\. format: AVRO\)/);
  });

  it('unknown @topic arguments and a missing name, with what @topic takes', () => {
    expect(about('f')[0]).toMatch(/^8:27 .*Unknown argument "shard" on directive "@topic"\. Did you mean "shards"\? @topic takes name .*, key .*, shards .*, format .*, keyFormat .*, snapshot .* and headers/);
    // graphql-js's rule and the binding both see it: said once.
    expect(about('n')).toHaveLength(1);
    expect(about('n')[0]).toMatch(/^16:8 .*argument "name" of type "String!" is required/);
  });

  it('payload types that are not one object', () => {
    expect(about('h')).toEqual(['10:6 Subscription.h: returns [E], a list: each event is one payload, so return E itself']);
    expect(about('i')[0]).toMatch(/^11:6 .*returns String; it must return an object type/);
  });

  it('two fields routing one topic differently, even when one of them has another problem', () => {
    expect(about('m')).toEqual([
      '15:3 Subscription.m: reads topic "t" with no key, 4 shards, format JSON, keyFormat STRING and snapshot false, but Subscription.b reads it with no key, 16 shards, format JSON, keyFormat STRING and snapshot false; one topic has one routing, one encoding and one snapshot setting: give both the same @topic(key:, shards:, format:, keyFormat:, snapshot:)',
    ]);
  });

  it('an unknown type is reported without stopping the other checks', () => {
    expect(about('o')).toEqual(['17:6 Subscription.o: Unknown type "Missing".']);
  });

  it('formats them into one message that points to the guide', () => {
    const message = schemaError(() => createWirestreamSchema(sdl)).message.split('\n');
    expect(message[0]).toBe('the schema cannot be served (15 problems):');
    expect(message[1]).toBe('  - line 3:3 Subscription.a: has no @topic: every subscription field names the Kafka topic its events come from, e.g. a: … @topic(name: "my-events")');
    expect(message.at(-1)).toBe('Fix the SDL and start again; what a schema needs and what Wirestream adds: docs/schema.md');
  });
});

describe('createWirestreamSchema: other failures', () => {
  it('a syntax error, with its place', () => {
    expect(problemsOf('type E { id: ID! }\ntype Subscription {')).toEqual(['2:20 undefined: Syntax Error: Expected Name, found <EOF>.']);
  });

  it('no Subscription type', () => {
    expect(problemsOf('type Query { x: Int }')[0]).toMatch(/no Subscription type, so nothing to serve: declare `type Subscription/);
  });

  it('an unknown directive', () => {
    expect(problemsOf('type E { id: ID! }\ntype Subscription { a: E @topic(name: "x") @topc }')).toEqual(['2:44 Subscription.a: Unknown directive "@topc".']);
  });
});

describe('loadWirestreamSchema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirestream-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the setting and the file when the file is missing, in one line', () => {
    const missing = join(dir, 'missing.graphql');
    const error = schemaError(() => loadWirestreamSchema(missing, { setting: 'SCHEMA_PATH' }));
    expect(error.message).toBe(`SCHEMA_PATH ${missing} cannot be read (no such file): set SCHEMA_PATH to a readable GraphQL SDL file (what it holds: docs/schema.md)`);
    expect(schemaError(() => loadWirestreamSchema(dir)).message).toMatch(/^schema file .* cannot be read \(EISDIR.*\): give the path of a readable GraphQL SDL file/);
  });

  it('names the setting and places each problem at file:line:column', () => {
    const path = join(dir, 'bad.graphql');
    writeFileSync(path, 'type E { id: ID! }\ntype Subscription {\n  a: E\n  b: E @topic(name: "b", key: "nope")\n}\n');
    expect(schemaError(() => loadWirestreamSchema(path, { setting: 'SCHEMA_PATH' })).message.split('\n')).toEqual([
      `SCHEMA_PATH ${path} cannot be served (2 problems):`,
      `  - ${path}:3:3 Subscription.a: has no @topic: every subscription field names the Kafka topic its events come from, e.g. a: … @topic(name: "my-events")`,
      `  - ${path}:4:31 Subscription.b: @topic(key: "nope") is not a field of E: the key names the top-level payload field that routes an event (its entity id), one of id`,
      `Fix ${path} and start again; what a schema needs and what Wirestream adds: docs/schema.md`,
    ]);
  });
});
