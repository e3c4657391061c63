import { describe, expect, it } from 'vitest';
import { buildSchema, parse, validate } from 'graphql';
import { subscriptionExamples } from './examples';

const schema = buildSchema(`
  directive @topic(name: String!, key: String, format: TopicFormat = JSON, keyFormat: TopicKeyFormat = STRING) on FIELD_DEFINITION
  enum TopicFormat { JSON AVRO PROTOBUF JSON_SCHEMA }
  enum TopicKeyFormat { STRING AVRO PROTOBUF JSON_SCHEMA }
  type Query { ok: Boolean }
  type Money { amount_cents: Int! currency_code: String! }
  type Deep { money: Money }
  type Bid { bid_id: ID! amount: Money! deep: Deep status: Status }
  enum Status { OPEN CLOSED }
  type Empty { nested: Deep }
  type Subscription {
    "Bids as they are placed."
    bidPlaced(listing_id: ID): Bid @topic(name: "bid-events", key: "listing_id", format: AVRO)
    needsArg(id: ID!): Bid @topic(name: "other", keyFormat: PROTOBUF)
    emptyish: Empty
  }
`);

describe('subscriptionExamples', () => {
  it('writes one valid document per subscription field, scalars first-level and nested', () => {
    const examples = subscriptionExamples(schema);
    expect(examples.map((e) => e.field)).toEqual(['bidPlaced', 'needsArg', 'emptyish']);
    for (const example of examples) expect(validate(schema, parse(example.query))).toEqual([]);
    const bid = examples[0];
    expect(bid?.description).toBe('Bids as they are placed.');
    expect(bid?.query).toContain('subscription BidPlaced($listing_id: ID) {\n  bidPlaced(listing_id: $listing_id) {');
    expect(bid?.variables).toEqual(['listing_id']);
    expect(bid?.query).toMatch(/amount \{\s+amount_cents\s+currency_code\s+\}/);
    expect(bid?.query).toContain('status');
    expect(examples[1]?.query).toContain('subscription NeedsArg($id: ID!) {\n  needsArg(id: $id) {');
    expect(examples[2]?.query).toContain('subscription Emptyish {\n  emptyish {');
    expect(examples[2]?.variables).toEqual([]);
    // The console shows each field's topic and formats.
    expect(examples.map((e) => e.topic)).toEqual([
      { name: 'bid-events', format: 'AVRO', keyFormat: 'STRING' },
      { name: 'other', format: 'JSON', keyFormat: 'PROTOBUF' },
      undefined,
    ]);
  });

  it('stops at maxDepth and maxLeaves', () => {
    const [shallow] = subscriptionExamples(schema, { maxDepth: 0 });
    expect(shallow?.query).not.toContain('amount');
    const [few] = subscriptionExamples(schema, { maxLeaves: 1 });
    expect(few?.query.match(/bid_id/g)).toHaveLength(1);
    expect(few?.query).not.toContain('amount');
  });
});
