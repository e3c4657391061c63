// SSE with JWT auth on a real redis-server: the bearer header, scopes and tenant binding as for a
// WebSocket, single-use tickets for EventSource, token expiry, and the slow-consumer policy.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { waitFor } from '@wirestream/testkit';
import { createAuthenticator } from '../src/index.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { openSse } from './support/sse.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const AUDIENCE = 'wirestream-test';
const QUERY = 'subscription { listingUpdated { listing_id event_id } }';

let t: TestGateway;
let sseUrl: string;

async function token(claims: Record<string, unknown> = {}, expiresIn: string | number = '1h'): Promise<string> {
  return new SignJWT({ scope: 'subscribe:*', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('user-1')
    .setIssuedAt()
    .setAudience(AUDIENCE)
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(SECRET));
}

const body = (query = QUERY): string => JSON.stringify({ query });

beforeAll(async () => {
  t = await startTestGateway(
    { maxBackpressureBytes: 16_384, sseHeartbeatMs: 1_000 },
    { authenticator: createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, audience: AUDIENCE, tenantClaim: 'bidder', tenantArgs: ['bidder_id'] }) },
  );
  sseUrl = `${t.httpBase}/graphql`;
});
afterAll(async () => {
  await t?.stop();
});

describe('SSE auth', () => {
  it('takes the bearer token from Authorization and refuses a missing or bad one with 401', async () => {
    const none = await openSse(sseUrl, { body: body() });
    await none.ended;
    expect(none.status).toBe(401);
    const bad = await openSse(sseUrl, { body: body(), headers: { authorization: 'Bearer not.a.jwt' } });
    await bad.ended;
    expect(bad.status).toBe(401);
    const good = await openSse(sseUrl, { body: body(), headers: { authorization: `Bearer ${await token()}` } });
    expect(good.status).toBe(200);
    await waitFor(() => t.gateway.stats().subscriptions === 1, { message: 'subscribed' });
    await t.publishListing('lst-1');
    await waitFor(() => good.nexts().length === 1, { message: 'one event' });
    good.abort();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'released' });
  });

  it('applies scopes in the stream, as graphql-sse does for errors found before execution', async () => {
    const narrow = await openSse(sseUrl, { body: body(), headers: { authorization: `Bearer ${await token({ scope: 'subscribe:bidPlaced' })}` } });
    await narrow.ended;
    expect(narrow.status).toBe(200);
    expect(narrow.events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(JSON.stringify(narrow.nexts()[0])).toMatch(/listingUpdated/);
  });

  it('exchanges a bearer token for a single-use ticket that a GET (EventSource) presents instead', async () => {
    const refused = await fetch(`${sseUrl}/ticket`, { method: 'POST' });
    expect(refused.status).toBe(401);
    const issued = await fetch(`${sseUrl}/ticket`, { method: 'POST', headers: { authorization: `Bearer ${await token()}` } });
    expect(issued.status).toBe(200);
    const { ticket, expiresIn } = (await issued.json()) as { ticket: string; expiresIn: number };
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(expiresIn).toBe(30);
    const url = `${sseUrl}?query=${encodeURIComponent(QUERY)}&ticket=${ticket}`;
    const s = await openSse(url);
    expect(s.status).toBe(200);
    const again = await openSse(url);
    await again.ended;
    expect(again.status).toBe(401);
    expect(again.raw()).toMatch(/already used or expired/);
    s.abort();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'released' });
  });

  it('ends a stream whose token expired with a reconnect event, without complete', async () => {
    const s = await openSse(sseUrl, { body: body(), headers: { authorization: `Bearer ${await token({}, Math.floor(Date.now() / 1_000) + 2)}` } });
    expect(s.status).toBe(200);
    await s.ended;
    const last = s.nexts().at(-1) as { extensions: { reconnect: { code: string } } };
    expect(last.extensions.reconnect.code).toBe('token_expired');
    expect(s.events.some((e) => e.event === 'complete')).toBe(false);
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'released' });
  });

  it('keeps a stream open that was backpressured once and then read everything (uWS would cut it 10 s later)', async () => {
    const own = await startTestGateway({ maxBackpressureBytes: 67_108_864, sseHeartbeatMs: 60_000 });
    try {
      const slow = connect(Number(new URL(own.httpBase).port), '127.0.0.1');
      slow.pause();
      let closed = false;
      slow.on('close', () => (closed = true));
      const request = body();
      slow.write(`POST /graphql HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(request)}\r\n\r\n${request}`);
      await waitFor(() => own.gateway.stats().subscriptions === 1 && own.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
      const big = 'x'.repeat(4_000);
      for (let i = 0; i < 2_000; i++) await own.publishListing(`lst-${i}-${big}`);
      await new Promise((r) => setTimeout(r, 1_000));
      slow.resume(); // reads everything from here on
      await new Promise((r) => setTimeout(r, 12_000));
      expect(closed).toBe(false);
      expect(own.gateway.stats().sseStreams).toBe(1);
      slow.destroy();
    } finally {
      await own.stop();
    }
  }, 60_000);

  it('ends a stream that does not read past the backpressure bound, and keeps serving the others', async () => {
    const reader = await openSse(sseUrl, { body: body(), headers: { authorization: `Bearer ${await token()}` } });
    // A client that sends its request and never reads: the kernel buffers fill, then uWS's.
    const stuck = connect(Number(new URL(t.httpBase).port), '127.0.0.1');
    stuck.pause();
    const request = body();
    stuck.write(
      `POST /graphql HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nAuthorization: Bearer ${await token()}\r\nContent-Length: ${Buffer.byteLength(request)}\r\n\r\n${request}`,
    );
    await waitFor(() => t.gateway.stats().subscriptions === 2, { message: 'both subscribed' });
    const big = 'x'.repeat(2_000);
    let published = 0;
    await waitFor(
      async () => {
        for (let i = 0; i < 50; i++, published++) await t.publishListing(`lst-${big}-${i}`);
        return t.gateway.stats().subscriptions === 1;
      },
      { message: 'the stuck stream ended', timeoutMs: 60_000 },
    );
    stuck.destroy();
    await waitFor(() => reader.nexts().length === published, { message: 'the reading stream got every event', timeoutMs: 20_000 });
    reader.abort();
  });
});
