import { describe, expect, it } from 'vitest';
import { createEnvelopeHeadEncoder, decodeEnvelope, decodeEnvelopeHead, encodeDeletedEnvelope, encodeEnvelope, encodeEnvelopeHead, encodeEnvelopeTrace, envelopeTimestamp, EnvelopeError, lazyEnvelopeText, type Envelope } from './index.js';

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

  it('a deleted event (a snapshot topic\'s tombstone): deleted true, the payload only its key field; trace fields kept', () => {
    const head = createEnvelopeHeadEncoder('prices');
    expect(decodeEnvelope(encodeDeletedEnvelope(head(1, '42', 'L-"7"', 5), 'listing_id', 'L-"7"'))).toEqual({
      v: 1,
      topic: 'prices',
      partition: 1,
      offset: '42',
      key: 'L-"7"',
      ts: 5,
      deleted: true,
      payload: { listing_id: 'L-"7"' },
    });
    const traced = encodeDeletedEnvelope(head(0, '1', 'k', 5, encodeEnvelopeTrace(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`)), undefined, 'k');
    expect(decodeEnvelope(traced)).toMatchObject({ tp: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, deleted: true, payload: {} });
    expect(() => encodeDeletedEnvelope('{"v":1}', 'id', 'k')).toThrow(EnvelopeError);
    expect(() => decodeEnvelope('{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":1,"deleted":false,"payload":{}}')).toThrow(/envelope.deleted must be true or absent/);
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

  describe('trace fields (decision 0020)', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const encode = createEnvelopeHeadEncoder('listing-events');

    it('adds no byte to an untraced event: the head is what readers before 0020 were written against', () => {
      expect(encode(3, '42', 'k', 5) + '{}}').toBe('{"v":1,"topic":"listing-events","partition":3,"offset":"42","key":"k","ts":5,"payload":{}}');
      expect(encode(3, '42', 'k', 5, undefined)).toBe(encode(3, '42', 'k', 5));
    });

    it('carries traceparent and tracestate between ts and payload, and reads them back', () => {
      // A raw newline in a tracestate would split a batch part (one envelope per line): it is escaped.
      const text = encode(3, '42', null, 5, encodeEnvelopeTrace(traceparent, 'vendor=a' + '\n' + 'b')) + '{"a":1}}';
      expect(text).toBe('{"v":1,"topic":"listing-events","partition":3,"offset":"42","key":null,"ts":5,"tp":"' + traceparent + '","tr":"vendor=a\\nb","payload":{"a":1}}');
      expect(text.includes('\n')).toBe(false);
      expect(decodeEnvelope(text)).toMatchObject({ v: 1, partition: 3, offset: '42', ts: 5, tp: traceparent, tr: 'vendor=a\nb', payload: { a: 1 } });
    });

    it('is still version 1: a reader that knows only the v1 fields gets the same event', () => {
      const traced = decodeEnvelope(encode(0, '7', 'k', 1, encodeEnvelopeTrace(traceparent)) + '{"x":2}}');
      const plain = decodeEnvelope(encode(0, '7', 'k', 1) + '{"x":2}}');
      const { tp, tr, ...v1 } = traced;
      expect(tp).toBe(traceparent);
      expect(tr).toBeUndefined();
      expect(v1).toEqual(plain);
    });

    it('refuses to encode a traceparent that is not W3C, and drops a malformed one on decode instead of the event', () => {
      expect(() => encodeEnvelopeTrace('00-xyz')).toThrow('envelope.tp must be a W3C traceparent');
      const envelope = decodeEnvelope('{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":1,"tp":"garbage","tr":"a=b","payload":{}}');
      expect(envelope.tp).toBeUndefined();
      expect(envelope.tr).toBeUndefined();
      expect(envelope.payload).toEqual({});
    });
  });

  it('copies the listed Kafka headers into h (decision 0025): text, the last of a repeated one, only those present', () => {
    const encode = createEnvelopeHeadEncoder('t', ['tenant', 'event-type', 'absent']);
    const head = encode(0, '5', 'k', 1, undefined, { tenant: Buffer.from('acme'), 'event-type': [Buffer.from('a'), 'b"c'], other: 'x' });
    const envelope = decodeEnvelope(head + '{"x":1}}');
    expect(envelope.h).toEqual({ tenant: 'acme', 'event-type': 'b"c' });
    expect(envelope.payload).toEqual({ x: 1 });
    // None of them present, or no headers: no h at all; and a topic without headers ignores them.
    expect(encode(0, '5', 'k', 1, undefined, { other: 'x' })).toBe(createEnvelopeHeadEncoder('t')(0, '5', 'k', 1));
    expect(createEnvelopeHeadEncoder('t')(0, '5', 'k', 1, undefined, { tenant: 'acme' })).not.toContain('"h"');
    // With a trace and on a deleted event the headers stay.
    const traced = encode(0, '5', 'k', 1, encodeEnvelopeTrace('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), { tenant: 'acme' });
    expect(decodeEnvelope(encodeDeletedEnvelope(traced, 'id', 'k')).h).toEqual({ tenant: 'acme' });
  });

  it('drops a malformed h rather than the event', () => {
    const envelope = decodeEnvelope('{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":1,"h":{"a":1},"payload":{}}');
    expect(envelope.h).toBeUndefined();
  });
});

describe('decodeEnvelope: integers beyond 2^53 − 1', () => {
  const envelopeWith = (payload: string): string => encodeEnvelope({ topic: 't', partition: 0, offset: '1', key: 'k', ts: 1 }, payload);

  it('keeps their digits: JSON.stringify writes them as they came', () => {
    const payload = '{"a":9223372036854775807,"b":[-9223372036854775808,9007199254740993],"c":{"d":18446744073709551615}}';
    expect(JSON.stringify(decodeEnvelope(envelopeWith(payload)).payload)).toBe(payload);
  });

  it('leaves safe integers, floats and digits inside strings as JSON.parse gives them', () => {
    const payload = '{"a":9007199254740991,"b":1.2345678901234567e+25,"c":"12345678901234567890","d":3.4028234663852886e+38,"e":-0.5}';
    const decoded = decodeEnvelope(envelopeWith(payload)).payload;
    expect(decoded).toEqual(JSON.parse(payload));
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(JSON.parse(payload)));
  });
});

describe('envelopeTimestamp', () => {
  it('reads the head ts without parsing the payload, whatever the key or payload hold', () => {
    const text = encodeEnvelope({ topic: 't', partition: 0, offset: '7', key: 'k,"ts":1', ts: 1_700_000_000_123 }, '{"ts":5,"x":",\\"ts\\":9"}');
    expect(envelopeTimestamp(text)).toBe(1_700_000_000_123);
    expect(envelopeTimestamp('{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":-1,"payload":{}}')).toBe(-1);
    expect(envelopeTimestamp('not json')).toBeNaN();
  });
});

describe('decodeEnvelopeHead: the head alone, the payload parsed when first read (decision 0043)', () => {
  const payload = '{"id":"a","n":9223372036854775807}';
  const heads = [
    encodeEnvelopeHead({ topic: 'listing-events', partition: 3, offset: '41', key: 'lst-1', ts: 1_700_000_000_000 }),
    encodeEnvelopeHead({ topic: 't', partition: 0, offset: '0', key: null, ts: 0 }),
    encodeEnvelopeHead({ topic: 'a"b', partition: 1, offset: '007', key: 'k\\1', ts: 1.5 }),
    createEnvelopeHeadEncoder('t', ['x-tenant'])(2, '5', 'k', 7, encodeEnvelopeTrace(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, 'v=1'), { 'x-tenant': 'acme' }),
    encodeEnvelopeHead({ topic: 't', partition: 0, offset: '1', key: 'k', ts: 1 }).replace('"ts":1', '"ts":1,"deleted":true'),
  ];

  it('reads every head as decodeEnvelope does, and the payload with every digit', () => {
    for (const head of heads) {
      const text = head + payload + '}';
      const headJson = head.slice(0, head.length - ',"payload":'.length);
      const lazy = decodeEnvelopeHead(text, headJson);
      const decoded = decodeEnvelope(text);
      expect(lazy).toBeDefined();
      for (const field of ['v', 'topic', 'partition', 'offset', 'key', 'ts', 'tp', 'tr', 'h', 'deleted'] as const) expect(lazy?.[field], field).toEqual(decoded[field]);
      expect(JSON.stringify(lazy?.payload)).toBe(payload);
      expect(lazyEnvelopeText(lazy as Envelope)).toBe(text);
    }
    expect(lazyEnvelopeText(decodeEnvelope(heads[0] + payload + '}'))).toBeUndefined();
  });

  it('throws what decodeEnvelope throws for a broken head, and leaves a 64-bit number in it to decodeEnvelope', () => {
    expect(() => decodeEnvelopeHead('', '{"v":2,"topic":"t"')).toThrow('envelope.v must be 1, got 2');
    expect(() => decodeEnvelopeHead('', '{"v":1,"topic":"t","partition":"0","offset":"1","key":null,"ts":1')).toThrow('envelope.partition must be an integer');
    expect(decodeEnvelopeHead('', '{"v":1,"topic":"t","partition":0,"offset":"1","key":null,"ts":12345678901234567')).toBeUndefined();
  });
});
