/**
 * How a topic's Kafka values (and keys) are encoded: `@topic(format:, keyFormat:)`. JSON values and
 * string keys are what Wirestream read before formats existed, and stay the defaults. The others
 * are the Confluent wire format (magic byte 0, a 4-byte schema id, for Protobuf the message
 * indexes, then the body), decoded by ingest with the writer's schema from a Schema Registry or a
 * schema directory (docs/schema.md, decision 0016).
 */
export const TOPIC_FORMATS = Object.freeze(['JSON', 'AVRO', 'PROTOBUF', 'JSON_SCHEMA'] as const);
export type TopicFormat = (typeof TOPIC_FORMATS)[number];

/** Kafka keys: `STRING` (UTF-8 text, the default) or one of the registry formats. */
export const KEY_FORMATS = Object.freeze(['STRING', 'AVRO', 'PROTOBUF', 'JSON_SCHEMA'] as const);
export type KeyFormat = (typeof KEY_FORMATS)[number];

/** Formats whose bytes carry a schema id: a Schema Registry or a schema directory is needed to read them. */
export function needsSchemaSource(format: TopicFormat | KeyFormat): boolean {
  return format !== 'JSON' && format !== 'STRING';
}

/** The enums `@topic(format:)` and `@topic(keyFormat:)` take; the loader adds them when the SDL does not declare them. */
export const TOPIC_FORMAT_ENUM = 'TopicFormat';
export const KEY_FORMAT_ENUM = 'TopicKeyFormat';

export const TOPIC_FORMAT_ENUM_SDL =
  `"How a topic's Kafka values are encoded; see docs/schema.md."\nenum ${TOPIC_FORMAT_ENUM} {\n  ${TOPIC_FORMATS.join('\n  ')}\n}`;
export const KEY_FORMAT_ENUM_SDL = `"How a topic's Kafka keys are encoded; see docs/schema.md."\nenum ${KEY_FORMAT_ENUM} {\n  ${KEY_FORMATS.join('\n  ')}\n}`;
