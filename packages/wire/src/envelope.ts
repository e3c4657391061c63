/**
 * The Redis envelope: one compact JSON object per Kafka event, serialized once by ingest.
 * `offset` is a decimal string because Kafka offsets are int64 and must survive JSON intact.
 */
export interface Envelope {
  /** Envelope format version. */
  readonly v: 1;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** The Kafka message key, or null when the message had none. */
  readonly key: string | null;
  /** Kafka message timestamp, ms since epoch. */
  readonly ts: number;
  /**
   * W3C `traceparent` of the event's trip (decision 0020): the ingest span that published it, or the
   * producer's own header passed through when ingest did not sample it. Only on events that carry a
   * trace (a producer's header, or sampled by ingest); absent otherwise, so untraced events cost no byte.
   */
  readonly tp?: string;
  /** W3C `tracestate` of {@link tp}, when the producer sent one. */
  readonly tr?: string;
  /**
   * The Kafka headers a topic copies into its envelopes (`@topic(headers: [...])`, decision 0025), by
   * their Kafka names, each value as UTF-8 text (the last one of a repeated header). Only on topics that
   * list headers, and only those the record carries: absent otherwise, so other topics cost no byte.
   */
  readonly h?: Readonly<Record<string, string>>;
  /**
   * Only on a `@topic(snapshot: true)` topic's Kafka tombstone (null value): the key was deleted, and
   * the payload is `{"<key field>": <key>}` (`{}` without a key field); see {@link encodeDeletedEnvelope}.
   */
  readonly deleted?: true;
  /** The snake_cased event. */
  readonly payload: Record<string, unknown>;
}

/** Position metadata of an envelope, everything but the payload. */
export type EnvelopeMeta = Omit<Envelope, 'v' | 'payload' | 'tp' | 'tr' | 'h' | 'deleted'>;

/** An envelope that does not follow the contract; the message names the field. */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
  readonly retriable = false;
}

/** A Kafka record's headers as Kafka clients hand them over (kafkajs's `IHeaders`): bytes or text, an array when repeated. */
export type RecordHeaders = Readonly<Record<string, Buffer | string | readonly (Buffer | string)[] | undefined>>;

/**
 * Builds envelope heads of one topic; the topic's JSON is encoded once, not once per event. `trace`
 * is {@link encodeEnvelopeTrace}'s fragment for a traced event, undefined (no byte added) otherwise.
 * `headers`: the record's headers; read only by the encoder of a topic that copies some (others ignore them).
 */
export type EnvelopeHeadEncoder = (partition: number, offset: string, key: string | null, ts: number, trace?: string, headers?: RecordHeaders) => string;

/**
 * The envelope's trace fields, `,"tp":"<traceparent>"` (and `,"tr":<tracestate>`), placed after `ts`
 * and before `payload`. Readers before decision 0020 ignore them (unknown fields of a v1 envelope
 * are ignored by every reader), so this needs no new version. `traceparent` must be a valid W3C
 * value (hex and dashes: nothing to escape); the tracestate is JSON-escaped.
 */
export function encodeEnvelopeTrace(traceparent: string, tracestate?: string): string {
  if (!TRACEPARENT.test(traceparent)) throw new EnvelopeError(`envelope.tp must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>), got ${JSON.stringify(traceparent)}`);
  return tracestate === undefined || tracestate === '' ? ',"tp":"' + traceparent + '"' : ',"tp":"' + traceparent + '","tr":' + JSON.stringify(tracestate);
}

/** A version-00 traceparent (lower-case hex, as W3C requires). */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The envelope text up to and including `"payload":`, for one topic: the payload JSON and a
 * closing `}` follow. Lets ingest write the payload bytes straight after it. `headerNames`: the
 * Kafka headers the topic copies into `h` (`@topic(headers:)`); without any, the encoder is the
 * one before decision 0025 and never looks at a record's headers.
 */
export function createEnvelopeHeadEncoder(topic: string, headerNames: readonly string[] = []): EnvelopeHeadEncoder {
  const start = '{"v":1,"topic":' + JSON.stringify(topic) + ',"partition":';
  if (headerNames.length === 0) {
    return (partition, offset, key, ts, trace) => {
      const head = start + partition + ',"offset":"' + offset + '","key":' + (key === null ? 'null' : JSON.stringify(key)) + ',"ts":' + ts;
      return trace === undefined ? head + ',"payload":' : head + trace + ',"payload":';
    };
  }
  const encodeHeaders = createHeadersEncoder(headerNames);
  return (partition, offset, key, ts, trace, headers) => {
    const head = start + partition + ',"offset":"' + offset + '","key":' + (key === null ? 'null' : JSON.stringify(key)) + ',"ts":' + ts;
    return (trace === undefined ? head : head + trace) + (headers === undefined ? '' : encodeHeaders(headers)) + ',"payload":';
  };
}

