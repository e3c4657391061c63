// The client's wiring over a real WebSocket: a small scripted graphql-transport-ws server (the
// protocol's five messages by hand) stands in for the gateway so each case can send exactly the
// frames it needs — malformed ones included. The gateway itself is tested in tests/e2e.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import type { AddressInfo } from 'node:net';
import { createWirestreamClient, WirestreamProtocolError, type Recovery, type WirestreamClient, type WirestreamResult } from './index.js';

interface Subscribe {
  readonly id: string;
  readonly payload: { readonly query: string; readonly extensions?: Record<string, unknown> };
}
interface ServerConnection {
  readonly socket: WebSocket;
  readonly init: Record<string, unknown> | undefined;
  readonly subscribes: Subscribe[];
  next(id: string, payload: unknown): void;
}

/** Acks every connection_init and records subscribes; `onSubscribe` answers them. */
async function startServer(onSubscribe: (conn: ServerConnection, message: Subscribe) => void) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  const connections: ServerConnection[] = [];
  server.on('connection', (socket) => {
    let conn: ServerConnection | undefined;
    socket.on('message', (data: RawData) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string; payload?: Record<string, unknown> } & Subscribe;
      if (message.type === 'connection_init') {
        conn = { socket, init: message.payload, subscribes: [], next: (id, payload) => socket.send(JSON.stringify({ id, type: 'next', payload })) };
        connections.push(conn);
        socket.send(JSON.stringify({ type: 'connection_ack' }));
      } else if (message.type === 'subscribe' && conn) {
        conn.subscribes.push(message);
        onSubscribe(conn, message);
      }
    });
  });
  const { port } = server.address() as AddressInfo;
  return { url: `ws://127.0.0.1:${port}`, connections, close: () => new Promise((resolve) => server.close(resolve)) };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  // Clients first (pushed last), then their servers.
  for (const close of closers.splice(0).reverse()) await close();
});

