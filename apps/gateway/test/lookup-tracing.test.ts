// A span per look-up request (decision 0042), made by the real OpenTelemetry SDK into its in-memory
// exporter, for requests to a real HTTP service: child of the traced render that asked first, the other
// traced ones linked, batch size, cache hits and status as attributes; none for untraced requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, StackContextManager, TracerProvider } from '@opentelemetry/sdk-trace';
import type { EntityLoader } from '@wirestream/lookups';
import { otelContext, otelTrace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer } from '@wirestream/telemetry';
import { createLookupLoaders, createLookupTracers, type LookupSettings } from '../src/index.js';
import { schemaFor } from './support/gateway.js';
import { startProfileService, type ProfileService } from './support/profile-service.js';
import { withProfileLookup } from './support/subgraph.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer: Tracer = provider.getTracer('lookup-test');
let service: ProfileService;

beforeAll(async () => {
  // As the gateway runs it (main.ts): the synchronous context manager, spans active within a render.
  otelContext.setGlobalContextManager(new StackContextManager().enable());
  service = await startProfileService();
});
afterAll(async () => {
  otelContext.disable();
  await provider.shutdown();
  await service?.stop();
});

function loaderAt(url: string): EntityLoader {
  const settings: LookupSettings = { sources: new Map(), httpSources: new Map([['listings', url]]), timeoutMs: 1_000, cacheTtlMs: 60_000, cacheMaxEntries: 100, maxBatchSize: 100, maxConcurrentRequests: 2 };
  const loader = createLookupLoaders(schemaFor('lookup-tracing', withProfileLookup), settings, { tracers: createLookupTracers(tracer) }).get('listings');
  if (loader === undefined) throw new Error('no loader');
  return loader;
}

const rep = (id: string) => ({ __typename: 'ListingProfile', id });
/** Loads inside `span` made active, as a traced event's `execute` span is while it renders. */
const within = <T>(span: ReturnType<Tracer['startSpan']>, run: () => T): T => otelContext.with(otelTrace.setSpan(ROOT_CONTEXT, span), run);
const lookupSpans = () => exporter.getFinishedSpans().filter((s) => s.name === 'lookup listings');

describe('look-up request spans', () => {
  it('one span per request, child of the first traced render asking, the others linked; untraced requests have none', async () => {
    exporter.reset();
    const loader = loaderAt(`${service.base}/profiles?ids={keys}#items`);
    const a = tracer.startSpan('execute listingUpdated');
    const b = tracer.startSpan('execute listingUpdated');
    await Promise.all([within(a, () => loader.load(rep('lst-a'))), within(b, () => loader.load(rep('lst-b'))), loader.load(rep('lst-c'))]);
    const [first, ...more] = lookupSpans();
    expect(more).toEqual([]);
    expect(first?.kind).toBe(SpanKind.CLIENT);
    expect(first?.parentSpanContext?.spanId).toBe(a.spanContext().spanId);
    expect(first?.spanContext().traceId).toBe(a.spanContext().traceId);
    expect(first?.links.map((l) => l.context.spanId)).toEqual([b.spanContext().spanId]);
    expect(first?.attributes).toEqual({ 'wirestream.lookup.source': 'listings', 'wirestream.lookup.batch_size': 3, 'wirestream.lookup.cache_hits': 0, 'http.response.status_code': 200, 'wirestream.lookup.failed': 0 });

    // Warm for lst-a: the next request asks lst-d alone and counts the hit.
    await Promise.all([within(a, () => loader.load(rep('lst-a'))), within(a, () => loader.load(rep('lst-d')))]);
    expect(lookupSpans().at(-1)?.attributes).toMatchObject({ 'wirestream.lookup.batch_size': 1, 'wirestream.lookup.cache_hits': 1 });
    const traced = lookupSpans().length;
    // Only untraced renders ask: a request, no span (the gateway samples nothing itself).
    const asked = service.requests.length;
    await loader.load(rep('lst-e'));
    expect(service.requests.length).toBe(asked + 1);
    expect(lookupSpans()).toHaveLength(traced);
    a.end();
    b.end();
  });

  it('marks a failed request as an error, without an HTTP status when no answer came', async () => {
    exporter.reset();
    const loader = loaderAt('http://127.0.0.1:1/profiles?ids={keys}');
    const parent = tracer.startSpan('execute listingUpdated');
    await expect(within(parent, () => loader.load(rep('lst-x')))).rejects.toThrow('look-up source "listings" is unreachable');
    const [span] = lookupSpans();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: expect.stringContaining('look-up source "listings" is unreachable') as unknown });
    expect(span?.attributes).toEqual({ 'wirestream.lookup.source': 'listings', 'wirestream.lookup.batch_size': 1, 'wirestream.lookup.cache_hits': 0, 'wirestream.lookup.failed': 1, 'error.type': 'LookupError' });
    parent.end();
  });
});
