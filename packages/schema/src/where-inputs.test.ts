import { getNullableType, isInputObjectType, printType, type GraphQLInputObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createWirestreamSchema, SchemaError } from './index.js';

const SDL = `
type Subscription {
  changed(id: ID): Thing @topic(name: "things", key: "id")
  own(where: String): Thing @topic(name: "things", key: "id")
}
enum Kind { A B }
type Inner { n: Int!, inner: Inner, tags: [String!]! }
type Thing { id: ID!, kind: Kind, score: Float, ok: Boolean, inner: Inner, and: String, where: String }
`;

describe('the generated where argument', () => {
  it('adds where: <Type>Where to each routed field, with comparisons per leaf and and/or/not', () => {
    const ws = createWirestreamSchema(SDL);
    const field = ws.schema.getSubscriptionType()?.getFields()['changed'];
    expect(field?.args.map((a) => a.name)).toEqual(['id', 'where']);
    const where = getNullableType(field?.args[1]?.type);
    expect(isInputObjectType(where) && Object.keys(where.getFields())).toEqual(['id', 'kind', 'score', 'ok', 'inner', 'where', '_key', 'and', 'or', 'not']);
    // Recursive types are generated once; combinator names are not filterable; lists get list operators; _key only on payload types.
    expect(Object.keys((ws.schema.getType('InnerWhere') as import('graphql').GraphQLInputObjectType).getFields())).toEqual(['n', 'inner', 'tags', 'and', 'or', 'not']);
    expect(Object.keys((ws.schema.getType('StringListComparison') as import('graphql').GraphQLInputObjectType).getFields())).toEqual(['some', 'every', 'none', 'has', 'isEmpty', 'exists']);
    expect(printType(ws.schema.getType('IntComparison')!)).toContain('gte: Int');
    expect(printType(ws.schema.getType('KindComparison')!)).not.toContain('gt:');
    expect(printType(ws.schema.getType('KindComparison')!)).toContain('in: [Kind!]');
    // where is not an equality argument of the route; a field with its own `where` keeps it.
    expect(ws.routes.get('changed')?.filterArgs).toEqual(['id']);
    expect(ws.schema.getSubscriptionType()?.getFields()['own']?.args.map((a) => String(a.type))).toEqual(['String']);
  });

  it('serves an SDL that builds the same schema, the user lines unmoved', () => {
    const ws = createWirestreamSchema(SDL);
    expect(ws.sdl.split('\n')[2]).toBe('  changed(id: ID, where: ThingWhere): Thing @topic(name: "things", key: "id")');
    expect(createWirestreamSchema(ws.sdl.replace(/, where: ThingWhere|# Added by Wirestream: the inputs[^]*$/g, '')).sdl).toBe(ws.sdl);
  });

  it('refuses a type of the user named like a generated input', () => {
    expect(() => createWirestreamSchema(`${SDL}\ninput ThingWhere { x: Int }`)).toThrow(SchemaError);
    expect(() => createWirestreamSchema(`${SDL}\ninput ThingWhere { x: Int }`)).toThrow(/ThingWhere is a name Wirestream gives/);
  });

  it('adds _headers on the payload type of a topic that copies headers, and list filters on lists of objects', () => {
    const ws = createWirestreamSchema(`
type Subscription {
  changed: Thing @topic(name: "things", headers: ["tenant", "event-type", "9lives"])
}
type Bid { amount: Int }
type Thing { id: ID!, bids: [Bid!], grid: [[Int]], _key: String }
`);
    const where = ws.schema.getType('ThingWhere') as import('graphql').GraphQLInputObjectType;
    // A payload field named _key is not filterable (the name is the Kafka key's); lists of lists are not either.
    expect(Object.keys(where.getFields())).toEqual(['id', 'bids', '_key', '_headers', 'and', 'or', 'not']);
    expect(String(where.getFields()['_key']?.type)).toBe('StringComparison');
    expect(Object.keys((ws.schema.getType('ThingHeaders') as import('graphql').GraphQLInputObjectType).getFields())).toEqual(['_9lives', 'event_type', 'tenant']);
    expect(Object.keys((ws.schema.getType('BidListWhere') as import('graphql').GraphQLInputObjectType).getFields())).toEqual(['some', 'every', 'none', 'isEmpty', 'exists']);
    expect(ws.routes.get('changed')?.headers).toEqual(['tenant', 'event-type', '9lives']);
  });

  it('refuses header names that collide as where fields, and fields of one topic with other headers', () => {
    expect(() => createWirestreamSchema('type Subscription { a: T @topic(name: "t", headers: ["a-b", "a.b"]) }\ntype T { x: Int }')).toThrow(/"a-b" and "a.b", which filter as one field \(_headers.a_b\)/);
    expect(() =>
      createWirestreamSchema('type Subscription { a: T @topic(name: "t", headers: ["x"])\n b: T @topic(name: "t") }\ntype T { x: Int }'),
    ).toThrow(/one header list: give both the same @topic\(.*headers:\)/);
  });
});

describe('numeric scalars from-registry declares', () => {
  it('gives Double and Long the ordered operators, another custom scalar equality only', () => {
    const ws = createWirestreamSchema(`
      scalar Double
      scalar Long
      scalar Money
      type Tick { id: ID!, price: Double, volume: Long, cost: Money }
      type Subscription { ticks: Tick @topic(name: "ticks") }
    `);
    const fieldsOf = (name: string): string[] => Object.keys((ws.schema.getType(name) as GraphQLInputObjectType).getFields());
    expect(fieldsOf('DoubleComparison')).toEqual(['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'exists']);
    expect(fieldsOf('LongComparison')).toEqual(['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'exists']);
    expect(fieldsOf('MoneyComparison')).toEqual(['eq', 'ne', 'in', 'nin', 'exists']);
  });
});
