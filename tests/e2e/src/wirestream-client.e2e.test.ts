// @wirestream/client against the built gateway and ingest, real Kafka (3 partitions) and a real
// redis-server, while a producer publishes continuously: across a gateway SIGTERM (a new gateway on
// the same port), a Redis restart with and without its data, and token expiry, every event arrives
// exactly once, in order per partition — the client resumes by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { SignJWT } from 'jose';
import { createWirestreamClient, type Recovery, type SubscribeOptions, type WirestreamClient, type WirestreamClientOptions } from '@wirestream/client';
import { auctionSchemaPath } from '@wirestream/schema';
import { freePort, startStack, uniqueName, waitFor, type AppProcess, type Stack } from '@wirestream/testkit';

const QUERY = 'subscription { listingUpdated { listing_id event_id } }';
const PARTITIONS = 3;
const SECRET = 'an-e2e-secret-that-is-at-least-32-bytes-long';

let stack: Stack;
let gateway: AppProcess;
let topic: string;
let port: number;
let wsUrl: string;
const clients: WirestreamClient[] = [];

/** A JWT the gateway accepts for `lifetimeSec` seconds. */
function sign(lifetimeSec: number): Promise<string> {
  return new SignJWT({ scope: 'subscribe:*' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('e2e-client')
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSec)
    .sign(new TextEncoder().encode(SECRET));
}

/** A new gateway on the same port (and Redis, and settings). */
const startGateway = (): Promise<AppProcess> => stack.startGateway({ port });

async function stats(): Promise<Record<string, number>> {
  return (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as Record<string, number>;
}

interface Received {
  readonly eventId: string;
  readonly partition: number;
  readonly offset: string;
  readonly epoch: string | undefined;
}

/** A client of the package, recording what its application would see. */
function watch(options: Partial<WirestreamClientOptions> = {}, subscribeOptions: SubscribeOptions = {}) {
  const received: Received[] = [];
  const recoveries: Recovery[] = [];
  const errors: unknown[] = [];
  const closes: { code: number; reason: string }[] = [];
  let tokens = 0;
  let started = false;
  const client = createWirestreamClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    retryWait: () => new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 100)),
    token: () => {
      tokens++;
      return sign(3_600);
    },
    on: { closed: (event) => void closes.push(event as { code: number; reason: string }) },
    ...options,
  });
  clients.push(client);
  const subscription = client.subscribe<{ listingUpdated: { event_id: string } }>(
    { query: QUERY },
    {
      next: (result) => {
        const position = (result.extensions as { position: { partition: number; offset: string; epoch?: string } }).position;
        received.push({ eventId: String(result.data?.listingUpdated.event_id), partition: position.partition, offset: position.offset, epoch: position.epoch });
      },
      error: (error) => errors.push(error),
      complete: () => errors.push(new Error('completed')),
      onStart: () => {
        started = true;
      },
      onRecovery: (recovery) => recoveries.push(recovery),
    },
    subscribeOptions,
  );
  return { client, subscription, received, recoveries, errors, closes, tokens: () => tokens, started: () => started };
}
type Watcher = ReturnType<typeof watch>;

/** Publishes 2 events per partition every ~20 ms until stopped; `ids` are every event acknowledged by Kafka. */
function startStream(name: string) {
  const ids: string[] = [];
  let running = true;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const batch = Array.from({ length: PARTITIONS * 2 }, (_, i) => ({ partition: i % PARTITIONS, eventId: `${name}-${n++}` }));
      await stack.send(
        topic,
        batch.map(({ partition, eventId }) => ({ partition, key: `lst-${partition}`, value: JSON.stringify({ eventId, listingId: `lst-${partition}` }) })),
      );
      ids.push(...batch.map((b) => b.eventId));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    ids,
    waitForProduced: (count: number) => waitFor(() => ids.length >= count, { timeoutMs: 30_000, message: `${count} events produced` }),
    stop: async () => {
      running = false;
      await loop;
      return ids;
    },
  };
}

/**
 * Waits until the watcher holds every event of `prefix` that was produced (but those in `mayMiss`,
 * events a not-recovered resume was right to lose), then checks: 0 missing, 0 duplicated, in order.
 */
