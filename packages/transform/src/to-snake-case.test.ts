import fc from 'fast-check';
import snakeCase from 'lodash/snakeCase.js';
import { describe, expect, it } from 'vitest';
import { toSnakeCase } from './index.js';

describe('toSnakeCase: the documented rules', () => {
  it.each([
    // camelCase and PascalCase
    ['listingId', 'listing_id'],
    ['primaryPropertyId', 'primary_property_id'],
    ['PascalCase', 'pascal_case'],
    ['isAutoBid', 'is_auto_bid'],
    ['x', 'x'],
    ['', ''],
    // acronyms: the last capital before a lower-case letter starts a word; a plural `s` stays
    ['propertyID', 'property_id'],
    ['URLValue', 'url_value'],
    ['imageURLs', 'image_urls'],
    ['IDsByType', 'ids_by_type'],
    ['HTTPServer', 'http_server'],
    ['isURL', 'is_url'],
    ['ID', 'id'],
    ['iOS', 'i_os'],
    // digits stay with the word before them; a capital after a digit starts a word
    ['address2Line', 'address2_line'],
    ['streetLine1', 'street_line1'],
    ['sha256Hash', 'sha256_hash'],
    ['v2Api', 'v2_api'],
    ['2faEnabled', '2fa_enabled'],
    // underscores are kept exactly: leading, trailing, doubled, and before a capital
    ['already_snake', 'already_snake'],
    ['_id', '_id'],
    ['__typename', '__typename'],
    ['value_', 'value_'],
    ['foo__bar', 'foo__bar'],
    ['Foo_Bar', 'foo_bar'],
    ['_privateField', '_private_field'],
    // non-ASCII letters have case too (no transliteration)
    ['größeInCm', 'größe_in_cm'],
    ['ÄrgerWert', 'ärger_wert'],
    ['名前ID', '名前_id'],
    ['ΣύνολοΤιμής', 'σύνολο_τιμής'],
    // not identifiers: data (map keys, ids, headers) is returned verbatim
    ['lst-000042', 'lst-000042'],
    ['Content-Type', 'Content-Type'],
    ['$ref', '$ref'],
    ['a.b', 'a.b'],
    ['user@Example.com', 'user@Example.com'],
    ['with space', 'with space'],
  ])('%s → %s', (key, expected) => {
    expect(toSnakeCase(key)).toBe(expected);
  });
});

/** Keys as they appear in business payloads (ours, and common ones from other domains). */
const BUSINESS_KEYS = [
  'eventId', 'eventType', 'listingId', 'occurredAt', 'listing', 'title', 'description', 'status',
  'categoryPath', 'primaryPropertyId', 'sellerInfo', 'sellerId', 'displayName', 'rating', 'isVerified',
  'address', 'city', 'postalCode', 'countryCode', 'reservePrice', 'amountCents', 'currencyCode',
  'currentPrice', 'recentBids', 'bidId', 'bidderId', 'amount', 'placedAt', 'isAutoBid', 'previousHighBid',
  'userId', 'createdAt', 'updatedAt', 'deletedAt', 'orderID', 'orderId', 'customerEmail', 'shippingAddress',
  'billingAddress', 'zipCode', 'phoneNumber', 'httpStatusCode', 'HTTPStatus', 'apiKey', 'APIKey',
  'URLValue', 'propertyID', 'XMLHttpRequest', 'ipAddress', 'IPAddress', 'totalAmountCents', 'taxRate',
  'isActive', 'hasMore', 'nextPageToken', 'PascalCase', 'already_snake', 'id', 'ID', 'uuid', 'UUID',
  'firstName', 'lastName', 'dateOfBirth', 'SKU', 'skuCode', 'unitPriceCents', 'quantity', 'etaMinutes',
  // where we differ (see DIFFERENCES)
  'imageURLs', 'photoIDs', 'address2Line', 'streetLine1', 'addressLine2', 'sha256Hash', 'iso8601Date',
  '_id', '__typename', 'value_', 'foo__bar', 'lst-000042', 'Content-Type', 'x-request-id', 'größeInCm',
  'naïveFlag', "o'clock",
];

