import uWS from 'uWebSockets.js';
import type { HttpResponse, TemplatedApp, WebSocket, us_listen_socket } from 'uWebSockets.js';
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL } from 'graphql-ws';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import type { WirestreamSchema } from '@wirestream/schema';
import { createAuthenticator, type Authenticator } from './auth.js';
import { clientAddress } from './client-address.js';
import type { DocumentLimits } from './document-limits.js';
import { createFanout, type FanoutDeps } from './fanout.js';
import { createHistoryReader } from './history.js';
import type { GatewayMetrics } from './metrics.js';
import type { Registry } from '@wirestream/telemetry';
import { createOperationCompiler } from './operations.js';
import { createOriginCheck } from './origin.js';
import { createConnection, createProtocol, type Connection } from './protocol.js';
import { createRateLimiter } from './rate-limit.js';
import { registerConsoleRoutes, type ConsoleSite } from './console.js';

export interface GatewayDeps {
  readonly schema: WirestreamSchema;
  /** A Redis connection the gateway owns for SUBSCRIBE (it switches to subscriber mode). */
  readonly redis: Redis;
  /**
   * An ordinary Redis connection (not in subscriber mode) for reading history: resume, back-fill
   * after a reconnect, and the epoch. Without it the gateway is live-only.
   */
  readonly historyRedis?: Redis;
  readonly logger: Logger;
  /** Verifies `connection_init` (JWT) and decides scopes. @default anonymous: everyone may subscribe to everything */
  readonly authenticator?: Authenticator;
  /** Prometheus registry served on `GET /metrics`, and the gateway's series in it. */
  readonly metrics?: { readonly registry: Registry; readonly series: GatewayMetrics };
  /** Lazily built resolver backends per operation group (see {@link FanoutDeps.contextFactories}). */
  readonly contextFactories?: FanoutDeps<Connection>['contextFactories'];
}

export interface GatewayOptions {
  /** WebSocket path. @default '/graphql' */
  readonly path?: string;
  /** Must match ingest's channel prefix. @default 'ws' */
  readonly channelPrefix?: string;
  /** Largest accepted frame; a larger one closes the socket (uWS enforces it). @default 65_536 (64 KiB) */
  readonly maxPayloadBytes?: number;
  /** Must match ingest's history prefix. @default 'wsh' */
  readonly historyPrefix?: string;
  /**
   * Bytes queued for one slow socket; the frame that would pass it is dropped and the socket closed
   * with 1013 and a resume hint, so a slow client cannot grow server memory and loses nothing
   * (it resumes from its last position). @default 1_048_576 (1 MiB)
   */
  readonly maxBackpressureBytes?: number;
  /** Seconds without traffic before uWS pings, then closes a silent socket. @default 60 */
  readonly idleTimeoutSeconds?: number;
  /** @default 3_000 (3 s) */
  readonly connectionInitWaitTimeoutMs?: number;
  /** @default 100 */
  readonly maxSubscriptionsPerConnection?: number;
  /** Sockets closed per event-loop turn while draining, so a drain does not stall the loop. @default 500 */
  readonly drainBatchSize?: number;
  /**
   * Serve `GET /debug/memory` (`?gc=1` forces two GCs first when node runs with --expose-gc),
   * for benchmarks that measure bytes per socket. Off in production.
   * @default false
   */
  readonly debugEndpoints?: boolean;
  /**
   * Browser origins allowed to open a socket (exact, or `https://*.example.com`); requests
   * without an Origin header (non-browser clients) are always allowed. Empty: no browser origin.
   * @default ['*'] (any origin)
   */
  readonly allowedOrigins?: readonly string[];
  /** Open sockets per client IP address; more are refused at the upgrade with 429. @default 1_000 */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Proxies in front of the gateway that append the client's address to `X-Forwarded-For`; the
   * per-address limit then counts the client they saw. 0: the socket's peer. @default 0
   */
  readonly trustedProxyHops?: number;
  /** Sustained `subscribe` messages per second per socket. @default 10 */
  readonly subscribeRatePerSecond?: number;
  /** `subscribe` messages a socket may send at once (e.g. a dashboard opening its panels). @default 50 */
  readonly subscribeBurst?: number;
  /** Document length cap in characters, checked before anything else. @default 16_384 */
  readonly maxQueryLength?: number;
  /** graphql-js parser token limit. @default 2_000 */
  readonly maxTokens?: number;
  /** Depth, aliases, fields, directives, introspection: checked before validation. */
  readonly documentLimits?: DocumentLimits;
  /** The built web console (`loadConsoleSite`), served under `/console/`. @default undefined (no console) */
  readonly console?: ConsoleSite;
}

/**
 * uWS copies the user data given at upgrade onto the socket object itself (`getUserData()`
 * returns the socket), so the protocol state lives directly on the socket: no wrapper objects,
 * no back-references — the fewest bytes per connection.
 */
