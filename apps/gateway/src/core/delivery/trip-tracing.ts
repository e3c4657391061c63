/**
 * Spans of one event's trip through the hub (decision 0020), for events whose envelope carries a
 * sampled `tp` (ingest decided, once per event; the gateway follows that decision and samples
 * nothing itself):
 *
 *   deliver <topic>   (CONSUMER, child of ingest's span) — receive to the end of the flush that wrote it
 *     execute <field> (per operation group: one execution serves the group's subscribers)
 *     flush           (per event: its start to the end of the flush; deliveries as attributes)
 *
 * Never one span per socket: the subscriber counts are attributes. An event without `tp`, or with
 * an unsampled one, costs one property read and (with tp) a character compare: no allocation.
 */
import { performance } from 'node:perf_hooks';
import type { Envelope } from '@wirestream/wire';
import { otelContext, otelTrace, parseTraceContext, ROOT_CONTEXT, SpanKind, traceparentSampled, type Attributes, type Context, type Span, type Tracer } from '@wirestream/telemetry';
import { subscriberCount, type Group } from './groups.js';
import { renderPayload, type Renderer } from './render.js';

/** One sampled event on its way through the hub. */
export interface Trip<C> {
  readonly span: Span;
  readonly context: Context;
  /** Groups it queued a payload for, so the flush can count its deliveries. */
  readonly groups: Group<C>[];
  executions: number;
}

interface SpanNames {
  readonly name: string;
  readonly attributes: Attributes;
}

/** A hub's tracing: its tracer, span names and attributes made once, and the trips waiting for a flush. */
export interface Tracing<C> {
  readonly tracer: Tracer;
  /** Per topic and per group, made once (sampled events only read them). */
  readonly deliverNames: Map<string, SpanNames>;
  readonly groupNames: WeakMap<object, SpanNames>;
  /** Traced events rendered since the last flush started: the next flush ends their spans ({@link takeTrips}). */
  trips: Trip<C>[];
}

/** Undefined without a tracer: then no event is traced. */
export function createTracing<C>(tracer: Tracer | undefined): Tracing<C> | undefined {
  return tracer === undefined ? undefined : { tracer, deliverNames: new Map(), groupNames: new WeakMap(), trips: [] };
}

/**
 * A trip for this envelope when tracing is on and its `tp` is sampled; undefined otherwise (the
 * common case: the caller tests `envelope.tp` before calling).
 */
export function startTrip<C>(tracing: Tracing<C>, envelope: Envelope, groups: number): Trip<C> | undefined {
  const { tracer, deliverNames } = tracing;
  const tp = envelope.tp;
  if (tp === undefined || !traceparentSampled(tp)) return undefined;
  const parent = parseTraceContext(tp, envelope.tr);
  if (parent === undefined) return undefined;
  let names = deliverNames.get(envelope.topic);
  if (names === undefined) {
    names = { name: `deliver ${envelope.topic}`, attributes: Object.freeze({ 'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.destination.name': envelope.topic }) };
    deliverNames.set(envelope.topic, names);
  }
  const span = tracer.startSpan(names.name, { kind: SpanKind.CONSUMER, attributes: names.attributes }, otelTrace.setSpanContext(ROOT_CONTEXT, parent));
  if (!span.isRecording()) return undefined;
  span.setAttribute('messaging.destination.partition.id', String(envelope.partition));
  span.setAttribute('messaging.kafka.offset', Number(envelope.offset));
  span.setAttribute('wirestream.groups', groups);
  return { span, context: otelTrace.setSpan(ROOT_CONTEXT, span), groups: [], executions: 0 };
}

/**
 * Renders one group's payload (render.ts) inside an `execute <field>` span, active, so a log line
 * or a custom resolver's span in it carries its ids.
 */
export function renderTraced<C>(
  tracing: Tracing<C>,
  trip: Trip<C>,
  group: Group<C>,
  renderer: Renderer,
  envelope: Envelope,
  extensions: Record<string, unknown>,
): string | Promise<string> | undefined {
  let names = tracing.groupNames.get(group);
  if (names === undefined) {
    const { op } = group;
    names = {
      name: `execute ${op.route.fieldName}`,
      attributes: Object.freeze({ 'graphql.operation.type': 'subscription', 'graphql.operation.name': op.operationName ?? op.route.fieldName }),
    };
    tracing.groupNames.set(group, names);
  }
  const span = tracing.tracer.startSpan(names.name, { kind: SpanKind.INTERNAL, attributes: names.attributes }, trip.context);
  span.setAttribute('wirestream.subscribers', subscriberCount(group));
  trip.executions++;
  try {
    return otelContext.with(otelTrace.setSpan(trip.context, span), renderPayload, undefined, renderer, group, envelope, extensions);
  } finally {
    span.end();
  }
}

/** The trip queued a payload of this group: the flush counts the group's deliveries. */
export function tripQueued<C>(trip: Trip<C>, group: Group<C>): void {
  trip.groups.push(group);
}

/** The trip's fan-out is rendered: it waits for the flush that writes it, or ends now when no group matched. */
export function tripRendered<C>(tracing: Tracing<C>, trip: Trip<C>): void {
  trip.span.setAttribute('wirestream.executions', trip.executions);
  if (trip.groups.length === 0) {
    trip.span.setAttribute('wirestream.deliveries', 0);
    trip.span.end();
    return;
  }
  tracing.trips.push(trip);
}

/** The trips a flush starting now writes (undefined when none): they leave the list. */
export function takeTrips<C>(tracing: Tracing<C> | undefined): Trip<C>[] | undefined {
  if (tracing === undefined || tracing.trips.length === 0) return undefined;
  const { trips } = tracing;
  tracing.trips = [];
  return trips;
}

/** A flush that wrote these trips' payloads ended: one `flush` span per trip, then the trip ends. */
export function endTrips<C>(tracer: Tracer, trips: readonly Trip<C>[], flushStartedAt: number): void {
  const startTime = performance.timeOrigin + flushStartedAt;
  for (const trip of trips) {
    let deliveries = 0;
    for (const group of trip.groups) deliveries += subscriberCount(group);
    const flush = tracer.startSpan('flush', { kind: SpanKind.INTERNAL, startTime }, trip.context);
    flush.setAttribute('wirestream.deliveries', deliveries);
    flush.setAttribute('wirestream.groups', trip.groups.length);
    flush.end();
    trip.span.setAttribute('wirestream.deliveries', deliveries);
    trip.span.end();
  }
}
