import { buildSchema, GraphQLObjectType, graphqlSync } from 'graphql';
import { describe, expect, it } from 'vitest';
import { applyPluginResolvers } from './apply-resolvers.js';
import { definePlugin, PluginConfigError, preparePlugin, validatePlugin } from './index.js';

const SOURCE = 'GATEWAY_PLUGIN=./plugin.mjs';

describe('validatePlugin', () => {
  it('takes named exports, or a default export object', () => {
    const onEvent = (): null => null;
    expect(validatePlugin({ onEvent }, SOURCE).onEvent).toBe(onEvent);
    expect(validatePlugin({ default: definePlugin({ onEvent }) }, SOURCE).onEvent).toBe(onEvent);
    expect(validatePlugin({}, SOURCE)).toEqual({});
  });

  it.each([
    [{ onSubscibe: () => undefined }, `${SOURCE}: unknown export "onSubscibe": a plugin exports only resolvers, context, onSubscribe, onEvent`],
    [{ onEvent: 'drop' }, `${SOURCE}: export "onEvent" must be a function, got string`],
    [{ onSubscribe: {} }, `${SOURCE}: export "onSubscribe" must be a function, got object`],
    [{ resolvers: [] }, `${SOURCE}: export "resolvers" must be an object of types ({ Type: { field: resolve } }), got an array`],
    [{ context: { sellers: 42 } }, `${SOURCE}: context factory "sellers" must be a function, got number`],
    [{ context: null }, `${SOURCE}: export "context" must be an object of factories ({ name: (group) => backend }), got null`],
  ])('refuses %j in one line naming the setting', (namespace, message) => {
    const attempt = (): unknown => validatePlugin(namespace, SOURCE);
    expect(attempt).toThrow(PluginConfigError);
    expect(attempt).toThrow(message);
  });
});

describe('applyPluginResolvers', () => {
  const sdl = 'type Query { seller(id: ID!): Seller } type Seller { id: ID! name: String }';

  it('sets the resolvers on the schema in place', () => {
    const schema = buildSchema(sdl);
    applyPluginResolvers(schema, { Seller: { name: (s: { id: string }) => `seller ${s.id}` }, Query: { seller: (_: unknown, args: { id: string }) => ({ id: args.id }) } }, SOURCE);
    const type = schema.getType('Seller');
    expect(type instanceof GraphQLObjectType && type.getFields()['name']?.resolve).toBeTypeOf('function');
    expect(graphqlSync({ schema, source: '{ seller(id: "7") { id name } }' })).toEqual({ data: { seller: { id: '7', name: 'seller 7' } } });
  });

  it('is bound by preparePlugin for a synchronous caller, only when there are resolvers', async () => {
    const schema = buildSchema(sdl);
    const prepared = await preparePlugin({ resolvers: { Query: { seller: (_: unknown, args: { id: string }) => ({ id: args.id, name: 'n' }) } } }, SOURCE);
    prepared.applyResolvers?.(schema);
    expect(graphqlSync({ schema, source: '{ seller(id: "3") { id name } }' })).toEqual({ data: { seller: { id: '3', name: 'n' } } });
    expect((await preparePlugin({ onEvent: () => null }, SOURCE)).applyResolvers).toBeUndefined();
  });

  it('refuses a type or field the schema does not have, naming the setting', () => {
    expect(() => applyPluginResolvers(buildSchema(sdl), { Buyer: { name: () => 'x' } }, SOURCE)).toThrow(/^GATEWAY_PLUGIN=\.\/plugin\.mjs: resolvers do not match the schema: .*Buyer/);
    expect(() => applyPluginResolvers(buildSchema(sdl), { Seller: { title: () => 'x' } }, SOURCE)).toThrow(/Seller\.title/);
  });
});
