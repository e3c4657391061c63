import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@wirestream/config';
import { producerConfigSpec } from './config.js';

describe('producerConfigSpec', () => {
  it('has working defaults', () => {
    expect(loadConfig(producerConfigSpec, {})).toMatchObject({ kafkaBrokers: ['127.0.0.1:9092'], ratePerSecond: 5, count: undefined });
  });

  it('reports every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig(producerConfigSpec, { DEMO_RATE: 'fast', KAFKA_BROKERS: 'nohost' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.variable).sort()).toEqual(['DEMO_RATE', 'KAFKA_BROKERS']);
  });
});
