import { randomBytes } from 'node:crypto';

/**
 * Tickets for browsers: EventSource cannot set `Authorization`, and a long-lived token in a URL ends
 * up in proxy logs, browser history and `Referer`. A page exchanges its bearer token for a ticket
 * (`POST <path>/ticket` with `Authorization`), then opens `GET <path>?ticket=…`: the ticket is
 * random (192 bits), short-lived and single-use, so a logged URL is worthless by the time anyone
 * reads it. It stands for the token it was issued for: the stream verifies that token as if it came
 * in the header (scopes, tenant, expiry). Kept in this gateway's memory: a ticket is redeemed at the
 * gateway that issued it (docs/decisions/0015-graphql-over-sse.md).
 */
export interface TicketStore {
  /** A ticket for `credential` (the `Authorization` header value), valid for the store's TTL. */
  issue(credential: string, nowMs: number): { readonly ticket: string; readonly expiresIn: number };
  /** The credential of a valid ticket, which is spent by this call; undefined if unknown, spent or expired. */
  redeem(ticket: string, nowMs: number): string | undefined;
  /** Forgets expired tickets (the server's sweep calls it). */
  sweep(nowMs: number): void;
  size(): number;
}

export interface TicketStoreOptions {
  readonly ttlSeconds: number;
  /** Unredeemed tickets kept at most; past it the oldest are dropped (they were never used). */
  readonly maxTickets: number;
}

const TICKET = /^[A-Za-z0-9_-]{32}$/;

export function createTicketStore(options: TicketStoreOptions): TicketStore {
  const { ttlSeconds, maxTickets } = options;
  // Insertion order is expiry order (one TTL for all): the oldest come first.
  const tickets = new Map<string, { readonly credential: string; readonly expiresAtMs: number }>();
  const sweep = (nowMs: number): void => {
    for (const [ticket, entry] of tickets) {
      if (entry.expiresAtMs > nowMs) break;
      tickets.delete(ticket);
    }
  };
  return {
    issue(credential, nowMs) {
      sweep(nowMs);
      while (tickets.size >= maxTickets) tickets.delete(tickets.keys().next().value as string);
      const ticket = randomBytes(24).toString('base64url');
      tickets.set(ticket, { credential, expiresAtMs: nowMs + ttlSeconds * 1_000 });
      return { ticket, expiresIn: ttlSeconds };
    },
    redeem(ticket, nowMs) {
      if (!TICKET.test(ticket)) return undefined;
      const entry = tickets.get(ticket);
      if (!entry) return undefined;
      tickets.delete(ticket);
      return entry.expiresAtMs > nowMs ? entry.credential : undefined;
    },
    sweep,
    size: () => tickets.size,
  };
}
