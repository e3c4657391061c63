import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Registry } from '@wirestream/telemetry';

export interface HttpRoutesDeps {
  /** True when the broker is connected and the gateway is not draining. */
  readonly isReady: () => boolean;
  readonly notReadyReason: () => string;
  /** The `/stats` document. */
  readonly stats: () => unknown;
  /** Prometheus registry served on `GET /metrics`, if metrics are on. */
  readonly registry?: Registry | undefined;
  /**
   * Serve `GET /debug/memory` (`?gc=1` forces two GCs first when node runs with --expose-gc), for
   * benchmarks that measure bytes per socket. Off in production.
   */
  readonly debugEndpoints: boolean;
}

/** Probes, stats, metrics and debug routes. */
export function registerHttpRoutes(app: TemplatedApp, deps: HttpRoutesDeps): void {
  const { isReady, notReadyReason, stats, registry, debugEndpoints } = deps;
  app.get('/healthz', (res) => respond(res, '200 OK', 'text/plain', 'ok'));
  app.get('/readyz', (res) => {
    const ready = isReady();
    respond(res, ready ? '200 OK' : '503 Service Unavailable', 'text/plain', ready ? 'ready' : notReadyReason());
  });
  app.get('/stats', (res) => respond(res, '200 OK', 'application/json', JSON.stringify(stats())));
  if (registry) app.get('/metrics', (res) => serveMetrics(res, registry));
  if (debugEndpoints) {
    app.get('/debug/memory', (res, req) => {
      // Read the query before anything else: uWS request objects die when the handler returns.
      respond(res, '200 OK', 'application/json', memoryReport(req.getQuery('gc') === '1'));
    });
  }
}

/** The catch-all 404, registered after every other route. */
export function registerNotFound(app: TemplatedApp, websocketPath: string): void {
  app.any('/*', (res) => respond(res, '404 Not Found', 'text/plain', `not found: WebSocket endpoint is ${websocketPath}`));
}

function serveMetrics(res: HttpResponse, registry: Registry): void {
  // The registry answers asynchronously: uWS requires an abort handler before the handler returns.
  let aborted = false;
  res.onAborted(() => (aborted = true));
  registry.metrics().then(
    (text) => {
      if (!aborted) respond(res, '200 OK', registry.contentType, text);
    },
    (err: unknown) => {
      if (!aborted) respond(res, '500 Internal Server Error', 'text/plain', String(err));
    },
  );
}

function memoryReport(forceGc: boolean): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (forceGc && gc) {
    gc();
    gc();
  }
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return JSON.stringify({ rss, heapUsed, heapTotal, external, arrayBuffers, gc: forceGc && gc !== undefined });
}

export function respond(res: HttpResponse, status: string, contentType: string, body: string): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('content-type', contentType).writeHeader('cache-control', 'no-store').end(body);
  });
}
