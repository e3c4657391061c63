import { describe, expect, it } from 'vitest';
import { logLevel } from 'kafkajs';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { kafkaLogCreator } from './kafka-logger.js';

function logged(level: logLevel, message: string, extra: Record<string, unknown> = {}): readonly Record<string, unknown>[] {
  const sink = createMemorySink();
  const log = kafkaLogCreator(createLogger({ name: 'ingest', level: 'trace', destination: sink }))(logLevel.DEBUG);
  log({ namespace: 'Connection', level, label: 'ERROR', log: { timestamp: '', message, ...extra } });
  return sink.lines;
}

describe('kafkaLogCreator', () => {
  it('logs a failed response kafkajs retries (a retriable protocol error) at debug, marked retried', () => {
    const lines = logged(logLevel.ERROR, 'Response Metadata(key: 3, version: 6)', {
      error: 'There is no leader for this topic-partition as we are in the middle of a leadership election',
      correlationId: 4,
    });
    expect(lines.map((l) => [l['level'], l['msg'], l['retried'], l['component']])).toEqual([['debug', 'Response Metadata(key: 3, version: 6)', true, 'kafkajs']]);
  });

  it('keeps every other error an error: a protocol error it does not retry, and any other line', () => {
    const denied = logged(logLevel.ERROR, 'Response Metadata(key: 3, version: 6)', { error: 'Not authorized to access topics: [Topic authorization failed]' });
    const other = logged(logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded', { error: 'There is no leader for this topic-partition as we are in the middle of a leadership election' });
    expect([...denied, ...other].map((l) => l['level'])).toEqual(['error', 'error']);
  });

  it('keeps warnings, and makes kafkajs INFO debug', () => {
    expect(logged(logLevel.WARN, 'w').map((l) => l['level'])).toEqual(['warn']);
    expect(logged(logLevel.INFO, 'i').map((l) => l['level'])).toEqual(['debug']);
  });
});
