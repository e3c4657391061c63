import { createKeyTransformer } from '@wirestream/transform';
import type { DeadLetterReason } from './dead-letter.js';

export type ConvertResult =
  | { readonly ok: true; readonly payload: Record<string, unknown>; readonly json: string }
  | { readonly ok: false; readonly reason: DeadLetterReason };

export interface EventConverterOptions {
  /** @default 1_048_576 (1 MiB) */
  readonly maxMessageBytes?: number;
  /** @default 64 */
  readonly maxDepth?: number;
}

/**
 * Kafka value bytes → snake_cased payload object + its JSON text (serialized once, reused by the
 * envelope). Kafka payloads are external input: every failure becomes a dead-letter reason, never a throw.
 */
export function createEventConverter(options: EventConverterOptions = {}): (value: Buffer | null) => ConvertResult {
  const { maxMessageBytes = 1_048_576, maxDepth = 64 } = options;
  const transformer = createKeyTransformer({ maxDepth });

  return (value) => {
    if (value === null || value.length === 0) {
      return fail('EMPTY_VALUE', 'message has no value (tombstone or empty)');
    }
    if (value.length > maxMessageBytes) {
      return fail('TOO_LARGE', `value is ${value.length} bytes, over the limit of ${maxMessageBytes} (INGEST_MAX_MESSAGE_BYTES)`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.toString('utf8'));
    } catch (err) {
      return fail('INVALID_JSON', `value is not valid JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return fail('NOT_AN_OBJECT', `value must be a JSON object, got ${Array.isArray(parsed) ? 'array' : parsed === null ? 'null' : typeof parsed}`);
    }
    let payload: Record<string, unknown>;
    try {
      payload = transformer.transform<Record<string, unknown>>(parsed);
    } catch (err) {
      return fail('TRANSFORM_FAILED', (err as Error).message);
    }
    return { ok: true, payload, json: JSON.stringify(payload) };
  };
}

function fail(code: DeadLetterReason['code'], message: string): ConvertResult {
  return { ok: false, reason: { code, message } };
}