async function expectExactlyOnce(watcher: Watcher, prefix: string, produced: readonly string[], mayMiss: ReadonlySet<string> = new Set()): Promise<void> {
  const mine = () => watcher.received.filter((r) => r.eventId.startsWith(`${prefix}-`));
  const required = produced.filter((id) => !mayMiss.has(id));
  const has = () => new Set(mine().map((r) => r.eventId));
  await waitFor(() => required.every((id) => has().has(id)), {
    timeoutMs: 60_000,
    message: `${required.length} ${prefix} events at the client (has ${required.filter((id) => has().has(id)).length})`,
  });
  const ids = mine().map((r) => r.eventId);
  const duplicates = ids.length - new Set(ids).size;
  const missing = produced.filter((id) => !has().has(id));
  const missingRequired = missing.filter((id) => !mayMiss.has(id));
  console.info(`[e2e] @wirestream/client ${prefix}: ${produced.length} produced, ${ids.length} received, ${missing.length} missing (${mayMiss.size} allowed), ${duplicates} duplicated, recoveries ${JSON.stringify(watcher.recoveries)}`);
  expect({ duplicates, missingRequired }).toEqual({ duplicates: 0, missingRequired: [] });
  expect(ids.every((id) => produced.includes(id)), 'nothing that was not produced').toBe(true);
  // In order per partition: Kafka offsets only grow (also across an epoch change).
  for (let p = 0; p < PARTITIONS; p++) {
    const offsets = mine().filter((r) => r.partition === p).map((r) => BigInt(r.offset));
    expect(offsets.every((o, i) => i === 0 || o > (offsets[i - 1] as bigint)), `partition ${p} in order`).toBe(true);
  }
  expect(watcher.errors).toEqual([]);
}

beforeAll(async () => {
  topic = `listing-events-${uniqueName('wsclient')}`;
  const bidTopic = `bid-events-${uniqueName('wsclient')}`;
  stack = await startStack({
    name: 'wsclient',
    schema: readFileSync(auctionSchemaPath, 'utf8').replace('"listing-events"', JSON.stringify(topic)).replace('"bid-events"', JSON.stringify(bidTopic)),
    topics: [topic, bidTopic].map((t) => ({ topic: t, numPartitions: PARTITIONS })),
    redis: { persistent: true },
    gatewayEnv: {
      GATEWAY_AUTH_MODE: 'jwt',
      GATEWAY_JWT_HS256_SECRET: SECRET,
      GATEWAY_JWT_CLOCK_TOLERANCE_SEC: '0', // a token expires when its exp says
    },
  });
  gateway = stack.gateway;
  port = stack.gateway.port;
  wsUrl = stack.gateway.wsUrl;
  stack.onStop(() => Promise.all(clients.map((c) => c.dispose())));
});

afterAll(() => stack?.stop());

async function live(...watchers: Watcher[]): Promise<void> {
  await waitFor(() => watchers.every((w) => w.started()), { timeoutMs: 30_000, message: 'every client live (its start received)' });
}

async function done(...watchers: Watcher[]): Promise<void> {
  for (const w of watchers) w.subscription();
  await waitFor(async () => (await stats())['subscriptions'] === 0, { timeoutMs: 30_000, message: 'no subscription left' });
}

