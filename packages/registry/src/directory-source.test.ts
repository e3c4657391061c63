import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSchemaDirectory, SchemaDirectoryError } from './index.js';

const record = (name: string) => JSON.stringify({ type: 'record', name, fields: [{ name: 'id', type: 'string' }] });

describe('loadSchemaDirectory', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function directory(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'wirestream-schemas-'));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  }

  it('holds subjects with / (Confluent’s Protobuf import subjects) as folders with %2F, and refuses a % that starts no escape', async () => {
    const dir = directory({
      'acme%2Fcommon%2Fmoney.proto/v1.id3.proto': 'syntax = "proto3"; package acme.common; message Money { int64 cents = 1; }',
      'orders-value/v1.id4.proto': 'syntax = "proto3"; package shop; import "acme/common/money.proto"; message Order { acme.common.Money total = 1; }',
      'orders-value/v1.id4.references.json': JSON.stringify([{ name: 'acme/common/money.proto', subject: 'acme/common/money.proto', version: 1 }]),
      '100%25-value/v1.id5.avsc': record('Percent'),
    });
    const source = loadSchemaDirectory(dir);
    expect(source.files.map((f) => `${f.subject}@${f.version}#${f.schema.id}`)).toEqual(['100%-value@1#5', 'acme/common/money.proto@1#3', 'orders-value@1#4']);
    expect(await source.schemaByVersion('acme/common/money.proto', 1)).toMatchObject({ id: 3, schemaType: 'PROTOBUF' });
    const bad = directory({ 'acme%zzmoney/v1.id3.avsc': record('Money') });
    expect(() => loadSchemaDirectory(bad)).toThrow(SchemaDirectoryError);
    try {
      loadSchemaDirectory(bad);
    } catch (err) {
      expect((err as SchemaDirectoryError).problems).toEqual([`${join(bad, 'acme%zzmoney')}: a % in a subject folder starts an escape, %2F for / or %25 for % (e.g. acme%2Fcommon%2Fmoney.proto for the subject acme/common/money.proto)`]);
    }
  });

  it('serves schemas by id; one id may be registered under several subjects', async () => {
    const dir = directory({
      'bid-events-value/v1.id11.avsc': record('Bid'),
      'bid-events-value/v2.id12.avsc': record('Bid2'),
      'bid-archive-value/v1.id11.avsc': record('Bid'),
      'listing-events-value/v1.id20.proto': 'syntax = "proto3"; message L { string id = 1; }',
    });
    const source = loadSchemaDirectory(dir, 'INGEST_SCHEMA_DIR');
    expect(source.description).toBe(`INGEST_SCHEMA_DIR ${dir}`);
    expect(source.files.map((f) => `${f.subject}@${f.version}#${f.schema.id}:${f.schema.schemaType}`)).toEqual([
      'bid-archive-value@1#11:AVRO',
      'bid-events-value@1#11:AVRO',
      'bid-events-value@2#12:AVRO',
      'listing-events-value@1#20:PROTOBUF',
    ]);
    expect(await source.schemaById(12)).toEqual({ id: 12, schemaType: 'AVRO', schema: record('Bid2'), references: [] });
    expect(await source.schemaById(13)).toBeNull();
  });

  it('reports every problem at once, each naming its file', () => {
    const dir = directory({
      'a-value/v1.id1.avsc': record('A'),
      'a-value/schema.avsc': record('A'),
      'b-value/v1.id1.avsc': record('B'),
      'c-value/v1.id3.avsc': '{ not json',
      'stray.txt': 'x',
    });
    let error: unknown;
    try {
      loadSchemaDirectory(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SchemaDirectoryError);
    expect((error as SchemaDirectoryError).problems).toEqual([
      `${dir}/a-value/schema.avsc: name it v<version>.id<id>.avsc (or .proto, .json), e.g. v1.id1.avsc`,
      `${dir}/b-value/v1.id1.avsc: id 1 is also ${dir}/a-value/v1.id1.avsc, a different schema; an id names one schema (it may be registered under several subjects)`,
      `${dir}/c-value/v1.id3.avsc: not valid JSON (an Avro schema is a JSON document)`,
      `${dir}/stray.txt: not a directory; the directory holds one folder per subject (e.g. bid-events-value/)`,
    ]);
    expect((error as Error).message.split('\n')[0]).toBe(`schema directory ${dir} cannot be used (4 problems):`);
  });

  it('a directory that cannot be read, in one line', () => {
    expect(() => loadSchemaDirectory('/nonexistent/schemas', 'INGEST_SCHEMA_DIR')).toThrow(
      'INGEST_SCHEMA_DIR /nonexistent/schemas cannot be read (ENOENT): give a directory of <subject>/v<version>.id<id>.avsc files',
    );
  });
});