interface SocketData extends Connection {
  protocolAccepted: boolean;
  /** Remote IP as text, for the per-address connection count. */
  address: string;
}
type Socket = WebSocket<SocketData>;
/** uWS `send` status: written to the kernel at once (anything else means bytes are waiting in user space). */
const SEND_SUCCESS = 1;
/** uWS `send` status: the frame was dropped because the socket is past maxBackpressure. */
const SEND_DROPPED = 2;
/** WebSocket "try again later": the slow-consumer close. graphql-ws clients treat it as retryable. */
const CLOSE_SLOW_CONSUMER = 1013;
const SLOW_CONSUMER_REASON = 'slow consumer: reconnect and resume from your last position';
/** The protocol core sees a `Connection`; here every connection is the uWS socket carrying it. */
const asSocket = (conn: Connection): Socket => conn as unknown as Socket;

export interface GatewayStats {
  connections: number;
  subscriptions: number;
  groups: number;
  channels: number;
  confirmedChannels: number;
  eventsIn: number;
  backfilled: number;
  resumes: number;
  resumesNotRecovered: number;
  replayed: number;
  duplicates: number;
  executions: number;
  framesOut: number;
  badEnvelopes: number;
  cachedDocuments: number;
  ready: boolean;
  draining: boolean;
}

export interface Gateway {
  /** Listens on `host:port` (port 0 picks a free one); resolves the bound port. */
  listen(port: number, host?: string): Promise<number>;
  /** True when Redis is connected and the gateway is not draining. */
  isReady(): boolean;
  stats(): GatewayStats;
  /**
   * Graceful shutdown: readiness fails, the listener closes, sockets close with 1001 (going away)
   * in batches so clients reconnect elsewhere and resume.
   */
  drain(): Promise<void>;
}

