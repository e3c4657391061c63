import { describe, expect, it } from 'vitest';
import { checkPlan, parseMix, variantOf, variantsOf, type OperationPlan } from './operations.js';

const op = (i: number) => ({ label: `op ${i}`, payload: { query: `subscription S${i} { listingUpdated { event_id } }`, operationName: `S${i}` } });

describe('explicit operations', () => {
  it('assigns socket i the operation i mod length, each variant knowing its operation index', () => {
    const plan: OperationPlan = { operations: [op(0), op(1), op(2)], filterKeys: [] };
    const variants = variantsOf(plan);
    expect(variants.map((v) => v.operation)).toEqual([0, 1, 2]);
    expect(variants.every((v) => v.filterKey === -1)).toBe(true);
    expect([0, 1, 2, 3, 4, 5, 7].map((i) => variantOf(plan, i))).toEqual([0, 1, 2, 0, 1, 2, 1]);
    expect(variants[1]?.payload.operationName).toBe('S1');
  });

  it('refuses a plan with two shapes, or no operation', () => {
    expect(() => checkPlan({ operations: [op(0)], distinctOperations: 2, filterKeys: [] })).toThrow(/one of mix, distinctOperations or operations/);
    expect(() => checkPlan({ operations: [op(0)], mix: parseMix('shared:100'), filterKeys: [] })).toThrow(/one of mix/);
    expect(() => checkPlan({ operations: [], filterKeys: [] })).toThrow(/at least one subscribe request/);
  });
});
