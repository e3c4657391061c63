import { describe, expect, it } from 'vitest';
import { channelName, shardOf, topicChannels } from './index.js';

describe('channels', () => {
  it('hashes a key to a stable shard (the cross-app contract)', () => {
    // FNV-1a('a') = 0xe40c292c. Changing the hash silently splits ingest and gateway, so pin it.
    expect([shardOf('a', 16), shardOf('lst-000001', 16), shardOf('lst-000002', 1024)]).toEqual([12, 0, 969]);
    expect(shardOf('anything', 1)).toBe(0);
  });

  it('spreads ids over all shards', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(shardOf(`lst-${i}`, 16));
    expect(seen.size).toBe(16);
  });

  it('names channels by prefix, topic and shard', () => {
    expect(channelName('ws', 'bid-events', 3)).toBe('ws:bid-events:3');
    expect(topicChannels('ws', 't', 3)).toEqual(['ws:t:0', 'ws:t:1', 'ws:t:2']);
  });
});
