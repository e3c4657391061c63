import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket, us_socket_context_t } from 'uWebSockets.js';
import { CloseCode } from 'graphql-ws';
import type { Logger } from '@wirestream/telemetry';
import { createConnectionState, type Protocol } from '../core/protocols/protocol.js';
import type { RateLimiter } from '../core/protocols/rate-limit.js';
import { chooseSubprotocol, SUBPROTOCOLS, type Subprotocol } from '../core/protocols/subprotocols.js';
import type { Admission } from './admission.js';
import type { BackpressureLimits } from './backpressure.js';
import { uwsCompression, type CompressionMode } from './compression.js';
import { socketOf, type Socket, type SocketData } from './socket.js';

export interface UwsServerDeps {
  /** The protocol of each subprotocol served; a subprotocol without one is refused at the upgrade. */
  readonly protocols: Readonly<Partial<Record<Subprotocol, Protocol<Socket>>>>;
  /** Counts client messages by protocol (`wirestream_gateway_client_messages_in_total{protocol}`), if metrics are on. */
  readonly messagesIn?: Readonly<Record<Subprotocol, { inc(): void }>> | undefined;
  readonly admission: Admission;
  /** Gives each new connection its full subscribe bucket. */
  readonly subscribeRateLimiter: RateLimiter;
  readonly logger: Logger;
  /** uWS's `drain` (the socket took some of its buffer): the writer sends what waited. */
  readonly writable: (socket: Socket) => void;
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
  /** Keep-alive period of protocols that have one (legacy `ka`), ms. */
  readonly keepAliveMs: number;
}

/** The uWS app with the graphql-transport-ws endpoint; HTTP routes are added to `app` by the caller. */
export interface UwsServer {
  readonly app: TemplatedApp;
  /** Open sockets (those that passed the subprotocol check). */
  connections(): number;
  /** Open sockets by subprotocol. */
  connectionsByProtocol(): Readonly<Record<Subprotocol, number>>;
  isDraining(): boolean;
  /** Listens on `host:port` (port 0 picks a free one); resolves the bound port. */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, closes the listener, closes every socket with 1001 in batches. */
  drain(): Promise<void>;
}

interface ServerState extends UwsServerDeps, UwsServerOptions {
  readonly sockets: Set<Socket>;
  /** Subprotocols served, in the gateway's order of preference. */
  readonly spoken: readonly Subprotocol[];
  readonly counts: Record<Subprotocol, number>;
  keepAliveTimer: NodeJS.Timeout | undefined;
  draining: boolean;
  listenSocket: us_listen_socket | undefined;
  expirySweep: NodeJS.Timeout | undefined;
}

export function createUwsServer(deps: UwsServerDeps, options: UwsServerOptions): UwsServer {
  const spoken = SUBPROTOCOLS.filter((p) => deps.protocols[p] !== undefined);
  const counts = Object.fromEntries(SUBPROTOCOLS.map((p) => [p, 0])) as Record<Subprotocol, number>;
  const state: ServerState = { ...deps, ...options, sockets: new Set(), spoken, counts, keepAliveTimer: undefined, draining: false, listenSocket: undefined, expirySweep: undefined };
  const app = uWS.App();
  app.ws<SocketData>(options.path, {
    maxPayloadLength: options.maxPayloadBytes,
    maxBackpressure: options.backpressure.uwsMaxBackpressure,
    // Off: uWS would close with 1006 and no reason; the writer closes with 1013 and a resume hint instead.
    closeOnBackpressureLimit: false,
    idleTimeout: options.idleTimeoutSeconds,
    compression: uwsCompression(options.compression),
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => onUpgrade(state, res, req, context),
    open: (ws) => onOpen(state, ws),
    message: (ws, message, isBinary) => onMessage(state, ws, message, isBinary),
    drain: (ws) => state.writable(socketOf(ws)),
    close: (ws) => onClose(state, ws),
  });
  if (options.sweepExpired) {
    // One sweep for all sockets instead of a timer per socket: a number compare per socket per second.
    // Anonymous connections never expire, so an anonymous gateway has no sweep at all.
    // (closeExpired only closes, with 4403: the same for every protocol.)
    state.expirySweep = setInterval(() => protocolOf(state, state.spoken[0] as Subprotocol).closeExpired(state.sockets, Date.now()), 1_000);
    state.expirySweep.unref();
  }
  startKeepAlive(state);
  return {
    app,
    connections: () => state.sockets.size,
    connectionsByProtocol: () => ({ ...state.counts }),
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
  const choice = chooseSubprotocol(protocols, state.spoken);
  if (!choice.ok) {
    res.writeStatus('400 Bad Request').end(choice.message);
    return;
  }
  const data: SocketData = { ...createConnectionState<Socket>(state.subscribeRateLimiter), subprotocol: choice.protocol, address: admitted.address, pending: undefined };
  res.upgrade(data, key, choice.protocol ?? '', extensions, context);
}

function onOpen(state: ServerState, ws: WebSocket<SocketData>): void {
  const socket = socketOf(ws);
  const { subprotocol } = socket;
  if (subprotocol === undefined) {
    // Same rule as graphql-ws: accept the upgrade, then close with a protocol code the client understands.
    ws.end(CloseCode.SubprotocolNotAcceptable, `Subprotocol not acceptable: use ${state.spoken.join(' or ')}`);
    return;
  }
  state.sockets.add(socket);
  state.counts[subprotocol]++;
  state.admission.opened(socket.address);
  protocolOf(state, subprotocol).open(socket);
}

function onMessage(state: ServerState, ws: WebSocket<SocketData>, message: ArrayBuffer, isBinary: boolean): void {
  const socket = socketOf(ws);
  if (isBinary) {
    if (!socket.closed) ws.end(CloseCode.BadRequest, `Binary frames are not part of ${String(socket.subprotocol)}; send text`);
    return;
  }
  const subprotocol = socket.subprotocol as Subprotocol;
  state.messagesIn?.[subprotocol].inc();
  // The ArrayBuffer is only valid during this callback: decode it now.
  protocolOf(state, subprotocol).message(socket, Buffer.from(message).toString('utf8'));
}

function onClose(state: ServerState, ws: WebSocket<SocketData>): void {
  const socket = socketOf(ws);
  socket.closed = true; // the socket is invalid from here on; sends become no-ops
  socket.pending = undefined;
  if (!state.sockets.delete(socket)) return;
  const subprotocol = socket.subprotocol as Subprotocol;
  state.counts[subprotocol]--;
  state.admission.closed(socket.address);
  protocolOf(state, subprotocol).closed(socket);
}

/** The protocol of a subprotocol the server speaks (only those are ever chosen at the upgrade). */
function protocolOf(state: ServerState, subprotocol: Subprotocol): Protocol<Socket> {
  return state.protocols[subprotocol] as Protocol<Socket>;
}

/** One timer for every socket of the protocols that send keep-alives (none per socket). */
function startKeepAlive(state: ServerState): void {
  const withKeepAlive = state.spoken.filter((p) => protocolOf(state, p).keepAlive !== undefined);
  if (withKeepAlive.length === 0) return;
  state.keepAliveTimer = setInterval(() => {
    for (const p of withKeepAlive) {
      if (state.counts[p] === 0) continue;
      const conns = [...state.sockets].filter((s) => s.subprotocol === p);
      protocolOf(state, p).keepAlive?.(conns);
    }
  }, state.keepAliveMs);
  state.keepAliveTimer.unref();
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
  clearInterval(state.keepAliveTimer);
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
