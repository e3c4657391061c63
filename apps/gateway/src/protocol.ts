import { execute, type GraphQLFormattedError } from 'graphql';
import { CloseCode, MessageType, parseMessage, type Message } from 'graphql-ws';
import type { WirestreamSchema } from '@wirestream/schema';
import type { Authenticator, Principal } from './auth.js';
import type { Fanout, Subscriber } from './fanout.js';
import { parseResumeRequest } from './history.js';
import type { AccessScope, OperationCompiler } from './operations.js';
import type { RateLimiter } from './rate-limit.js';

/**
 * Per-socket state of the graphql-transport-ws protocol. Kept deliberately small: it is paid
 * once per connected socket, and sockets are what a gateway holds by the ten thousand.
 */
export interface Connection {
  initReceived: boolean;
  acknowledged: boolean;
  /** Live subscriptions by client-chosen id; created on the first subscribe (idle sockets pay nothing). */
  subscriptions: Map<string, Subscriber<Connection>> | undefined;
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

export interface ProtocolDeps {
  readonly schema: WirestreamSchema;
  readonly compiler: OperationCompiler;
  readonly fanout: Fanout<Connection>;
  /** Writes one text frame. */
  readonly send: (conn: Connection, frame: string) => void;
  /** Closes the socket with a WebSocket close code and a short reason. */
  readonly close: (conn: Connection, code: number, reason: string) => void;
  /** Verifies `connection_init` and decides scopes. */
  readonly authenticator: Authenticator;
  /** Bounds the rate of `subscribe` messages per connection. */
  readonly subscribeRateLimiter: RateLimiter;
}

export interface ProtocolOptions {
  /** A socket that sends no `connection_init` in time is closed with 4408. @default 3_000 (3 s) */
  readonly connectionInitWaitTimeoutMs?: number;
  /** Subscriptions one socket may hold at once. @default 100 */
  readonly maxSubscriptionsPerConnection?: number;
}

/** Distinct scope sets whose AccessScope is shared between connections. */
const MAX_SHARED_SCOPES = 1_000;

/** WebSocket close reasons are limited to 123 bytes of UTF-8 (RFC 6455 §5.5). */
const MAX_CLOSE_REASON_BYTES = 123;

/**
 * The graphql-transport-ws protocol, transport-agnostic: the uWS adapter feeds it frames and
 * gives it `send`/`close`. Message validation is graphql-ws's own (`parseMessage`), so errors
 * name the offending field exactly as the reference server does.
 */
export function createProtocol(deps: ProtocolDeps, options: ProtocolOptions = {}) {
  const { schema, compiler, fanout, send, close, authenticator, subscribeRateLimiter } = deps;
  const { connectionInitWaitTimeoutMs = 3_000, maxSubscriptionsPerConnection = 100 } = options;

  // Connections with equal scopes share one AccessScope: nothing per socket but a reference.
  const accessByScope = new Map<string, AccessScope>();
  function accessFor(principal: Principal): AccessScope {
    let access = accessByScope.get(principal.scopeKey);
    if (!access) {
      access = {
        key: principal.scopeKey,
        authorize(route, args) {
          const missing = authenticator.authorizeField(principal, route);
          if (missing !== undefined) return { ok: false, message: missing };
          const bound = authenticator.bindTenant(principal, route, args);
          return bound.ok ? { ok: true, args: bound.args } : { ok: false, message: bound.message };
        },
      };
      // Bounded: past the cap new scopes still work, they are just not shared.
      if (accessByScope.size < MAX_SHARED_SCOPES) accessByScope.set(principal.scopeKey, access);
    }
    return access;
  }

  function onConnectionInit(conn: Connection, payload: unknown): void {
    conn.initReceived = true;
    if (conn.initTimer) clearTimeout(conn.initTimer);
    conn.initTimer = undefined;
    authenticator.authenticate(payload).then(
      (result) => {
        if (conn.closed) return;
        if (!result.ok) return closeWith(conn, CloseCode.Forbidden, result.reason);
        conn.access = accessFor(result.principal);
        conn.expiresAtMs = result.principal.expiresAtMs ?? 0;
        conn.acknowledged = true;
        send(conn, '{"type":"connection_ack"}');
      },
      () => closeWith(conn, CloseCode.InternalServerError, 'Internal error while authenticating'),
    );
  }

  function closeWith(conn: Connection, code: number, reason: string): void {
    if (conn.closed) return;
    close(conn, code, truncateReason(reason));
  }

  function sendError(conn: Connection, id: string, errors: readonly GraphQLFormattedError[]): void {
    send(conn, JSON.stringify({ id, type: MessageType.Error, payload: errors }));
  }

  function onSubscribe(conn: Connection, message: Extract<Message, { type: MessageType.Subscribe }>): void {
    const { id, payload } = message;
    if (!conn.acknowledged || !conn.access) return closeWith(conn, CloseCode.Unauthorized, 'Unauthorized');
    const subscriptions = (conn.subscriptions ??= new Map());
    if (subscriptions.has(id)) {
      return closeWith(conn, CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
    }
    if (!subscribeRateLimiter.take(conn, performance.now())) {
      return sendError(conn, id, [{ message: 'Too many subscribe messages on this connection: slow down and retry.' }]);
    }
    if (subscriptions.size >= maxSubscriptionsPerConnection) {
      return sendError(conn, id, [
        { message: `Too many subscriptions on this connection: the limit is ${maxSubscriptionsPerConnection}; complete one first.` },
      ]);
    }
    const compiled = compiler.compile(payload, conn.access);
    if (!compiled.ok) return sendError(conn, id, compiled.errors);
    const { operation } = compiled;
    if (operation.kind === 'query') {
      const result = execute({
        schema: schema.schema,
        document: operation.document,
        rootValue: { topics: schema.topics },
        variableValues: operation.variables,
        operationName: operation.operationName,
      });
      // Our Query fields resolve synchronously from the schema itself.
      if (!('then' in result)) {
        send(conn, JSON.stringify({ id, type: MessageType.Next, payload: result }));
        send(conn, JSON.stringify({ id, type: MessageType.Complete }));
      }
      return;
    }
    const resume = parseResumeRequest(payload.extensions);
    if (typeof resume === 'string') return sendError(conn, id, [{ message: resume }]);
    subscriptions.set(id, fanout.subscribe(conn, id, operation, resume));
  }

  return {
    /** Call when a socket opens. */
    open(conn: Connection): void {
      conn.initTimer = setTimeout(() => {
        conn.initTimer = undefined;
        if (!conn.initReceived) closeWith(conn, CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
      }, connectionInitWaitTimeoutMs);
    },

    /** Call for each text frame. Never throws: every bad input becomes a close code or an error message. */
    message(conn: Connection, data: string): void {
      let message: Message;
      try {
        message = parseMessage(data);
      } catch (err) {
        return closeWith(conn, CloseCode.BadRequest, err instanceof Error ? err.message : 'Invalid message received');
      }
      switch (message.type) {
        case MessageType.ConnectionInit:
          if (conn.initReceived) return closeWith(conn, CloseCode.TooManyInitialisationRequests, 'Too many initialisation requests');
          return onConnectionInit(conn, message.payload);
        case MessageType.Ping:
          return send(conn, message.payload ? JSON.stringify({ type: MessageType.Pong, payload: message.payload }) : '{"type":"pong"}');
        case MessageType.Pong:
          return;
        case MessageType.Subscribe:
          return onSubscribe(conn, message);
        case MessageType.Complete: {
          const subscriber = conn.subscriptions?.get(message.id);
          if (subscriber) {
            conn.subscriptions?.delete(message.id);
            fanout.unsubscribe(subscriber);
          }
          return;
        }
        default:
          return closeWith(conn, CloseCode.BadRequest, `Unexpected message of type ${message.type} received`);
      }
    },

    /** Closes connections whose token has expired; the transport calls it periodically (cheap: a number per socket). */
    closeExpired(conns: Iterable<Connection>, nowMs: number): void {
      for (const conn of conns) {
        if (conn.expiresAtMs !== 0 && conn.expiresAtMs <= nowMs) closeWith(conn, CloseCode.Forbidden, 'Forbidden: token expired');
      }
    },

    /** Call when a socket closed, for whatever reason: releases everything it held. */
    closed(conn: Connection): void {
      conn.closed = true;
      if (conn.initTimer) clearTimeout(conn.initTimer);
      conn.initTimer = undefined;
      if (conn.subscriptions) {
        for (const subscriber of conn.subscriptions.values()) fanout.unsubscribe(subscriber);
        conn.subscriptions = undefined;
      }
    },
  };
}

export type Protocol = ReturnType<typeof createProtocol>;

/** A fresh per-socket state (a transport may copy these fields onto its own socket object). */
export function createConnection(rateLimiter: RateLimiter): Connection {
  const { tokens, lastMs } = rateLimiter.initialState();
  return {
    initReceived: false,
    acknowledged: false,
    subscriptions: undefined,
    initTimer: undefined,
    closed: false,
    access: undefined,
    expiresAtMs: 0,
    tokens,
    lastMs,
  };
}

function truncateReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  // '…' takes 3 bytes of UTF-8.
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
