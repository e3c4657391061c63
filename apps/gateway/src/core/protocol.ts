/**
 * The graphql-transport-ws protocol, transport-agnostic (graphql-ws's `makeServer` is the model):
 * a transport adapter feeds it frames and gives it a {@link ConnectionWriter}. Message validation
 * is graphql-ws's own (`parseMessage`), so errors name the offending field exactly as the
 * reference server does.
 */
import { execute, type GraphQLFormattedError } from 'graphql';
import { CloseCode, MessageType, parseMessage, type Message } from 'graphql-ws';
import type { WirestreamSchema } from '@wirestream/schema';
import { toError, type Logger } from '@wirestream/telemetry';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { ConnectionWriter } from './connection-writer.js';
import { GATEWAY_DEFAULTS } from '../defaults.js';
import { parseDeltaRequest } from './delta.js';
import type { Hub } from './hub.js';
import type { Subscriber } from './hub-state.js';
import type { AccessScope, OperationCompiler } from './operations.js';
import type { RateLimiter } from './rate-limit.js';
import { parseResumeRequest, parseStartRequest } from './resume-request.js';

/**
 * Per-connection state of the protocol. Kept deliberately small: it is paid once per connected
 * socket, and sockets are what a gateway holds by the ten thousand. `Self` is the transport's
 * connection type (the object carrying these fields), so the hub hands the same object back.
 */
export interface Connection<Self = unknown> {
  initReceived: boolean;
  acknowledged: boolean;
  /** Live subscriptions by client-chosen id; created on the first subscribe (idle sockets pay nothing). */
  subscriptions: Map<string, Subscriber<Self>> | undefined;
  initTimer: ReturnType<typeof setTimeout> | undefined;
  closed: boolean;
  /** What this connection may subscribe to; set when `connection_init` is accepted. Shared per scope. */
  access: AccessScope | undefined;
  /** When the token expires (ms since epoch), 0 for never; swept by {@link Protocol.closeExpired}. */
  expiresAtMs: number;
  /** Token bucket for `subscribe` messages, kept as two numbers on the connection. */
  tokens: number;
  lastMs: number;
}

export interface ProtocolDeps<C extends Connection<C>> {
  readonly schema: WirestreamSchema;
  readonly compiler: OperationCompiler;
  readonly hub: Hub<C>;
  readonly writer: ConnectionWriter<C>;
  /** Verifies `connection_init` and decides scopes. */
  readonly authenticator: Authenticator;
  /** Bounds the rate of `subscribe` messages per connection. */
  readonly subscribeRateLimiter: RateLimiter;
  readonly logger: Logger;
}

export interface ProtocolOptions {
  /** A socket that sends no `connection_init` in time is closed with 4408 (ms). */
  readonly connectionInitWaitTimeoutMs: number;
  /** Subscriptions one socket may hold at once. */
  readonly maxSubscriptionsPerConnection: number;
  /** Honour `extensions.delta` of a subscribe (GATEWAY_DELTA); off, such a subscription gets full payloads. @default GATEWAY_DEFAULTS.deltaEnabled (true) */
  readonly allowDelta?: boolean;
}

export interface Protocol<C extends Connection<C>> {
  /** Call when a socket opens. */
  open(conn: C): void;
  /** Call for each text frame. Never throws: every bad input becomes a close code or an error message. */
  message(conn: C, data: string): void;
  /** Closes connections whose token has expired; the transport calls it periodically (cheap: a number per socket). */
  closeExpired(conns: Iterable<C>, nowMs: number): void;
  /** Call when a socket closed, for whatever reason: releases everything it held. */
  closed(conn: C): void;
}

interface ProtocolState<C extends Connection<C>> extends ProtocolDeps<C>, Required<ProtocolOptions> {
  /** Connections with equal scopes share one AccessScope: nothing per socket but a reference. */
  readonly accessByScope: Map<string, AccessScope>;
}

