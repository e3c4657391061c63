// The demo's seller subgraph as start.sh runs it (dist/sellers.js, its own process: @apollo/subgraph is
// CommonJS and must share graphql-js with what executes its schema), asked what the gateway asks it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type AppProcess } from '@wirestream/testkit';
import { sellerProfile } from '../src/seller-profiles.js';

const MAIN = fileURLToPath(new URL('../dist/sellers.js', import.meta.url));
const ENTITIES = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Seller { id display_name rating is_verified listings_sold } } }';

interface Started {
  readonly app: AppProcess;
  readonly url: string;
}

async function start(env: Record<string, string> = {}): Promise<Started> {
  const app = startApp('demo', { SELLERS_PORT: '0', ...env }, 'sellers');
  const listening = await app.waitForLog((line) => line['msg'] === 'seller subgraph listening', 'the seller subgraph listening', 30_000);
  return { app, url: listening['url'] as string };
}

async function stop({ app }: Started): Promise<void> {
  await app.stop();
}

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('the demo seller subgraph', () => {
  let sellers: Started;
  beforeAll(async () => {
    sellers = await start();
  });
  afterAll(async () => {
    await stop(sellers);
  });

  it('answers _entities for Seller, each representation in order, null for an unknown id', async () => {
    const ids = ['slr-00042', 'slr-04999', 'not-a-seller', 'slr-00042', 'slr-00001'];
    const { status, json } = await post(sellers.url, { query: ENTITIES, variables: { representations: ids.map((id) => ({ __typename: 'Seller', id })) } });
    expect(status).toBe(200);
    expect(json['errors']).toBeUndefined();
    expect((json['data'] as { _entities: unknown[] })._entities).toEqual(ids.map((id) => sellerProfile(id)));
    expect(sellerProfile('slr-00042')?.display_name.length).toBeGreaterThan(0);
    const stats = (await (await fetch(sellers.url.replace('/graphql', '/stats'))).json()) as { requests: number; representations: number };
    expect(stats).toEqual({ requests: 1, representations: ids.length });
  });

  it('declares Seller an entity keyed by id (what a supergraph composes)', async () => {
    const { json } = await post(sellers.url, { query: '{ _service { sdl } }' });
    expect((json['data'] as { _service: { sdl: string } })._service.sdl).toMatch(/type Seller\s+@key\(fields: "id"\)/);
  });

  it('refuses a body that is not a GraphQL request with a message naming what to send', async () => {
    const res = await fetch(sellers.url, { method: 'POST', body: 'nope' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { message: string }[] }).errors[0]?.message).toMatch(/not JSON/);
    expect((await post(sellers.url, { variables: {} })).json).toEqual({ errors: [{ message: 'body.query: expected the GraphQL document as a string' }] });
  });

  it('waits SELLERS_LATENCY_MS before every answer', async () => {
    const slow = await start({ SELLERS_LATENCY_MS: '300' });
    try {
      const started = performance.now();
      const { json } = await post(slow.url, { query: ENTITIES, variables: { representations: [{ __typename: 'Seller', id: 'slr-00007' }] } });
      expect(performance.now() - started).toBeGreaterThanOrEqual(295);
      expect((json['data'] as { _entities: unknown[] })._entities).toEqual([sellerProfile('slr-00007')]);
    } finally {
      await stop(slow);
    }
  });

  it('stops at start with one line naming a bad setting', async () => {
    const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env['PATH'] ?? '', SELLERS_LATENCY_MS: 'soon' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).not.toBe(0);
    expect(output).toContain('SELLERS_LATENCY_MS');
  });
});
