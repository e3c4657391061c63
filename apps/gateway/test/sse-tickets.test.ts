// SSE tickets shared by a fleet through a real redis-server: a ticket issued by one gateway is
// redeemed at another (a load balancer rarely routes the EventSource GET to the gateway that answered
// the POST), once only, and not after its TTL; an unreachable ticket store answers 503, not a crash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';
import { startRedis, waitFor, type RedisServer } from '@wirestream/testkit';
import { createAuthenticator, createRedisTicketStore, newTicket, TICKET_PATTERN } from '../src/index.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { openSse } from './support/sse.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const AUDIENCE = 'wirestream-test';
const QUERY = 'subscription { listingUpdated { listing_id event_id } }';

let ticketRedisServer: RedisServer;
let ticketRedis: Redis;
let a: TestGateway;
let b: TestGateway;

async function token(): Promise<string> {
  return new SignJWT({ scope: 'subscribe:*' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('user-1')
    .setAudience(AUDIENCE)
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
}

async function ticketFrom(gateway: TestGateway): Promise<Response> {
  return fetch(`${gateway.httpBase}/graphql/ticket`, { method: 'POST', headers: { authorization: `Bearer ${await token()}` } });
}

const streamUrl = (gateway: TestGateway, ticket: string): string => `${gateway.httpBase}/graphql?query=${encodeURIComponent(QUERY)}&ticket=${ticket}`;

beforeAll(async () => {
  ticketRedisServer = await startRedis();
  ticketRedis = new Redis(ticketRedisServer.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  ticketRedis.on('error', () => {}); // the store's outage is part of a test
  const start = (ttlSeconds: number) =>
    startTestGateway(
      { sseTicketTtlSeconds: ttlSeconds },
      {
        authenticator: createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, audience: AUDIENCE }),
        tickets: createRedisTicketStore(ticketRedis, { prefix: 'wsh', ttlSeconds, newTicket, pattern: TICKET_PATTERN }),
      },
    );
  [a, b] = await Promise.all([start(30), start(1)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  ticketRedis?.disconnect();
  await ticketRedisServer?.stop();
});

describe('SSE tickets shared through Redis', () => {
  it('redeems at one gateway a ticket another issued, once', async () => {
    const issued = await ticketFrom(a);
    expect(issued.status).toBe(200);
    const { ticket } = (await issued.json()) as { ticket: string };
    // What Redis holds is keyed by a hash of the ticket: the ticket itself is nowhere in Redis.
    expect(await ticketRedis.keys(`*${ticket}*`)).toEqual([]);
    const atB = await openSse(streamUrl(b, ticket));
    expect(atB.status).toBe(200);
    await waitFor(() => b.gateway.stats().subscriptions === 1 && b.gateway.stats().confirmedChannels === 16, { message: 'subscribed at the other gateway' });
    await b.publishListing('lst-1');
    await waitFor(() => atB.nexts().some((d) => d['data'] !== undefined), { message: 'an event through the redeemed ticket' });
    const againAtA = await openSse(streamUrl(a, ticket));
    await againAtA.ended;
    expect(againAtA.status).toBe(401);
    expect(againAtA.raw()).toMatch(/already used or expired/);
    atB.abort();
    await waitFor(() => b.gateway.stats().subscriptions === 0, { message: 'released' });
  });

  it('refuses a ticket after its TTL (Redis expires it)', async () => {
    const issued = await ticketFrom(b); // b's store: 1 s
    const { ticket, expiresIn } = (await issued.json()) as { ticket: string; expiresIn: number };
    expect(expiresIn).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    const late = await openSse(streamUrl(a, ticket));
    await late.ended;
    expect(late.status).toBe(401);
  });

  it('answers 503 (retry) while the ticket store is unreachable, and works again once it is back', async () => {
    const { ticket } = (await (await ticketFrom(a)).json()) as { ticket: string };
    await ticketRedisServer.stop();
    const issue = await ticketFrom(a);
    expect(issue.status).toBe(503);
    expect(await issue.text()).toMatch(/ticket store is unreachable/);
    const redeem = await openSse(streamUrl(b, ticket));
    await redeem.ended;
    expect(redeem.status).toBe(503);
    await ticketRedisServer.start();
    await waitFor(() => ticketRedis.status === 'ready', { message: 'ticket Redis back' });
    expect((await ticketFrom(a)).status).toBe(200);
  });
});
