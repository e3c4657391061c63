import { describe, expect, it } from 'vitest';
import { createWirestreamSchema } from '@wirestream/schema';
import { createOperationCompiler, type AccessScope } from './operations.js';
import { filterRuleProblems, parseFilterRules, type BoundFilter } from './where-bound.js';

const ws = createWirestreamSchema(`
type Seller { seller_id: ID!, tier: Int }
type Item { id: ID!, seller: Seller, tags: [String!] }
type Subscription {
  item(id: ID): Item @topic(name: "items", key: "id", headers: ["tenant"])
  other: Item @topic(name: "others")
}`);

function access(bound: BoundFilter[]): AccessScope {
  return { key: JSON.stringify(bound.map((b) => b.values)), authorize: (_route, args) => ({ ok: true, args, bound }) };
}

function compile(field: string, bound: BoundFilter[], where = '') {
  return createOperationCompiler(ws).compile({ query: `subscription { ${field}${where === '' ? '' : `(where: ${where})`} { id } }` }, access(bound));
}

describe('filter rules (GATEWAY_JWT_FILTER_RULES)', () => {
  it('parses [field:]path=claim, _key and _headers.<header>, and names the setting on a bad rule', () => {
    expect(parseFilterRules(['seller.seller_id=partner_id', ' item:_headers.tenant = https://example.com/tenant ', '_key=keys'])).toEqual([
      { text: 'seller.seller_id=partner_id', fieldName: undefined, path: ['seller', 'seller_id'], claim: 'partner_id' },
      { text: 'item:_headers.tenant = https://example.com/tenant', fieldName: 'item', path: ['_headers', 'tenant'], claim: 'https://example.com/tenant' },
      { text: '_key=keys', fieldName: undefined, path: ['_key'], claim: 'keys' },
    ]);
    expect(() => parseFilterRules(['seller.seller_id'])).toThrow(/^GATEWAY_JWT_FILTER_RULES: "seller.seller_id" has no =; each rule is/);
    expect(() => parseFilterRules(['seller..id=x'])).toThrow(/needs a payload path/);
    expect(() => parseFilterRules(['a=b c'])).toThrow(/one claim name/);
  });

  it('checks every rule against the schema at start', () => {
    expect(filterRuleProblems(ws, parseFilterRules(['seller.seller_id=p', 'tags=g', 'item:_headers.tenant=t', '_key=k']))).toEqual([]);
    expect(filterRuleProblems(ws, parseFilterRules(['seller.name=p', 'other:_headers.tenant=t', 'nope:id=x']))).toEqual([
      expect.stringMatching(/"seller.name=p": seller.name is no filterable field of any subscription field's payload/),
      expect.stringMatching(/"other:_headers.tenant=t": _headers.tenant is no filterable field of other's payload/),
      expect.stringMatching(/names the field nope, which is not a subscription field/),
    ]);
  });

  it('ANDs the bound filter, pins the routing key, refuses a missing claim or a value of the wrong type', () => {
    const [sellerRule, idRule, tierRule] = parseFilterRules(['seller.seller_id=partner_id', 'item:id=items', 'seller.tier=tier']) as [never, never, never];
    const ok = compile('item', [{ rule: sellerRule, values: ['7'] }, { rule: idRule, values: ['i-1'] }], '{ seller: { seller_id: { eq: "3" } } }');
    if (!ok.ok || ok.operation.kind !== 'subscription') throw new Error(JSON.stringify(ok));
    expect(ok.operation.channels).toHaveLength(1);
    const payload = (seller: string) => ({ payload: { id: 'i-1', seller: { seller_id: seller } }, key: null });
    expect([ok.operation.where?.(payload('7')), ok.operation.where?.(payload('3'))]).toEqual([false, false]);
    // The field rule applies to its field only; the seller rule to both.
    const other = compile('other', [{ rule: sellerRule, values: [7] }, { rule: idRule, values: undefined }]);
    if (!other.ok || other.operation.kind !== 'subscription') throw new Error(JSON.stringify(other));
    expect(other.operation.where?.(payload('7'))).toBe(true);
    const missing = compile('item', [{ rule: sellerRule, values: undefined }]);
    expect(!missing.ok && missing.errors[0]?.message).toBe(
      'Field item is limited by the filter rule seller.seller_id=partner_id (GATEWAY_JWT_FILTER_RULES), but your token has no "partner_id" claim: connect with a token that carries it.',
    );
    const wrongType = compile('item', [{ rule: tierRule, values: ['gold'] }]);
    expect(!wrongType.ok && wrongType.errors[0]?.message).toMatch(/"tier" claim holds "gold", which seller.tier cannot equal/);
  });
});