/** Distinct scope sets whose AccessScope is shared between connections. */
const MAX_SHARED_SCOPES = 1_000;
/** WebSocket close reasons are limited to 123 bytes of UTF-8 (RFC 6455 §5.5). */
const MAX_CLOSE_REASON_BYTES = 123;

export function createProtocol<C extends Connection<C>>(deps: ProtocolDeps<C>, options: ProtocolOptions): Protocol<C> {
  const { allowDelta = GATEWAY_DEFAULTS.deltaEnabled } = options;
  const state: ProtocolState<C> = { ...deps, ...options, allowDelta, accessByScope: new Map() };
  return {
    open: (conn) => openConnection(state, conn),
    message: (conn, data) => receiveMessage(state, conn, data),
    closeExpired: (conns, nowMs) => closeExpired(state, conns, nowMs),
    closed: (conn) => connectionClosed(state, conn),
  };
}

/** A fresh per-connection state (a transport copies these fields onto its own connection object). */
export function createConnectionState<Self>(rateLimiter: RateLimiter): Connection<Self> {
  const { tokens, lastMs } = rateLimiter.initialState();
  return { initReceived: false, acknowledged: false, subscriptions: undefined, initTimer: undefined, closed: false, access: undefined, expiresAtMs: 0, tokens, lastMs };
}