/** Every key where our rule and lodash `snakeCase` disagree, with the reason (also in the README). */
const DIFFERENCES: Record<string, { ours: string; lodash: string; why: string }> = {
  imageURLs: { ours: 'image_urls', lodash: 'image_ur_ls', why: 'a plural `s` after an acronym belongs to it' },
  photoIDs: { ours: 'photo_ids', lodash: 'photo_i_ds', why: 'a plural `s` after an acronym belongs to it' },
  address2Line: { ours: 'address2_line', lodash: 'address_2_line', why: 'digits stay with the word before them' },
  streetLine1: { ours: 'street_line1', lodash: 'street_line_1', why: 'digits stay with the word before them' },
  addressLine2: { ours: 'address_line2', lodash: 'address_line_2', why: 'digits stay with the word before them' },
  sha256Hash: { ours: 'sha256_hash', lodash: 'sha_256_hash', why: 'digits stay with the word before them' },
  iso8601Date: { ours: 'iso8601_date', lodash: 'iso_8601_date', why: 'digits stay with the word before them' },
  _id: { ours: '_id', lodash: 'id', why: 'underscores are kept: `_id` and `id` must stay distinct' },
  __typename: { ours: '__typename', lodash: 'typename', why: 'underscores are kept (GraphQL meta field)' },
  value_: { ours: 'value_', lodash: 'value', why: 'underscores are kept' },
  foo__bar: { ours: 'foo__bar', lodash: 'foo_bar', why: 'underscores are kept' },
  'lst-000042': { ours: 'lst-000042', lodash: 'lst_000042', why: 'not an identifier: data, kept verbatim' },
  'Content-Type': { ours: 'Content-Type', lodash: 'content_type', why: 'not an identifier: data, kept verbatim' },
  'x-request-id': { ours: 'x-request-id', lodash: 'x_request_id', why: 'not an identifier: data, kept verbatim' },
  "o'clock": { ours: "o'clock", lodash: 'oclock', why: 'not an identifier: data, kept verbatim' },
  größeInCm: { ours: 'größe_in_cm', lodash: 'grosse_in_cm', why: 'letters are kept, not transliterated (deburr)' },
  naïveFlag: { ours: 'naïve_flag', lodash: 'naive_flag', why: 'letters are kept, not transliterated (deburr)' },
};

describe('toSnakeCase compared with lodash snakeCase', () => {
  it('agrees on realistic business keys except the documented differences', () => {
    const disagreements: Record<string, { ours: string; lodash: string }> = {};
    for (const key of BUSINESS_KEYS) {
      const ours = toSnakeCase(key);
      const theirs = snakeCase(key);
      if (ours !== theirs) disagreements[key] = { ours, lodash: theirs };
    }
    const documented = Object.fromEntries(
      Object.entries(DIFFERENCES).map(([key, { ours, lodash }]) => [key, { ours, lodash }]),
    );
    expect(disagreements).toEqual(documented);
  });
});

/** camelCase-ish keys built from realistic parts, so the ASCII rules get exercised hard. */
const wordKey = fc
  .array(fc.constantFrom('listing', 'Id', 'ID', 'URL', 'URLs', 'Value', 'a', 'B', '2', 'Line', '_', 's', 'X', 'html', 'IDs', 'ä', 'Ö'), {
    minLength: 1,
    maxLength: 6,
  })
  .map((parts) => parts.join(''));

describe('toSnakeCase properties', () => {
  it('is idempotent (any string, including any Unicode)', () => {
    fc.assert(
      fc.property(fc.oneof(wordKey, fc.string({ unit: 'binary' }), fc.string()), (key) => {
        const once = toSnakeCase(key);
        expect(toSnakeCase(once)).toBe(once);
      }),
      { numRuns: 3_000 },
    );
  });

  it('leaves keys without upper-case letters unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (key) => {
        if (key === key.toLowerCase()) expect(toSnakeCase(key)).toBe(key);
      }),
      { numRuns: 2_000 },
    );
  });

  it('only lower-cases and inserts underscores: removing them gives back the lower-cased key', () => {
    fc.assert(
      fc.property(wordKey, (key) => {
        const snake = toSnakeCase(key);
        expect(snake.replaceAll('_', '')).toBe(key.toLowerCase().replaceAll('_', ''));
        expect(snake).toBe(snake.toLowerCase());
      }),
      { numRuns: 2_000 },
    );
  });
});
