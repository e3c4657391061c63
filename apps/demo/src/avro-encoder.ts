import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { loadSchemaDirectory } from '@wirestream/registry';

/**
 * Writes a topic's values as a Confluent producer would: Confluent's own AvroSerializer, with the
 * latest `<topic>-value` schema of a schema directory. The demo has no registry, so the schema is
 * registered in Confluent's in-memory client; its id there may differ from the directory's, so the
 * header carries the directory's id (the one ingest looks up), the body is the serializer's.
 */
export async function createAvroEncoder(schemaDir: string, topic: string): Promise<{ readonly id: number; encode(value: unknown): Promise<Buffer> }> {
  const subject = `${topic}-value`;
  const files = loadSchemaDirectory(schemaDir, 'DEMO_AVRO_SCHEMA_DIR').files.filter((f) => f.subject === subject && f.schema.schemaType === 'AVRO');
  const latest = files.sort((a, b) => b.version - a.version)[0];
  if (latest === undefined) throw new Error(`DEMO_AVRO_SCHEMA_DIR ${schemaDir} has no ${subject}/v<version>.id<id>.avsc: add one, or unset DEMO_AVRO_SCHEMA_DIR`);
  const client = new MockClient();
  await client.register(subject, { schemaType: 'AVRO', schema: latest.schema.schema });
  const serializer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const id = latest.schema.id;
  return {
    id,
    async encode(value) {
      const bytes = await serializer.serialize(topic, value);
      bytes.writeUInt32BE(id, 1);
      return bytes;
    },
  };
}
