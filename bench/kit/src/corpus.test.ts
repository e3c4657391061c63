import { describe, expect, it } from 'vitest';
import { shardOf } from '@wirestream/wire';
import { kafkaPartition, prepareCorpus } from './corpus.js';

describe('prepareCorpus', () => {
  const corpus = prepareCorpus({ count: 300, listings: 50, partitions: 6, shards: 4 });

  it("gives each event its key's Kafka partition and shard, and counts by both", () => {
    for (const e of corpus.events) {
      expect(e.partition).toBe(kafkaPartition(e.key, 6));
      expect(e.shard).toBe(shardOf(e.key, 4));
    }
    expect(corpus.countByPartition(300).reduce((a, b) => a + b, 0)).toBe(300);
    const keys = [...new Set(corpus.events.map((e) => e.key))];
    expect(corpus.countByKey(keys, 100).reduce((a, b) => a + b, 0)).toBe(100);
  });

  it('parses a payload back with a fixed occurred_at', () => {
    const payload = corpus.payloadOf(0);
    expect(payload['listing_id']).toBe(corpus.events[0]?.key);
    expect(payload['occurred_at']).toBe('2025-01-01T00:00:00.000000Z');
    expect(() => corpus.payloadOf(300)).toThrow(/beyond the corpus of 300/);
  });

  it("spreads keys over partitions apart from their shards (an FNV partition would share the shard's parity)", () => {
    const keys = Array.from({ length: 200 }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
    const partitions = new Set(keys.map((k) => kafkaPartition(k, 6)));
    expect(partitions.size).toBe(6);
    const sameParity = keys.filter((k) => kafkaPartition(k, 6) % 2 === shardOf(k, 4) % 2).length;
    expect(sameParity).toBeGreaterThan(40);
    expect(sameParity).toBeLessThan(160);
  });
});
