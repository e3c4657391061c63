import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket, us_socket_context_t } from 'uWebSockets.js';
import { CloseCode } from 'graphql-ws';
import type { Logger } from '@wirestream/telemetry';
import { createConnectionState, type Protocol } from '../core/protocol.js';
import type { RateLimiter } from '../core/rate-limit.js';
import { chooseSubprotocol, SUBPROTOCOLS } from '../core/subprotocols.js';
import type { Admission } from './admission.js';
import type { BackpressureLimits } from './backpressure.js';
import { uwsCompression, type CompressionMode } from './compression.js';
import { socketOf, type Socket, type SocketData } from './socket.js';

export interface UwsServerDeps {
  readonly protocol: Protocol<Socket>;
  readonly admission: Admission;
  /** Gives each new connection its full subscribe bucket. */
  readonly subscribeRateLimiter: RateLimiter;
  readonly logger: Logger;
}

export interface UwsServerOptions {
  /** WebSocket path. */
  readonly path: string;
  /** Largest accepted frame; a larger one closes the socket (uWS enforces it). */
  readonly maxPayloadBytes: number;
  readonly backpressure: BackpressureLimits;
  /** Seconds without traffic before uWS pings, then closes a silent socket. */
  readonly idleTimeoutSeconds: number;
  /** Sockets closed per event-loop turn while draining, so a drain does not stall the loop. */
  readonly drainBatchSize: number;
  /** Close sockets whose token expired (jwt mode): one sweep a second for all sockets. */
  readonly sweepExpired: boolean;
  /** permessage-deflate offered to clients (compression.ts). */
  readonly compression: CompressionMode;
}

/** The uWS app with the graphql-transport-ws endpoint; HTTP routes are added to `app` by the caller. */
export interface UwsServer {
  readonly app: TemplatedApp;
  /** Open sockets (those that passed the subprotocol check). */
  connections(): number;
  isDraining(): boolean;
  /** Listens on `host:port` (port 0 picks a free one); resolves the bound port. */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, closes the listener, closes every socket with 1001 in batches. */
  drain(): Promise<void>;
}

interface ServerState extends UwsServerDeps, UwsServerOptions {
  readonly sockets: Set<Socket>;
  draining: boolean;
  listenSocket: us_listen_socket | undefined;
  expirySweep: NodeJS.Timeout | undefined;
}

export function createUwsServer(deps: UwsServerDeps, options: UwsServerOptions): UwsServer {
  const state: ServerState = { ...deps, ...options, sockets: new Set(), draining: false, listenSocket: undefined, expirySweep: undefined };
  const app = uWS.App();
  app.ws<SocketData>(options.path, {
    maxPayloadLength: options.maxPayloadBytes,
    maxBackpressure: options.backpressure.uwsMaxBackpressure,
    // Off: uWS would close with 1006 and no reason; the writer closes with 1013 and a resume hint instead.
    closeOnBackpressureLimit: 0,
    idleTimeout: options.idleTimeoutSeconds,
    compression: uwsCompression(options.compression),
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => onUpgrade(state, res, req, context),
    open: (ws) => onOpen(state, ws),
    message: (ws, message, isBinary) => onMessage(state, ws, message, isBinary),
    close: (ws) => onClose(state, ws),
  });
  if (options.sweepExpired) {
    // One sweep for all sockets instead of a timer per socket: a number compare per socket per second.
    // Anonymous connections never expire, so an anonymous gateway has no sweep at all.
    state.expirySweep = setInterval(() => state.protocol.closeExpired(state.sockets, Date.now()), 1_000);
    state.expirySweep.unref();
  }
  return {
    app,
    connections: () => state.sockets.size,
    isDraining: () => state.draining,
    listen: (port, host) => listen(state, app, port, host),
    drain: () => drain(state),
  };
}

function onUpgrade(state: ServerState, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
  // uWS request objects are stack-allocated: read every header before returning.
  const key = req.getHeader('sec-websocket-key');
  const protocols = req.getHeader('sec-websocket-protocol');
  const extensions = req.getHeader('sec-websocket-extensions');
  const origin = req.getHeader('origin');
  const forwardedFor = state.admission.readsForwardedFor ? req.getHeader('x-forwarded-for') : '';
  if (state.draining) {
    res.writeStatus('503 Service Unavailable').end('draining: reconnect to another gateway');
    return;
  }
  const admitted = state.admission.admit({ origin, remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(), forwardedFor });
  if (!admitted.ok) {
    res.writeStatus(admitted.status).end(admitted.message);
    return;
  }
  const choice = chooseSubprotocol(protocols);
  if (!choice.ok) {
    res.writeStatus('400 Bad Request').end(choice.message);
    return;
  }
  const accepted = choice.protocol !== undefined;
  const data: SocketData = { ...createConnectionState<Socket>(state.subscribeRateLimiter), protocolAccepted: accepted, address: admitted.address };
  res.upgrade(data, key, choice.protocol ?? '', extensions, context);
}

function onOpen(state: ServerState, ws: WebSocket<SocketData>): void {
  const socket = socketOf(ws);
  if (!socket.protocolAccepted) {
    // Same rule as graphql-ws: accept the upgrade, then close with a protocol code the client understands.
    ws.end(CloseCode.SubprotocolNotAcceptable, `Subprotocol not acceptable: use ${SUBPROTOCOLS.join(' or ')}`);
    return;
  }
  state.sockets.add(socket);
  state.admission.opened(socket.address);
  state.protocol.open(socket);
}

function onMessage(state: ServerState, ws: WebSocket<SocketData>, message: ArrayBuffer, isBinary: boolean): void {
  const socket = socketOf(ws);
  if (isBinary) {
    if (!socket.closed) ws.end(CloseCode.BadRequest, 'Binary frames are not part of graphql-transport-ws; send text');
    return;
  }
  // The ArrayBuffer is only valid during this callback: decode it now.
  state.protocol.message(socket, Buffer.from(message).toString('utf8'));
}

function onClose(state: ServerState, ws: WebSocket<SocketData>): void {
  const socket = socketOf(ws);
  socket.closed = true; // the socket is invalid from here on; sends become no-ops
  if (!state.sockets.delete(socket)) return;
  state.admission.closed(socket.address);
  state.protocol.closed(socket);
}

function listen(state: ServerState, app: TemplatedApp, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(new Error(`gateway could not listen on ${host}:${port} (port in use or not permitted)`));
        return;
      }
      state.listenSocket = socket;
      const bound = uWS.us_socket_local_port(socket);
      state.logger.info({ host, port: bound, path: state.path }, 'gateway listening');
      resolve(bound);
    });
  });
}

async function drain(state: ServerState): Promise<void> {
  if (state.draining) return;
  state.draining = true;
  clearInterval(state.expirySweep);
  state.logger.info({ connections: state.sockets.size }, 'gateway draining');
  if (state.listenSocket) uWS.us_listen_socket_close(state.listenSocket);
  state.listenSocket = undefined;
  const all = [...state.sockets];
  for (let i = 0; i < all.length; i += state.drainBatchSize) {
    for (const ws of all.slice(i, i + state.drainBatchSize)) {
      if (state.sockets.has(ws)) ws.end(1001, 'server shutting down: reconnect');
    }
    // Yield between batches so pending I/O (and the close frames) make progress.
    await new Promise<void>((r) => setImmediate(r));
  }
  state.logger.info('gateway drained');
}
