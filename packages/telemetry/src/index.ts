export type { Logger } from 'pino';
export {
  createLogger,
  DEFAULT_REDACT_PATHS,
  LOG_LEVELS,
  type CreateLoggerOptions,
  type LogLevel,
} from './create-logger.js';
export { serializeError, toError, type SerializedError } from './errors.js';
export { createMemorySink, type LogLine, type MemorySink } from './memory-sink.js';
export { createMetricsRegistry, Counter, FastHistogram, Gauge, Histogram, Registry, type FastHistogramOptions, type MetricsRegistryOptions } from './metrics.js';
