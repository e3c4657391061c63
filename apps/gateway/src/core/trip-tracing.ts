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
import type { Envelope } from '@wirestream/schema';
import { otelContext, otelTrace, parseTraceContext, ROOT_CONTEXT, SpanKind, traceparentSampled, type Attributes, type Context, type Span, type Tracer } from '@wirestream/telemetry';
import type { Group, HubState } from './hub-state.js';

/** One sampled event on its way through the hub. */
export interface Trip<C> {
  readonly span: Span;
  readonly context: Context;
  /** Groups it queued a payload for, so the flush can count its deliveries. */
  readonly groups: Group<C>[];
  executions: number;
}

/** Span names and attributes per topic and per group, made once (sampled events only read them). */
const deliverNames = new Map<string, { readonly name: string; readonly attributes: Attributes }>();
const groupAttributes = new WeakMap<object, { readonly name: string; readonly attributes: Attributes }>();

/**
 * A trip for this envelope when tracing is on and its `tp` is sampled; undefined otherwise (the
 * common case: the caller tests `envelope.tp` before calling).
 */
export function startTrip<C>(tracer: Tracer, envelope: Envelope, groups: number): Trip<C> | undefined {
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

/** Runs `render` for one group inside an `execute <field>` span (active, so a log line in it carries its ids). */
export function traceGroupRender<C, A extends unknown[]>(tracer: Tracer, trip: Trip<C>, group: Group<C>, render: (...args: A) => void, ...args: A): void {
  let names = groupAttributes.get(group);
  if (names === undefined) {
    const { op } = group;
    names = {
      name: `execute ${op.route.fieldName}`,
      attributes: Object.freeze({ 'graphql.operation.type': 'subscription', 'graphql.operation.name': op.operationName ?? op.route.fieldName }),
    };
    groupAttributes.set(group, names);
  }
  const span = tracer.startSpan(names.name, { kind: SpanKind.INTERNAL, attributes: names.attributes }, trip.context);
  span.setAttribute('wirestream.subscribers', group.subscribers.size);
  trip.executions++;
  try {
    otelContext.with(otelTrace.setSpan(trip.context, span), render, undefined, ...args);
  } finally {
    span.end();
  }
}

/** The trip's fan-out is rendered: it waits for the flush that writes it, or ends now when no group matched. */
export function tripRendered<C>(state: HubState<C>, trip: Trip<C>): void {
  trip.span.setAttribute('wirestream.executions', trip.executions);
  if (trip.groups.length === 0) {
    trip.span.setAttribute('wirestream.deliveries', 0);
    trip.span.end();
    return;
  }
  state.trips.push(trip);
}

/** A flush that wrote these trips' payloads ended: one `flush` span per trip, then the trip ends. */
export function endTrips<C>(tracer: Tracer, trips: readonly Trip<C>[], flushStartedAt: number): void {
  const startTime = performance.timeOrigin + flushStartedAt;
  for (const trip of trips) {
    let deliveries = 0;
    for (const group of trip.groups) deliveries += group.subscribers.size;
    const flush = tracer.startSpan('flush', { kind: SpanKind.INTERNAL, startTime }, trip.context);
    flush.setAttribute('wirestream.deliveries', deliveries);
    flush.setAttribute('wirestream.groups', trip.groups.length);
    flush.end();
    trip.span.setAttribute('wirestream.deliveries', deliveries);
    trip.span.end();
  }
}
