import { describe, expect, it } from 'vitest';
import { createRedisLayout, parseChannelName } from './index.js';

describe('redis layout', () => {
  it('standalone: the channels and streams of decision 0005, unchanged', () => {
    const layout = createRedisLayout('standalone', 'ws', 'wsh');
    expect(layout.channel('bids', 3)).toBe('ws:bids:3');
    expect(layout.wireChannel('bids', 7, 3)).toBe('ws:bids:3');
    expect(layout.streamKey('bids', 7)).toBe('wsh:bids:7');
    expect(layout.partitionsKey('bids')).toBe('wsh:bids:partitions');
    expect(layout.epochKey()).toBe('wsh:epoch');
  });

  it('cluster: a partition stream and all its channels share one hash tag (so one slot)', () => {
    const layout = createRedisLayout('cluster', 'ws', 'wsh');
    expect(layout.channel('bids', 3)).toBe('ws:bids:3');
    expect(layout.wireChannel('bids', 7, 3)).toBe('ws:{bids:7}:3');
    expect(layout.streamKey('bids', 7)).toBe('wsh:{bids:7}');
    expect(layout.partitionCountKey('bids')).toBe('ws:bids:partition-count');
  });

  it('takes a logical channel apart, and refuses what is not one', () => {
    expect(parseChannelName('ws', 'ws:auction.bids:12')).toEqual({ topic: 'auction.bids', shard: 12 });
    expect(parseChannelName('ws', 'wsx:t:1')).toBeUndefined();
    expect(parseChannelName('ws', 'ws:t:x')).toBeUndefined();
    expect(parseChannelName('ws', 'ws:a:b:1')).toBeUndefined();
    expect(parseChannelName('ws', 'ws::1')).toBeUndefined();
  });
});