/** `,"h":{"<name>":"<value>",…}` of the listed headers a record carries; '' when it carries none of them. */
function createHeadersEncoder(headerNames: readonly string[]): (headers: RecordHeaders) => string {
  const names = [...new Set(headerNames)];
  const quoted = names.map((name) => JSON.stringify(name) + ':');
  return (headers) => {
    let fields = '';
    // Deliberately imperative: runs per event of a topic with headers, a property lookup per listed name.
    for (let i = 0; i < names.length; i++) {
      let value = headers[names[i] as string];
      if (value === undefined) continue;
      if (Array.isArray(value)) value = value[value.length - 1] as Buffer | string | undefined;
      if (value === undefined) continue;
      fields += (fields === '' ? '' : ',') + (quoted[i] as string) + JSON.stringify(typeof value === 'string' ? value : (value as Buffer).toString('utf8'));
    }
    return fields === '' ? '' : ',"h":{' + fields + '}';
  };
}

const PAYLOAD_FIELD = '"payload":';

/**
 * The deleted event of a snapshot topic's tombstone, from the head {@link createEnvelopeHeadEncoder}
 * made for it: `…,"ts":<ts>[,"tp":…],"deleted":true,"payload":{"<keyField>":<key>}}` (`{}` without a
 * key field or key). Readers before decision 0023 see an event whose payload has only the key.
 */
export function encodeDeletedEnvelope(head: string, keyField: string | undefined, key: string | null): string {
  if (!head.endsWith(PAYLOAD_FIELD)) throw new EnvelopeError('encodeDeletedEnvelope needs a head from createEnvelopeHeadEncoder (ending in "payload":)');
  const payload = keyField === undefined || key === null ? '{}' : '{' + JSON.stringify(keyField) + ':' + JSON.stringify(key) + '}';
  return head.slice(0, head.length - PAYLOAD_FIELD.length) + '"deleted":true,' + PAYLOAD_FIELD + payload + '}';
}

/** {@link createEnvelopeHeadEncoder} for a single envelope. */
export function encodeEnvelopeHead(meta: EnvelopeMeta): string {
  return createEnvelopeHeadEncoder(meta.topic)(meta.partition, meta.offset, meta.key, meta.ts);
}

/**
 * Builds the envelope text around an already serialized payload, so the payload is
 * stringified exactly once on the ingest hot path.
 */
export function encodeEnvelope(meta: EnvelopeMeta, payloadJson: string): string {
  return encodeEnvelopeHead(meta) + payloadJson + '}';
}

/**
 * `JSON.parse` with the reviver's source text and `JSON.rawJSON` (Node 21+, V8's "JSON.parse source
 * text access"); TypeScript's lib does not have them yet.
 */
interface JsonWithSource {
  parse(text: string, reviver: (this: unknown, key: string, value: unknown, context: { readonly source?: string }) => unknown): unknown;
  rawJSON(text: string): unknown;
}
const JSON_WITH_SOURCE = JSON as unknown as JsonWithSource;
/**
 * 16 digits in a row: the least an integer beyond 2^53 − 1 (9007199254740991, 16 digits) needs.
 * Spelled out: V8 scans a 2.3 KB envelope in ~0.23 µs this way and in ~1.8 µs as `\d{16}`.
 */
const SIXTEEN_DIGITS = /\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d\d/;
const INTEGER_LITERAL = /^-?\d+$/;

/**
 * Keeps an integer that a double cannot hold (a 64-bit `Long`: 9223372036854775807) as its digits:
 * a raw JSON value, which `JSON.stringify` and the projector write as they came. Everything else
 * is what `JSON.parse` gives.
 */
function keepLongDigits(_key: string, value: unknown, context: { readonly source?: string }): unknown {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context.source !== undefined && INTEGER_LITERAL.test(context.source)) {
    return JSON_WITH_SOURCE.rawJSON(context.source);
  }
  return value;
}

/**
 * Parses an envelope's JSON. Only a text with 16 digits in a row can hold an integer `JSON.parse`
 * would round, and only such a text pays for the reviver (a regex scan otherwise).
 */
