import { describe, expect, it } from 'vitest';
import { createWirestreamSchema, SchemaError } from './index.js';

const sdl = (field: string) => `
type Subscription { sold(seller_id: ID): Sale @topic(name: "sales", key: "seller_id") }
type Sale { seller_id: ID! region: String amount: Int! ${field} }
type Seller { id: ID! region: String display_name: String }
`;

function problems(field: string): string {
  try {
    createWirestreamSchema(sdl(field));
  } catch (err) {
    if (err instanceof SchemaError) return err.message;
    throw err;
  }
  return '';
}

describe('@lookup', () => {
  it('binds a field to its source, entity type and key, declaring the directive only when used', () => {
    const ws = createWirestreamSchema(sdl('seller: Seller @lookup(source: "sellers", key: "id: seller_id region")'));
    expect(ws.lookups).toEqual([{ typeName: 'Sale', fieldName: 'seller', source: 'sellers', entityType: 'Seller', key: [{ field: 'id', from: 'seller_id' }, { field: 'region', from: 'region' }] }]);
    expect(ws.added).toContain('directive @lookup');
    const plain = createWirestreamSchema(sdl(''));
    expect(plain.lookups).toEqual([]);
    expect(plain.added).not.toContain('directive @lookup');
  });

  it.each([
    ['seller: String @lookup(source: "sellers", key: "id: seller_id")', 'Sale.seller', '@lookup needs an object type (the entity)'],
    ['seller: Seller @lookup(source: "sellers", key: "id: sellerid")', 'Sale.seller', 'Sale has no field "sellerid" to read the key "id" from'],
    ['seller: Seller @lookup(source: "sellers", key: "id: seller")', 'Sale.seller', 'Sale.seller is an object; a key is read from a scalar field'],
    ['seller: Seller @lookup(source: " ", key: "id: seller_id")', 'Sale.seller', '@lookup(source:) is empty'],
    ['seller: Seller @lookup(source: "sellers", key: "id: 1x")', 'Sale.seller', '"id: 1x" is not `field` or `field: parentField`'],
  ])('refuses %s at its line, naming the field', (field, coordinate, message) => {
    const text = problems(field);
    expect(text).toContain(coordinate);
    expect(text).toContain(message);
  });
});
