import type { IHeaders, KafkaMessage, Message } from 'kafkajs';

/** Why a message could not be published; `code` is stable for alerting, `message` is for humans. */
export interface DeadLetterReason {
  readonly code: 'EMPTY_VALUE' | 'TOO_LARGE' | 'INVALID_JSON' | 'NOT_AN_OBJECT' | 'TRANSFORM_FAILED' | 'PROCESSING_FAILED';
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
