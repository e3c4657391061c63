import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, createWirestreamSchema, loadWirestreamSchema, SchemaError } from './index.js';

const DIRECTIVE = 'directive @topic(name: String!, key: String, shards: Int = 16) on FIELD_DEFINITION';

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
    });
    expect(ws.routesForTopic('bid-events').map((r) => r.fieldName)).toEqual(['bidPlaced']);
    expect(ws.routesForTopic('nope')).toEqual([]);
  });
});

describe('createWirestreamSchema errors', () => {
  it('lists every bad binding at once', () => {
    const sdl = `${DIRECTIVE}
      type Query { x: Int }
      type E { id: ID! }
      type Subscription {
        a(id: ID): E
        b(nope: ID): E @topic(name: "t")
        c: E @topic(name: "t2", key: "missing")
        d: E @topic(name: "bad topic!")
        e: E @topic(name: "t3", shards: 0)
      }`;
    let error: unknown;
    try {
      createWirestreamSchema(sdl);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SchemaError);
    const message = (error as Error).message;
    expect(message).toContain('Subscription.a: missing @topic');
    expect(message).toContain('argument "nope" filters on payload field "nope"');
    expect(message).toContain('@topic(key: "missing") is not a field of E');
    expect(message).toContain('legal Kafka topic name');
    expect(message).toContain('shards:) must be an integer from 1 to 1024, got 0');
  });

  it('refuses two fields reading one topic with different sharding', () => {
    const sdl = `${DIRECTIVE}
      type Query { x: Int }
      type E { id: ID! }
      type Subscription { a: E @topic(name: "t", shards: 4)  b: E @topic(name: "t", shards: 8) }`;
    expect(() => createWirestreamSchema(sdl)).toThrow(/one topic has one routing/);
  });

  it('explains a schema without Subscription or directive', () => {
    expect(() => createWirestreamSchema('type Query { x: Int }')).toThrow(/no Subscription type/);
    expect(() => createWirestreamSchema('type Query { x: Int } type Subscription { a: Int }')).toThrow(
      /does not declare `directive @topic/,
    );
    expect(() => createWirestreamSchema('type Query {')).toThrow(/SDL does not build/);
  });
});