function parseEnvelopeJson(text: string): unknown {
  return SIXTEEN_DIGITS.test(text) ? JSON_WITH_SOURCE.parse(text, keepLongDigits) : JSON.parse(text);
}

/**
 * Parses and checks an envelope received from Redis (external input: validated here, trusted after).
 * An integer beyond 2^53 − 1 in the payload is kept with every digit ({@link keepLongDigits}).
 */
export function decodeEnvelope(text: string): Envelope {
  let value: unknown;
  try {
    value = parseEnvelopeJson(text);
  } catch (err) {
    throw new EnvelopeError(`envelope is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EnvelopeError(`envelope must be a JSON object, got ${Array.isArray(value) ? 'array' : typeof value}`);
  }
  const e = value as Record<string, unknown>;
  checkHead(e);
  const payload = e['payload'];
  expect(e, 'payload', typeof payload === 'object' && payload !== null && !Array.isArray(payload), 'an object');
  return value as Envelope;
}

/** Checks an envelope's fields but its payload (a malformed optional field is dropped, not the event). */
function checkHead(e: Record<string, unknown>): void {
  if (e['v'] !== 1) throw new EnvelopeError(`envelope.v must be 1, got ${JSON.stringify(e['v'])}`);
  expect(e, 'topic', typeof e['topic'] === 'string', 'a string');
  expect(e, 'partition', Number.isInteger(e['partition']), 'an integer');
  expect(e, 'offset', typeof e['offset'] === 'string' && /^\d+$/.test(e['offset']), 'a decimal string');
  expect(e, 'key', e['key'] === null || typeof e['key'] === 'string', 'a string or null');
  expect(e, 'ts', typeof e['ts'] === 'number', 'a number');
  // Trace fields are optional; one that is malformed is dropped rather than the event (tracing must never cost a delivery).
  if (e['tp'] !== undefined && (typeof e['tp'] !== 'string' || !TRACEPARENT.test(e['tp']))) delete e['tp'];
  if (e['tr'] !== undefined && (typeof e['tr'] !== 'string' || e['tp'] === undefined)) delete e['tr'];
  // Headers are optional too: a malformed `h` is dropped (a header filter then sees no headers), not the event.
  if (e['h'] !== undefined && !isTextRecord(e['h'])) delete e['h'];
  expect(e, 'deleted', e['deleted'] === undefined || e['deleted'] === true, 'true or absent');
}

/**
 * An envelope whose head was read and checked and whose payload is parsed ({@link decodeEnvelope})
 * when first read: for a reader that can serve an event from its text (the gateway's WebAssembly
 * projector, decision 0043). `text` is the whole envelope.
 */
class LazyEnvelope implements Envelope {
  readonly v = 1;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly ts: number;
  readonly tp?: string;
  readonly tr?: string;
  readonly h?: Readonly<Record<string, string>>;
  readonly deleted?: true;
  readonly text: string;
  private parsed: Record<string, unknown> | undefined = undefined;

  constructor(head: Envelope, text: string) {
    this.topic = head.topic;
    this.partition = head.partition;
    this.offset = head.offset;
    this.key = head.key;
    this.ts = head.ts;
    if (head.tp !== undefined) this.tp = head.tp;
    if (head.tr !== undefined) this.tr = head.tr;
    if (head.h !== undefined) this.h = head.h;
    if (head.deleted !== undefined) this.deleted = head.deleted;
    this.text = text;
  }

  get payload(): Record<string, unknown> {
    return (this.parsed ??= decodeEnvelope(this.text).payload);
  }
}

/**
 * The envelope of `text` from its head alone: `headJson` is the text's members before the payload
 * (the text up to the separator before `"payload":`, which must be the last member), checked as
 * {@link decodeEnvelope} checks them; the payload is parsed from `text` when first read. The
 * caller has checked that `text` is valid JSON in that layout (else decodeEnvelope may throw later).
 * Undefined for a head decodeEnvelope must read itself (one with a 64-bit integer).
 */
export function decodeEnvelopeHead(text: string, headJson: string): Envelope | undefined {
  const plain = plainHead(headJson);
  if (plain !== undefined) return new LazyEnvelope(plain, text);
  // A head with a 64-bit number is decodeEnvelope's to read (it keeps every digit).
  if (SIXTEEN_DIGITS.test(headJson)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(headJson + '}');
  } catch (err) {
    throw new EnvelopeError(`envelope is not JSON: ${(err as Error).message}`);
  }
  const e = value as Record<string, unknown>;
  checkHead(e);
  return new LazyEnvelope(e as unknown as Envelope, text);
}

const PLAIN_START = '{"v":1,"topic":"';

/**
 * The head as {@link createEnvelopeHeadEncoder} writes it for an event without trace or headers
 * (`{"v":1,"topic":"…","partition":N,"offset":"N","key":"…"|null,"ts":N`, no escapes, numbers
 * of at most 15 digits), read without JSON.parse; undefined for any other head (JSON.parse reads it).
 */
function plainHead(head: string): Envelope | undefined {
  if (!head.startsWith(PLAIN_START)) return undefined;
  const topicEnd = head.indexOf('"', PLAIN_START.length);
  if (topicEnd < 0 || !head.startsWith(',"partition":', topicEnd + 1)) return undefined;
  const partitionAt = topicEnd + 14;
  const partitionEnd = digitsEnd(head, partitionAt);
  if (partitionEnd < 0 || !head.startsWith(',"offset":"', partitionEnd)) return undefined;
  const offsetAt = partitionEnd + 11;
  const offsetEnd = digitsEnd(head, offsetAt);
  if (offsetEnd < 0 || !head.startsWith('","key":', offsetEnd)) return undefined;
  let keyAt = offsetEnd + 8;
  let key: string | null = null;
  if (head.startsWith('null', keyAt)) keyAt += 4;
  else if (head.charCodeAt(keyAt) === 0x22) {
    const keyEnd = head.indexOf('"', keyAt + 1);
    if (keyEnd < 0) return undefined;
    key = head.slice(keyAt + 1, keyEnd);
    keyAt = keyEnd + 1;
  } else return undefined;
  if (!head.startsWith(TS_FIELD, keyAt)) return undefined;
  const tsAt = keyAt + TS_FIELD.length;
  if (digitsEnd(head, tsAt) !== head.length) return undefined;
  const topic = head.slice(PLAIN_START.length, topicEnd);
  // A backslash anywhere (an escape in the topic or key) is JSON.parse's to read.
  if (topic.includes('\\') || (key !== null && key.includes('\\'))) return undefined;
  return { v: 1, topic, partition: Number(head.slice(partitionAt, partitionEnd)), offset: head.slice(offsetAt, offsetEnd), key, ts: Number(head.slice(tsAt)), payload: EMPTY };
}
const EMPTY: Record<string, unknown> = Object.freeze({});

/** The end of 1 to 15 decimal digits at `at` (no leading zero but a lone 0), or -1. */
function digitsEnd(text: string, at: number): number {
  let end = at;
  while (end < text.length && end - at <= 15) {
    const c = text.charCodeAt(end);
    if (c < 0x30 || c > 0x39) break;
    end++;
  }
  if (end === at || end - at > 15 || (text.charCodeAt(at) === 0x30 && end - at > 1)) return -1;
  return end;
}

/** The text of an envelope from {@link decodeEnvelopeHead}; undefined for any other. */
export function lazyEnvelopeText(envelope: Envelope): string | undefined {
  return envelope instanceof LazyEnvelope ? envelope.text : undefined;
}

function isTextRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const text of Object.values(value)) if (typeof text !== 'string') return false;
  return true;
}

function expect(e: Record<string, unknown>, field: string, ok: boolean, expected: string): void {
  if (!ok) {
    throw new EnvelopeError(`envelope.${field} must be ${expected}, got ${JSON.stringify(e[field]) ?? 'undefined'}`);
  }
}

const TS_FIELD = ',"ts":';

/**
 * The Kafka timestamp (ms) of an envelope's text without parsing its payload: the first `,"ts":`
 * is the head's own (topic and key are JSON strings, whose quotes are escaped, and the payload comes
 * after `ts`). Falls back to {@link decodeEnvelope} for a text of another layout; NaN when it has none.
 * For replays by time, which probe a few entries per partition (the gateway's `entryFrom`).
 */
export function envelopeTimestamp(text: string): number {
  const at = text.indexOf(TS_FIELD);
  if (at >= 0) {
    let end = at + TS_FIELD.length;
    while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
    if (end > at + TS_FIELD.length) return Number(text.slice(at + TS_FIELD.length, end));
  }
  try {
    return decodeEnvelope(text).ts;
  } catch {
    return Number.NaN;
  }
}
