import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, EnvelopeError } from './index.js';

describe('envelope', () => {
  it('round-trips, keeping int64 offsets exact', () => {
    const text = encodeEnvelope(
      { topic: 'listing-events', partition: 2, offset: '9007199254740993', key: 'lst-"1"', ts: 1700000000000 },
      '{"listing_id":"lst-1"}',
    );
    expect(decodeEnvelope(text)).toEqual({
      v: 1,
      topic: 'listing-events',
      partition: 2,
      offset: '9007199254740993',
      key: 'lst-"1"',
      ts: 1700000000000,
      payload: { listing_id: 'lst-1' },
    });
  });

  it('encodes a missing key as null', () => {
    const text = encodeEnvelope({ topic: 't', partition: 0, offset: '0', key: null, ts: 1 }, '{}');
    expect(decodeEnvelope(text).key).toBeNull();
  });

  it('names the broken field', () => {
    expect(() => decodeEnvelope('nope')).toThrow(EnvelopeError);
    expect(() => decodeEnvelope('[]')).toThrow('envelope must be a JSON object, got array');
    expect(() => decodeEnvelope('{"v":2}')).toThrow('envelope.v must be 1, got 2');
    expect(() =>
      decodeEnvelope('{"v":1,"topic":"t","partition":0,"offset":12,"key":null,"ts":1,"payload":{}}'),
    ).toThrow('envelope.offset must be a decimal string, got 12');
    expect(() =>
      decodeEnvelope('{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":1,"payload":[]}'),
    ).toThrow('envelope.payload must be an object');
  });
});
