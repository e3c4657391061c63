/**
 * OpenTelemetry tracing for both services: one place that builds the SDK from the parsed OTEL_*
 * settings (tracing-settings.ts), and the W3C trace-context helpers the envelope carries.
 *
 * Off (the default) is `undefined`: callers hold `Tracer | undefined` and test it once per chunk
 * or per event, so a process without tracing runs no OpenTelemetry code at all on its hot path.
 *
 * The SDK, its exporter and the async-hooks context manager (tracing-sdk.ts) are imported only when
 * tracing is on (decision 0031): importing this package cost 26.4 MiB of RSS with them, 22.5 without
 * (bench/results/idle-rss.md), which a pod without tracing should not carry. What stays here is the API (its no-op tracer, `trace.getActiveSpan` for the log
 * mixin) and @opentelemetry/core's traceparent parser: small, and the envelope helpers need them.
 */
import { trace, type SpanContext } from '@opentelemetry/api';
import { parseTraceParent, TraceState } from '@opentelemetry/core';
import type { TracingConfig } from './tracing-settings.js';
import type { StartTracingOptions, Tracing } from './tracing-types.js';

/**
 * Builds the tracer provider, the OTLP/HTTP exporter and a batch span processor from `config`, or
 * resolves to undefined when tracing is off (`OTEL_TRACES_EXPORTER=none`, the default, or
 * `OTEL_SDK_DISABLED=true`) without loading the SDK. Registers the context manager, so a span made
 * active with `context.with` shows in log lines (createLogger's trace mixin). Async: the SDK is a
 * dynamic import.
 */
export async function startTracing(config: TracingConfig, options: StartTracingOptions): Promise<Tracing | undefined> {
  if (config.otelSdkDisabled || config.otelTracesExporter === 'none') return undefined;
  const { buildTracing } = await import('./tracing-sdk.js');
  return buildTracing(config, options);
}

/** Longest `tracestate` carried (W3C: 32 members of at most 256 characters; 512 is what vendors are asked to keep). */
const MAX_TRACESTATE_CHARS = 512;

/**
 * A `traceparent` header value (and its `tracestate`) → a remote span context, or undefined when it is
 * not a valid version-00 traceparent (a producer's bad header is ignored, never fatal). Only called
 * for records that carry the header.
 */
export function parseTraceContext(traceparent: string, tracestate?: string): SpanContext | undefined {
  const parsed = parseTraceParent(traceparent);
  if (parsed === null) return undefined;
  parsed.isRemote = true;
  if (tracestate !== undefined && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE_CHARS) parsed.traceState = new TraceState(tracestate);
  return parsed;
}

/** A span context as a W3C `traceparent` value: `00-<trace id>-<span id>-<flags>`. */
export function formatTraceparent(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 1) === 1 ? '01' : '00'}`;
}

/**
 * Whether a traceparent text says "sampled" without parsing it: the flags are its last two hex
 * digits, and bit 0 is `sampled`. The gateway's per-event test (a character compare, no allocation).
 */
export function traceparentSampled(traceparent: string): boolean {
  if (traceparent.length !== 55) return false;
  const c = traceparent.charCodeAt(54) | 0x20; // the flags' low digit, lower-cased
  const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
  return digit >= 0 && (digit & 1) === 1;
}

/** Fields joining a log line to the active span, or a shared empty object (no allocation) when none is. */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (span === undefined) return NO_TRACE_FIELDS;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

const NO_TRACE_FIELDS: { trace_id?: string; span_id?: string } = Object.freeze({});

/**
 * pino's `mixinMergeStrategy` for {@link activeTraceFields}: pino's own merges the line's fields into
 * the mixin's object, which would need a fresh object per line; without a span the line's own
 * object is used as it is.
 */
export function mergeTraceFields(mergeObject: object, mixinObject: object): object {
  return mixinObject === NO_TRACE_FIELDS ? mergeObject : Object.assign(mixinObject, mergeObject);
}
