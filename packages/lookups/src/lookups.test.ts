import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createEntityLoader, createSubgraphSource, entitySelection, LookupError, type EntitySource, type Representation } from './index.js';
import { createRequestLimit } from './request-limit.js';

const schema = buildSchema(`
  type Query { x: Int }
  type Seller { id: ID! name: String rating(scale: Int): Float address: Address }
  type Address { city: String geo: Geo }
  type Geo { lat: Float lon: Float }
`);

describe('entitySelection', () => {
  it('selects every field without arguments, objects nested', () => {
    expect(entitySelection(schema.getType('Seller') as GraphQLObjectType)).toBe('{ id name address { city geo { lat lon } } }');
  });
});

describe('createRequestLimit', () => {
  it('keeps at most `max` calls in flight, the rest in arrival order', async () => {
    const limit = createRequestLimit(2);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        limit(async () => {
          active++;
          peak = Math.max(peak, active);
          await new Promise((resolve) => setTimeout(resolve, 5));
          order.push(i);
          active--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('createEntityLoader', () => {
  it('batches one turn of loads into one fetch with each key once, caches answers, does not cache failures', async () => {
    const calls: Representation[][] = [];
    let fail = false;
    const source: EntitySource = {
      name: 'sellers',
      fetchEntities: (reps) => {
        calls.push([...reps]);
        return Promise.resolve(reps.map((r) => (fail ? new LookupError('down') : { id: r['id'] })));
      },
    };
    const loader = createEntityLoader(source);
    const rep = (id: string): Representation => ({ __typename: 'Seller', id });
    await Promise.all([loader.load(rep('a')), loader.load(rep('b')), loader.load(rep('a'))]);
    expect(calls).toEqual([[rep('a'), rep('b')]]);
    expect(await loader.load(rep('a'))).toEqual({ id: 'a' });
    expect(calls).toHaveLength(1);
    fail = true;
    await expect(loader.load(rep('c'))).rejects.toThrow('down');
    fail = false;
    expect(await loader.load(rep('c'))).toEqual({ id: 'c' });
    expect(loader.stats).toEqual({ requests: 3, representations: 4, cacheHits: 2, errors: 1 });
  });
});

describe('createSubgraphSource', () => {
  it('fails every look-up of a request that times out, naming the source and the limit', async () => {
    const server = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const source = createSubgraphSource({ name: 'sellers', url: `http://127.0.0.1:${port}/graphql`, schema, entityTypes: ['Seller'], timeoutMs: 50 });
    await expect(source.fetchEntities([{ __typename: 'Seller', id: '1' }])).rejects.toThrow('look-up source "sellers" did not answer within 50 ms');
    server.closeAllConnections();
    server.close();
  });
});
