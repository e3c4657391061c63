import { describe, expect, it } from 'vitest';
import { historyEntryId, historyEpochKey, historyPartitionsKey, historyStreamKey, offsetOfHistoryId } from './index.js';

describe('history layout', () => {
  it('names one stream per topic partition, a partition set and an epoch key', () => {
    expect(historyStreamKey('wsh', 'auction.bids', 3)).toBe('wsh:auction.bids:3');
    expect(historyPartitionsKey('wsh', 'auction.bids')).toBe('wsh:auction.bids:partitions');
    expect(historyEpochKey('wsh')).toBe('wsh:epoch');
  });

  it('maps Kafka offsets to valid, ordered stream ids and back', () => {
    expect(historyEntryId('0')).toBe('0-1');
    expect(historyEntryId('9223372036854775806')).toBe('9223372036854775806-1');
    expect(offsetOfHistoryId('42-1')).toBe('42');
    expect(offsetOfHistoryId('42')).toBe('42');
  });
});
