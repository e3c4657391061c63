import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { toSnakeCase } from '@wirestream/transform';
import { afterAll, describe, expect, it } from 'vitest';
import { createDirectorySubjects, createRegistrySource, createRegistrySubjects, createSchemaDecoders, loadSchemaDirectory, readSubjectShape, readWireHeader, SchemaDirectoryError, type SchemaSource } from './index.js';

// Schema references: an Avro record using a named type registered under another subject, resolved
// through the source (Confluent's MockClient, the vendor's in-memory registry, or a schema directory
// with a references file), with the bytes written by Confluent's own AvroSerializer.
const MONEY = { type: 'record', name: 'Money', namespace: 'demo.common', fields: [{ name: 'amountCents', type: 'long' }, { name: 'currencyCode', type: 'string' }] };
const BID = { type: 'record', name: 'Bid', namespace: 'demo', fields: [{ name: 'listingId', type: 'string' }, { name: 'amount', type: 'demo.common.Money' }, { name: 'reserve', type: ['null', 'demo.common.Money'], default: null }] };
const REFERENCES = [{ name: 'demo.common.Money', subject: 'money-value', version: 1 }];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function decodeWith(source: SchemaSource, bytes: Buffer): Promise<unknown> {
  const decoders = createSchemaDecoders({ source, fieldName: toSnakeCase });
  const header = readWireHeader(bytes);
  if (!header.ok) throw new Error(header.message);
  await decoders.load([header.id]);
  const entry = decoders.entry(header.id);
  if (entry?.kind !== 'decoder') return entry;
  return JSON.parse(entry.decoder.decode(bytes.subarray(header.bodyOffset), undefined).json);
}

describe('Avro schema references', () => {
  it('a named type from another subject: decoded from Confluent’s AvroSerializer bytes, and read into a shape for the SDL', async () => {
    const client = new MockClient();
    await client.register('money-value', { schemaType: 'AVRO', schema: JSON.stringify(MONEY) });
    await client.register('bids-value', { schemaType: 'AVRO', schema: JSON.stringify(BID), references: REFERENCES });
    const serializer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
    const bytes = await serializer.serialize('bids', { listingId: 'l-1', amount: { amountCents: 2 ** 40, currencyCode: 'EUR' }, reserve: { amountCents: 5, currencyCode: 'EUR' } });
    expect(await decodeWith(createRegistrySource(client), bytes)).toEqual({ listing_id: 'l-1', amount: { amount_cents: 2 ** 40, currency_code: 'EUR' }, reserve: { amount_cents: 5, currency_code: 'EUR' } });
    const subjects = createRegistrySubjects(client);
    const latest = await subjects.latest('bids-value');
    if (latest === null) throw new Error('not registered');
    expect(latest.references).toEqual(REFERENCES);
    const top = await readSubjectShape(latest, subjects, { fallbackName: 'bids' });
    expect(top.shape).toMatchObject({ kind: 'record', name: 'Bid', fields: [{ name: 'listingId' }, { name: 'amount', shape: { kind: 'record', name: 'Money' } }, { name: 'reserve', nullable: true }] });
  });

  it('a reference the registry does not have: the id is unusable (UNSUPPORTED_SCHEMA), the reason naming the reference', async () => {
    const client = new MockClient();
    const id = await client.register('bids-value', { schemaType: 'AVRO', schema: JSON.stringify(BID), references: [{ name: 'demo.common.Money', subject: 'money-value', version: 4 }] });
    const bytes = Buffer.concat([Buffer.from([0, 0, 0, 0, id]), Buffer.from([2, 0x41])]);
    expect(await decodeWith(createRegistrySource(client, 'Schema Registry (MockClient)'), bytes)).toEqual({
      kind: 'unusable',
      id,
      code: 'UNSUPPORTED_SCHEMA',
      reason: `schema id ${id} (AVRO) from the Schema Registry (MockClient): its reference demo.common.Money names version 4 of subject money-value, which the source does not have`,
    });
  });

  it('a schema directory expresses references in v<version>.id<id>.references.json; one naming a version the directory lacks stops the start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-refs-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'money-value'));
    mkdirSync(join(dir, 'bids-value'));
    writeFileSync(join(dir, 'money-value', 'v1.id1.avsc'), JSON.stringify(MONEY));
    writeFileSync(join(dir, 'bids-value', 'v1.id2.avsc'), JSON.stringify(BID));
    writeFileSync(join(dir, 'bids-value', 'v1.id2.references.json'), JSON.stringify(REFERENCES));
    const directory = loadSchemaDirectory(dir);
    expect((await directory.schemaById(2))?.references).toEqual(REFERENCES);
    // Bytes from Confluent's serializer against a registry holding the same schemas under the same ids.
    const client = new MockClient();
    await client.register('money-value', { schemaType: 'AVRO', schema: JSON.stringify(MONEY) });
    await client.register('bids-value', { schemaType: 'AVRO', schema: JSON.stringify(BID), references: REFERENCES });
    const bytes = await new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true }).serialize('bids', { listingId: 'l-2', amount: { amountCents: 1, currencyCode: 'USD' }, reserve: null });
    expect(readWireHeader(bytes)).toMatchObject({ ok: true, id: 2 });
    expect(await decodeWith(directory, bytes)).toEqual({ listing_id: 'l-2', amount: { amount_cents: 1, currency_code: 'USD' }, reserve: null });
    const subjects = createDirectorySubjects(directory.files, directory.description);
    const latest = await subjects.latest('bids-value');
    if (latest === null) throw new Error('no subject');
    expect((await readSubjectShape(latest, subjects, { fallbackName: 'bids' })).shape).toMatchObject({ kind: 'record', name: 'Bid' });

    writeFileSync(join(dir, 'bids-value', 'v1.id2.references.json'), JSON.stringify([{ ...REFERENCES[0], version: 2 }]));
    writeFileSync(join(dir, 'bids-value', 'v9.id9.references.json'), '{"name": 1}');
    let error: unknown;
    try {
      loadSchemaDirectory(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SchemaDirectoryError);
    expect((error as SchemaDirectoryError).problems).toEqual([
      `${join(dir, 'bids-value', 'v9.id9.references.json')}: give a JSON array of references, e.g. [{"name": "demo/money.proto", "subject": "money", "version": 1}]`,
      `${join(dir, 'bids-value', 'v9.id9.references.json')}: no schema file v<version>.id<id>.<ext> of the same version and id next to it`,
      `${join(dir, 'bids-value', 'v1.id2.avsc')}: its reference demo.common.Money names version 2 of subject money-value, which the directory does not have`,
    ]);
  });
});
