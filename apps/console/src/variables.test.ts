import { describe, expect, it } from 'vitest';
import { checkVariables } from './variables';

const declared = 'subscription L($listing_id: ID, $event_type: String) { listingUpdated(listing_id: $listing_id, event_type: $event_type) { listing_id } }';

describe('checkVariables (the live view\'s variables box)', () => {
  it('sends nothing for an empty box and the object for declared variables', () => {
    expect(checkVariables(declared, '  ')).toEqual({ variables: undefined });
    expect(checkVariables(declared, '{"listing_id": "lst-000003"}')).toEqual({ variables: { listing_id: 'lst-000003' } });
  });

  it('refuses a variable the document does not declare, naming it and what is declared', () => {
    expect(checkVariables('subscription { listingUpdated { listing_id } }', '{"listing_id": "lst-000003"}')).toEqual({
      error: 'the document does not declare $listing_id (it declares none): declare it, e.g. subscription ($listing_id: ID), and pass it as an argument',
    });
    expect(checkVariables(declared, '{"listingId": "x", "event_type": "PRICE_CHANGED"}')).toEqual({
      error: 'the document does not declare $listingId (it declares $listing_id, $event_type): declare it, e.g. subscription ($listingId: ID), and pass it as an argument',
    });
  });

  it('refuses what is not a JSON object', () => {
    expect(checkVariables(declared, '{listing_id: 1}')).toMatchObject({ error: expect.stringMatching(/^variables are not JSON: /) as string });
    expect(checkVariables(declared, '["a"]')).toEqual({ error: 'variables must be a JSON object, e.g. {"listing_id": "lst-000003"}' });
    expect(checkVariables(declared, 'null')).toEqual({ error: 'variables must be a JSON object, e.g. {"listing_id": "lst-000003"}' });
  });

  it('leaves a document that does not parse to the gateway', () => {
    expect(checkVariables('subscription {', '{"a": 1}')).toEqual({ variables: { a: 1 } });
  });
});
