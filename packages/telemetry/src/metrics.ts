import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry };

/** Options of {@link createMetricsRegistry}. */
export interface MetricsRegistryOptions {
  /** Written as the `service` label on every series. */
  readonly service: string;
  /**
   * Also export process metrics (CPU, RSS, heap, event-loop lag, GC) with the `wirestream_` prefix.
   * @default true
   */
  readonly processMetrics?: boolean;
}

/**
 * A Prometheus registry for one service. Hot paths must not allocate per event: create each
 * labelled child once (`counter.labels(topic)` at start-up, kept in a variable or a Map) and call
 * `inc(n)` per batch, never `inc({ topic }, 1)` per event.
 */
export function createMetricsRegistry({ service, processMetrics = true }: MetricsRegistryOptions): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (processMetrics) collectDefaultMetrics({ register: registry, prefix: 'wirestream_' });
  return registry;
}
