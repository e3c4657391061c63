import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, FastCounter, FastHistogram, Gauge, type Registry } from '@wirestream/telemetry';

/** What the scrape-time gauges read. */
export interface GaugeReadings {
  readonly connections: number;
  /** Open connections by WebSocket subprotocol. */
  readonly connectionsByProtocol: Readonly<Record<string, number>>;
  readonly subscriptions: number;
  readonly operations: number;
  /** Characters of queued, unprocessed broker messages. */
  readonly inboundChars: number;
}

/** Sampling interval of the event-loop delay monitor (a libuv timer). */
const EVENT_LOOP_RESOLUTION_MS = 20;

/**
 * The gateway's Prometheus series. Hot-path series are unlabelled (or bound once), incremented
 * once per group flush with a count, never per subscriber; gauges are read on scrape.
 */
export interface GatewayMetrics {
  /** Per event: FastCounters (prom-client's Counter allocates ~350 bytes a call). */
  readonly eventsIn: FastCounter;
  readonly eventsUnwanted: FastCounter;
  readonly framesOut: FastCounter;
  readonly bytesOut: FastCounter;
  /** `next` frames that carried a delta payload (delta mode) instead of the full one. */
  readonly deltaFramesOut: FastCounter;
  readonly slowConsumers: Counter;
  /** Observed per event and operation: a FastHistogram, because prom-client's costs ~0.5 µs per call. */
  readonly eventToWireSeconds: FastHistogram;
  readonly redisReconnects: Counter;
  /** Times reading from Redis was paused because the inbound queue passed GATEWAY_INBOUND_MAX_BYTES. */
  readonly redisPaused: Counter;
  /** Events replaced by a newer one of the same key in a lagging conflating subscriber's queue. */
  readonly conflatedEvents: Counter;
  /** Events not sent because a rate cap (extensions.maxRate) let a newer one of the same key replace them. */
  readonly rateCappedEvents: Counter;
  /** Subscriptions replayed from a time (`extensions.since`), by whether history reached back (`recovered`). */
  readonly replaysByTime: Counter<'recovered'>;
  /** Messages received from clients, by subprotocol (`protocol` label): bind a child per protocol once. */
  readonly clientMessagesIn: Counter<'protocol'>;
  /** Registers scrape-time gauges reading live counts (no per-event cost). */
  observeGauges(read: () => GaugeReadings): void;
}

