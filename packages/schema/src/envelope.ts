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
  /** The snake_cased event. */
  readonly payload: Record<string, unknown>;
}

/** Position metadata of an envelope, everything but the payload. */
export type EnvelopeMeta = Omit<Envelope, 'v' | 'payload'>;

/** An envelope that does not follow the contract; the message names the field. */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
  readonly retriable = false;
}

/** Builds envelope heads of one topic; the topic's JSON is encoded once, not once per event. */
export type EnvelopeHeadEncoder = (partition: number, offset: string, key: string | null, ts: number) => string;

/**
 * The envelope text up to and including `"payload":`, for one topic: the payload JSON and a
 * closing `}` follow. Lets ingest write the payload bytes straight after it.
 */
export function createEnvelopeHeadEncoder(topic: string): EnvelopeHeadEncoder {
  const start = '{"v":1,"topic":' + JSON.stringify(topic) + ',"partition":';
  return (partition, offset, key, ts) =>
    start + partition + ',"offset":"' + offset + '","key":' + (key === null ? 'null' : JSON.stringify(key)) + ',"ts":' + ts + ',"payload":';
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

/** Parses and checks an envelope received from Redis (external input: validated here, trusted after). */
export function decodeEnvelope(text: string): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new EnvelopeError(`envelope is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EnvelopeError(`envelope must be a JSON object, got ${Array.isArray(value) ? 'array' : typeof value}`);
  }
  const e = value as Record<string, unknown>;
  if (e['v'] !== 1) throw new EnvelopeError(`envelope.v must be 1, got ${JSON.stringify(e['v'])}`);
  expect(e, 'topic', typeof e['topic'] === 'string', 'a string');
  expect(e, 'partition', Number.isInteger(e['partition']), 'an integer');
  expect(e, 'offset', typeof e['offset'] === 'string' && /^\d+$/.test(e['offset']), 'a decimal string');
  expect(e, 'key', e['key'] === null || typeof e['key'] === 'string', 'a string or null');
  expect(e, 'ts', typeof e['ts'] === 'number', 'a number');
  const payload = e['payload'];
  expect(e, 'payload', typeof payload === 'object' && payload !== null && !Array.isArray(payload), 'an object');
  return value as Envelope;
}

function expect(e: Record<string, unknown>, field: string, ok: boolean, expected: string): void {
  if (!ok) {
    throw new EnvelopeError(`envelope.${field} must be ${expected}, got ${JSON.stringify(e[field]) ?? 'undefined'}`);
  }
}
