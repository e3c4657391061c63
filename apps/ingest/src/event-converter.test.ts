// Unit: Kafka value bytes → snake_cased payload or a dead-letter reason, and the dead letter itself.
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createDeadLetter, DEAD_LETTER_HEADERS, type DeadLetterReason } from './dead-letter.js';
import { createEventConverter, type ConvertResult } from './event-converter.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const payloadOf = (result: ConvertResult): unknown => (result.ok ? JSON.parse(result.bytes.toString('utf8')) : undefined);

function expectFailure(result: ConvertResult, code: DeadLetterReason['code']): string {
  if (result.ok) throw new Error(`expected ${code}, got a payload: ${result.bytes.toString()}`);
  expect(result.reason.code).toBe(code);
  return result.reason.message;
}

describe('createEventConverter', () => {
  const convert = createEventConverter();

  it('snake_cases every key, keeps every value, and returns the compact JSON bytes of the payload', () => {
    const event = {
      eventId: 'evt-1',
      eventType: 'ListingCreated', // values are never converted
      listingId: 'lst-000042',
      listing: {
        imageURLs: ['https://img.example/1.jpg'],
        sellerInfo: { isVerified: true, rating: 4.5, address: { streetLine1: '1 Damrak', address2Line: null } },
        recentBids: [{ bidId: 'bid-1', amount: { amountCents: 1_250, currencyCode: 'EUR' } }],
      },
      already_snake: 0,
    };
    const result = convert(bytes(JSON.stringify(event)));
    if (!result.ok) throw new Error(`expected a payload, got ${result.reason.code}: ${result.reason.message}`);
    expect(payloadOf(result)).toEqual({
      event_id: 'evt-1',
      event_type: 'ListingCreated',
      listing_id: 'lst-000042',
      listing: {
        image_urls: ['https://img.example/1.jpg'],
        seller_info: { is_verified: true, rating: 4.5, address: { street_line1: '1 Damrak', address2_line: null } },
        recent_bids: [{ bid_id: 'bid-1', amount: { amount_cents: 1_250, currency_code: 'EUR' } }],
      },
      already_snake: 0,
    });
    expect(result.bytes.toString()).toBe(JSON.stringify(payloadOf(result)));
  });

  it('accepts an empty object and non-ASCII text', () => {
    expect(payloadOf(convert(bytes('{}')))).toEqual({});
    const result = convert(bytes('{"displayName":"Chloé Müller"}'));
    expect(result.ok && result.bytes.toString()).toBe('{"display_name":"Chloé Müller"}');
  });

  it('wraps the payload in the envelope head and reads the routing field in the same pass', () => {
    const result = convert(bytes('{"listingId":"lst-7","nested":{"listingId":"x"}}'), '{"v":1,"payload":', 'listing_id');
    expect(result.ok && result.bytes.toString()).toBe('{"v":1,"payload":{"listing_id":"lst-7","nested":{"listing_id":"x"}}}');
    expect(result.ok && result.routeValue).toBe('lst-7');
    const numbers = convert(bytes('{"listingId":12345678901234567890}'), '', 'listing_id');
    // Numbers past 2^53 keep every digit (JSON.parse would have rounded them).
    expect(numbers.ok && [numbers.routeValue, numbers.bytes.toString()]).toEqual(['12345678901234567890', '{"listing_id":12345678901234567890}']);
  });

  it('EMPTY_VALUE for a tombstone (null) and for an empty value', () => {
    expect(expectFailure(convert(null), 'EMPTY_VALUE')).toMatch(/tombstone/);
    expectFailure(convert(Buffer.alloc(0)), 'EMPTY_VALUE');
  });

  it('TOO_LARGE past maxMessageBytes, naming the size, the limit and the setting; the limit itself passes', () => {
    const small = createEventConverter({ maxMessageBytes: 16 });
    expect(small(bytes('{"a":"12345678"}')).ok).toBe(true); // exactly 16 bytes

    const message = expectFailure(small(bytes('{"a":"123456789"}')), 'TOO_LARGE');
    expect(message).toContain('17 bytes');
    expect(message).toContain('limit of 16');
    expect(message).toContain('INGEST_MAX_MESSAGE_BYTES');
    // Bytes, not characters: "é" is 2 bytes in UTF-8.
    expectFailure(small(bytes('{"a":"ééééééé"}')), 'TOO_LARGE');
  });

  it('INVALID_JSON for text that does not parse', () => {
    for (const text of ['{"listingId": "lst-1", oops', 'not json', '{"a":1}{"b":2}', '\u00ff\u00fe']) {
      expect(expectFailure(convert(bytes(text)), 'INVALID_JSON'), text).toMatch(/^value is not valid JSON: /);
    }
  });

  it('NOT_AN_OBJECT for valid JSON that is not an object, naming what it is', () => {
    const cases: [string, string][] = [
      ['[{"listingId":"lst-1"}]', 'array'],
      ['null', 'null'],
      ['42', 'number'],
      ['"lst-1"', 'string'],
      ['true', 'boolean'],
    ];
    for (const [text, got] of cases) {
      expect(expectFailure(convert(bytes(text)), 'NOT_AN_OBJECT'), text).toBe(`value must be a JSON object, got ${got}`);
    }
  });

  it('TRANSFORM_FAILED past maxDepth (the root object is depth 1), with the path; maxDepth itself passes', () => {
    const shallow = createEventConverter({ maxDepth: 3 });
    expect(shallow(bytes('{"a":{"b":{"c":1}}}')).ok).toBe(true);
    expect(shallow(bytes('{"a":[{"c":1}]}')).ok).toBe(true);

    const message = expectFailure(shallow(bytes('{"a":{"b":{"c":{}}}}')), 'TRANSFORM_FAILED');
    expect(message).toBe(
      "payload nests deeper than INGEST_MAX_DEPTH (3) at $.a.b.c: flatten the producer's payload or raise INGEST_MAX_DEPTH (a retry will not help)",
    );
    expectFailure(shallow(bytes('{"a":[[{}]]}')), 'TRANSFORM_FAILED');
  });

  it('TRANSFORM_FAILED when two keys of one object become the same snake_case key, in either order', () => {
    for (const text of ['{"fooBar":1,"foo_bar":2}', '{"foo_bar":1,"fooBar":2}', '{"nested":{"listingId":"a","listing_id":"b"}}']) {
      expect(expectFailure(convert(bytes(text)), 'TRANSFORM_FAILED'), text).toMatch(/"(foo_bar|listing_id)"/);
    }
  });

  it('rejects a hostile nesting depth with a reason instead of overflowing the stack', () => {
    const deep = '{"a":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    expectFailure(convert(bytes(deep)), 'TRANSFORM_FAILED');
  });
});

