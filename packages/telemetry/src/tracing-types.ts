/**
 * What startTracing (tracing.ts) takes and gives, and so what its SDK half (tracing-sdk.ts) builds:
 * here, so that the SDK module, which tracing.ts imports only when tracing is on, imports nothing
 * back from it. Types only: importing this module loads no code.
 */
import type { Tracer } from '@opentelemetry/api';

/** A running tracer and how to stop it (flushes what is buffered). */
export interface Tracing {
  readonly tracer: Tracer;
  /** Where spans go, and how they are sampled: for the start-up log line. */
  readonly summary: { readonly endpoint: string; readonly protocol: string; readonly sampler: string };
  /** Exports what is buffered now (tests; shutdown does it too). */
  readonly forceFlush: () => Promise<void>;
  /** Flushes and stops the exporter; call on SIGTERM, after the last span ended. */
  readonly shutdown: () => Promise<void>;
}

export interface StartTracingOptions {
  /** service.name unless OTEL_SERVICE_NAME is set, e.g. `wirestream-gateway`. */
  readonly defaultServiceName: string;
  /** Version of the service (service.version). */
  readonly serviceVersion?: string;
  /**
   * How the active span is tracked. `async-local-storage` follows it across awaits (ingest's chunk
   * is async); `synchronous` only within a call, with no async hook at all: Node 20's
   * AsyncLocalStorage turns on promise hooks for the whole process at its first `run`, which in the
   * hub in-process bench made every delivery dearer once one event had been traced (the gateway's
   * spans are all opened and closed within one synchronous slice). @default 'async-local-storage'
   */
  readonly contextManager?: 'async-local-storage' | 'synchronous';
}
