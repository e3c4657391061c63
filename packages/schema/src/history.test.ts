import { describe, expect, it } from 'vitest';
import {
  firstOffsetOfHistoryEntry,
  historyAppendArgs,
  historyBatchArgs,
  historyBatchMinId,
  historyEntryId,
  historyEpochCommand,
  historyEpochKey,
  historyPartitionsKey,
  historyStreamKey,
  offsetOfHistoryId,
  parseHistoryEntries,
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

describe('batch history entries (one per chunk)', () => {
  const args = historyBatchArgs('wsh:t:2', ['41', '43', '44'], ['ws:t:0', 'ws:t:5', 'ws:t:0'], ['{"a":1}', '{"a":2}', '{"a":3}'], '35-0');
  const [, , , , id, ...fields] = args as string[];

  it("takes its last event's offset as id and holds every event's offset, channel and envelope in order", () => {
    expect(args.slice(0, 5)).toEqual(['wsh:t:2', 'MINID', '~', '35-0', '44-1']);
    expect(fields).toEqual(['o', '41', 'c', 'ws:t:0', 'e', '{"a":1}', 'o', '43', 'c', 'ws:t:5', 'e', '{"a":2}', 'o', '44', 'c', 'ws:t:0', 'e', '{"a":3}']);
    expect(historyBatchArgs('k', ['7'], ['c'], ['{}'])).toEqual(['k', '7-1', 'o', '7', 'c', 'c', 'e', '{}']);
    expect(() => historyBatchArgs('k', [], [], [])).toThrow(RangeError);
  });

  it('reads back per event, after a position inside the batch exactly', () => {
    expect(parseHistoryEntries(id as string, fields)).toEqual([
      { offset: '41', channel: 'ws:t:0', envelope: '{"a":1}' },
      { offset: '43', channel: 'ws:t:5', envelope: '{"a":2}' },
      { offset: '44', channel: 'ws:t:0', envelope: '{"a":3}' },
    ]);
    expect(parseHistoryEntries(id as string, fields, '41').map((e) => e.offset)).toEqual(['43', '44']);
    expect(parseHistoryEntries(id as string, fields, '42').map((e) => e.offset)).toEqual(['43', '44']);
    expect(parseHistoryEntries(id as string, fields, '44')).toEqual([]);
    // Offsets compare as int64, not as text: 9 < 10.
    expect(parseHistoryEntries('10-1', ['o', '9', 'c', 'x', 'e', '{}', 'o', '10', 'c', 'x', 'e', '{}'], '9').map((e) => e.offset)).toEqual(['10']);
    expect(firstOffsetOfHistoryEntry(id as string, fields)).toBe('41');
  });

  it('still reads the one-event form, with the same filter', () => {
    expect(parseHistoryEntries('41-1', ['c', 'ws:t:0', 'e', '{}'])).toEqual([{ offset: '41', channel: 'ws:t:0', envelope: '{}' }]);
    expect(parseHistoryEntries('41-1', ['c', 'ws:t:0', 'e', '{}'], '41')).toEqual([]);
    expect(parseHistoryEntries('41-1', ['c', 'ws:t:0'])).toEqual([]);
    expect(firstOffsetOfHistoryEntry('41-1', ['c', 'ws:t:0', 'e', '{}'])).toBe('41');
  });

  it('skips an event that lacks a field instead of misreading the rest', () => {
    expect(parseHistoryEntries('3-1', ['o', '2', 'c', 'x', 'x', '{}', 'o', '3', 'c', 'y', 'e', '{"b":1}']).map((e) => e.offset)).toEqual(['3']);
  });

  it('trims by offset: keeps about the newest n offsets, nothing while fewer exist', () => {
    expect(historyBatchMinId('10499', 10_000)).toBe('500-0');
    expect(historyBatchMinId('9999', 10_000)).toBeUndefined();
    expect(historyBatchMinId('9223372036854775806', 10)).toBe('9223372036854775797-0');
  });
});