describe('createEventConverter with INGEST_KEY_STYLE', () => {
  const value = Buffer.from('{"listingId":"lst-1","address2Line":"Flat 2","_id":"x","attrs":{"lst-000042":1}}');
  it('lodash: exactly lodash snakeCase, the route field read under its lodash name', () => {
    const result = createEventConverter({ keyStyle: 'lodash' })(value, '', 'listing_id');
    expect(result.ok && result.bytes.toString()).toBe('{"listing_id":"lst-1","address_2_line":"Flat 2","id":"x","attrs":{"lst_000042":1}}');
    expect(result.ok && result.routeValue).toBe('lst-1');
  });
  it('none: the keys as the producer wrote them', () => {
    const result = createEventConverter({ keyStyle: 'none' })(value, '', 'listingId');
    expect(result.ok && result.bytes.toString()).toBe(value.toString());
    expect(result.ok && result.routeValue).toBe('lst-1');
  });
});

describe('createDeadLetter', () => {
  const original: KafkaMessage = {
    key: bytes('lst-000042'),
    value: bytes('{"listingId": "lst-000042", oops'),
    timestamp: '1735722000000',
    attributes: 0,
    offset: '1234',
    headers: { 'trace-id': bytes('abc123'), source: 'demo' },
  };

  it('keeps key, value, timestamp and original headers, and adds the reason and the original position', () => {
    const reason: DeadLetterReason = { code: 'INVALID_JSON', message: 'value is not valid JSON: Unexpected token' };
    const letter = createDeadLetter('listing-events', 2, original, reason);
    expect(letter.key).toBe(original.key);
    expect(letter.value).toBe(original.value);
    expect(letter.timestamp).toBe('1735722000000');
    expect(letter.headers).toEqual({
      'trace-id': bytes('abc123'),
      source: 'demo',
      'wirestream-dlq-reason': 'INVALID_JSON',
      'wirestream-dlq-detail': 'value is not valid JSON: Unexpected token',
      'wirestream-dlq-original-topic': 'listing-events',
      'wirestream-dlq-original-partition': '2',
      'wirestream-dlq-original-offset': '1234',
      'wirestream-dlq-original-timestamp': '1735722000000',
    });
    expect(Object.values(DEAD_LETTER_HEADERS).every((name) => letter.headers?.[name] !== undefined)).toBe(true);
    // The consumed message is not modified.
    expect(original.headers).toEqual({ 'trace-id': bytes('abc123'), source: 'demo' });
  });

  it('handles a tombstone without headers or key', () => {
    const tombstone: KafkaMessage = { key: null, value: null, timestamp: '1', attributes: 0, offset: '0', headers: {} };
    const letter = createDeadLetter('t', 0, tombstone, { code: 'EMPTY_VALUE', message: 'no value' });
    expect(letter.key).toBeNull();
    expect(letter.value).toBeNull();
    expect(letter.headers?.[DEAD_LETTER_HEADERS.reason]).toBe('EMPTY_VALUE');
    expect(Object.keys(letter.headers ?? {})).toHaveLength(Object.keys(DEAD_LETTER_HEADERS).length);
  });
});
