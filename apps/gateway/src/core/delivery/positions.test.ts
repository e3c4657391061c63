// The delivered marks (positions.ts): per topic and partition, anything at or below the highest
// offset delivered is a re-publish and is dropped; offsets compare as int64 decimals.
import { describe, expect, it } from 'vitest';
import type { Envelope } from '@wirestream/wire';
import { acceptPosition, laterOffset, marksOf, offsetAfter, type DeliveredMarks } from './positions.js';

function at(topic: string, partition: number, offset: string): Envelope {
  return { v: 1, topic, partition, offset, key: null, ts: 0, payload: {} };
}

describe('delivered marks', () => {
  it('accept a position above the mark and drop one at or below it', () => {
    const delivered: DeliveredMarks = new Map();
    expect(acceptPosition(delivered, at('t', 0, '9'))).toBe(true);
    expect(acceptPosition(delivered, at('t', 0, '9'))).toBe(false);
    expect(acceptPosition(delivered, at('t', 0, '8'))).toBe(false);
    expect(acceptPosition(delivered, at('t', 0, '10'))).toBe(true);
    expect(marksOf(delivered, 't')[0]).toBe('10');
  });

  it('keep partitions and topics apart', () => {
    const delivered: DeliveredMarks = new Map();
    expect(acceptPosition(delivered, at('t', 0, '5'))).toBe(true);
    expect(acceptPosition(delivered, at('t', 1, '1'))).toBe(true);
    expect(acceptPosition(delivered, at('u', 0, '1'))).toBe(true);
    expect(marksOf(delivered, 'v')).toEqual([]);
  });

  it('compare offsets as numbers, not text', () => {
    expect(offsetAfter('10', '9')).toBe(true);
    expect(offsetAfter('9', '10')).toBe(false);
    expect(laterOffset(undefined, '3')).toBe('3');
    expect(laterOffset('12', '3')).toBe('12');
  });
});
