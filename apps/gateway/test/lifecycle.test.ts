import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@wirestream/testkit';
import { LISTING, rawSocket, startTestGateway, type TestGateway } from './support/gateway.js';

let t: TestGateway | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function subscribedRawSocket(url: string) {
  const socket = rawSocket(url);
  await socket.opened;
  socket.ws.send(JSON.stringify({ type: 'connection_init' }));
  await waitFor(() => socket.messages.length === 1, { message: 'connection_ack' });
  socket.ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: LISTING } }));
  return socket;
}

describe('graceful drain (SIGTERM)', () => {
  it('fails readiness, refuses new sockets and closes every socket with 1001 so clients resume elsewhere', async () => {
    t = await startTestGateway({ drainBatchSize: 2 });
    const sockets = await Promise.all([1, 2, 3, 4, 5].map(() => subscribedRawSocket(t?.url as string)));
    await waitFor(() => t?.gateway.stats().subscriptions === 5, { message: '5 subscriptions' });
    const drained = t.gateway.drain();
    expect(t.gateway.isReady()).toBe(false);
    expect(t.gateway.stats().draining).toBe(true);
    await drained;
    const closes = await Promise.all(sockets.map((s) => s.closed));
    expect(closes).toEqual(sockets.map(() => ({ code: 1001, reason: 'server shutting down: reconnect' })));
    await waitFor(() => t?.gateway.stats().connections === 0 && t.gateway.stats().subscriptions === 0, { message: 'everything released' });
    // The listener is closed: a new client cannot connect to this gateway any more.
    const late = rawSocket(t.url);
    await expect(late.opened).rejects.toThrow();
  });
});

describe('keepalive', () => {
  it('closes a half-open socket (no pong) within the idle timeout', async () => {
    t = await startTestGateway({ idleTimeoutSeconds: 8 });
    const healthy = await subscribedRawSocket(t.url);
    const silent = await subscribedRawSocket(t.url);
    await waitFor(() => t?.gateway.stats().connections === 2, { message: 'two sockets' });
    // A paused socket neither reads pings nor answers them: what a vanished peer looks like.
    (silent.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const started = Date.now();
    await waitFor(() => t?.gateway.stats().connections === 1, { message: 'the silent socket closed by the server', timeoutMs: 30_000 });
    const elapsedS = (Date.now() - started) / 1_000;
    // uWS pings after the idle timeout's first half without traffic and closes when the pong does not come in time.
    expect(elapsedS).toBeLessThanOrEqual(8 * 2 + 2);
    // The healthy socket answered its pings (ws does so automatically) and is still open.
    expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
    healthy.ws.close();
  }, 40_000);
});

describe('behind a proxy', () => {
  it('counts the per-address limit by the client the trusted proxy saw (X-Forwarded-For)', async () => {
    t = await startTestGateway({ trustedProxyHops: 1, maxConnectionsPerAddress: 2 });
    const via = (client: string) => rawSocket(t?.url as string, 'graphql-transport-ws', { 'x-forwarded-for': `1.1.1.1, ${client}` });
    const first = [via('203.0.113.7'), via('203.0.113.7')];
    await Promise.all(first.map((s) => s.opened));
    // Same client behind the same proxy: refused; another client through the same proxy: fine.
    await expect(via('203.0.113.7').opened).rejects.toThrow(/429/);
    const other = via('203.0.113.8');
    await other.opened;
    for (const s of [...first, other]) s.ws.close();
  });
});
