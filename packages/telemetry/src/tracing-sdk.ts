/**
 * The OpenTelemetry SDK for tracing that is on, imported by startTracing (tracing.ts) only then:
 * the SDK with its resources and context managers, and the exporter of the configured protocol
 * (bench/results/idle-rss.md, decision 0031).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  StackContextManager,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from './tracing-settings.js';
import type { StartTracingOptions, Tracing } from './tracing-types.js';

/**
 * The SDK half of startTracing (tracing.ts), for tracing that is on: the tracer provider, the OTLP/HTTP
 * exporter of the configured protocol (only that one is imported) and a batch span processor.
 */
export async function buildTracing(config: TracingConfig, { defaultServiceName, serviceVersion, contextManager = 'async-local-storage' }: StartTracingOptions): Promise<Tracing> {
  const protocol = config.otelExporterOtlpTracesProtocol ?? config.otelExporterOtlpProtocol;
  const endpoint = config.otelExporterOtlpTracesEndpoint ?? config.otelExporterOtlpEndpoint.replace(/\/+$/, '') + '/v1/traces';
  const headers = { ...config.otelExporterOtlpHeaders, ...config.otelExporterOtlpTracesHeaders };
  const exporterOptions = { url: endpoint, headers };
  const exporter =
    protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(exporterOptions)
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(exporterOptions);
  const resource = resourceFromAttributes({
    ...config.otelResourceAttributes,
    'service.name': config.otelServiceName ?? defaultServiceName,
    ...(serviceVersion === undefined ? {} : { 'service.version': serviceVersion }),
  });
  const provider = new TracerProvider({ resource, sampler: createSampler(config.otelTracesSampler, config.otelTracesSamplerArg), spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.otelBspScheduleDelayMs })] });
  context.setGlobalContextManager(contextManager === 'synchronous' ? new StackContextManager().enable() : new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  const sampler = config.otelTracesSampler.endsWith('traceidratio') ? `${config.otelTracesSampler} ${config.otelTracesSamplerArg}` : config.otelTracesSampler;
  return {
    tracer: provider.getTracer('wirestream', serviceVersion),
    summary: { endpoint, protocol, sampler },
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function createSampler(name: TracingConfig['otelTracesSampler'], ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
