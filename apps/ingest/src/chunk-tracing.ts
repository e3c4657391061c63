/**
 * Spans of one ingest chunk (decision 0020): `process <topic>` per chunk with `convert` and
 * `publish` children and a link to every record's trace context, and, per record whose producer
 * sampled its `traceparent`, an `ingest <topic>` span child of the producer's span: the hop the
 * gateway continues from (its context goes into the record's envelope as `tp`).
 *
 * What it costs. Tracing off: nothing (the batch processor holds no tracer). On but the chunk not
 * sampled and no record carrying a traceparent: one `startSpan` per chunk (a non-recording span)
 * and one header lookup per record (a property miss on kafkajs's headers object), no allocation per
 * record. Everything per record beyond that happens only for records that carry a trace.
 */
import type { KafkaMessage } from 'kafkajs';
import { encodeEnvelopeTrace } from '@wirestream/wire';
import {
  formatTraceparent,
  otelTrace,
  parseTraceContext,
  ROOT_CONTEXT,
  toError,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@wirestream/telemetry';

/** The spans of one chunk while it is converted and published. */
export interface ChunkTrace {
  /**
   * Per message of the chunk (index `i - start`): the `,"tp":…` fragment its envelope carries, or
   * undefined. The array itself is undefined when no message of the chunk carries a trace.
   */
  readonly envelopeTraces: (string | undefined)[] | undefined;
  /** The chunk span as the active context (log lines get its trace_id), or undefined when it is not recorded. */
  readonly context: Context | undefined;
  /** The chunk is converted: `convert` ends, `publish` starts. */
  readonly converted: () => void;
  /** Published and committed (`ok`), or given up (stop, rebalance, an error): every span ends. */
  readonly end: (ok: boolean, error?: unknown) => void;
}

/** Starts {@link ChunkTrace}s; holds the attribute objects made once per topic and partition. */
export interface ChunkTracer {
  readonly start: (topic: string, partition: number, messages: readonly KafkaMessage[], start: number, end: number) => ChunkTrace | undefined;
}

export function createChunkTracer(tracer: Tracer, groupId: string): ChunkTracer {
  /** By topic, then partition: `process <topic>`'s span name and attributes, never rebuilt per chunk. */
  const cache = new Map<string, { readonly name: string; readonly eventName: string; readonly byPartition: Attributes[] }>();

  function topicEntry(topic: string) {
    let entry = cache.get(topic);
    if (entry === undefined) cache.set(topic, (entry = { name: `process ${topic}`, eventName: `ingest ${topic}`, byPartition: [] }));
    return entry;
  }

  function partitionAttributes(topic: string, partition: number, byPartition: Attributes[]): Attributes {
    let attributes = byPartition[partition];
    if (attributes === undefined) {
      attributes = byPartition[partition] = Object.freeze({
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.destination.name': topic,
        'messaging.destination.partition.id': String(partition),
        'messaging.consumer.group.name': groupId,
      });
    }
    return attributes;
  }

  function start(topic: string, partition: number, messages: readonly KafkaMessage[], from: number, to: number): ChunkTrace | undefined {
    const entry = topicEntry(topic);
    const attributes = partitionAttributes(topic, partition, entry.byPartition);
    // Deliberately imperative: runs per record. A record without the header costs a property miss.
    let carried: (SpanContext | undefined)[] | undefined;
    let firstSampled: SpanContext | undefined;
    for (let i = from; i < to; i++) {
      const traceparent = headerText((messages[i] as KafkaMessage).headers?.['traceparent']);
      if (traceparent === undefined) continue;
      const spanContext = parseTraceContext(traceparent, headerText((messages[i] as KafkaMessage).headers?.['tracestate']));
      if (spanContext === undefined) continue;
      (carried ??= new Array<SpanContext | undefined>(to - from))[i - from] = spanContext;
      if (firstSampled === undefined && (spanContext.traceFlags & 1) === 1) firstSampled = spanContext;
    }
    // A chunk holding a sampled record is recorded in that record's trace (parent-based sampling
    // keeps it), so the record's trip shows convert and publish; other chunks are roots, sampled by ratio.
    const parent = firstSampled === undefined ? ROOT_CONTEXT : otelTrace.setSpanContext(ROOT_CONTEXT, firstSampled);
    const chunkSpan = tracer.startSpan(entry.name, { kind: SpanKind.CONSUMER, attributes }, parent);
    const recording = chunkSpan.isRecording();
    if (!recording && carried === undefined) {
      chunkSpan.end();
      return undefined;
    }
    return recording ? recordChunk(tracer, chunkSpan, firstSampled === undefined, entry.eventName, attributes, messages, from, to, carried) : passThrough(tracer, chunkSpan, entry.eventName, attributes, messages, from, to, carried as SpanContext[]);
  }

  return { start };
}

/**
 * The chunk is recorded: convert and publish spans, links to the records' contexts, per-record spans
 * for sampled ones. `root`: sampled by ratio (not recorded because a record's producer sampled it).
 */
function recordChunk(
  tracer: Tracer,
  chunkSpan: Span,
  root: boolean,
  eventName: string,
  attributes: Attributes,
  messages: readonly KafkaMessage[],
  from: number,
  to: number,
  carried: (SpanContext | undefined)[] | undefined,
): ChunkTrace {
  chunkSpan.setAttribute('messaging.batch.message_count', to - from);
  chunkSpan.setAttribute('messaging.kafka.offset', Number((messages[from] as KafkaMessage).offset));
  chunkSpan.setAttribute('wirestream.last_offset', Number((messages[to - 1] as KafkaMessage).offset));
  const context = otelTrace.setSpan(ROOT_CONTEXT, chunkSpan);
  // A root chunk was sampled for all its records: those without a context of their own continue its
  // trace. A chunk recorded in a record's trace is not theirs: they stay untraced.
  const own = root ? encodeEnvelopeTrace(formatTraceparent(chunkSpan.spanContext())) : undefined;
  const envelopeTraces = new Array<string | undefined>(to - from);
  const events: Span[] = [];
  for (let i = from; i < to; i++) {
    const spanContext = carried?.[i - from];
    if (spanContext === undefined) envelopeTraces[i - from] = own;
    else {
      chunkSpan.addLink({ context: spanContext });
      envelopeTraces[i - from] = recordEvent(tracer, eventName, attributes, messages[i] as KafkaMessage, spanContext, chunkSpan, events);
    }
  }
  let step = tracer.startSpan('convert', { kind: SpanKind.INTERNAL }, context);
  return {
    envelopeTraces,
    context,
    converted() {
      step.end();
      step = tracer.startSpan('publish', { kind: SpanKind.PRODUCER, attributes: PUBLISH_ATTRIBUTES }, context);
    },
    end(ok, error) {
      endSpans([step, ...events, chunkSpan], ok, error);
    },
  };
}

/** The chunk is not sampled, but some records carry a producer's context: sampled ones get their span, the rest pass theirs on. */
function passThrough(tracer: Tracer, chunkSpan: Span, eventName: string, attributes: Attributes, messages: readonly KafkaMessage[], from: number, to: number, carried: (SpanContext | undefined)[]): ChunkTrace {
  chunkSpan.end();
  const envelopeTraces = new Array<string | undefined>(to - from);
  const events: Span[] = [];
  for (let i = from; i < to; i++) {
    const spanContext = carried[i - from];
    if (spanContext !== undefined) envelopeTraces[i - from] = recordEvent(tracer, eventName, attributes, messages[i] as KafkaMessage, spanContext, undefined, events);
  }
  return { envelopeTraces, context: undefined, converted() {}, end: (ok, error) => endSpans(events, ok, error) };
}

/**
 * A record that carries a producer's context: an `ingest <topic>` span, its child, when the sampler
 * keeps it (the producer sampled it); its envelope carries that span's context, or, unsampled, the
 * producer's own, so the gateway follows the same decision.
 */
function recordEvent(tracer: Tracer, name: string, attributes: Attributes, message: KafkaMessage, parent: SpanContext, chunkSpan: Span | undefined, events: Span[]): string {
  const span = tracer.startSpan(
    name,
    { kind: SpanKind.CONSUMER, attributes, links: chunkSpan === undefined ? [] : [{ context: chunkSpan.spanContext() }] },
    otelTrace.setSpanContext(ROOT_CONTEXT, parent),
  );
  const tracestate = parent.traceState?.serialize();
  if (!span.isRecording()) return encodeEnvelopeTrace(formatTraceparent(parent), tracestate);
  span.setAttribute('messaging.kafka.offset', Number(message.offset));
  events.push(span);
  return encodeEnvelopeTrace(formatTraceparent(span.spanContext()), tracestate);
}

function endSpans(spans: readonly Span[], ok: boolean, error: unknown): void {
  for (const span of spans) {
    if (!ok) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error === undefined ? 'chunk given up uncommitted (stop or rebalance)' : toError(error).message });
    }
    span.end();
  }
}

const PUBLISH_ATTRIBUTES: Attributes = Object.freeze({ 'db.system.name': 'redis', 'messaging.operation.type': 'send' });

/** A Kafka header's value as text (kafkajs hands Buffers; a repeated header: its first value). */
function headerText(value: Buffer | string | (Buffer | string)[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : typeof first === 'string' ? first : first.toString('latin1');
}