describe('@wirestream/client resumes by itself (built gateway and ingest, real Kafka and Redis)', () => {
  it('gateway SIGTERM mid-stream, a new gateway on the same port: every event once, in order', async () => {
    const watcher = watch();
    const deltas = watch({}, { delta: true }); // delta payloads, reconstructed before the bookkeeping
    await live(watcher, deltas);
    const stream = startStream('drain');
    await stream.waitForProduced(300);
    expect(await gateway.stop('SIGTERM')).toBe(0);
    expect(gateway.lines.some((l) => l['msg'] === 'gateway drained')).toBe(true);
    await stream.waitForProduced(stream.ids.length + 120); // published while no gateway runs
    gateway = await startGateway();
    await waitFor(() => watcher.recoveries.length === 1 && deltas.recoveries.length === 1, { timeoutMs: 30_000, message: 'the resumes on the new gateway' });
    await stream.waitForProduced(stream.ids.length + 120);
    const produced = await stream.stop();
    for (const w of [watcher, deltas]) {
      await expectExactlyOnce(w, 'drain', produced);
      expect(w.closes.map((c) => c.code)).toContain(1001);
      expect(w.recoveries).toEqual([{ recovered: true, epoch: expect.any(String) as string }]);
    }
    // Delta payloads were on the wire (the new gateway's counter), and reconstructed to the same
    // results (ids and positions) as without them.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(Number(/^wirestream_gateway_delta_frames_out_total(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
    const byId = (a: Received, b: Received) => (a.eventId < b.eventId ? -1 : 1);
    expect([...deltas.received].sort(byId)).toEqual([...watcher.received].sort(byId));
    await done(watcher, deltas);
  });

  it('Redis restarts with its data: every event once, nothing reported lost', async () => {
    const watcher = watch();
    await live(watcher);
    const stream = startStream('redis-kept');
    await stream.waitForProduced(200);
    await stack.redis.stop();
    await stream.waitForProduced(stream.ids.length + 60);
    await stack.redis.start();
    await stream.waitForProduced(stream.ids.length + 200);
    await expectExactlyOnce(watcher, 'redis-kept', await stream.stop());
    expect(watcher.recoveries).toEqual([]);
    expect(new Set(watcher.received.map((r) => r.epoch)).size).toBe(1);
    await done(watcher);
  });

  it('Redis restarts without its data: epoch changed → recovered: false, then the events continue, each once', async () => {
    const connected = watch();
    // A second client loses its network across the restart: it resumes with the old epoch.
    let reachable = true;
    const deadPort = await freePort();
    const offline = watch({ url: () => (reachable ? wsUrl : `ws://127.0.0.1:${deadPort}/graphql`) });
    await live(connected, offline);
    const stream = startStream('redis-lost');
    await stream.waitForProduced(200);
    const oldEpoch = connected.received.at(-1)?.epoch;
    reachable = false;
    offline.client.terminate();
    const hadWhenOffline = new Set(offline.received.map((r) => r.eventId));
    await stack.redis.stop({ discardData: true });
    // Published before Redis died and not yet received when the offline client left: they may have
    // been only in the lost history, so that client can miss them — and is told so (recovered: false).
    // Everything published after must arrive.
    const lostWithHistory = new Set(stream.ids.filter((id) => !hadWhenOffline.has(id)));
    await stream.waitForProduced(stream.ids.length + 60);
    await stack.redis.start();
    await waitFor(() => connected.received.some((r) => r.epoch !== oldEpoch), { timeoutMs: 30_000, message: 'events of the new epoch' });
    reachable = true;
    await stream.waitForProduced(stream.ids.length + 200);
    const produced = await stream.stop();
    await expectExactlyOnce(connected, 'redis-lost', produced);
    await expectExactlyOnce(offline, 'redis-lost', produced, lostWithHistory);
    const newEpoch = connected.received.at(-1)?.epoch;
    expect(newEpoch).not.toBe(oldEpoch);
    // The connected one saw the epoch change in the positions; the other was told by the gateway.
    expect(connected.recoveries).toEqual([{ recovered: false, epoch: newEpoch, reason: expect.stringMatching(/^epoch changed while connected/) as string }]);
    expect(offline.recoveries).toEqual([{ recovered: false, epoch: newEpoch, reason: expect.stringMatching(/^epoch changed/) as string }]);
    await done(connected, offline);
  });

  it.each<[string, Pick<WirestreamClientOptions, 'renewTokenBeforeMs'>]>([
    ['renewed before exp (reconnects with a fresh token)', {}],
    ['closed by the gateway at exp (4403 token expired, reconnects at once)', { renewTokenBeforeMs: false }],
  ])('short-lived tokens, %s: no event lost or doubled across the renewals', async (_, options) => {
    const name = options.renewTokenBeforeMs === false ? 'token-closed' : 'token-renewed';
    const watcher = watch({ ...options, token: () => sign(3) });
    await live(watcher);
    const stream = startStream(name);
    await waitFor(() => watcher.closes.length >= 2, { timeoutMs: 30_000, message: 'two token renewals' });
    await stream.waitForProduced(stream.ids.length + 60);
    await expectExactlyOnce(watcher, name, await stream.stop());
    // Renewal: the client drops its own socket (graphql-ws terminate, 4499) before the gateway would.
    expect(new Set(watcher.closes.map((c) => c.code))).toEqual(new Set([options.renewTokenBeforeMs === false ? 4403 : 4499]));
    expect(watcher.recoveries.length).toBeGreaterThanOrEqual(2);
    expect(watcher.recoveries.every((r) => r.recovered)).toBe(true);
    await done(watcher);
  });
});