function openConnection<C extends Connection<C>>(state: ProtocolState<C>, conn: C): void {
  conn.initTimer = setTimeout(() => {
    conn.initTimer = undefined;
    if (!conn.initReceived) closeWith(state, conn, CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
  }, state.connectionInitWaitTimeoutMs);
}

function receiveMessage<C extends Connection<C>>(state: ProtocolState<C>, conn: C, data: string): void {
  let message: Message;
  try {
    message = parseMessage(data);
  } catch (err) {
    return closeWith(state, conn, CloseCode.BadRequest, toError(err).message || 'Invalid message received');
  }
  switch (message.type) {
    case MessageType.ConnectionInit:
      if (conn.initReceived) return closeWith(state, conn, CloseCode.TooManyInitialisationRequests, 'Too many initialisation requests');
      return onConnectionInit(state, conn, message.payload);
    case MessageType.Ping:
      return state.writer.send(conn, message.payload ? JSON.stringify({ type: MessageType.Pong, payload: message.payload }) : '{"type":"pong"}');
    case MessageType.Pong:
      return;
    case MessageType.Subscribe:
      return onSubscribe(state, conn, message);
    case MessageType.Complete:
      return onComplete(state, conn, message.id);
    default:
      return closeWith(state, conn, CloseCode.BadRequest, `Unexpected message of type ${message.type} received`);
  }
}

function onConnectionInit<C extends Connection<C>>(state: ProtocolState<C>, conn: C, payload: unknown): void {
  conn.initReceived = true;
  if (conn.initTimer) clearTimeout(conn.initTimer);
  conn.initTimer = undefined;
  state.authenticator.authenticate(payload).then(
    (result) => {
      if (conn.closed) return;
      if (!result.ok) {
        // The server's own failure (e.g. the key set could not be fetched) is the operator's to see.
        if (result.retriable) state.logger.warn({ reason: result.reason }, 'authentication could not be completed');
        return closeWith(state, conn, result.code, result.reason);
      }
      conn.access = accessFor(state, result.principal);
      conn.expiresAtMs = result.principal.expiresAtMs ?? 0;
      conn.acknowledged = true;
      state.writer.send(conn, '{"type":"connection_ack"}');
    },
    () => closeWith(state, conn, CloseCode.InternalServerError, 'Internal error while authenticating'),
  );
}

function accessFor<C extends Connection<C>>(state: ProtocolState<C>, principal: Principal): AccessScope {
  const known = state.accessByScope.get(principal.scopeKey);
  if (known) return known;
  const { authenticator } = state;
  const access: AccessScope = {
    key: principal.scopeKey,
    authorize(route, args) {
      const missing = authenticator.authorizeField(principal, route);
      if (missing !== undefined) return { ok: false, message: missing };
      const bound = authenticator.bindTenant(principal, route, args);
      return bound.ok ? { ok: true, args: bound.args } : { ok: false, message: bound.message };
    },
  };
  // Bounded: past the cap new scopes still work, they are just not shared.
  if (state.accessByScope.size < MAX_SHARED_SCOPES) state.accessByScope.set(principal.scopeKey, access);
  return access;
}

function onSubscribe<C extends Connection<C>>(state: ProtocolState<C>, conn: C, message: Extract<Message, { type: MessageType.Subscribe }>): void {
  const { id, payload } = message;
  if (!conn.acknowledged || !conn.access) return closeWith(state, conn, CloseCode.Unauthorized, 'Unauthorized');
  const subscriptions = (conn.subscriptions ??= new Map());
  if (subscriptions.has(id)) return closeWith(state, conn, CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
  if (!state.subscribeRateLimiter.take(conn, performance.now())) {
    return sendError(state, conn, id, [{ message: 'Too many subscribe messages on this connection: slow down and retry.' }]);
  }
  if (subscriptions.size >= state.maxSubscriptionsPerConnection) {
    return sendError(state, conn, id, [
      { message: `Too many subscriptions on this connection: the limit is ${state.maxSubscriptionsPerConnection}; complete one first.` },
    ]);
  }
  const compiled = state.compiler.compile(payload, conn.access);
  if (!compiled.ok) return sendError(state, conn, id, compiled.errors);
  const { operation } = compiled;
  if (operation.kind === 'query') {
    const result = execute({
      schema: state.schema.schema,
      document: operation.document,
      rootValue: { topics: state.schema.topics },
      variableValues: operation.variables,
      operationName: operation.operationName,
    });
    // Our Query fields resolve synchronously from the schema itself.
    if (!('then' in result)) {
      state.writer.send(conn, JSON.stringify({ id, type: MessageType.Next, payload: result }));
      state.writer.send(conn, JSON.stringify({ id, type: MessageType.Complete }));
    }
    return;
  }
  const resume = parseResumeRequest(payload.extensions);
  if (typeof resume === 'string') return sendError(state, conn, id, [{ message: resume }]);
  const delta = parseDeltaRequest(payload.extensions);
  if (typeof delta === 'string') return sendError(state, conn, id, [{ message: delta }]);
  const start = parseStartRequest(payload.extensions);
  if (typeof start === 'string') return sendError(state, conn, id, [{ message: start }]);
  subscriptions.set(id, state.hub.subscribe(conn, id, operation, { resume, delta: delta && state.allowDelta, start }));
}

function onComplete<C extends Connection<C>>(state: ProtocolState<C>, conn: C, id: string): void {
  const subscriber = conn.subscriptions?.get(id);
  if (!subscriber) return;
  conn.subscriptions?.delete(id);
  state.hub.unsubscribe(subscriber);
}

function closeExpired<C extends Connection<C>>(state: ProtocolState<C>, conns: Iterable<C>, nowMs: number): void {
  for (const conn of conns) {
    if (conn.expiresAtMs !== 0 && conn.expiresAtMs <= nowMs) closeWith(state, conn, CloseCode.Forbidden, 'Forbidden: token expired');
  }
}

function connectionClosed<C extends Connection<C>>(state: ProtocolState<C>, conn: C): void {
  conn.closed = true;
  if (conn.initTimer) clearTimeout(conn.initTimer);
  conn.initTimer = undefined;
  if (!conn.subscriptions) return;
  for (const subscriber of conn.subscriptions.values()) state.hub.unsubscribe(subscriber);
  conn.subscriptions = undefined;
}

function closeWith<C extends Connection<C>>(state: ProtocolState<C>, conn: C, code: number, reason: string): void {
  if (conn.closed) return;
  state.writer.close(conn, code, truncateReason(reason));
}

function sendError<C extends Connection<C>>(state: ProtocolState<C>, conn: C, id: string, errors: readonly GraphQLFormattedError[]): void {
  state.writer.send(conn, JSON.stringify({ id, type: MessageType.Error, payload: errors }));
}

function truncateReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  // '…' takes 3 bytes of UTF-8.
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