function record(client: WirestreamClient, query = 'subscription { s }') {
  const results: WirestreamResult[] = [];
  const recoveries: Recovery[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe(query === '' ? { query: 'subscription { s }' } : { query }, {
    next: (r) => results.push(r),
    error: (e) => errors.push(e),
    complete: () => {},
    onRecovery: (r) => recoveries.push(r),
  });
  return { results, recoveries, errors, stop, offsets: () => results.map((r) => (r.extensions as { position: { offset: string } }).position.offset) };
}

const position = (partition: number, offset: string, epoch = 'e1') => ({ topic: 't', partition, offset, epoch });
const event = (partition: number, offset: string) => ({ data: { s: offset }, extensions: { position: position(partition, offset) } });
const waitUntil = async (check: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 4_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};
const quick = { webSocketImpl: WebSocket, retryWait: () => new Promise<void>((resolve) => setTimeout(resolve, 10)) };

describe('createWirestreamClient', () => {
  it('sends since, conflate and maxRate, and keeps them beside the resume after a reconnect (the gateway lets resume win)', async () => {
    const server = await startServer((conn, { id, payload }) => {
      if (payload.extensions?.['start'] === true) {
        conn.next(id, { extensions: { recovery: { recovered: false, epoch: 'e1', reason: 'retention', partitions: [0], oldest: '2026-12-04T09:00:05.000Z' } } });
        conn.next(id, { extensions: { start: { epoch: 'e1', positions: { '0': '4' } } } });
        conn.next(id, event(0, '5'));
        setTimeout(() => conn.socket.close(1001, 'Going away'), 20);
      } else conn.next(id, { extensions: { recovery: { recovered: true, epoch: 'e1' } } });
    });
    closers.push(server.close);
    const client = createWirestreamClient({ url: server.url, ...quick });
    closers.push(() => client.dispose());
    const recoveries: Recovery[] = [];
    const stop = client.subscribe({ query: 'subscription { s }' }, { next: () => {}, error: () => {}, complete: () => {}, onRecovery: (r) => recoveries.push(r) }, { since: new Date('2026-12-04T09:00:00Z'), conflate: true, maxRate: 2 });
    closers.push(() => Promise.resolve(stop()));
    await waitUntil(() => recoveries.length === 2, 'both recovery signals');
    const wanted = { since: '2026-12-04T09:00:00.000Z', conflate: true, maxRate: 2 };
    expect(server.connections.map((c) => c.subscribes.map((x) => x.payload.extensions))).toEqual([
      [{ ...wanted, start: true }],
      [{ ...wanted, resume: { epoch: 'e1', positions: { '0': '5' } } }],
    ]);
    expect(recoveries[0]).toMatchObject({ recovered: false, oldest: '2026-12-04T09:00:05.000Z' });
  });

  it('asks for the start, hides the signals, drops duplicates, and resumes after a 1001 with start + last offsets', async () => {
    const server = await startServer((conn, { id, payload }) => {
      if (payload.extensions?.['start'] === true) {
        conn.next(id, { extensions: { start: { epoch: 'e1', positions: { '0': '10', '1': '20' } } } });
        for (const offset of ['11', '12', '12', '11']) conn.next(id, event(0, offset));
        setTimeout(() => conn.socket.close(1001, 'Going away'), 20);
      } else {
        conn.next(id, { extensions: { recovery: { recovered: true, epoch: 'e1' } } });
        for (const offset of ['12', '13']) conn.next(id, event(0, offset));
        conn.next(id, event(1, '21'));
      }
    });
    closers.push(server.close);
    const client = createWirestreamClient({ url: server.url, ...quick });
    closers.push(() => client.dispose());
    const sub = record(client);
    await waitUntil(() => sub.results.length === 4, 'four events');
    expect(sub.offsets()).toEqual(['11', '12', '13', '21']);
    expect(sub.recoveries).toEqual([{ recovered: true, epoch: 'e1' }]);
    expect(server.connections.map((c) => c.subscribes.map((s) => s.payload.extensions))).toEqual([
      [{ start: true }],
      [{ resume: { epoch: 'e1', positions: { '0': '12', '1': '20' } } }],
    ]);
    // Same subscription id on both connections: graphql-ws's own resubscription.
    expect(server.connections[1]?.subscribes[0]?.id).toBe(server.connections[0]?.subscribes[0]?.id);
    expect(sub.stop.resumeState()).toEqual({ epoch: 'e1', positions: { '0': '13', '1': '21' } });
    expect(sub.errors).toEqual([]);
  });

  it('ends the subscription with a WirestreamProtocolError naming the field when the server sends malformed extensions', async () => {
    const server = await startServer((conn, { id }) => conn.next(id, { data: { s: 1 }, extensions: { position: { topic: 't', partition: 0, offset: 7 } } }));
    closers.push(server.close);
    const client = createWirestreamClient({ url: server.url, ...quick });
    closers.push(() => client.dispose());
    const sub = record(client);
    await waitUntil(() => sub.errors.length === 1, 'the error');
    expect(sub.errors[0]).toBeInstanceOf(WirestreamProtocolError);
    expect((sub.errors[0] as Error).message).toMatch(/extensions\.position\.offset must be an offset as a decimal string, got 7/);
    expect(sub.results).toEqual([]);
  });

  it('calls token() on every connect and reconnects at once with a fresh one after "4403 token expired"', async () => {
    let issued = 0;
    const server = await startServer((conn, { id, payload }) => {
      if (payload.extensions?.['start'] === true) {
        conn.next(id, { extensions: { start: { epoch: 'e1', positions: {} } } });
        conn.next(id, event(0, '0'));
        setTimeout(() => conn.socket.close(4403, 'Forbidden: token expired'), 20);
      } else {
        conn.next(id, { extensions: { recovery: { recovered: true, epoch: 'e1' } } });
        conn.next(id, event(0, '1'));
      }
    });
    closers.push(server.close);
    const slowBackoff = () => new Promise<void>((resolve) => setTimeout(resolve, 60_000)); // never reached: no back-off after an expiry
    const client = createWirestreamClient({ url: server.url, webSocketImpl: WebSocket, retryWait: slowBackoff, token: () => `opaque-${++issued}` });
    closers.push(() => client.dispose());
    const sub = record(client);
    await waitUntil(() => sub.results.length === 2, 'both events');
    expect(server.connections.map((c) => c.init)).toEqual([{ authorization: 'Bearer opaque-1' }, { authorization: 'Bearer opaque-2' }]);
    expect(sub.offsets()).toEqual(['0', '1']);
  });

  it('renews a JWT before its exp by reconnecting, and the subscription resumes', async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwt = (expSeconds: number) => `${b64({ alg: 'HS256' })}.${b64({ exp: expSeconds })}.sig`;
    const server = await startServer((conn, { id, payload }) => {
      if (payload.extensions?.['start'] === true) conn.next(id, { extensions: { start: { epoch: 'e1', positions: { '0': '4' } } } });
      else conn.next(id, { extensions: { recovery: { recovered: true, epoch: 'e1' } } });
    });
    closers.push(server.close);
    const client = createWirestreamClient({
      url: server.url,
      ...quick,
      renewTokenBeforeMs: 30_000,
      token: () => jwt(Math.floor(Date.now() / 1000) + 2), // 1–2 s left: renewed after half of it
    });
    closers.push(() => client.dispose());
    record(client);
    await waitUntil(() => server.connections.length >= 3 && server.connections.slice(0, 3).every((c) => c.subscribes.length > 0), 'two renewals');
    const resumes = server.connections.slice(1, 3).map((c) => c.subscribes[0]?.payload.extensions);
    expect(resumes).toEqual([
      { resume: { epoch: 'e1', positions: { '0': '4' } } },
      { resume: { epoch: 'e1', positions: { '0': '4' } } },
    ]);
  });

  it('delta mode: a delta that does not apply starts the subscription again (new id, resuming); one with no event since the last restart fails', async () => {
    const server = await startServer((conn, { id, payload }) => {
      const subscribes = server.connections.flatMap((c) => c.subscribes).length;
      expect(payload.extensions?.['delta']).toBe('fossil');
      if (subscribes === 1) {
        conn.next(id, { extensions: { start: { epoch: 'e1', positions: { '0': '1' } } } });
        conn.next(id, event(0, '2'));
        conn.next(id, { extensions: { delta: 'not a fossil delta' } });
      } else if (subscribes === 2) {
        conn.next(id, { extensions: { recovery: { recovered: true, epoch: 'e1' } } });
        conn.next(id, event(0, '3'));
        conn.next(id, { extensions: { delta: 'still not one' } }); // after progress: again
      } else {
        conn.next(id, { extensions: { recovery: { recovered: true, epoch: 'e1' } } });
        conn.next(id, { extensions: { delta: 'nor this' } }); // no event since the restart: fails
      }
    });
    closers.push(server.close);
    const client = createWirestreamClient({ url: server.url, ...quick });
    closers.push(() => client.dispose());
    const errors: unknown[] = [];
    const offsets: string[] = [];
    client.subscribe(
      { query: 'subscription { s }' },
      { next: (r) => offsets.push((r.extensions as { position: { offset: string } }).position.offset), error: (e) => errors.push(e), complete: () => {} },
      { delta: true },
    );
    await waitUntil(() => errors.length === 1, 'the second bad delta');
    expect(offsets).toEqual(['2', '3']);
    const subscribes = server.connections.flatMap((c) => c.subscribes);
    expect(subscribes.map((m) => m.payload.extensions)).toEqual([
      { delta: 'fossil', start: true },
      { delta: 'fossil', resume: { epoch: 'e1', positions: { '0': '2' } } },
      { delta: 'fossil', resume: { epoch: 'e1', positions: { '0': '3' } } },
    ]);
    expect(new Set(subscribes.map((m) => m.id)).size).toBe(3);
    expect((errors[0] as Error).name).toBe('DeltaError');
  });

  it('fails fast, without retrying, when token() returns no string; rejects a bad renewTokenBeforeMs', async () => {
    const server = await startServer(() => {});
    closers.push(server.close);
    const bad = createWirestreamClient({ url: server.url, ...quick, token: () => 42 as unknown as string });
    closers.push(() => bad.dispose());
    const sub = record(bad);
    await waitUntil(() => sub.errors.length === 1, 'the error');
    expect((sub.errors[0] as Error).message).toMatch(/token\(\) must return a string \(a JWT, or '' for none\), got number/);
    expect(server.connections).toEqual([]); // never retried, never sent connection_init
    expect(() => createWirestreamClient({ url: server.url, renewTokenBeforeMs: -1 })).toThrow(/renewTokenBeforeMs must be a number of ms ≥ 0 or false, got -1/);
  });
});
