import { booleanFlag, defineConfigSpec, durationMs, envVar, url, z, type Config } from '@wirestream/config';

/** What `OTEL_TRACES_EXPORTER` may name: `otlp` (OTLP over HTTP) turns tracing on; `none` (the default here) leaves it off. */
export const TRACES_EXPORTERS = ['none', 'otlp'] as const;
/** The spec's `OTEL_TRACES_SAMPLER` values (jaeger_remote and xray are not built in). */
export const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
/** `OTEL_EXPORTER_OTLP_PROTOCOL` values this exporter speaks (gRPC is not built in). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/** `key=value,key2=value2` (W3C baggage-like, values percent-decoded), as OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES are written. */
function keyValueList(what: string) {
  return z.string().transform((text, ctx) => {
    const out: Record<string, string> = {};
    for (const item of text.split(',')) {
      if (item.trim() === '') continue;
      const eq = item.indexOf('=');
      const key = eq < 0 ? '' : item.slice(0, eq).trim();
      if (key === '') {
        ctx.addIssue({ code: 'custom', message: `expected ${what} as key=value pairs separated by commas, got an item without a key: ${JSON.stringify(item.trim())}` });
        return z.NEVER;
      }
      let value = item.slice(eq + 1).trim();
      try {
        value = decodeURIComponent(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `the value of ${key} is not valid percent-encoding` });
        return z.NEVER;
      }
      out[key] = value;
    }
    return out;
  });
}

/** A sampling ratio in [0, 1], as OTEL_TRACES_SAMPLER_ARG is written. */
function ratio() {
  return z
    .string()
    .trim()
    .transform((text, ctx) => {
      const value = Number(text);
      if (!/^\d*\.?\d+(?:[eE][-+]?\d+)?$/.test(text) || !(value >= 0 && value <= 1)) {
        ctx.addIssue({ code: 'custom', message: `expected a sampling ratio between 0 and 1 (0.01 = 1 %), got ${JSON.stringify(text)}` });
        return z.NEVER;
      }
      return value;
    });
}

/**
 * The OpenTelemetry settings both services read (the spec's own names: docs/operations.md,
 * "Tracing"). Tracing is off unless `OTEL_TRACES_EXPORTER=otlp`: the spec's default exporter is
 * `otlp`, but a gateway that starts exporting to localhost:4318 because nobody said otherwise
 * would be a surprise; everything else keeps the spec's default.
 */
export const tracingSpec = defineConfigSpec({
  otelSdkDisabled: envVar({ name: 'OTEL_SDK_DISABLED', schema: booleanFlag(), default: false, description: 'true turns tracing off whatever OTEL_TRACES_EXPORTER says (the spec\'s kill switch).' }),
  otelTracesExporter: envVar({ name: 'OTEL_TRACES_EXPORTER', schema: z.enum(TRACES_EXPORTERS), default: 'none', description: 'otlp: export spans over OTLP/HTTP (ingest: per chunk, gateway: per sampled event; docs/operations.md, "Tracing"); none: no tracing, no per-event cost.' }),
  otelServiceName: envVar({ name: 'OTEL_SERVICE_NAME', schema: z.string().trim().min(1), optional: true, description: 'service.name of the spans. Default: wirestream-ingest / wirestream-gateway.' }),
  otelResourceAttributes: envVar({ name: 'OTEL_RESOURCE_ATTRIBUTES', schema: keyValueList('resource attributes'), optional: true, description: 'More resource attributes, key=value,… (e.g. deployment.environment.name=prod,service.instance.id=gw-3).' }),
  otelTracesSampler: envVar({ name: 'OTEL_TRACES_SAMPLER', schema: z.enum(TRACES_SAMPLERS), default: 'parentbased_always_on', description: 'Which events are traced: parentbased_traceidratio follows a producer\'s sampled traceparent and samples OTEL_TRACES_SAMPLER_ARG of the rest (per ingest chunk).' }),
  otelTracesSamplerArg: envVar({ name: 'OTEL_TRACES_SAMPLER_ARG', schema: ratio(), default: 1, description: 'Ratio for the traceidratio samplers, 0…1 (0.01 = 1 %).' }),
  otelExporterOtlpEndpoint: envVar({ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', schema: url({ protocols: ['http', 'https'] }), default: 'http://localhost:4318', description: 'Base URL of the OTLP/HTTP receiver (a collector, Jaeger, Tempo, Honeycomb); spans go to <it>/v1/traces.' }),
  otelExporterOtlpTracesEndpoint: envVar({ name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', schema: url({ protocols: ['http', 'https'] }), optional: true, description: 'Full URL spans are POSTed to, used as is (overrides OTEL_EXPORTER_OTLP_ENDPOINT).' }),
  otelExporterOtlpHeaders: envVar({ name: 'OTEL_EXPORTER_OTLP_HEADERS', schema: keyValueList('headers'), optional: true, secret: true, description: 'Headers of every export, key=value,… (Honeycomb: x-honeycomb-team=<API key>).' }),
  otelExporterOtlpTracesHeaders: envVar({ name: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', schema: keyValueList('headers'), optional: true, secret: true, description: 'Headers of span exports, added to (and overriding) OTEL_EXPORTER_OTLP_HEADERS.' }),
  otelExporterOtlpProtocol: envVar({ name: 'OTEL_EXPORTER_OTLP_PROTOCOL', schema: z.enum(OTLP_PROTOCOLS), default: 'http/protobuf', description: 'http/protobuf or http/json (gRPC is not built in: use a collector\'s HTTP receiver, port 4318).' }),
  otelBspScheduleDelayMs: envVar({ name: 'OTEL_BSP_SCHEDULE_DELAY', schema: durationMs({ minMs: 1, maxMs: 600_000 }), default: 5_000, description: 'Longest a finished span waits before it is exported (ms; a batch of 512 goes at once).' }),
  otelExporterOtlpTracesProtocol: envVar({ name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', schema: z.enum(OTLP_PROTOCOLS), optional: true, description: 'The protocol of span exports, overriding OTEL_EXPORTER_OTLP_PROTOCOL.' }),
});

/** The parsed OTEL_* settings ({@link tracingSpec}). */
export type TracingConfig = Config<typeof tracingSpec>;
