import { createHash } from 'node:crypto';
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';

/** Why a message could not be published; `code` is stable for alerting, `message` is for humans. */
export interface DeadLetterReason {
  readonly code:
    | 'EMPTY_VALUE'
    | 'TOO_LARGE'
    | 'INVALID_JSON'
    | 'NOT_AN_OBJECT'
    | 'TRANSFORM_FAILED'
    | 'PROCESSING_FAILED'
    // Wire-format topics (@topic(format: AVRO) …): no magic byte 0 / 5-byte header; an id the schema
    // source does not have; a schema that cannot be decoded into a payload; bytes that do not decode;
    // a JSON_SCHEMA body that breaks its schema.
    | 'NOT_WIRE_FORMAT'
    | 'UNKNOWN_SCHEMA_ID'
    | 'UNSUPPORTED_SCHEMA'
    | 'UNDECODABLE'
    | 'SCHEMA_VIOLATION';
  readonly message: string;
}

/** Header names on dead letters: the original position and the reason, so a replay tool can act on them. */
export const DEAD_LETTER_HEADERS = Object.freeze({
  reason: 'wirestream-dlq-reason',
  detail: 'wirestream-dlq-detail',
  topic: 'wirestream-dlq-original-topic',
  partition: 'wirestream-dlq-original-partition',
  offset: 'wirestream-dlq-original-offset',
  timestamp: 'wirestream-dlq-original-timestamp',
});

/** Added to a dead letter only when its topic could not hold the value (the value is then its first bytes). */
export const DEAD_LETTER_TRUNCATION_HEADERS = Object.freeze({
  truncated: 'wirestream-dlq-truncated',
  originalSize: 'wirestream-dlq-original-size',
  originalSha256: 'wirestream-dlq-original-sha256',
});

/** What a record's headers, key and framing may take besides the value (a conservative estimate). */
const RECORD_OVERHEAD_BYTES = 4_096;

/** Bytes of a dead letter as the broker counts them, about: value, key and headers. */
export function deadLetterBytes(message: Message): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(message.value) + byteLength(message.key);
  for (const [name, value] of Object.entries(message.headers ?? {})) bytes += name.length + byteLength(value);
  return bytes;
}

function byteLength(value: Buffer | string | null | undefined | readonly (Buffer | string)[]): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Buffer.isBuffer(value)) return value.length;
  let n = 0;
  for (const v of value) n += byteLength(v);
  return n;
}

/**
 * A dead letter cut to fit a topic that accepts records up to `limit` bytes: the value becomes its
 * first bytes, and the headers say so with the original size and SHA-256 (the original stays in the
 * source topic at its offset, also in the headers). Unchanged when it fits.
 */
export function truncateDeadLetter(message: Message, limit: number): Message {
  const value = message.value === null || message.value === undefined ? Buffer.alloc(0) : Buffer.from(message.value);
  if (deadLetterBytes(message) <= limit) return message;
  const keep = Math.max(0, limit - (deadLetterBytes({ ...message, value: null }) + 256));
  return {
    ...message,
    value: value.subarray(0, keep),
    headers: {
      ...message.headers,
      [DEAD_LETTER_TRUNCATION_HEADERS.truncated]: 'true',
      [DEAD_LETTER_TRUNCATION_HEADERS.originalSize]: String(value.length),
      [DEAD_LETTER_TRUNCATION_HEADERS.originalSha256]: createHash('sha256').update(value).digest('hex'),
    },
  };
}

/** The dead letter keeps the original key, value and headers untouched: nothing is lost. */
export function createDeadLetter(topic: string, partition: number, message: KafkaMessage, reason: DeadLetterReason): Message {
  const headers: IHeaders = {
    ...message.headers,
    [DEAD_LETTER_HEADERS.reason]: reason.code,
    [DEAD_LETTER_HEADERS.detail]: reason.message,
    [DEAD_LETTER_HEADERS.topic]: topic,
    [DEAD_LETTER_HEADERS.partition]: String(partition),
    [DEAD_LETTER_HEADERS.offset]: message.offset,
    [DEAD_LETTER_HEADERS.timestamp]: message.timestamp,
  };
  return { key: message.key, value: message.value, headers, timestamp: message.timestamp };
}
