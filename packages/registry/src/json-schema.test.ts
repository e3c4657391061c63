import { JsonSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { toSnakeCase } from '@wirestream/transform';
import { describe, expect, it } from 'vitest';
import { compileJsonSchemaValidator, createRegistrySource, createSchemaDecoders, readWireHeader, type JsonSchemaValidator } from './index.js';

// Messages written by Confluent's own JsonSerializer (validation off, so that it also writes the
// invalid ones a careless producer would) into Confluent's MockClient, the vendor's in-memory registry.
const bidSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'BidPlaced',
  type: 'object',
  properties: {
    listingId: { type: 'string', minLength: 1 },
    amountCents: { type: 'integer', minimum: 0 },
    bidder: { type: 'object', properties: { bidderId: { type: 'string' } }, required: ['bidderId'] },
    tags: { type: 'array', items: { type: 'string' } },
    placedAt: { type: 'string', format: 'date-time' },
  },
  required: ['listingId', 'amountCents'],
  additionalProperties: false,
  'confluent:tags': ['PII'],
};

async function producer(schema: object) {
  const client = new MockClient();
  const id = await client.register('bids-value', { schemaType: 'JSON', schema: JSON.stringify(schema) });
  const serializer = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const decoders = createSchemaDecoders({ source: createRegistrySource(client, 'Schema Registry (MockClient)'), fieldName: toSnakeCase });
  await decoders.load([id]);
  const entry = decoders.entry(id);
  if (entry?.kind !== 'validator') throw new Error(`not a validator: ${JSON.stringify(entry)}`);
  return { id, validator: entry.validator, serialize: (value: unknown) => serializer.serialize('bids', value) };
}

const body = (bytes: Buffer): Buffer => {
  const header = readWireHeader(bytes);
  if (!header.ok) throw new Error(header.message);
  return bytes.subarray(header.bodyOffset);
};

describe('JSON Schema: the body validated against the registered schema, compiled once per id with ajv', () => {
  it('passes a conforming body, and names the failing path and rule of one that does not conform', async () => {
    const { id, validator, serialize } = await producer(bidSchema);
    const good = await serialize({ listingId: 'lst-1', amountCents: 125, bidder: { bidderId: 'u-1' }, tags: ['a'], placedAt: 'not checked: format is an annotation' });
    expect(good.subarray(0, 5)).toEqual(Buffer.from([0, 0, 0, 0, id]));
    expect(validator.validate(body(good))).toBeUndefined();
    const cases: [unknown, string][] = [
      [{ listingId: 'lst-1' }, "at /: must have required property 'amountCents' (schema rule #/required)"],
      [{ listingId: 'lst-1', amountCents: -1 }, 'at /amountCents: must be >= 0 (schema rule #/properties/amountCents/minimum)'],
      [{ listingId: 'lst-1', amountCents: 1.5 }, 'at /amountCents: must be integer (schema rule #/properties/amountCents/type)'],
      [{ listingId: 'lst-1', amountCents: 1, bidder: {} }, "at /bidder: must have required property 'bidderId' (schema rule #/properties/bidder/required)"],
      [{ listingId: 'lst-1', amountCents: 1, tags: ['a', 2] }, 'at /tags/1: must be string (schema rule #/properties/tags/items/type)'],
      [{ listingId: 'lst-1', amountCents: 1, surprise: true }, 'at /: must NOT have additional properties (surprise) (schema rule #/additionalProperties)'],
    ];
    for (const [value, reason] of cases) expect(validator.validate(body(await serialize(value)))).toEqual({ notJson: false, message: reason });
    expect(validator.validate(Buffer.from('{"listingId": "lst-1", '))).toEqual({ notJson: true, message: expect.stringMatching(/^the body is not valid JSON: /) as unknown });
    // Not UTF-8 (a 0xff inside a string): undecodable, as in Avro and Protobuf, not published with U+FFFD.
    expect(validator.validate(Buffer.from([...Buffer.from('{"listingId": "ls'), 0xff, ...Buffer.from('", "amountCents": 1}')]))).toEqual({ notJson: true, message: 'the body is not valid UTF-8' });
  });

  it('reads draft 2020-12 schemas with ajv’s 2020 validator, as Confluent’s deserializer does', async () => {
    const { validator, serialize } = await producer({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { lines: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false } },
    });
    expect(validator.validate(body(await serialize({ lines: ['sku', 2] })))).toBeUndefined();
    expect(validator.validate(body(await serialize({ lines: ['sku', 2, 'extra'] })))).toEqual({ notJson: false, message: 'at /lines: must NOT have more than 2 items (schema rule #/properties/lines/items)' });
  });

  it('gives a key its text: a string as itself, anything else as its JSON text', () => {
    const key: JsonSchemaValidator = compileJsonSchemaValidator('{"type": ["string", "object"]}');
    expect(key.validate(Buffer.from('"lst-1"'))).toBeUndefined();
    expect(key.keyText(Buffer.from('"lst-1"'))).toBe('lst-1');
    expect(key.keyText(Buffer.from('{"listingId":"lst-1"}'))).toBe('{"listingId":"lst-1"}');
    expect(key.validate(Buffer.from('12'))).toEqual({ notJson: false, message: 'at /: must be string,object (schema rule #/type)' });
  });

  it('refuses a schema ajv cannot compile, with the reason the dead letters will carry', async () => {
    const client = new MockClient();
    const bad = await client.register('bad-value', { schemaType: 'JSON', schema: JSON.stringify({ type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }) });
    const decoders = createSchemaDecoders({ source: createRegistrySource(client, 'Schema Registry (MockClient)'), fieldName: toSnakeCase });
    await decoders.load([bad]);
    expect(decoders.entry(bad)).toMatchObject({
      kind: 'unusable',
      code: 'UNSUPPORTED_SCHEMA',
      reason: expect.stringMatching(/^schema id \d+ \(JSON\) from the Schema Registry \(MockClient\): ajv cannot compile it: can't resolve reference #\/definitions\/missing/) as unknown,
    });
  });
});
