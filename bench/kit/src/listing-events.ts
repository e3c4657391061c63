/**
 * Demo listing events as the benches publish them: snake_cased by our transform (what ingest puts
 * in an envelope), each payload split around its `occurred_at` value, which a publisher sets to the
 * publish instant. Prepared once, untimed.
 */
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createKeyTransformer } from '@wirestream/transform';

const OCCURRED_AT = '"occurred_at":"';

export interface ListingEvent {
  readonly key: string;
  /** Payload JSON up to and after the `occurred_at` value. */
  readonly before: string;
  readonly after: string;
}

export interface ListingEventsOptions {
  readonly count: number;
  /** Distinct listing ids (`lst-000000` …): the keys filtered subscriptions choose from. */
  readonly listings: number;
  /** @default 42 */
  readonly seed?: number;
  /** Event i's listing id; default: the generator's pick. */
  readonly keyOf?: ((i: number) => string) | undefined;
}

/** `count` listing events and their mean envelope size in bytes (payload, µs timestamp digits, ~110 B of envelope). */
export function prepareListingEvents({ count, listings, seed = 42, keyOf }: ListingEventsOptions): { events: ListingEvent[]; meanEnvelopeBytes: number } {
  const generator = createAuctionEventGenerator({ seed, listings });
  const transformer = createKeyTransformer();
  const events: ListingEvent[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const event = generator.listingEvent(keyOf?.(i));
    const json = JSON.stringify(transformer.transform(event.value));
    const at = json.indexOf(OCCURRED_AT);
    const valueStart = at + OCCURRED_AT.length;
    const valueEnd = json.indexOf('"', valueStart);
    if (at < 0 || valueEnd < 0) throw new Error('demo listing event has no occurred_at: the generator contract changed');
    events.push({ key: event.key, before: json.slice(0, valueStart), after: json.slice(valueEnd) });
    // +3: the µs digits our timestamp adds; +~110: the envelope around the payload.
    bytes += json.length + 3 + 110;
  }
  return { events, meanEnvelopeBytes: bytes / Math.max(1, count) };
}

/** Events per key among the first `upTo`, in the order of `keys` (the loss count of filtered subscriptions). */
export function countByKey(events: readonly { readonly key: string }[], keys: readonly string[], upTo: number): number[] {
  const index = new Map(keys.map((k, i) => [k, i]));
  const counts = keys.map(() => 0);
  for (let i = 0; i < upTo && i < events.length; i++) {
    const k = index.get((events[i] as { key: string }).key);
    if (k !== undefined) counts[k] = (counts[k] as number) + 1;
  }
  return counts;
}
