export { SchemaError, type SchemaProblem } from './errors.js';
export { TOPIC_DIRECTIVE_SDL } from './sdl-additions.js';
export { LOOKUP_DIRECTIVE_SDL, type LookupBinding, type LookupKeyField } from './lookup-bindings.js';
export { MAX_SHARDS, MAX_TOPIC_HEADERS, headerFieldName, type SubscriptionRoute } from './topic-bindings.js';
export {
  TOPIC_FORMATS,
  KEY_FORMATS,
  TOPIC_FORMAT_ENUM,
  KEY_FORMAT_ENUM,
  needsSchemaSource,
  type TopicFormat,
  type KeyFormat,
} from './topic-formats.js';
export {
  createWirestreamSchema,
  loadWirestreamSchema,
  auctionSchemaPath,
  type WirestreamSchema,
  type WirestreamSchemaOptions,
} from './wirestream-schema.js';
export { DEFAULT_CHANNEL_PREFIX, shardOf, channelName, topicChannels } from './channels.js';
export { encodeEnvelope, encodeDeletedEnvelope, encodeEnvelopeHead, encodeEnvelopeTrace, createEnvelopeHeadEncoder, decodeEnvelope, envelopeTimestamp, EnvelopeError, type Envelope, type EnvelopeMeta, type EnvelopeHeadEncoder, type RecordHeaders } from './envelope.js';
export {
  PUBLISH_FORMATS,
  encodeEnvelopeBatch,
  parseEnvelopeBatchPart,
  isEnvelopeBatchPart,
  createEnvelopeBatchAssembler,
  routingKeyText,
  ROUTED_ON_KAFKA_KEY,
  type ChunkRouting,
  type EnvelopeRoute,
  type PublishFormat,
  type EnvelopeBatchPart,
  type EncodedBatchPart,
  type EnvelopeBatchFrame,
  type EnvelopeBatchAssembler,
  type EnvelopeBatchAssemblerOptions,
} from './envelope-batch.js';
export {
  DEFAULT_HISTORY_PREFIX,
  HISTORY_FIELD_CHANNEL,
  HISTORY_FIELD_ENVELOPE,
  HISTORY_ALREADY_STORED,
  HISTORY_FIELD_PART,
  HISTORY_FORMATS,
  historyStreamKey,
  historyPartitionsKey,
  historyEpochKey,
  historyEntryId,
  offsetOfHistoryId,
  historyAppendArgs,
  historyEntryArgs,
  parseHistoryEntry,
  parseHistoryEntries,
  historyBatchArgs,
  historyBatchMinId,
  firstOffsetOfHistoryEntry,
  historyEpochCommand,
  type HistoryEntry,
  type HistoryFormat,
} from './history.js';
export { filterClauses, keyChannels, matchesFilter, subscriptionChannels, type FilterClause } from './routing.js';
export {
  WHERE_ARGUMENT,
  WHERE_COMBINATORS,
  ORDERED_OPERATORS,
  EQUALITY_OPERATORS,
  comparisonInputName,
  isFilterableField,
  filterableShape,
  headersInputName,
  listInputName,
  whereInputName,
  KEY_FILTER,
  HEADERS_FILTER,
  LIST_OPERATORS,
  type FilterableShape,
} from './where-inputs.js';
export {
  REDIS_MODES,
  createRedisLayout,
  partitionHashTag,
  parseChannelName,
  snapshotHashKey,
  RAISE_PARTITION_COUNT_SCRIPT,
  PUBLISH_IF_STORED_SCRIPT,
  NOT_STORED_YET,
  type RedisLayout,
  type RedisMode,
} from './redis-layout.js';
export {
  SNAPSHOT_APPLY_SCRIPT,
  SNAPSHOT_READ_SCRIPT,
  SNAPSHOT_TOP_SUFFIX,
  readSnapshot,
  type Snapshot,
  type SnapshotEntry,
  type SnapshotRedis,
} from './snapshot.js';
