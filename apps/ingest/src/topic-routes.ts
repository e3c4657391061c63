import { needsSchemaSource, type WirestreamSchema } from '@wirestream/schema';
import { createEnvelopeHeadEncoder, type EnvelopeHeadEncoder } from '@wirestream/wire';
import type { SchemaDecoders } from '@wirestream/registry';
import type { EventConverter } from './event-converter.js';
import type { WireRoute } from './schema-gate.js';
import { createWireConverter, createWireKeyDecoder, type WireFormat } from './wire-converter.js';

/** How the events of one topic are routed and framed, resolved once from the schema. */
export interface TopicRoute {
  /** Payload field whose value picks the shard (`@topic(key:)`); the Kafka key is the fallback. */
  readonly keyField: string | undefined;
  /**
   * The field the converter reads on its way through a payload: `keyField`. Its value picks the shard,
   * names a snapshot entry, and goes into batch parts as the event's routing key (decision 0039), so
   * it is read on a topic of one shard too.
   */
  readonly readField: string | undefined;
  readonly shards: number;
  /** `@topic(snapshot: true)`: the chunk carries each event's key for the snapshot, and a tombstone becomes a deleted event. */
  readonly snapshot: boolean;
  /** The topic's envelope head; copies the Kafka headers `@topic(headers:)` lists into `h` (only then reads a record's headers). */
  readonly encodeHead: EnvelopeHeadEncoder;
  /** For a topic in a registry format (`@topic(format: AVRO)`): its converter, key decoder and schemas. */
  readonly wire: WireTopic | undefined;
}

/** A wire-format topic's parts. */
export interface WireTopic extends WireRoute {
  /** Present when `@topic(format:)` is a registry format (JSON values use the JSON converter). */
  readonly convert: EventConverter | undefined;
  /** Present when `@topic(keyFormat:)` is a registry format. */
  readonly decodeKey: ReturnType<typeof createWireKeyDecoder> | undefined;
}

/** Routing per topic is fixed by the schema: resolve it once, not per message. */
export function createTopicRoutes(schema: WirestreamSchema, decoders?: SchemaDecoders, maxMessageBytes?: number, convertJson?: EventConverter): ReadonlyMap<string, TopicRoute> {
  return new Map(
    schema.topics.map((topic) => {
      const route = schema.routesForTopic(topic)[0];
      const format = route?.format ?? 'JSON';
      const keyFormat = route?.keyFormat ?? 'STRING';
      let wire: WireTopic | undefined;
      if (needsSchemaSource(format) || needsSchemaSource(keyFormat)) {
        if (decoders === undefined) {
          throw new TypeError(`topic ${topic} is @topic(format: ${format}, keyFormat: ${keyFormat}): pass deps.schemaDecoders (SCHEMA_REGISTRY_URL or SCHEMA_DIR)`);
        }
        wire = {
          decoders,
          keyInWireFormat: needsSchemaSource(keyFormat),
          convert: needsSchemaSource(format)
            ? createWireConverter({
                decoders,
                topic,
                format: format as WireFormat,
                ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
                ...(convertJson === undefined ? {} : { convertJson }),
              })
            : undefined,
          decodeKey: needsSchemaSource(keyFormat) ? createWireKeyDecoder(decoders, topic, keyFormat as WireFormat) : undefined,
        };
      }
      const shards = route?.shards ?? 1;
      const snapshot = route?.snapshot === true;
      const keyField = route?.keyField;
      return [topic, { keyField, readField: keyField, shards, snapshot, encodeHead: createEnvelopeHeadEncoder(topic, route?.headers), wire }] as const;
    }),
  );
}