/** Builds the uWS HTTP + WebSocket server around the protocol core and the fan-out engine. */
export function createGateway(deps: GatewayDeps, options: GatewayOptions = {}): Gateway {
  const { schema, redis, historyRedis, logger, authenticator = createAuthenticator({ mode: 'anonymous' }), metrics, contextFactories } = deps;
  const {
    path = '/graphql',
    channelPrefix = 'ws',
    historyPrefix = 'wsh',
    maxPayloadBytes = 65_536, // 64 KiB
    maxBackpressureBytes = 1_048_576, // 1 MiB
    idleTimeoutSeconds = 60,
    connectionInitWaitTimeoutMs = 3_000, // 3 seconds
    maxSubscriptionsPerConnection = 100,
    drainBatchSize = 500,
    debugEndpoints = false,
    allowedOrigins = ['*'],
    maxConnectionsPerAddress = 1_000,
    trustedProxyHops = 0,
    subscribeRatePerSecond = 10,
    subscribeBurst = 50,
    maxQueryLength = 16_384,
    maxTokens = 2_000,
    documentLimits,
  } = options;
  const originAllowed = createOriginCheck(allowedOrigins);
  const subscribeRateLimiter = createRateLimiter({ ratePerSecond: subscribeRatePerSecond, burst: subscribeBurst });
  /** Open sockets per remote address (only addresses with at least one). */
  const connectionsByAddress = new Map<string, number>();

  const sockets = new Set<Socket>();
  let draining = false;
  let listenSocket: us_listen_socket | undefined;

  // `conn` is the uWS socket (see SocketData). A closed uWS socket throws on use: check first.
  function send(conn: Connection, frame: string): void {
    // Status 2 (dropped) happens only past maxBackpressure, where uWS closes the socket itself.
    if (!conn.closed) asSocket(conn).send(frame, false);
  }
  function close(conn: Connection, code: number, reason: string): void {
    if (!conn.closed) asSocket(conn).end(code, reason);
  }

  /**
   * Slow-consumer policy: once more than maxBackpressureBytes wait in a socket's buffer, the socket
   * is closed with 1013 and a resume hint (no frame after that is sent). Memory stays bounded, and
   * the client loses nothing: it resumes from its last position on reconnect.
   */
  function closeIfSlow(ws: Socket, conn: Connection, status: number): void {
    // Checked only when a send could not go straight to the kernel: the common case costs nothing.
    if (status === SEND_SUCCESS || (status !== SEND_DROPPED && ws.getBufferedAmount() <= maxBackpressureBytes)) return;
    metrics?.series.slowConsumers.inc();
    conn.closed = true; // no more sends into a socket that is going away
    ws.end(CLOSE_SLOW_CONSUMER, SLOW_CONSUMER_REASON);
  }

  // The cork callback reads these instead of closing over them: no closure allocated per socket per flush.
  let corkSocket: Socket | undefined;
  let corkHead = '';
  let corkPayloads: readonly string[] = [];
  const writeCorked = (): void => {
    const ws = corkSocket as Socket;
    const conn = ws.getUserData();
    for (let i = 0; i < corkPayloads.length && !conn.closed; i++) {
      closeIfSlow(ws, conn, ws.send(corkHead + corkPayloads[i] + '}', false));
    }
  };
  function sendFrames(conn: Connection, head: string, payloads: readonly string[]): void {
    if (conn.closed) return;
    if (payloads.length === 1) {
      const ws = asSocket(conn);
      closeIfSlow(ws, conn, ws.send(head + payloads[0] + '}', false));
      return;
    }
    corkSocket = asSocket(conn);
    corkHead = head;
    corkPayloads = payloads;
    corkSocket.cork(writeCorked);
    corkSocket = undefined;
  }

  const compiler = createOperationCompiler(schema, {
    channelPrefix,
    maxQueryLength,
    maxTokens,
    ...(documentLimits ? { documentLimits } : {}),
  });
  const fanout = createFanout<Connection>({
    schema,
    redis,
    logger,
    sendFrames,
    close,
    bufferedBytes: (conn) => (conn.closed ? 0 : asSocket(conn).getBufferedAmount()),
    replayHighWaterBytes: Math.floor(maxBackpressureBytes / 4),
    ...(historyRedis ? { history: createHistoryReader(historyRedis, historyPrefix) } : {}),
    ...(metrics ? { metrics: metrics.series } : {}),
    ...(contextFactories ? { contextFactories } : {}),
  });
  metrics?.series.observeGauges(() => {
    const f = fanout.stats();
    return { connections: sockets.size, subscriptions: f.subscribers, operations: f.groups };
  });
  const protocol = createProtocol(
    { schema, compiler, fanout, send, close, authenticator, subscribeRateLimiter },
    { connectionInitWaitTimeoutMs, maxSubscriptionsPerConnection },
  );
  // One sweep for all sockets instead of a timer per socket: a number compare per socket per second.
  // Anonymous connections never expire, so an anonymous gateway has no sweep at all.
  const expirySweep =
    authenticator.mode === 'jwt'
      ? setInterval(() => protocol.closeExpired(sockets.values() as Iterable<Connection>, Date.now()), 1_000)
      : undefined;
  expirySweep?.unref();

  const app: TemplatedApp = uWS.App();

  app.ws<SocketData>(path, {
    maxPayloadLength: maxPayloadBytes,
    // uWS drops any frame past its own limit, the close frame included (the client would see 1006, no
    // hint). Ours is enforced in closeIfSlow; uWS's sits above it so the close frame always fits.
    // A slow socket holds at most twice our limit plus one frame.
    maxBackpressure: maxBackpressureBytes * 2 + 65_536,
    // Off: uWS would close with 1006 and no reason; sendFrames closes with 1013 and a resume hint instead.
    closeOnBackpressureLimit: 0,
    idleTimeout: idleTimeoutSeconds,
    sendPingsAutomatically: true,

    upgrade(res, req, context) {
      // uWS request objects are stack-allocated: read every header before returning.
      const key = req.getHeader('sec-websocket-key');
      const protocols = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const origin = req.getHeader('origin');
      const forwardedFor = trustedProxyHops > 0 ? req.getHeader('x-forwarded-for') : '';
      if (draining) {
        res.writeStatus('503 Service Unavailable').end('draining: reconnect to another gateway');
        return;
      }
      if (!originAllowed(origin === '' ? undefined : origin)) {
        res.writeStatus('403 Forbidden').end(`origin ${origin} is not allowed (GATEWAY_ALLOWED_ORIGINS)`);
        return;
      }
      const address = clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString(), forwardedFor, trustedProxyHops);
      const open = connectionsByAddress.get(address) ?? 0;
      if (open >= maxConnectionsPerAddress) {
        res.writeStatus('429 Too Many Requests').end(`too many connections from ${address}: the limit is ${maxConnectionsPerAddress}`);
        return;
      }
      const accepted = protocols.split(',').some((p) => p.trim() === GRAPHQL_TRANSPORT_WS_PROTOCOL);
      const data: SocketData = { ...createConnection(subscribeRateLimiter), protocolAccepted: accepted, address };
      res.upgrade(data, key, accepted ? GRAPHQL_TRANSPORT_WS_PROTOCOL : '', extensions, context);
    },

    open(ws) {
      if (!ws.getUserData().protocolAccepted) {
        // Same rule as graphql-ws: accept the upgrade, then close with a protocol code the client understands.
        ws.end(CloseCode.SubprotocolNotAcceptable, `Subprotocol not acceptable: use ${GRAPHQL_TRANSPORT_WS_PROTOCOL}`);
        return;
      }
      sockets.add(ws);
      const { address } = ws.getUserData();
      connectionsByAddress.set(address, (connectionsByAddress.get(address) ?? 0) + 1);
      protocol.open(ws.getUserData());
    },

    message(ws, message, isBinary) {
      const conn = ws.getUserData();
      if (isBinary) {
        close(conn, CloseCode.BadRequest, 'Binary frames are not part of graphql-transport-ws; send text');
        return;
      }
      // The ArrayBuffer is only valid during this callback: decode it now.
      protocol.message(conn, Buffer.from(message).toString('utf8'));
    },

    close(ws) {
      const conn = ws.getUserData();
      conn.closed = true; // the socket is invalid from here on; sends become no-ops
      if (!sockets.delete(ws)) return;
      const left = (connectionsByAddress.get(conn.address) ?? 1) - 1;
      if (left > 0) connectionsByAddress.set(conn.address, left);
      else connectionsByAddress.delete(conn.address);
      protocol.closed(conn);
    },
  });

  app.get('/healthz', (res) => {
    respond(res, '200 OK', 'text/plain', 'ok');
  });
  app.get('/readyz', (res) => {
    const ready = isReady();
    respond(res, ready ? '200 OK' : '503 Service Unavailable', 'text/plain', ready ? 'ready' : notReadyReason());
  });
  app.get('/stats', (res) => {
    respond(res, '200 OK', 'application/json', JSON.stringify(stats()));
  });
  if (metrics) {
    app.get('/metrics', (res) => {
      // The registry answers asynchronously: uWS requires an abort handler before the handler returns.
      let aborted = false;
      res.onAborted(() => (aborted = true));
      metrics.registry.metrics().then(
        (text) => {
          if (!aborted) respond(res, '200 OK', metrics.registry.contentType, text);
        },
        (err: unknown) => {
          if (!aborted) respond(res, '500 Internal Server Error', 'text/plain', String(err));
        },
      );
    });
  }
  if (debugEndpoints) {
    app.get('/debug/memory', (res, req) => {
      // Read the query before anything else: uWS request objects die when the handler returns.
      const forceGc = req.getQuery('gc') === '1';
      const gc = (globalThis as { gc?: () => void }).gc;
      if (forceGc && gc) {
        gc();
        gc();
      }
      const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
      respond(res, '200 OK', 'application/json', JSON.stringify({ rss, heapUsed, heapTotal, external, arrayBuffers, gc: forceGc && gc !== undefined }));
    });
  }
  if (options.console) {
    registerConsoleRoutes(app, options.console, { graphqlPath: path, metricsPath: metrics ? '/metrics' : null, sdl: schema.sdl });
  }
  app.any('/*', (res) => {
    respond(res, '404 Not Found', 'text/plain', `not found: WebSocket endpoint is ${path}`);
  });

  function isReady(): boolean {
    return !draining && redis.status === 'ready';
  }
  function notReadyReason(): string {
    return draining ? 'draining' : `redis ${redis.status}`;
  }

  function stats(): GatewayStats {
    const f = fanout.stats();
    return {
      connections: sockets.size,
      subscriptions: f.subscribers,
      groups: f.groups,
      channels: f.channels,
      confirmedChannels: f.confirmedChannels,
      eventsIn: f.eventsIn,
      backfilled: f.backfilled,
      resumes: f.resumes,
      resumesNotRecovered: f.resumesNotRecovered,
      replayed: f.replayed,
      duplicates: f.duplicates,
      executions: f.executions,
      framesOut: f.framesOut,
      badEnvelopes: f.badEnvelopes,
      cachedDocuments: compiler.cachedDocuments,
      ready: isReady(),
      draining,
    };
  }

  return {
    isReady,
    stats,

    listen(port, host = '0.0.0.0') {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) {
            reject(new Error(`gateway could not listen on ${host}:${port} (port in use or not permitted)`));
            return;
          }
          listenSocket = socket;
          const bound = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
          logger.info({ host, port: bound, path }, 'gateway listening');
          resolve(bound);
        });
      });
    },

    async drain() {
      if (draining) return;
      draining = true;
      clearInterval(expirySweep);
      logger.info({ connections: sockets.size }, 'gateway draining');
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
      const all = [...sockets];
      for (let i = 0; i < all.length; i += drainBatchSize) {
        for (const ws of all.slice(i, i + drainBatchSize)) {
          if (sockets.has(ws)) ws.end(1001, 'server shutting down: reconnect');
        }
        // Yield between batches so pending I/O (and the close frames) make progress.
        await new Promise<void>((r) => setImmediate(r));
      }
      logger.info('gateway drained');
    },
  };
}

function respond(res: HttpResponse, status: string, contentType: string, body: string): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('content-type', contentType).writeHeader('cache-control', 'no-store').end(body);
  });
}
