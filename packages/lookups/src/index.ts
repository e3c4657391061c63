export { LookupError, type EntityResult, type EntitySource, type Representation, type RequestOutcome } from './types.js';
export { createSubgraphSource, type SubgraphSourceOptions } from './subgraph-source.js';
export { createHttpJsonSource, type HttpJsonSourceOptions } from './http-json-source.js';
export { createEntityLoader, representationKey, type EntityLoader, type EntityLoaderObserver, type EntityLoaderOptions, type EntityLoaderStats, type EntityLoaderTracer, type LookupRequestEnd, type LookupRequestTrace } from './entity-loader.js';
export { entitySelection } from './entity-selection.js';
export { createRequestHeaders, type LookupCaller, type RequestHeaders } from './request-headers.js';
export type { SourceTls } from './http-client.js';
