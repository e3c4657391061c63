/**
 * The demo's seller service: a real Apollo Federation subgraph (`@apollo/subgraph`'s
 * buildSubgraphSchema, MIT, on node:http) answering `_entities` for `Seller` (seller-profiles.ts).
 * The gateway looks sellers up from it through the demo schema's `@lookup` field (docs/schema.md).
 * POST /graphql (GraphQL over HTTP, JSON), GET /healthz, GET /stats (what it was asked).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { graphql, parse } from 'graphql';
import { SELLERS_TYPE_DEFS, sellerProfile } from './seller-profiles.js';

export interface SellersSubgraphOptions {
  /** Every answer waits this long first (a slow service). @default 0 */
  readonly latencyMs?: number;
  /** Largest request body accepted, bytes. @default 1_048_576 (1 MiB: 100 representations take ~4 KiB) */
  readonly maxBodyBytes?: number;
}

/** What the subgraph was asked: HTTP requests to /graphql and representations in them. */
export interface SellersStats {
  requests: number;
  representations: number;
}

export interface SellersSubgraph {
  readonly server: Server;
  readonly stats: Readonly<SellersStats>;
}

/** The subgraph's HTTP server, not yet listening. */
export function createSellersSubgraph({ latencyMs = 0, maxBodyBytes = 1_048_576 }: SellersSubgraphOptions = {}): SellersSubgraph {
  const schema = buildSubgraphSchema([
    {
      typeDefs: parse(SELLERS_TYPE_DEFS),
      resolvers: {
        Query: { seller: (_: unknown, { id }: { id: string }) => sellerProfile(id) },
        Seller: { __resolveReference: (ref: { id: string }) => sellerProfile(ref.id) },
      },
    },
  ]);
  const stats: SellersStats = { requests: 0, representations: 0 };

  async function answer(body: string): Promise<{ status: number; result: unknown }> {
    let request: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      return { status: 400, result: { errors: [{ message: 'the body is not JSON: expected {"query": "…", "variables": {…}}' }] } };
    }
    if (typeof request !== 'object' || request === null || typeof request.query !== 'string') return { status: 400, result: { errors: [{ message: 'body.query: expected the GraphQL document as a string' }] } };
    const variables = typeof request.variables === 'object' && request.variables !== null ? (request.variables as Record<string, unknown>) : {};
    stats.requests++;
    const reps = variables['representations'];
    if (Array.isArray(reps)) stats.representations += reps.length;
    if (latencyMs > 0) await sleep(latencyMs);
    const operationName = typeof request.operationName === 'string' ? request.operationName : undefined;
    return { status: 200, result: await graphql({ schema, source: request.query, variableValues: variables, operationName }) };
  }

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { ok: true });
    if (req.method === 'GET' && path === '/stats') return send(res, 200, stats);
    if (path !== '/graphql') return send(res, 404, { errors: [{ message: `no ${path}: the subgraph is at POST /graphql` }] });
    if (req.method !== 'POST') return send(res, 405, { errors: [{ message: 'POST /graphql with a JSON body' }] });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        send(res, 413, { errors: [{ message: `the body is larger than ${maxBodyBytes} bytes` }] });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      answer(Buffer.concat(chunks).toString('utf8')).then(
        ({ status, result }) => send(res, status, result),
        (err: unknown) => send(res, 500, { errors: [{ message: err instanceof Error ? err.message : String(err) }] }),
      );
    });
  }

  return { server: createServer(onRequest), stats };
}
