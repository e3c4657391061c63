// Counts what each client received against what it should have: the events Kafka holds that
// match its filter, each exactly once. Events are attributed to the fault window in which they
// were first sent (window i runs from fault i's injection to fault i+1's), so each fault gets its
// own line and its own 0-missing / 0-duplicates assertion.
import type { LoggedEvent, Position } from './event-stream.js';
import type { ClientFilter, ClientKind, Delivery, FailoverClient } from './failover-client.js';

export interface FaultWindow {
  readonly name: string;
  /** Epoch ms of the injection (of the stream's start for the first window). */
  readonly startedAt: number;
  /** From injection until every client had everything acknowledged a second before (undefined: not measured or not reached). */
  recoveryMs?: number;
  /** What the fault did, for the log (e.g. `killed broker 2, leader of partitions 0, 2`). */
  detail?: string;
}

export interface Count {
  /** Events of the window that Kafka holds. */
  produced: number;
  /** Events of the window this client (or these clients) should receive. */
  expected: number;
  /** Expected events received at least once. */
  received: number;
  missing: number;
  /** Deliveries beyond the first of an expected event. */
  duplicates: number;
  /** Deliveries of a position that is not in the expected set (a filter leak, or not in Kafka at all). */
  unexpected: number;
  /** Deliveries whose event_id or filtered field differs from what Kafka holds at that position. */
  mismatched: number;
  /** A few missing positions, for the failure message. */
  missingSample: Position[];
  duplicateSample: Position[];
}

export interface ClientCount extends Count {
  readonly client: string;
  readonly kind: ClientKind;
}

/** Whether the gateway should deliver `event` to a subscription with `filter` (every argument equals the payload field). */
export function matchesFilter(filter: ClientFilter, event: LoggedEvent): boolean {
  return (filter.listing_id === undefined || filter.listing_id === event.listingId) && (filter.event_type === undefined || filter.event_type === event.eventType);
}

function emptyCount(): Count {
  return { produced: 0, expected: 0, received: 0, missing: 0, duplicates: 0, unexpected: 0, mismatched: 0, missingSample: [], duplicateSample: [] };
}

const SAMPLE = 8;

/** Index of the window an instant falls in (the last one that started at or before it). */
function windowAt(windows: readonly FaultWindow[], at: number): number {
  let index = 0;
  for (let i = 0; i < windows.length; i++) if ((windows[i] as FaultWindow).startedAt <= at) index = i;
  return index;
}

/**
 * Per window, per client: what it should have received and what it did.
 * `receivedAt` places a delivery that Kafka does not hold (nothing to date it by otherwise).
 */
export function countDeliveries(
  log: ReadonlyMap<Position, LoggedEvent>,
  firstSentAt: ReadonlyMap<string, number>,
  windows: readonly FaultWindow[],
  clients: readonly FailoverClient[],
): ClientCount[][] {
  const windowOfEvent = new Map<Position, number>();
  const producedPerWindow = windows.map(() => 0);
  for (const event of log.values()) {
    const sentAt = firstSentAt.get(event.eventId);
    if (sentAt === undefined) throw new Error(`Kafka holds ${event.position} (event ${event.eventId}), which this producer never sent`);
    const w = windowAt(windows, sentAt);
    windowOfEvent.set(event.position, w);
    producedPerWindow[w] = (producedPerWindow[w] ?? 0) + 1;
  }
  const perWindow: ClientCount[][] = windows.map(() => []);
  for (const client of clients) {
    const counts = windows.map((_, w) => ({ ...emptyCount(), produced: producedPerWindow[w] ?? 0, client: client.name, kind: client.kind }));
    const times = new Map<Position, number>();
    for (const delivery of client.deliveries) {
      times.set(delivery.position, (times.get(delivery.position) ?? 0) + 1);
      const event = log.get(delivery.position);
      const w = event === undefined ? counts.length - 1 : (windowOfEvent.get(delivery.position) ?? 0);
      const count = counts[w] as ClientCount;
      if (event === undefined || !matchesFilter(client.filter, event)) count.unexpected++;
      else if (!deliveryMatches(delivery, event)) count.mismatched++;
    }
    for (const event of log.values()) {
      if (!matchesFilter(client.filter, event)) continue;
      const count = counts[windowOfEvent.get(event.position) ?? 0] as ClientCount;
      count.expected++;
      const n = times.get(event.position) ?? 0;
      if (n === 0) {
        count.missing++;
        if (count.missingSample.length < SAMPLE) count.missingSample.push(event.position);
        continue;
      }
      count.received++;
      if (n > 1) {
        count.duplicates += n - 1;
        if (count.duplicateSample.length < SAMPLE) count.duplicateSample.push(event.position);
      }
    }
    counts.forEach((count, w) => perWindow[w]?.push(count));
  }
  return perWindow;
}

function deliveryMatches(delivery: Delivery, event: LoggedEvent): boolean {
  return (
    delivery.eventId === event.eventId &&
    (delivery.listingId === undefined || delivery.listingId === event.listingId) &&
    (delivery.eventType === undefined || delivery.eventType === event.eventType)
  );
}

/** Sums client counts of one kind (the samples of the first clients that have any). */
export function sumByKind(counts: readonly ClientCount[]): Map<ClientKind, Count & { clients: number }> {
  const sums = new Map<ClientKind, Count & { clients: number }>();
  for (const c of counts) {
    const sum = sums.get(c.kind) ?? { ...emptyCount(), produced: c.produced, clients: 0 };
    sum.clients++;
    sum.expected += c.expected;
    sum.received += c.received;
    sum.missing += c.missing;
    sum.duplicates += c.duplicates;
    sum.unexpected += c.unexpected;
    sum.mismatched += c.mismatched;
    sum.missingSample.push(...c.missingSample.slice(0, SAMPLE - sum.missingSample.length));
    sum.duplicateSample.push(...c.duplicateSample.slice(0, SAMPLE - sum.duplicateSample.length));
    sums.set(c.kind, sum);
  }
  return sums;
}

/** One line per window: what it was, how long recovery took, then per client kind the counts. */
export function describeWindow(window: FaultWindow, counts: readonly ClientCount[]): string {
  const recovery = window.recoveryMs === undefined ? 'no recovery measured' : `recovered in ${(window.recoveryMs / 1_000).toFixed(1)} s`;
  const kinds = [...sumByKind(counts)].map(
    ([kind, s]) =>
      `${kind} ×${s.clients}: expected ${s.expected}, received ${s.received}, missing ${s.missing}, duplicates ${s.duplicates}` +
      (s.unexpected + s.mismatched > 0 ? `, unexpected ${s.unexpected}, mismatched ${s.mismatched}` : '') +
      (s.missing > 0 ? ` (missing e.g. ${s.missingSample.join(' ')})` : '') +
      (s.duplicates > 0 ? ` (duplicated e.g. ${s.duplicateSample.join(' ')})` : ''),
  );
  const produced = counts[0]?.produced ?? 0;
  const detail = window.detail === undefined ? '' : ` [${window.detail}]`;
  return `[topology] ${window.name}${detail}: ${recovery}; produced ${produced} | ${kinds.join(' | ')}`;
}
