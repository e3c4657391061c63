/**
 * Prometheus series of the look-up sources (labelled by source, bound once per source): requests
 * and their latency, batch sizes, loads answered from the cache or not, failed look-ups.
 */
import type { EntityLoaderObserver } from '@wirestream/lookups';
import { Counter, Histogram, type Registry } from '@wirestream/telemetry';

export type LookupObservers = (source: string) => EntityLoaderObserver;

export function createLookupMetrics(registry: Registry): LookupObservers {
  const registers = [registry];
  const requests = new Counter({ name: 'wirestream_gateway_lookup_requests_total', help: 'Look-up requests sent, by source.', labelNames: ['source'] as const, registers });
  const seconds = new Histogram({
    name: 'wirestream_gateway_lookup_request_seconds',
    help: 'Look-up request latency, by source (GATEWAY_LOOKUP_TIMEOUT_MS bounds it).',
    labelNames: ['source'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const batch = new Histogram({ name: 'wirestream_gateway_lookup_batch_size', help: 'Representations per look-up request, by source.', labelNames: ['source'] as const, buckets: [1, 2, 5, 10, 25, 50, 100, 250, 1000], registers });
  const loads = new Counter({ name: 'wirestream_gateway_lookup_loads_total', help: 'Look-ups by operation groups, by source and whether the cache answered (cache="hit") or a request did ("miss").', labelNames: ['source', 'cache'] as const, registers });
  const errors = new Counter({ name: 'wirestream_gateway_lookup_errors_total', help: 'Look-ups that failed (timeout, unreachable, an error from the source), by source.', labelNames: ['source'] as const, registers });
  return (source) => {
    const bound = {
      requests: requests.labels(source),
      seconds: seconds.labels(source),
      batch: batch.labels(source),
      hits: loads.labels(source, 'hit'),
      misses: loads.labels(source, 'miss'),
      errors: errors.labels(source),
    };
    return {
      load: (hit) => (hit ? bound.hits : bound.misses).inc(),
      request(representations, took, failed) {
        bound.requests.inc();
        bound.batch.observe(representations);
        bound.seconds.observe(took);
        if (failed > 0) bound.errors.inc(failed);
      },
    };
  };
}
