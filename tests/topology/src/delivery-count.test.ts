// The counting the topology test relies on, on small hand-made data: a lost, a duplicated, a
// misrouted and a mangled delivery each show up, in the window of the event's first send.
import { describe, expect, it } from 'vitest';
import { createCatchUpTracker } from './catch-up.js';
import { countDeliveries, type FaultWindow } from './delivery-count.js';
import type { AckedEvent, LoggedEvent, Position } from './event-stream.js';
import type { ClientFilter, ClientKind, Delivery, FailoverClient } from './failover-client.js';

const events: LoggedEvent[] = [
  { position: '0:0', eventId: 'e1', listingId: 'lst-1', eventType: 'PriceChanged' },
  { position: '1:0', eventId: 'e2', listingId: 'lst-2', eventType: 'ListingClosed' },
  { position: '0:1', eventId: 'e3', listingId: 'lst-1', eventType: 'ListingClosed' },
  { position: '1:1', eventId: 'e4', listingId: 'lst-2', eventType: 'PriceChanged' },
];
const log = new Map(events.map((e) => [e.position, e]));
// e1, e2 sent before the fault (at 100, 200); e3, e4 after it (at 1_100, 1_200).
const firstSentAt = new Map([['e1', 100], ['e2', 200], ['e3', 1_100], ['e4', 1_200]]);
const windows: FaultWindow[] = [
  { name: 'before', startedAt: 0 },
  { name: 'fault', startedAt: 1_000 },
];

/** A client as the counting sees it: its filter and what it was delivered (no socket). */
function recorded(name: string, kind: ClientKind, filter: ClientFilter, positions: Position[], override: Partial<Delivery> = {}): FailoverClient {
  const deliveries = positions.map((position) => ({ position, eventId: log.get(position)?.eventId ?? 'unknown', ...override }));
  return {
    name,
    kind,
    filter,
    deliveries,
    received: new Set(positions),
    recoveries: [],
    connections: [],
    errors: [],
    current: () => undefined,
    dispose: () => Promise.resolve(),
  };
}

describe('countDeliveries', () => {
  it('counts nothing wrong for a client that got exactly what it should', () => {
    const [before, fault] = countDeliveries(log, firstSentAt, windows, [recorded('all', 'unfiltered', {}, ['0:0', '1:0', '0:1', '1:1'])]);
    expect(before?.[0]).toMatchObject({ produced: 2, expected: 2, received: 2, missing: 0, duplicates: 0, unexpected: 0, mismatched: 0 });
    expect(fault?.[0]).toMatchObject({ produced: 2, expected: 2, received: 2, missing: 0, duplicates: 0, unexpected: 0, mismatched: 0 });
  });

  it('puts a lost and a twice-delivered event in the window of their first send', () => {
    const [before, fault] = countDeliveries(log, firstSentAt, windows, [recorded('all', 'unfiltered', {}, ['0:0', '1:0', '1:0', '1:1'])]);
    expect(before?.[0]).toMatchObject({ expected: 2, received: 2, missing: 0, duplicates: 1, duplicateSample: ['1:0'] });
    expect(fault?.[0]).toMatchObject({ expected: 2, received: 1, missing: 1, duplicates: 0, missingSample: ['0:1'] });
  });

  it('expects only matching events of a filtered client and flags one that does not match', () => {
    const byListing = recorded('lst-1', 'listing_id', { listing_id: 'lst-1' }, ['0:0', '0:1', '1:1']);
    const byType = recorded('closed', 'event_type', { event_type: 'ListingClosed' }, ['1:0', '0:1']);
    const [, fault] = countDeliveries(log, firstSentAt, windows, [byListing, byType]);
    expect(fault?.[0]).toMatchObject({ client: 'lst-1', expected: 1, received: 1, missing: 0, unexpected: 1 });
    expect(fault?.[1]).toMatchObject({ client: 'closed', expected: 1, received: 1, missing: 0, unexpected: 0 });
  });

  it('flags a delivery whose payload is not the event Kafka holds at its position', () => {
    const [before] = countDeliveries(log, firstSentAt, windows, [recorded('all', 'unfiltered', {}, ['0:0'], { eventId: 'e9' })]);
    expect(before?.[0]).toMatchObject({ received: 1, missing: 1, mismatched: 1 });
  });

  it('refuses a log with an event this producer never sent', () => {
    const stranger = new Map([['2:0', { position: '2:0', eventId: 'x', listingId: 'lst-3', eventType: 'ListingCreated' }]]);
    expect(() => countDeliveries(stranger, firstSentAt, windows, [])).toThrow(/never sent/);
  });
});

describe('createCatchUpTracker', () => {
  const acks: AckedEvent[] = events.map((e, i) => ({ ...e, ackedAt: 1_000 * (i + 1) }));

  it('names the client that lacks an old enough event it should have, and forgets it on request', () => {
    const complete = recorded('complete', 'unfiltered', {}, ['0:0', '1:0', '0:1', '1:1']);
    const lacking = recorded('lacking', 'unfiltered', {}, ['0:0', '0:1', '1:1']);
    const filtered = recorded('filtered', 'listing_id', { listing_id: 'lst-1' }, ['0:0', '0:1']);
    const tracker = createCatchUpTracker(acks, [complete, lacking, filtered]);
    expect(tracker.laggards(1_500)).toEqual([]);
    expect(tracker.laggards(4_000).map((l) => [l.client.name, l.lacks.position])).toEqual([['lacking', '1:0']]);
    tracker.forgetBefore(2_500);
    expect(tracker.laggards(4_000)).toEqual([]);
  });
});
