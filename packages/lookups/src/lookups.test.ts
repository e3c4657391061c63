import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createEntityLoader, createHttpJsonSource, createRequestHeaders, createSubgraphSource, entitySelection, LookupError, type EntitySource, type LookupCaller, type Representation } from './index.js';
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

  it('answers a warm load with the value itself, a missing entity with null; a pending or failed one with a promise', async () => {
    const source: EntitySource = {
      name: 'sellers',
      fetchEntities: (reps) => Promise.resolve(reps.map((r) => (r['id'] === 'none' ? null : r['id'] === 'bad' ? new LookupError('no such seller') : { id: r['id'] }))),
    };
    const loader = createEntityLoader(source);
    const rep = (id: string): Representation => ({ __typename: 'Seller', id });
    const first = loader.load(rep('a'));
    expect(first).toBeInstanceOf(Promise); // asked, not answered yet
    expect(loader.load(rep('a'))).toBeInstanceOf(Promise); // in flight: the same request's promise
    await Promise.all([first, loader.load(rep('none'))]);
    expect(loader.load(rep('a'))).toEqual({ id: 'a' });
    expect(loader.load(rep('none'))).toBeNull();
    await expect(loader.load(rep('bad'))).rejects.toThrow('no such seller');
    const again = loader.load(rep('bad'));
    expect(again).toBeInstanceOf(Promise); // a failure is never remembered: asked again
    await expect(again).rejects.toThrow('no such seller');
    expect(loader.stats.requests).toBe(3); // [a, none], [bad], [bad]: the warm loads sent nothing
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

describe('createRequestHeaders', () => {
  it('keeps static headers apart, renders claim headers per caller with a key of their values', () => {
    const headers = createRequestHeaders('sellers', { Authorization: 'Bearer t', 'X-Partner': 'p-{claims.partner_id}', 'X-Region': '{claims.org.region}' });
    expect(headers.fixed).toEqual({ authorization: 'Bearer t' });
    expect(headers.claims).toEqual(['partner_id', 'org.region']);
    expect(headers.caller({ partner_id: 7, org: { region: 'eu' } })).toEqual({ key: '["p-7","eu"]', headers: { 'x-partner': 'p-7', 'x-region': 'eu' } });
    expect((headers.caller({ partner_id: 7 }) as Error).message).toBe('look-up source "sellers": header x-region needs the caller\'s claim "org.region", which its token lacks');
    expect(headers.caller({ partner_id: 'a\r\nx: y', org: { region: 'eu' } })).toBeInstanceOf(LookupError);
    expect(createRequestHeaders('s', { A: 'b' }).caller(undefined)).toEqual({ key: '', headers: {} });
    expect(() => createRequestHeaders('s', { 'A B': 'x' })).toThrow('look-up source "s": "A B" is not a valid header name');
  });

  it('partitions a loader: one batch per caller, cache entries per caller', async () => {
    const calls: [string[], Readonly<Record<string, string>> | undefined][] = [];
    const source: EntitySource = {
      name: 'sellers',
      fetchEntities: (reps, headers) => {
        calls.push([reps.map((r) => String(r['id'])), headers]);
        return Promise.resolve(reps.map((r) => ({ id: r['id'], for: headers?.['x-partner'] })));
      },
    };
    const requestHeaders = createRequestHeaders('sellers', { 'X-Partner': '{claims.p}' });
    const loader = createEntityLoader(source, { requestHeaders });
    const p1 = requestHeaders.caller({ p: '1' }) as LookupCaller;
    const p2 = requestHeaders.caller({ p: '2' }) as LookupCaller;
    const rep = (id: string): Representation => ({ __typename: 'Seller', id });
    const answers = await Promise.all([loader.load(rep('a'), p1), loader.load(rep('a'), p2), loader.load(rep('b'), p1)]);
    expect(answers).toEqual([{ id: 'a', for: '1' }, { id: 'a', for: '2' }, { id: 'b', for: '1' }]);
    expect(calls).toEqual([[['a', 'b'], { 'x-partner': '1' }], [['a'], { 'x-partner': '2' }]]);
    expect(await loader.load(rep('a'), p2)).toEqual({ id: 'a', for: '2' });
    expect(calls).toHaveLength(2);
  });
});

describe('createHttpJsonSource', () => {
  it('refuses a GET URL without {keys} and a POST body template that is not JSON with {keys} once', () => {
    expect(() => createHttpJsonSource({ name: 's', url: 'http://h/p', keyField: 'id' })).toThrow('look-up source "s": its URL must hold {keys} where the keys go, got http://h/p');
    expect(() => createHttpJsonSource({ name: 's', url: 'http://h/p', keyField: 'id', method: 'POST', body: '{"a":{keys},"b":{keys}}' })).toThrow('its POST body must hold {keys} once');
    expect(() => createHttpJsonSource({ name: 's', url: 'http://h/p', keyField: 'id', method: 'POST', body: '{a:{keys}}' })).toThrow('its POST body is not JSON once {keys} is an array');
    expect(createHttpJsonSource({ name: 's', url: 'http://h/p', keyField: 'id', method: 'POST' }).name).toBe('s');
  });
});
