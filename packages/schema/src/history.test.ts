import { describe, expect, it } from 'vitest';
import {
  historyAppendArgs,
  historyEntryId,
  historyEpochCommand,
  historyEpochKey,
  historyPartitionsKey,
  historyStreamKey,
  offsetOfHistoryId,
  parseHistoryEntry,
} from './index.js';

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

describe('history entries', () => {
  it('writes and reads one entry in the shared layout', () => {
    expect(historyAppendArgs('wsh', 't', 2, '41', 'ws:t:0', '{}')).toEqual(['wsh:t:2', '41-1', 'c', 'ws:t:0', 'e', '{}']);
    expect(historyAppendArgs('wsh', 't', 2, '41', 'ws:t:0', '{}', '100')).toEqual(['wsh:t:2', 'MAXLEN', '~', '100', '41-1', 'c', 'ws:t:0', 'e', '{}']);
    expect(parseHistoryEntry('41-1', ['c', 'ws:t:0', 'e', '{}'])).toEqual({ offset: '41', channel: 'ws:t:0', envelope: '{}' });
    expect(parseHistoryEntry('41-1', ['c', 'ws:t:0'])).toBeUndefined();
    expect(historyEpochCommand('wsh', 'x')).toEqual(['SET', 'wsh:epoch', 'x', 'NX', 'GET']);
  });
});
