import { describe, expect, it } from 'vitest';
import { toLiveRow } from './use-live-subscription';

describe('a frame as a live row', () => {
  it('carries the position, and the count of events conflation skipped when the frame says so', () => {
    const position = { topic: 'bids', partition: 1, offset: '41' };
    const conflated = toLiveRow(3, 1_000, { data: { bidPlaced: { bid_id: 'b' } }, extensions: { position, conflated: 4 } });
    expect(conflated).toMatchObject({ seq: 3, receivedAtMs: 1_000, position, conflated: 4, error: false, summary: '{"bidPlaced":{"bid_id":"b"}}' });
    // A frame that replaced nothing, or a gateway that does not conflate: no count.
    expect(toLiveRow(4, 1_001, { data: { bidPlaced: null }, extensions: { position } }).conflated).toBeUndefined();
    expect(toLiveRow(5, 1_002, { data: { bidPlaced: null }, extensions: { position, conflated: 'x' } }).conflated).toBeUndefined();
  });
});
