/**
 * The `where` filters of the filters scenario (issue 16): 1,000 distinct operations on one topic,
 * unfiltered (they differ by operation name only) or each with its own filter. Every filter is
 * written twice: as the `where` value a client sends, and as a plain reference test that counts
 * what it should match on the corpus (the bench's expected deliveries do not come from the
 * gateway's own compiler).
 */
import { FULL_SELECTION, type ExplicitOperation } from '@wirestream/loadgen';
import type { EventCorpus } from './publisher.js';

/** The arms of the scenario, run on the same sockets and events. */
export type FilterArm = 'unfiltered-1' | 'unfiltered' | 'filtered-all' | 'filtered-10';

export const FILTER_ARMS: readonly FilterArm[] = ['unfiltered-1', 'unfiltered', 'filtered-all', 'filtered-10'];

export const FILTER_ARM_LABELS: Readonly<Record<FilterArm, string>> = {
  'unfiltered-1': 'one operation, no filter (the baseline of "per extra operation")',
  unfiltered: 'distinct by operation name only, no filter: every operation renders every event',
  'filtered-all': 'each its own `where`, every filter matching every event: as many renders as unfiltered',
  'filtered-10': 'each its own `where`, each matching ~10 % of the events',
};

/** One filter: the client's `where` value and the reference test of what it matches. */
export interface FilterCase {
  readonly shape: string;
  readonly where: Record<string, unknown>;
  readonly test: (payload: Readonly<Record<string, unknown>>) => boolean;
}

/** Every event type the demo generator writes. */
const EVENT_TYPES = ['ListingCreated', 'ListingUpdated', 'PriceChanged', 'ListingClosed'];

const amountOf = (p: Readonly<Record<string, unknown>>): number => {
  const listing = p['listing'] as { current_price?: { amount_cents?: unknown } } | undefined;
  const amount = listing?.current_price?.amount_cents;
  return typeof amount === 'number' ? amount : Number.NaN;
};
const statusOf = (p: Readonly<Record<string, unknown>>): unknown => (p['listing'] as { status?: unknown } | undefined)?.status;
const priceWhere = (cmp: Record<string, number>): Record<string, unknown> => ({ listing: { current_price: { amount_cents: cmp } } });

/**
 * Filter `i` of the arm, three shapes in turn so that each arm mixes them: a nested numeric
 * threshold, an `in` list on a top-level field, and an `and` of a nested comparison with a `nin`
 * (or with a nested equality). Each is distinct (its own threshold or its own extra list value),
 * so 1,000 of them are 1,000 groups.
 */
export function filterCase(arm: 'filtered-all' | 'filtered-10', i: number, p90Amount: number): FilterCase {
  const none = `none-${i}`;
  if (arm === 'filtered-all') {
    switch (i % 3) {
      case 0:
        // Prices are positive: a negative threshold matches every event.
        return { shape: 'price gte', where: priceWhere({ gte: -(i + 1) }), test: (p) => amountOf(p) >= -(i + 1) };
      case 1: {
        const types = [...EVENT_TYPES, none];
        return { shape: 'event_type in (5 values)', where: { event_type: { in: types } }, test: (p) => types.includes(p['event_type'] as string) };
      }
      default: {
        const limit = 1_000_000_000 + i;
        return {
          shape: 'and(price lt, event_type nin)',
          where: { and: [priceWhere({ lt: limit }), { event_type: { nin: [none] } }] },
          test: (p) => amountOf(p) < limit && p['event_type'] !== none,
        };
      }
    }
  }
  // ~10 %: thresholds at the corpus's 90th percentile of prices (shifted by i cents to keep them distinct).
  switch (i % 3) {
    case 0: {
      const threshold = p90Amount - i;
      return { shape: 'price gte', where: priceWhere({ gte: threshold }), test: (p) => amountOf(p) >= threshold };
    }
    case 1: {
      const types = ['ListingCreated', 'ListingClosed', none];
      return { shape: 'event_type in (3 values)', where: { event_type: { in: types } }, test: (p) => types.includes(p['event_type'] as string) };
    }
    default: {
      const threshold = p90Amount - i;
      return {
        shape: 'and(price gte, status eq)',
        where: { and: [priceWhere({ gte: threshold }), { listing: { status: { eq: 'ACTIVE' } } }] },
        test: (p) => amountOf(p) >= threshold && statusOf(p) === 'ACTIVE',
      };
    }
  }
}

/** The 90th percentile of `listing.current_price.amount_cents` over the first `events` events. */
export function p90AmountOf(corpus: EventCorpus, events: number): number {
  const amounts = Array.from({ length: events }, (_, i) => amountOf(corpus.payloadOf(i))).sort((a, b) => a - b);
  return amounts[Math.floor(amounts.length * 0.9)] ?? 0;
}

/** The subscribe query of operation `i`: the full selection, with a `$w` filter or without. */
export function filterQuery(i: number, filtered: boolean): string {
  return filtered
    ? `subscription Listings${i}($w: ListingEventWhere) { listingUpdated(where: $w) { ${FULL_SELECTION} } }`
    : `subscription Listings${i} { listingUpdated { ${FULL_SELECTION} } }`;
}

/** The arm's operations and, from the reference tests, how many of the first `events` events each should receive. */
export function filterPlan(
  arm: FilterArm,
  operations: number,
  corpus: EventCorpus,
  events: number,
): { operations: ExplicitOperation[]; expectedPerOperation: number[]; matchedShare: number } {
  const count = arm === 'unfiltered-1' ? 1 : operations;
  const payloads = Array.from({ length: events }, (_, i) => corpus.payloadOf(i));
  const p90 = p90AmountOf(corpus, events);
  const ops: ExplicitOperation[] = [];
  const expected: number[] = [];
  for (let i = 0; i < count; i++) {
    if (arm === 'unfiltered-1' || arm === 'unfiltered') {
      ops.push({ label: `Listings${i}`, payload: { query: filterQuery(i, false), operationName: `Listings${i}` } });
      expected.push(events);
      continue;
    }
    const c = filterCase(arm, i, p90);
    ops.push({ label: `Listings${i} ${c.shape}`, payload: { query: filterQuery(i, true), operationName: `Listings${i}`, variables: { w: c.where } } });
    expected.push(payloads.filter((p) => c.test(p)).length);
  }
  const matchedShare = expected.reduce((a, b) => a + b, 0) / (count * Math.max(1, events));
  return { operations: ops, expectedPerOperation: expected, matchedShare };
}
