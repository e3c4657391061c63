import { execute, type GraphQLFormattedError } from 'graphql';
import { CloseCode, MessageType, parseMessage, type Message } from 'graphql-ws';
import type { WirestreamSchema } from '@wirestream/schema';
import type { Fanout, Subscriber } from './fanout.js';
import type { OperationCompiler } from './operations.js';

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
}

export interface ProtocolDeps {
  readonly schema: WirestreamSchema;
  readonly compiler: OperationCompiler;
  readonly fanout: Fanout<Connection>;
  /** Writes one text frame. */
  readonly send: (conn: Connection, frame: string) => void;
  /** Closes the socket with a WebSocket close code and a short reason. */
  readonly close: (conn: Connection, code: number, reason: string) => void;
}

export interface ProtocolOptions {
  /** A socket that sends no `connection_init` in time is closed with 4408. @default 3_000 (3 s) */
  readonly connectionInitWaitTimeoutMs?: number;
  /** Subscriptions one socket may hold at once. @default 100 */
  readonly maxSubscriptionsPerConnection?: number;
}

/** WebSocket close reasons are limited to 123 bytes of UTF-8 (RFC 6455 §5.5). */
const MAX_CLOSE_REASON_BYTES = 123;

/**
 * The graphql-transport-ws protocol, transport-agnostic: the uWS adapter feeds it frames and
 * gives it `send`/`close`. Message validation is graphql-ws's own (`parseMessage`), so errors
 * name the offending field exactly as the reference server does.
 */
export function createProtocol(deps: ProtocolDeps, options: ProtocolOptions = {}) {
  const { schema, compiler, fanout, send, close } = deps;
  const { connectionInitWaitTimeoutMs = 3_000, maxSubscriptionsPerConnection = 100 } = options;

  function closeWith(conn: Connection, code: number, reason: string): void {
    if (conn.closed) return;
    close(conn, code, truncateReason(reason));
  }

  function sendError(conn: Connection, id: string, errors: readonly GraphQLFormattedError[]): void {
    send(conn, JSON.stringify({ id, type: MessageType.Error, payload: errors }));
  }

  function onSubscribe(conn: Connection, message: Extract<Message, { type: MessageType.Subscribe }>): void {
    const { id, payload } = message;
    if (!conn.acknowledged) return closeWith(conn, CloseCode.Unauthorized, 'Unauthorized');
    const subscriptions = (conn.subscriptions ??= new Map());
    if (subscriptions.has(id)) {
      return closeWith(conn, CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
    }
    if (subscriptions.size >= maxSubscriptionsPerConnection) {
      return sendError(conn, id, [
        { message: `Too many subscriptions on this connection: the limit is ${maxSubscriptionsPerConnection}; complete one first.` },
      ]);
    }
    const compiled = compiler.compile(payload);
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
    subscriptions.set(id, fanout.subscribe(conn, id, operation));
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
          conn.initReceived = true;
          if (conn.initTimer) clearTimeout(conn.initTimer);
          conn.initTimer = undefined;
          conn.acknowledged = true;
          return send(conn, '{"type":"connection_ack"}');
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
export function createConnection(): Connection {
  return { initReceived: false, acknowledged: false, subscriptions: undefined, initTimer: undefined, closed: false };
}

function truncateReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  // '…' takes 3 bytes of UTF-8.
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
