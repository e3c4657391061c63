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
