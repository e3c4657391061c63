import { createServer, type Server } from 'node:http';
import type { Registry } from '@wirestream/telemetry';

export interface HealthServerOptions {
  readonly registry: Registry;
  /** Ready to take traffic: consumer joined, Redis connected, not stopping. */
  readonly isReady: () => boolean;
  /** Why not ready, for the /readyz body. */
  readonly notReadyReason: () => string;
}

/**
 * `GET /healthz` (the process answers), `GET /readyz` (200 only when ready), `GET /metrics`
 * (Prometheus text). Ingest has no other HTTP traffic, so node:http is plenty.
 */
export function createHealthServer({ registry, isReady, notReadyReason }: HealthServerOptions): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (path === '/readyz') {
      const ready = isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(ready ? 'ready' : notReadyReason());
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz, /readyz, /metrics');
    }
  });
}
