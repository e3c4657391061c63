import { Counter, FastHistogram, Gauge, type Registry } from '@wirestream/telemetry';

/**
 * The gateway's Prometheus series. Hot-path series are unlabelled (or bound once), incremented
 * once per group flush with a count, never per subscriber; gauges are read on scrape.
 */
export interface GatewayMetrics {
  readonly eventsIn: Counter;
  readonly framesOut: Counter;
  readonly bytesOut: Counter;
  readonly slowConsumers: Counter;
  /** Observed per event and operation: a FastHistogram, because prom-client's costs ~0.5 µs per call. */
  readonly eventToWireSeconds: FastHistogram;
  readonly redisReconnects: Counter;
  /** Registers scrape-time gauges reading live counts (no per-event cost). */
  observeGauges(read: () => { connections: number; subscriptions: number; operations: number }): void;
}

export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  const registers = [registry];
  let read: () => { connections: number; subscriptions: number; operations: number } = () => ({ connections: 0, subscriptions: 0, operations: 0 });
  new Gauge({ name: 'wirestream_gateway_connections', help: 'Open WebSocket connections.', registers, collect() { this.set(read().connections); } });
  new Gauge({ name: 'wirestream_gateway_subscriptions', help: 'Active subscriptions.', registers, collect() { this.set(read().subscriptions); } });
  new Gauge({ name: 'wirestream_gateway_operations', help: 'Distinct operations (dedup groups): executions per event.', registers, collect() { this.set(read().operations); } });
  return {
    eventsIn: new Counter({ name: 'wirestream_gateway_events_in_total', help: 'Envelopes received from Redis for a subscribed channel.', registers }),
    framesOut: new Counter({ name: 'wirestream_gateway_frames_out_total', help: '`next` frames written to sockets.', registers }),
    bytesOut: new Counter({ name: 'wirestream_gateway_bytes_out_total', help: 'Bytes of `next` frames written (UTF-8, before WebSocket framing).', registers }),
    slowConsumers: new Counter({ name: 'wirestream_gateway_slow_consumers_total', help: 'Sockets closed because their send buffer passed GATEWAY_MAX_BACKPRESSURE_BYTES.', registers }),
    eventToWireSeconds: new FastHistogram({
      name: 'wirestream_gateway_event_to_wire_seconds',
      help: 'From the Kafka message timestamp to the frame being written, per event and operation.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    redisReconnects: new Counter({ name: 'wirestream_gateway_redis_reconnects_total', help: 'Redis subscriber reconnection attempts.', registers }),
    observeGauges(reader) {
      read = reader;
    },
  };
}
