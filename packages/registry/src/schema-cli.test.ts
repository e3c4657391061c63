import { fileURLToPath } from 'node:url';
import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createWirestreamSchema } from '@wirestream/schema';
import { keyConverter } from '@wirestream/transform';
import { execute, parse, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { cli, selectAll } from '../test/support/cli.js';
import { loadCodecs, checkSdlAgainstSchemas, createDirectorySubjects, createRegistrySubjects, loadSchemaDirectory, sdlFromAvro } from './index.js';

// The decoders that need avsc/protobufjs come through the index's loader (decision 0031).
const { compileAvroDecoder } = await loadCodecs();

// The schema directory the demo runs with (scripts/start.sh): a data file, read like the apps read it.
const DEMO_SCHEMAS = fileURLToPath(new URL('../../../apps/demo/schemas', import.meta.url));



describe('wirestream-schema from-registry --schema-dir (the demo’s Avro schema)', () => {
  it('prints SDL the loader serves and the start-up check passes without a warning', async () => {
    const run = await cli('from-registry', '--schema-dir', DEMO_SCHEMAS, '--topic', 'bid-events', '--field', 'bidPlaced', '--key', 'listing_id');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('  bidPlaced(listing_id: ID): BidPlaced @topic(name: "bid-events", key: "listing_id", format: AVRO)\n');
    expect(run.stdout).toContain('type Money {\n  amount_cents: Long!\n  currency_code: String!\n}\n');
    expect(run.stdout).toContain('  previous_high_bid: Bid\n');
    const schema = createWirestreamSchema(run.stdout);
    expect(schema.routes.get('bidPlaced')).toMatchObject({ topic: 'bid-events', keyField: 'listing_id', format: 'AVRO', filterArgs: ['listing_id'] });
    const directory = loadSchemaDirectory(DEMO_SCHEMAS);
    const check = await checkSdlAgainstSchemas(schema, createDirectorySubjects(directory.files, directory.description), { keyStyle: 'snake' });
    expect(check).toEqual({ errors: [], warnings: [], checked: ['bid-events-value v1 (id 1)'] });
  });

  it('round-trips events: demo bids written by Confluent’s serializer, decoded by ingest’s path, render through the generated types unchanged', async () => {
    const directory = loadSchemaDirectory(DEMO_SCHEMAS);
    const file = directory.files.find((f) => f.subject === 'bid-events-value');
    if (file === undefined) throw new Error('the demo schema directory has no bid-events-value');
    for (const keyStyle of ['snake', 'lodash', 'none'] as const) {
      const key = keyConverter(keyStyle)('listingId');
      const run = await cli('from-registry', '--schema-dir', DEMO_SCHEMAS, '--topic', 'bid-events', '--field', 'bidPlaced', '--key', key, '--key-style', keyStyle);
      expect(run.code, run.stderr).toBe(0);
      const { schema } = createWirestreamSchema(run.stdout);
      const document = parse(`subscription ${selectAll(schema.getType('BidPlaced') as GraphQLObjectType).replace(/^\{/, '{ bidPlaced {')} }`);
      const client = new MockClient();
      await client.register('bid-events-value', { schemaType: 'AVRO', schema: file.schema.schema });
      const serializer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
      const decoder = compileAvroDecoder(file.schema.schema, keyConverter(keyStyle));
      const generator = createAuctionEventGenerator({ seed: 7 });
      let bids = 0;
      let withPrevious = 0;
      while (bids < 200) {
        const event = generator.next();
        if (event.topic !== 'bid-events') continue;
        bids++;
        const bytes = await serializer.serialize('bid-events', event.value);
        const { json, routeValue } = decoder.decode(bytes.subarray(5), key);
        const payload = JSON.parse(json) as Record<string, unknown>;
        if (payload[keyConverter(keyStyle)('previousHighBid')] !== null) withPrevious++;
        expect(routeValue).toBe((event.value as { listingId: string }).listingId);
        const result = await execute({ schema, document, rootValue: { bidPlaced: payload } });
        expect(result.errors).toBeUndefined();
        expect(result.data).toEqual({ bidPlaced: payload });
      }
      expect(withPrevious).toBeGreaterThan(0);
      expect(withPrevious).toBeLessThan(bids);
    }
  });

  it('refuses what it cannot write, naming the flag: a key not in the record, an unknown key style, a missing subject, no source', async () => {
    const base = ['from-registry', '--schema-dir', DEMO_SCHEMAS, '--topic', 'bid-events', '--field', 'bidPlaced'];
    const badKey = await cli(...base, '--key', 'listingId');
    expect(badKey.code).toBe(78);
    expect(badKey.stderr).toBe(
      'wirestream-schema: subject bid-events-value (version 1, id 1): --key listingId is not a field of record BidPlaced as published with key style snake: one of event_id, event_type, listing_id, bid_id, bidder_id, amount, placed_at, is_auto_bid, previous_high_bid\n',
    );
    const objectKey = await cli(...base, '--key', 'amount');
    expect(objectKey.stderr).toContain('--key amount is record Money; the key must be a scalar field (its entity id)');
    const style = await cli(...base, '--key-style', 'kebab');
    expect(style.code).toBe(64);
    expect(style.stderr).toMatch(/^wirestream-schema: --key-style must be one of snake, lodash, none, got "kebab"\n/);
    const subject = await cli(...base, '--subject', 'bids-value');
    expect(subject.code).toBe(78);
    expect(subject.stderr).toBe(`wirestream-schema: SCHEMA_DIR ${DEMO_SCHEMAS} has no subject bids-value: check --topic, or give the value schema's --subject\n`);
    const noSource = await cli('from-registry', '--topic', 'bid-events', '--field', 'bidPlaced');
    expect(noSource.code).toBe(64);
    expect(noSource.stderr).toMatch(/^wirestream-schema: give --registry-url or --schema-dir/);
    expect((await cli('to-registry')).code).toBe(64);
    // A bad source given as a flag: the problem names the flag, not the variable it stands in for.
    const badUrl = await cli('from-registry', '--registry-url', 'notaurl', '--topic', 'bid-events', '--field', 'bidPlaced');
    expect(badUrl.code).toBe(78);
    expect(badUrl.stderr).toBe('wirestream-schema: 1 problem:\n  - --registry-url: entry 0: expected a URL with scheme http: or https:; received "notaurl"\nFix these flags (or the environment variables named) and run again.\n');
    const both = await cli('from-registry', '--registry-url', 'http://localhost:1', '--schema-dir', DEMO_SCHEMAS, '--topic', 'bid-events', '--field', 'bidPlaced');
    expect(both.stderr).toContain('  - --schema-dir: is set together with --registry-url: schemas come from one source');
    expect(both.stderr).not.toMatch(/SCHEMA_DIR|SCHEMA_REGISTRY_URL|variables \(/);
  });
});

describe('sdlFromAvro on every Avro type, checked against Confluent’s MockClient', () => {
  it('maps, unions, enums, arrays of nullable items, logical types: SDL the check passes, @topic(subject:) when not <topic>-value', async () => {
    const schema = {
      type: 'record',
      name: 'Order',
      namespace: 'shop',
      doc: 'An order.\nTwo lines of doc.',
      fields: [
        { name: 'orderId', type: { type: 'string', logicalType: 'uuid' } },
        { name: 'totalCents', type: 'long' },
        { name: 'itemCount', type: 'int' },
        { name: 'weightKg', type: ['null', 'float'], default: null },
        { name: 'placedAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
        { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
        { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID'] } },
        { name: 'tags', type: { type: 'array', items: ['null', 'string'] } },
        { name: 'attributes', type: { type: 'map', values: 'string' } },
        { name: 'payment', type: ['null', 'string', 'long'], default: null },
        { name: 'lines', type: { type: 'array', items: { type: 'record', name: 'Line', fields: [{ name: 'sku', type: 'string' }, { name: 'status', type: 'Status' }] } } },
        { name: 'wait', type: { type: 'fixed', name: 'Wait', size: 12, logicalType: 'duration' } },
      ],
    };
    const sdl = sdlFromAvro({ schema: JSON.stringify(schema), topic: 'orders', field: 'orderPlaced', key: 'order_id', subject: 'shop.Order', keyStyle: 'snake' });
    expect(sdl).toContain('  orderPlaced(order_id: ID): Order @topic(name: "orders", key: "order_id", format: AVRO, subject: "shop.Order")\n');
    expect(sdl).toContain('"""\nAn order.\nTwo lines of doc.\n"""\ntype Order {\n  order_id: ID!\n  total_cents: Long!\n  item_count: Int!\n  weight_kg: Double\n  placed_at: String!\n  price: String!\n  status: Status!\n  tags: [String]!\n  attributes: JSONObject!\n  payment: AvroUnion\n  lines: [Line!]!\n  wait: AvroDuration!\n}\n');
    expect(sdl).toContain('enum Status {\n  NEW\n  PAID\n}\n');
    const client = new MockClient();
    await client.register('shop.Order', { schemaType: 'AVRO', schema: JSON.stringify(schema) });
    const check = await checkSdlAgainstSchemas(createWirestreamSchema(sdl), createRegistrySubjects(client), { keyStyle: 'snake' });
    expect(check).toEqual({ errors: [], warnings: [], checked: ['shop.Order v1 (id 1)'] });
  });
});
