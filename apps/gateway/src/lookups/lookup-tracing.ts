/**
 * A span per look-up request (decision 0042), through @wirestream/telemetry like the hub's spans
 * (decision 0020): `lookup <source>` (CLIENT) with the source, batch size, cache hits and HTTP status
 * as attributes, made for a request that a traced event asked for: its parent is the `execute
 * <field>` span of the first traced event whose render loaded a key of the batch, the other traced
 * events are links. The gateway samples nothing itself: a request only untraced events asked for has
 * no span. Names and the constant attributes are made once per source.
 */
import type { EntityLoaderTracer } from '@wirestream/lookups';
import { otelContext, otelTrace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type SpanContext, type Tracer } from '@wirestream/telemetry';

export type LookupTracers = (source: string) => EntityLoaderTracer;

export function createLookupTracers(tracer: Tracer): LookupTracers {
  return (source) => {
    const name = `lookup ${source}`;
    const attributes = Object.freeze({ 'wirestream.lookup.source': source });
    return {
      capture() {
        const span = otelTrace.getSpan(otelContext.active());
        return span !== undefined && span.isRecording() ? span.spanContext() : undefined;
      },
      begin({ batchSize, cacheHits, parents }) {
        if (parents.length === 0) return undefined;
        const [parent, ...others] = parents as readonly SpanContext[];
        const links = others.map((context) => ({ context }));
        const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, links }, otelTrace.setSpanContext(ROOT_CONTEXT, parent as SpanContext));
        span.setAttribute('wirestream.lookup.batch_size', batchSize);
        span.setAttribute('wirestream.lookup.cache_hits', cacheHits);
        return ({ status, failed, error }) => {
          if (status !== undefined) span.setAttribute('http.response.status_code', status);
          span.setAttribute('wirestream.lookup.failed', failed);
          if (error !== undefined) {
            span.setAttribute('error.type', error.name);
            span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
          }
          span.end();
        };
      },
    };
  };
}
