/**
 * What each socket subscribes to. A plan is a pure function of the socket's global index, so the
 * parent and every worker agree on it without shipping N entries over IPC.
 */

/** Every field of `ListingEvent`: a ~2 KB frame per event, what the field's dashboards asked for. */
export const FULL_SELECTION =
  'occurred_at event_id event_type listing_id listing { listing_id title description status category_path ' +
  'primary_property_id image_urls seller_info { seller_id display_name rating is_verified address { ' +
  'street_line1 address2_line city postal_code country_code } } reserve_price { amount_cents currency_code } ' +
  'current_price { amount_cents currency_code } recent_bids { bid_id bidder_id amount { amount_cents currency_code } ' +
  'placed_at is_auto_bid } }';

/** A different selection set on the same field (a list view): ~250 B per frame. */
export const COMPACT_SELECTION =
  'occurred_at event_id event_type listing_id listing { title status current_price { amount_cents currency_code } }';

// `occurred_at` comes first in both selections on purpose: the client finds the producer's
// timestamp a few bytes into each frame instead of scanning 2 KB for it.

/** The kinds of subscription a mix is made of. */
export type OperationKind = 'shared' | 'compact' | 'filtered';

const KINDS: readonly OperationKind[] = ['shared', 'compact', 'filtered'];

/** One share of a mix, e.g. 90 % `shared`. */
export interface MixEntry {
  readonly kind: OperationKind;
  readonly percent: number;
}

/**
 * How sockets pick their operation: a percentage mix, or `distinctOperations` operations that
 * differ only by name (each receives every event, so each is one execution per event on a server
 * that groups identical operations).
 */
export interface OperationPlan {
  readonly mix?: readonly MixEntry[];
  readonly distinctOperations?: number;
  /**
   * Explicit distinct subscribe requests (e.g. each with its own `where` filter): socket `i`
   * subscribes with `operations[i % length]`. Each one's expected deliveries come from
   * `ExpectedDeliveries.perOperation` (same index), so a filter that matches only some events is
   * counted right.
   */
  readonly operations?: readonly ExplicitOperation[];
  /** Routing keys that `filtered` subscriptions choose from (listing ids). */
  readonly filterKeys: readonly string[];
}

/** A subscribe payload as the client sends it. */
export interface SubscribePayload {
  readonly query: string;
  readonly operationName?: string;
  readonly variables?: Record<string, unknown>;
  /** graphql-transport-ws `extensions`, e.g. `{ conflate: true }` (issue #36). */
  readonly extensions?: Record<string, unknown>;
}

/** One entry of {@link OperationPlan.operations}. */
export interface ExplicitOperation {
  readonly label: string;
  readonly payload: SubscribePayload;
}

/**
 * One distinct subscribe request: its JSON payload and the filter key it depends on (-1: none);
 * `operation` is its index in {@link OperationPlan.operations} when the plan lists them.
 */
export interface OperationVariant {
  readonly label: string;
  readonly payload: SubscribePayload;
  readonly filterKey: number;
  readonly operation?: number;
}

/**
 * Parses `shared:90,filtered:10` (percentages must add up to 100).
 * @throws RangeError naming the bad entry.
 */
export function parseMix(spec: string): MixEntry[] {
  const entries: MixEntry[] = [];
  for (const part of spec.split(',')) {
    const [kind, percentText] = part.split(':').map((s) => s.trim());
    if (!KINDS.includes(kind as OperationKind)) {
      throw new RangeError(`mix entry "${part}": kind must be one of ${KINDS.join(', ')} (e.g. shared:90,filtered:10)`);
    }
    const percent = Number(percentText);
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
      throw new RangeError(`mix entry "${part}": percent must be an integer 0..100, got ${String(percentText)}`);
    }
    entries.push({ kind: kind as OperationKind, percent });
  }
  const total = entries.reduce((sum, e) => sum + e.percent, 0);
  if (total !== 100) throw new RangeError(`mix "${spec}" adds up to ${total} %, not 100 %`);
  return entries;
}

/** Every distinct subscribe request a plan can produce, indexed as {@link variantOf} returns. */
export function variantsOf(plan: OperationPlan): OperationVariant[] {
  if (plan.operations !== undefined) {
    return plan.operations.map((op, i) => ({ label: op.label, payload: op.payload, filterKey: -1, operation: i }));
  }
  if (plan.distinctOperations !== undefined) {
    return Array.from({ length: plan.distinctOperations }, (_, i) => ({
      label: `distinct ${i}`,
      payload: { query: `subscription Listings${i} { listingUpdated { ${FULL_SELECTION} } }`, operationName: `Listings${i}` },
      filterKey: -1,
    }));
  }
  const variants: OperationVariant[] = [
    { label: 'shared', payload: { query: `subscription Listings { listingUpdated { ${FULL_SELECTION} } }` }, filterKey: -1 },
    { label: 'compact', payload: { query: `subscription ListingsCompact { listingUpdated { ${COMPACT_SELECTION} } }` }, filterKey: -1 },
  ];
  plan.filterKeys.forEach((key, i) => {
    variants.push({
      label: `filtered ${key}`,
      payload: {
        query: `subscription Listing($id: ID) { listingUpdated(listing_id: $id) { ${FULL_SELECTION} } }`,
        variables: { id: key },
      },
      filterKey: i,
    });
  });
  return variants;
}

/**
 * The variant index socket `index` subscribes with. Kinds are interleaved (a permutation of
 * 0..99 every 100 sockets), so every worker and every source address gets the same mix.
 */
export function variantOf(plan: OperationPlan, index: number): number {
  if (plan.operations !== undefined) return index % plan.operations.length;
  if (plan.distinctOperations !== undefined) return index % plan.distinctOperations;
  const mix = plan.mix ?? [{ kind: 'shared', percent: 100 }];
  const bucket = (index * 37) % 100; // 37 is coprime with 100
  let cumulative = 0;
  let kind: OperationKind = 'shared';
  for (const entry of mix) {
    cumulative += entry.percent;
    if (bucket < cumulative) {
      kind = entry.kind;
      break;
    }
  }
  if (kind === 'shared') return 0;
  if (kind === 'compact') return 1;
  if (plan.filterKeys.length === 0) throw new RangeError('a mix with "filtered" needs at least one filter key');
  return 2 + ((index * 7_919) % plan.filterKeys.length);
}

/** Fails fast on a plan that cannot work, with the rule it breaks. */
export function checkPlan(plan: OperationPlan): void {
  const shapes = [plan.mix, plan.distinctOperations, plan.operations].filter((x) => x !== undefined).length;
  if (shapes > 1) throw new RangeError('give one of mix, distinctOperations or operations, not several');
  if (plan.operations !== undefined && plan.operations.length === 0) throw new RangeError('operations must list at least one subscribe request');
  if (plan.distinctOperations !== undefined) {
    if (plan.mix !== undefined) throw new RangeError('give either a mix or distinctOperations, not both');
    if (!Number.isInteger(plan.distinctOperations) || plan.distinctOperations < 1) {
      throw new RangeError(`distinctOperations must be a positive integer, got ${plan.distinctOperations}`);
    }
  }
  if (plan.mix?.some((e) => e.kind === 'filtered' && e.percent > 0) && plan.filterKeys.length === 0) {
    throw new RangeError('a mix with "filtered" needs filterKeys (the listing ids to filter on)');
  }
}
