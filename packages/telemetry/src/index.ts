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
export { createMetricsRegistry, Counter, FastCounter, FastHistogram, Gauge, Histogram, Registry, type FastCounterOptions, type FastHistogramOptions, type MetricsRegistryOptions } from './metrics.js';
export { activeTraceFields, formatTraceparent, parseTraceContext, startTracing, traceparentSampled } from './tracing.js';
export type { StartTracingOptions, Tracing } from './tracing-types.js';
export { OTLP_PROTOCOLS, TRACES_EXPORTERS, TRACES_SAMPLERS, tracingSpec, type TracingConfig } from './tracing-settings.js';
export type { Attributes, Context, Link, Span, SpanContext, Tracer } from '@opentelemetry/api';
export { context as otelContext, trace as otelTrace, SpanKind, SpanStatusCode, ROOT_CONTEXT, TraceFlags } from '@opentelemetry/api';
