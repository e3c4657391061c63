import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '@wirestream/config';
import { createLogger, createMemorySink, formatTraceparent, parseTraceContext, startTracing, traceparentSampled, tracingSpec } from './index.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('tracing settings (the spec\'s OTEL_* names)', () => {
  it('is off by default, and OTEL_SDK_DISABLED wins over an exporter', async () => {
    await expect(startTracing(loadConfig(tracingSpec, {}), { defaultServiceName: 't' })).resolves.toBeUndefined();
    await expect(startTracing(loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }), { defaultServiceName: 't' })).resolves.toBeUndefined();
  });

  it('reads the spec defaults and the collector settings', () => {
    const config = loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%3D,x-other = 2', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod' });
    expect(config).toMatchObject({
      otelTracesExporter: 'otlp',
      otelTracesSampler: 'parentbased_traceidratio',
      otelTracesSamplerArg: 0.01,
      otelExporterOtlpEndpoint: 'http://localhost:4318',
      otelExporterOtlpProtocol: 'http/protobuf',
      otelExporterOtlpHeaders: { 'x-honeycomb-team': 'abc=', 'x-other': '2' },
      otelResourceAttributes: { 'deployment.environment.name': 'prod' },
      otelBspScheduleDelayMs: 5_000,
    });
  });

  it('names every bad setting at once, with what it expects', () => {
    let error: unknown;
    try {
      loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'jaeger', OTEL_TRACES_SAMPLER_ARG: '5%', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_HEADERS: 'novalue', OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['OTEL_TRACES_EXPORTER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_ENDPOINT']) expect(message).toContain(name);
    expect(message).toContain('a sampling ratio between 0 and 1');
    expect(message).toContain('an item without a key');
    // Headers carry API keys: the value is masked.
    expect(message).not.toContain('novalue');
  });
});

describe('trace context helpers', () => {
  it('parses and formats a W3C traceparent, ignoring a bad one', () => {
    const parsed = parseTraceContext(TRACEPARENT, 'vendor=x');
    expect(parsed).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    expect(parsed?.traceState?.get('vendor')).toBe('x');
    expect(formatTraceparent(parsed as NonNullable<typeof parsed>)).toBe(TRACEPARENT);
    expect(parseTraceContext('00-zz-01')).toBeUndefined();
    expect(parseTraceContext('00-00000000000000000000000000000000-b7ad6b7169203331-01')).toBeUndefined();
  });

  it('reads the sampled flag without parsing', () => {
    expect(traceparentSampled(TRACEPARENT)).toBe(true);
    expect(traceparentSampled(TRACEPARENT.slice(0, -2) + '00')).toBe(false);
    expect(traceparentSampled(TRACEPARENT.slice(0, -2) + '0b')).toBe(true);
    expect(traceparentSampled(TRACEPARENT.slice(0, -2) + '0B')).toBe(true);
    expect(traceparentSampled('garbage')).toBe(false);
  });
});

describe('log lines and spans', () => {
  it('carry trace_id and span_id while a span is active, and nothing otherwise', async () => {
    // A real provider and exporter, to a receiver that records what it was sent (protobuf, the default).
    const received: { url: string | undefined; type: string | undefined; bytes: number }[] = [];
    const server = createServer((req, res) => {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => {
        received.push({ url: req.url, type: req.headers['content-type'], bytes });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tracing = await startTracing(loadConfig(tracingSpec, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: base }), { defaultServiceName: 'test' });
    expect(tracing?.summary).toEqual({ endpoint: `${base}/v1/traces`, protocol: 'http/protobuf', sampler: 'parentbased_always_on' });
    const sink = createMemorySink();
    const logger = createLogger({ name: 'test', destination: sink });
    logger.info({ a: 1 }, 'outside');
    const ids = tracing?.tracer.startActiveSpan('work', (span) => {
      logger.info({ a: 2 }, 'inside');
      span.end();
      return span.spanContext();
    });
    logger.info('after');
    expect(sink.lines.map((l) => [l['msg'], l['trace_id'], l['span_id'], l['a']])).toEqual([
      ['outside', undefined, undefined, 1],
      ['inside', ids?.traceId, ids?.spanId, 2],
      ['after', undefined, undefined, undefined],
    ]);
    await tracing?.shutdown();
    server.close();
    expect(received).toEqual([{ url: '/v1/traces', type: 'application/x-protobuf', bytes: expect.any(Number) as number }]);
    expect(received[0]?.bytes).toBeGreaterThan(20);
  });
});
