import { getNullableType, isInputObjectType, printType } from 'graphql';
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
    expect(isInputObjectType(where) && Object.keys(where.getFields())).toEqual(['id', 'kind', 'score', 'ok', 'inner', 'where', 'and', 'or', 'not']);
    // Recursive types are generated once; lists and combinator names are not filterable.
    expect(Object.keys((ws.schema.getType('InnerWhere') as import('graphql').GraphQLInputObjectType).getFields())).toEqual(['n', 'inner', 'and', 'or', 'not']);
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
});