export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  const registers = [registry];
  let read: () => GaugeReadings = () => ({ connections: 0, connectionsByProtocol: {}, subscriptions: 0, operations: 0, inboundChars: 0 });
  new Gauge({ name: 'wirestream_gateway_connections', help: 'Open WebSocket connections.', registers, collect() { this.set(read().connections); } });
  new Gauge({
    name: 'wirestream_gateway_protocol_connections',
    help: 'Open WebSocket connections by subprotocol (graphql-transport-ws; graphql-ws is the deprecated subscriptions-transport-ws).',
    labelNames: ['protocol'],
    registers,
    collect() {
      for (const [protocol, count] of Object.entries(read().connectionsByProtocol)) this.set({ protocol }, count);
    },
  });
  new Gauge({ name: 'wirestream_gateway_subscriptions', help: 'Active subscriptions.', registers, collect() { this.set(read().subscriptions); } });
  new Gauge({ name: 'wirestream_gateway_operations', help: 'Distinct operations (dedup groups): executions per event.', registers, collect() { this.set(read().operations); } });
  new Gauge({ name: 'wirestream_gateway_inbound_queue_bytes', help: 'Received, unprocessed envelopes (characters, about bytes); reading from Redis pauses above GATEWAY_INBOUND_MAX_BYTES.', registers, collect() { this.set(read().inboundChars); } });
  registerEventLoopDelay(registers);
  return {
    eventsIn: new FastCounter({ name: 'wirestream_gateway_events_in_total', help: 'Envelopes received from Redis for a subscribed channel.', registers }),
    eventsUnwanted: new FastCounter({
      name: 'wirestream_gateway_events_unwanted_total',
      help: 'Envelopes of events_in no subscription here pins, dropped by the routing key of their batch part before parsing (unicast).',
      registers,
    }),
    framesOut: new FastCounter({ name: 'wirestream_gateway_frames_out_total', help: '`next` frames written to sockets.', registers }),
    bytesOut: new FastCounter({ name: 'wirestream_gateway_bytes_out_total', help: 'Bytes of `next` frames written (UTF-8, before WebSocket framing).', registers }),
    deltaFramesOut: new FastCounter({ name: 'wirestream_gateway_delta_frames_out_total', help: '`next` frames written as a delta from the previous payload (delta mode); included in frames_out.', registers }),
    slowConsumers: new Counter({ name: 'wirestream_gateway_slow_consumers_total', help: 'Sockets closed because their send buffer passed GATEWAY_MAX_BACKPRESSURE_BYTES.', registers }),
    eventToWireSeconds: new FastHistogram({
      name: 'wirestream_gateway_event_to_wire_seconds',
      help: 'From the Kafka message timestamp to the frame being written, per event and operation.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    redisReconnects: new Counter({ name: 'wirestream_gateway_redis_reconnects_total', help: 'Redis subscriber reconnection attempts.', registers }),
    clientMessagesIn: new Counter({ name: 'wirestream_gateway_client_messages_in_total', help: 'WebSocket messages received from clients, by subprotocol.', labelNames: ['protocol'] as const, registers }),
    conflatedEvents: new Counter({
      name: 'wirestream_gateway_conflated_events_total',
      help: 'Events not sent because a newer one of the same key replaced them in a lagging conflating subscriber\'s queue (extensions.conflate).',
      registers,
    }),
    rateCappedEvents: new Counter({
      name: 'wirestream_gateway_rate_capped_events_total',
      help: 'Events not sent because a subscription\'s rate cap (extensions.maxRate) let a newer one of the same key replace them while it waited for its turn.',
      registers,
    }),
    replaysByTime: new Counter({
      name: 'wirestream_gateway_replays_by_time_total',
      help: 'Subscriptions replayed from a time (extensions.since); recovered="false" when history did not reach back that far.',
      labelNames: ['recovered'] as const,
      registers,
    }),
    redisPaused: new Counter({ name: 'wirestream_gateway_redis_paused_total', help: 'Times reading from Redis paused because the inbound queue passed GATEWAY_INBOUND_MAX_BYTES.', registers }),
    observeGauges(reader) {
      read = reader;
    },
  };
}

/**
 * Event-loop delay (`monitorEventLoopDelay`): quantiles 0.5, 0.99 and the maximum (quantile "1")
 * over the interval since the previous scrape, which resets the monitor. A gateway whose loop is
 * blocked answers probes and new sockets late; this is the series to alert on.
 */
function registerEventLoopDelay(registers: Registry[]): void {
  const monitor = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  monitor.enable();
  new Gauge({
    name: 'wirestream_gateway_event_loop_delay_seconds',
    help: 'Event-loop delay since the previous scrape (beyond the monitor\'s 20 ms sampling interval): quantile 0.5, 0.99 and 1 (the maximum).',
    labelNames: ['quantile'],
    registers,
    collect() {
      // The monitor records the whole interval between its timer's runs: the delay is what exceeds
      // the resolution. Without samples yet (a scrape within one interval of the last) it reads 0.
      const seconds = (ns: number): number => (monitor.count > 0 ? Math.max(0, ns / 1e6 - EVENT_LOOP_RESOLUTION_MS) / 1e3 : 0);
      this.set({ quantile: '0.5' }, seconds(monitor.percentile(50)));
      this.set({ quantile: '0.99' }, seconds(monitor.percentile(99)));
      this.set({ quantile: '1' }, seconds(monitor.max));
      monitor.reset();
    },
  });
}
