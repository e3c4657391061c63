import { describe, expect, it } from 'vitest';
import {
  encodeEnvelope,
  encodeEnvelopeBatch,
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

describe('batch history entries (one per chunk: its live parts)', () => {
  const envelope = (offset: string): string => encodeEnvelope({ topic: 't', partition: 2, offset, key: null, ts: 1 }, `{"n":${offset}}`);
  // Offsets 41, 43, 44 (42 was dead-lettered), on shards 0, 5, 0.
  const offsets = ['41', '43', '44'];
  const parts = encodeEnvelopeBatch(2, offsets, [0, 5, 0], offsets.map((o) => Buffer.from(envelope(o)))).map((p) => ({ channel: `ws:t:${p.shard}`, bytes: p.bytes.toString('utf8') }));
  const args = historyBatchArgs('wsh:t:2', '44', parts, '35-0');
  const [, , , , id, ...fields] = args as string[];

  it("takes its last event's offset as id and holds one channel and part per shard", () => {
    expect(args.slice(0, 5)).toEqual(['wsh:t:2', 'MINID', '~', '35-0', '44-1']);
    expect(fields).toEqual(['c', 'ws:t:0', 'p', parts[0]?.bytes, 'c', 'ws:t:5', 'p', parts[1]?.bytes]);
    expect(historyBatchArgs('k', '7', [{ channel: 'c', bytes: 'x' }])).toEqual(['k', '7-1', 'c', 'c', 'p', 'x']);
    expect(() => historyBatchArgs('k', '7', [])).toThrow(RangeError);
  });

  it('reads back per event in offset order, after a position inside the batch exactly', () => {
    expect(parseHistoryEntries(id as string, fields)).toEqual([
      { offset: '41', channel: 'ws:t:0', envelope: envelope('41') },
      { offset: '43', channel: 'ws:t:5', envelope: envelope('43') },
      { offset: '44', channel: 'ws:t:0', envelope: envelope('44') },
    ]);
    expect(parseHistoryEntries(id as string, fields, '41').map((e) => e.offset)).toEqual(['43', '44']);
    expect(parseHistoryEntries(id as string, fields, '42').map((e) => e.offset)).toEqual(['43', '44']);
    expect(parseHistoryEntries(id as string, fields, '44')).toEqual([]);
    expect(firstOffsetOfHistoryEntry(id as string, fields)).toBe('41');
    // Offsets compare as int64, not as text: 9 < 10.
    const [nine, ten] = [envelope('9'), envelope('10')];
    const wide = encodeEnvelopeBatch(2, ['9', '10'], [1, 1], [Buffer.from(nine), Buffer.from(ten)]).map((p) => ({ channel: 'x', bytes: p.bytes.toString('utf8') }));
    expect(parseHistoryEntries('10-1', historyBatchArgs('k', '10', wide).slice(2) as string[], '9').map((e) => e.offset)).toEqual(['10']);
  });

  it('still reads the one-event form, with the same filter', () => {
    expect(parseHistoryEntries('41-1', ['c', 'ws:t:0', 'e', '{}'])).toEqual([{ offset: '41', channel: 'ws:t:0', envelope: '{}' }]);
    expect(parseHistoryEntries('41-1', ['c', 'ws:t:0', 'e', '{}'], '41')).toEqual([]);
    expect(parseHistoryEntries('41-1', ['c', 'ws:t:0'])).toEqual([]);
    expect(firstOffsetOfHistoryEntry('41-1', ['c', 'ws:t:0', 'e', '{}'])).toBe('41');
  });

  it('skips a malformed part instead of misreading the rest', () => {
    expect(parseHistoryEntries(id as string, ['c', 'ws:t:9', 'p', '{"v":2}', ...fields]).map((e) => e.offset)).toEqual(['41', '43', '44']);
  });

  it('trims by offset: keeps about the newest n offsets, nothing while fewer exist', () => {
    expect(historyBatchMinId('10499', 10_000)).toBe('500-0');
    expect(historyBatchMinId('9999', 10_000)).toBeUndefined();
    expect(historyBatchMinId('9223372036854775806', 10)).toBe('9223372036854775797-0');
  });
});
