import { randomBytes } from 'node:crypto';

/**
 * Tickets for browsers: EventSource cannot set `Authorization`, and a long-lived token in a URL ends
 * up in proxy logs, browser history and `Referer`. A page exchanges its bearer token for a ticket
 * (`POST <path>/ticket` with `Authorization`), then opens `GET <path>?ticket=…`: the ticket is
 * random (192 bits), short-lived and single-use, so a logged URL is worthless by the time anyone
 * reads it. It stands for the token it was issued for: the stream verifies that token as if it came
 * in the header (scopes, tenant, expiry).
 *
 * Where tickets live: behind a load balancer the GET rarely reaches the gateway that issued the
 * ticket, so main.ts shares them through Redis (broker/redis-tickets.ts) whenever the gateway has a
 * Redis command connection; this module's memory store serves a gateway without one (and tests).
 * Both have this interface (docs/decisions/0015-graphql-over-sse.md).
 */
export interface TicketStore {
  /** A ticket for `credential` (the `Authorization` header value), valid for the store's TTL. Rejects when the store cannot be reached. */
  issue(credential: string): Promise<{ readonly ticket: string; readonly expiresIn: number }>;
  /** The credential of a valid ticket, which is spent by this call; undefined if unknown, spent or expired. Rejects when the store cannot be reached. */
  redeem(ticket: string): Promise<string | undefined>;
  /** Forgets expired tickets (the server's sweep calls it; a store whose entries expire by themselves ignores it). */
  sweep(nowMs: number): void;
}

/** A ticket as issued: 24 random bytes, base64url. Anything else is refused before any lookup. */
export const TICKET_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export function newTicket(): string {
  return randomBytes(24).toString('base64url');
}

export interface TicketStoreOptions {
  readonly ttlSeconds: number;
  /** Unredeemed tickets kept at most; past it the oldest are dropped (they were never used). */
  readonly maxTickets: number;
  /** The clock (ms since epoch). */
  readonly now?: () => number;
}

/** Tickets in this gateway's memory: redeemed at the gateway that issued them. */
export function createTicketStore(options: TicketStoreOptions): TicketStore & { size(): number } {
  const { ttlSeconds, maxTickets, now = Date.now } = options;
  // Insertion order is expiry order (one TTL for all): the oldest come first.
  const tickets = new Map<string, { readonly credential: string; readonly expiresAtMs: number }>();
  const sweep = (nowMs: number): void => {
    for (const [ticket, entry] of tickets) {
      if (entry.expiresAtMs > nowMs) break;
      tickets.delete(ticket);
    }
  };
  return {
    issue(credential) {
      const nowMs = now();
      sweep(nowMs);
      while (tickets.size >= maxTickets) tickets.delete(tickets.keys().next().value as string);
      const ticket = newTicket();
      tickets.set(ticket, { credential, expiresAtMs: nowMs + ttlSeconds * 1_000 });
      return Promise.resolve({ ticket, expiresIn: ttlSeconds });
    },
    redeem(ticket) {
      if (!TICKET_PATTERN.test(ticket)) return Promise.resolve(undefined);
      const entry = tickets.get(ticket);
      if (!entry) return Promise.resolve(undefined);
      tickets.delete(ticket);
      return Promise.resolve(entry.expiresAtMs > now() ? entry.credential : undefined);
    },
    sweep,
    size: () => tickets.size,
  };
}
