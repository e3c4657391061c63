// A graphql-ws client that does what our docs tell production clients to do, against a fleet: it
// knows every gateway's URL, remembers the last position per partition and the epoch, and after
// any disconnect reconnects to the next gateway in its list and resubscribes with them
// (`extensions.resume`), so a gateway that dies moves its clients to the others without a gap.
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { Position } from './event-stream.js';

/** What a client subscribes to: every listing event, one listing (the routing key), or one event type (a payload field). */
export type ClientKind = 'unfiltered' | 'listing_id' | 'event_type';

export interface ClientFilter {
  readonly listing_id?: string;
  readonly event_type?: string;
}

export interface Recovery {
  readonly recovered: boolean;
  readonly reason?: string;
  readonly partitions?: number[];
}

export interface Delivery {
  readonly position: Position;
  readonly eventId: string;
  /** The filtered fields as delivered (checked against the filter). */
  readonly listingId?: string;
  readonly eventType?: string;
}

export interface FailoverClient {
  readonly name: string;
  readonly kind: ClientKind;
  readonly filter: ClientFilter;
  /** Every delivery in arrival order, duplicates kept. */
  readonly deliveries: Delivery[];
  /** Every position delivered at least once. */
  readonly received: Set<Position>;
  /** Every recovery signal (one per resumed subscription). */
  readonly recoveries: Recovery[];
  /** URL of every successful connection, in order. */
  readonly connections: string[];
  readonly errors: unknown[];
  /** The URL it is connected to now (undefined while reconnecting). */
  current(): string | undefined;
  dispose(): Promise<void>;
}

interface WirePosition {
  partition: number;
  offset: string;
  epoch?: string;
}

/** The subscription document of a filter: arguments inline, the filtered fields selected so the test can check them. */
export function subscriptionQuery(filter: ClientFilter): string {
  const args = Object.entries(filter).map(([name, value]) => `${name}: ${JSON.stringify(value)}`);
  const fields = ['event_id', ...Object.keys(filter)];
  return `subscription { listingUpdated${args.length > 0 ? `(${args.join(', ')})` : ''} { ${fields.join(' ')} } }`;
}

/**
 * Connects to `urls[first]` and subscribes; after a disconnect, to `urls[first + step]`, and so on. graphql-ws re-sends a subscription's payload object as
 * it is at reconnect time, so keeping `payload.extensions.resume` current is all resuming takes.
 */
export function connectFailoverClient(
  name: string,
  kind: ClientKind,
  filter: ClientFilter,
  urls: readonly string[],
  { first, step = 1 }: { first: number; step?: number },
): FailoverClient {
  // Each reconnect moves `step` URLs on: clients with different steps leave a dead gateway for different ones.
  let next = first;
  let connectingTo: string | undefined;
  if (urls.length === 0) throw new RangeError(`connectFailoverClient ${name}: urls must name at least one gateway`);
  let connectedTo: string | undefined;
  const positions: Record<string, string> = {};
  const payload: { query: string; extensions: Record<string, unknown> } = { query: subscriptionQuery(filter), extensions: {} };
  const record = { name, kind, filter, deliveries: [] as Delivery[], received: new Set<Position>(), recoveries: [] as Recovery[], connections: [] as string[], errors: [] as unknown[] };
  const client: Client = createClient({
    url: () => {
      const url = urls[next % urls.length] as string; // urls is not empty (checked above)
      next += step;
      connectingTo = url;
      return url;
    },
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 1_000, // the test bounds the time, not the client
    shouldRetry: () => true,
    retryWait: () => sleep(100 + Math.random() * 200), // jittered, as a fleet of clients should
    on: {
      connected: () => {
        connectedTo = connectingTo;
        if (connectedTo !== undefined) record.connections.push(connectedTo);
      },
      closed: () => {
        connectedTo = undefined;
      },
    },
  });
  client.subscribe(payload, {
    next: (result) => {
      const extensions = result.extensions as { position?: WirePosition; recovery?: Recovery } | undefined;
      if (extensions?.recovery) {
        record.recoveries.push(extensions.recovery);
        return;
      }
      const position = extensions?.position;
      const event = (result.data as { listingUpdated?: Record<string, unknown> } | null | undefined)?.listingUpdated;
      if (position === undefined || event === undefined) {
        record.errors.push(new Error(`a next without extensions.position or data: ${JSON.stringify(result)}`));
        return;
      }
      record.deliveries.push({
        position: `${position.partition}:${position.offset}`,
        eventId: text(event['event_id']),
        ...(event['listing_id'] === undefined ? {} : { listingId: text(event['listing_id']) }),
        ...(event['event_type'] === undefined ? {} : { eventType: text(event['event_type']) }),
      });
      record.received.add(`${position.partition}:${position.offset}`);
      positions[String(position.partition)] = position.offset;
      if (position.epoch !== undefined) payload.extensions['resume'] = { epoch: position.epoch, positions };
    },
    error: (error: unknown) => record.errors.push(error),
    complete: () => record.errors.push(new Error('the subscription completed, but a live subscription never ends')),
  });
  return {
    ...record,
    current: () => connectedTo,
    dispose: () => Promise.resolve(client.dispose()),
  };
}

/** A delivered field as text: the schema's fields are strings (IDs arrive as strings), anything else is shown as JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
