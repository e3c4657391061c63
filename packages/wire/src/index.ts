// The public API of @wirestream/wire: the Redis wire contract between ingest (which writes it) and
// the gateway (which reads it). Nothing here needs GraphQL; SDL compilation is @wirestream/schema's.
export { DEFAULT_CHANNEL_PREFIX, shardOf, channelName, topicChannels } from './channels.js';
export { encodeEnvelope, encodeDeletedEnvelope, encodeEnvelopeHead, encodeEnvelopeTrace, createEnvelopeHeadEncoder, decodeEnvelope, decodeEnvelopeHead, lazyEnvelopeText, envelopeTimestamp, EnvelopeError, type Envelope, type EnvelopeMeta, type EnvelopeHeadEncoder, type RecordHeaders } from './envelope.js';
export {
  encodeEnvelopeBatch,
  parseEnvelopeBatchPart,
  isEnvelopeBatchPart,
  createEnvelopeBatchAssembler,
  routingKeyText,
  ROUTED_ON_KAFKA_KEY,
  type ChunkRouting,
  type EnvelopeRoute,
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
} from './history.js';
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
