import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/**
 * SSE tickets in Redis, so that any gateway of a fleet redeems a ticket another one issued (a load
 * balancer rarely sends the EventSource GET to the gateway that answered the POST). The same
 * contract as the memory store (transport/sse-tickets.ts, which main.ts hands this to): single-use
 * — `GETDEL` spends it atomically, so two gateways cannot both redeem it — and short-lived: Redis
 * expires the entry after the TTL. The key is a SHA-256 of the ticket, so what Redis holds cannot be
 * presented as a ticket; the value is the `Authorization` header the ticket stands for, for at most
 * the TTL (GATEWAY_SSE_TICKET_TTL_SECONDS, 30 s). Needs Redis ≥ 6.2 (GETDEL).
 */
export interface RedisTicketStore {
  issue(credential: string): Promise<{ readonly ticket: string; readonly expiresIn: number }>;
  redeem(ticket: string): Promise<string | undefined>;
  sweep(nowMs: number): void;
}

export interface RedisTicketStoreOptions {
  /** The history prefix (REDIS_HISTORY_PREFIX): tickets sit beside the gateway's other keys. */
  readonly prefix: string;
  readonly ttlSeconds: number;
  /** A new random ticket (transport/sse-tickets.ts's `newTicket`) and the pattern a presented one must match. */
  readonly newTicket: () => string;
  readonly pattern: RegExp;
}

export function createRedisTicketStore(redis: Redis | Cluster, options: RedisTicketStoreOptions): RedisTicketStore {
  const { prefix, ttlSeconds, newTicket, pattern } = options;
  const keyOf = (ticket: string): string => `${prefix}:sse-ticket:${createHash('sha256').update(ticket).digest('base64url')}`;
  return {
    async issue(credential) {
      const ticket = newTicket();
      await redis.set(keyOf(ticket), credential, 'PX', ttlSeconds * 1_000);
      return { ticket, expiresIn: ttlSeconds };
    },
    async redeem(ticket) {
      if (!pattern.test(ticket)) return undefined;
      return (await redis.getdel(keyOf(ticket))) ?? undefined;
    },
    sweep() {}, // Redis expires entries itself
  };
}
