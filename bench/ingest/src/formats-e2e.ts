// The `formats` variants' topics (issue #14): the same demo events as the JSON topics (same seed,
// same keys, same partitioner), produced as Confluent's serializers write them — Avro through
// AvroSerializer, Protobuf through ProtobufSerializer (testkit's confluentProtobufSerializer), both
// on Confluent's MockClient — into a topic pair of their own, with a copy of the auction SDL whose
// @topic(format:) names the encoding and a SCHEMA_DIR that holds each topic's schema under the id
// its messages carry (`<topic>-value/v1.id<id>.avsc|.proto`, packages/registry's directory-source).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AvroSerializer, MockClient, SerdeType } from '@confluentinc/schemaregistry';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { auctionSchemaPath } from '@wirestream/schema';
import { confluentProtobufSerializer, uniqueName } from '@wirestream/testkit';
import { preload, type BenchEnvironment, type PreloadResult } from './environment.js';
import { inferSchema, protoOf, withoutNulls } from './formats-schemas.js';

export type WireEncoding = 'AVRO' | 'PROTOBUF';

/** One encoding's topics, ready for ingest: SCHEMA_PATH, SCHEMA_DIR and the topics to count commits on. */
export interface FormatTopics {
  readonly format: WireEncoding;
  readonly topics: readonly string[];
  readonly schemaPath: string;
  readonly schemaDir: string;
  readonly loaded: PreloadResult;
}

const DEMO = { seed: 42, listings: 5_000 } as const;
const NAMES = { 'listing-events': 'ListingEvent', 'bid-events': 'BidEvent' } as const;

/** Creates, fills and describes the topic pair of `format` (the events the JSON topics hold, in `format`). */
export async function prepareFormatTopics(env: BenchEnvironment, options: { readonly events: number; readonly partitions: number; readonly format: WireEncoding }): Promise<FormatTopics> {
  const { events, partitions, format } = options;
  const suffix = uniqueName(format.toLowerCase());
  const topicOf = { 'listing-events': `listing-events-${suffix}`, 'bid-events': `bid-events-${suffix}` } as const;
  const admin = env.kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: Object.values(topicOf).map((topic) => ({ topic, numPartitions: partitions })) });
  } finally {
    await admin.disconnect();
  }

  // The writers' schemas: Avro inferred from the very events preload will produce, Protobuf derived from it.
  const generator = createAuctionEventGenerator(DEMO);
  const demo = Array.from({ length: events }, () => generator.next());
  const client = new MockClient();
  const schemaText = new Map<DemoEvent['topic'], string>();
  const serialize = new Map<DemoEvent['topic'], (value: unknown) => Promise<Buffer>>();
  for (const demoTopic of ['listing-events', 'bid-events'] as const) {
    const topic = topicOf[demoTopic];
    const type = inferSchema(NAMES[demoTopic], demo.filter((e) => e.topic === demoTopic).map((e) => e.value));
    if (format === 'AVRO') {
      const avsc = JSON.stringify(type.schema());
      await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: avsc });
      const serializer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
      schemaText.set(demoTopic, avsc);
      serialize.set(demoTopic, (value) => serializer.serialize(topic, value));
    } else {
      // Registered by Confluent's serializer itself under <topic>-value (a base64 FileDescriptorProto).
      const proto = protoOf(type);
      const serializer = confluentProtobufSerializer(client, proto, { fileName: `${demoTopic}.proto` });
      schemaText.set(demoTopic, proto);
      serialize.set(demoTopic, (value) => serializer.serialize(topic, `demo.${NAMES[demoTopic]}`, withoutNulls(value) as Record<string, unknown>));
    }
  }

  const ids = new Map<DemoEvent['topic'], Set<number>>([['listing-events', new Set()], ['bid-events', new Set()]]);
  const loaded = await preload(env, {
    events,
    ...DEMO,
    topics: { listing: topicOf['listing-events'], bid: topicOf['bid-events'] },
    encode: async (event) => {
      const bytes = await (serialize.get(event.topic) as (value: unknown) => Promise<Buffer>)(event.value);
      ids.get(event.topic)?.add(bytes.readUInt32BE(1));
      return bytes;
    },
  });

  const schemaDir = join(env.workDir, `schemas-${suffix}`);
  for (const demoTopic of ['listing-events', 'bid-events'] as const) {
    const seen = [...(ids.get(demoTopic) ?? [])];
    if (seen.length !== 1) throw new Error(`the ${format} ${demoTopic} messages carry schema ids ${seen.join(', ') || 'none'}, expected one`);
    const subjectDir = join(schemaDir, `${topicOf[demoTopic]}-value`);
    mkdirSync(subjectDir, { recursive: true });
    writeFileSync(join(subjectDir, `v1.id${String(seen[0])}.${format === 'AVRO' ? 'avsc' : 'proto'}`), schemaText.get(demoTopic) as string);
  }

  const schemaPath = join(env.workDir, `schema-${suffix}.graphql`);
  let sdl = readFileSync(auctionSchemaPath, 'utf8');
  for (const demoTopic of ['listing-events', 'bid-events'] as const) {
    const from = `@topic(name: "${demoTopic}", key: "listing_id")`;
    if (!sdl.includes(from)) throw new Error(`${auctionSchemaPath} no longer has ${from}: update bench/ingest/src/formats-e2e.ts`);
    sdl = sdl.replace(from, `@topic(name: "${topicOf[demoTopic]}", key: "listing_id", format: ${format})`);
  }
  writeFileSync(schemaPath, sdl);
  return { format, topics: Object.values(topicOf), schemaPath, schemaDir, loaded };
}
