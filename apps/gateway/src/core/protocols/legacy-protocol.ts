/**
 * The legacy `graphql-ws` subprotocol of subscriptions-transport-ws (deprecated upstream; served as a
 * migration path), transport-agnostic like protocol.ts and on the same session (auth, limits, hub):
 * a legacy subscriber is one more subscriber of its operation group, its frames the group's shared
 * payload behind a `data` head. Follows the reference server (`src/server.ts` of
 * apollographql/subscriptions-transport-ws) where its PROTOCOL.md is silent:
 *
 * - a frame that is not a JSON message object is answered `connection_error` and the socket stays;
 * - the client sends its `start`s right behind `connection_init` without waiting for the ack: they
 *   wait (bounded by the subscription limit) and run once authenticated;
 * - a `start` with an id in use replaces that subscription; `stop` is answered `complete`;
 * - `ka` right after `connection_ack`, then every keep-alive period (its client closes a socket
 *   that has sent one and then falls silent for its `timeout`, 30 s by default).
 */
import type { GraphQLFormattedError } from 'graphql';
import {
  answerWhenDecided,
  authenticateInit,
  closeExpired,
  closeWith,
  connectionClosed,
  createSessionState,
  startInitTimer,
  startSubscription,
  stopSubscription,
  subscriptionIdProblem,
  type Connection,
  type Protocol,
  type ProtocolDeps,
  type ProtocolOptions,
  type SessionState,
  type SubscribeOutcome,
  type SubscribePayload,
} from './session.js';

/** The subprotocol name (as the client offers it). */
export const LEGACY_GRAPHQL_WS_PROTOCOL = 'graphql-ws';

const KEEP_ALIVE = '{"type":"ka"}';
const KNOWN = 'connection_init, start, stop, connection_terminate';

/** A decoded client message: its type, and id and payload when it has them. */
interface LegacyMessage {
  readonly type: string;
  readonly id: unknown;
  readonly payload: unknown;
}

export function createLegacyProtocol<C extends Connection<C>>(deps: ProtocolDeps<C>, options: ProtocolOptions): Protocol<C> {
  const state = createSessionState(deps, options);
  return {
    open: (conn) => startInitTimer(state, conn),
    message: (conn, data) => receiveMessage(state, conn, data),
    closeExpired: (conns, nowMs) => closeExpired(state, conns, nowMs),
    closed: (conn) => connectionClosed(state, conn),
    keepAlive: (conns) => {
      for (const conn of conns) if (conn.acknowledged && !conn.closed) state.writer.send(conn, KEEP_ALIVE);
    },
  };
}

/** Parses a frame into a message, or says what is wrong with it (external input: never trusted). */
export function parseLegacyMessage(data: string): LegacyMessage | string {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return 'Message must be JSON: a subscriptions-transport-ws message object { type, id?, payload? }';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'Message must be a JSON object { type, id?, payload? }';
  const { type, id, payload } = value as Record<string, unknown>;
  if (typeof type !== 'string') return `Message "type" must be a string (one of ${KNOWN})`;
  return { type, id, payload };
}

function receiveMessage<C extends Connection<C>>(state: SessionState<C>, conn: C, data: string): void {
  const message = parseLegacyMessage(data);
  if (typeof message === 'string') return sendConnectionError(state, conn, message);
  switch (message.type) {
    case 'connection_init':
      return onConnectionInit(state, conn, message.payload);
    case 'start':
      return onStart(state, conn, message);
    case 'stop':
      return onStop(state, conn, message.id);
    case 'connection_terminate':
      return closeWith(state, conn, 1000, 'connection_terminate');
    default:
      return sendError(state, conn, message.id, [{ message: `Unexpected message of type ${JSON.stringify(message.type.slice(0, 40))}: graphql-ws (subscriptions-transport-ws) clients send ${KNOWN}` }]);
  }
}

function onConnectionInit<C extends Connection<C>>(state: SessionState<C>, conn: C, payload: unknown): void {
  if (conn.initReceived) return sendConnectionError(state, conn, 'Too many initialisation requests: connection_init was already received');
  authenticateInit(state, conn, payload ?? undefined, (outcome) => {
    const waiting = conn.waiting ?? [];
    conn.waiting = undefined;
    if (!outcome.ok) {
      // The reference server says why in connection_error, then closes; the close code is ours (4401/4403).
      sendConnectionError(state, conn, outcome.reason);
      return closeWith(state, conn, outcome.code, outcome.reason);
    }
    state.writer.send(conn, '{"type":"connection_ack"}');
    state.writer.send(conn, KEEP_ALIVE);
    for (const { id, payload: start } of waiting) subscribe(state, conn, id, start);
  });
}

function onStart<C extends Connection<C>>(state: SessionState<C>, conn: C, message: LegacyMessage): void {
  const { id } = message;
  // Refused before it is stored or echoed: an id may otherwise fill the whole frame.
  const badId = subscriptionIdProblem(state, id);
  if (badId !== undefined) return sendError(state, conn, undefined, [{ message: `Invalid start: ${badId}` }]);
  const payload = startPayload(message.payload);
  if (typeof payload === 'string') return sendError(state, conn, id, [{ message: payload }]);
  if (!conn.initReceived) return sendError(state, conn, id, [{ message: 'Send connection_init before start' }]);
  if (conn.acknowledged) return subscribe(state, conn, id as string, payload);
  // Authenticating: the client did not wait for the ack. Bounded like the subscriptions themselves.
  const waiting = (conn.waiting ??= []);
  if (waiting.length >= state.maxSubscriptionsPerConnection) {
    return sendError(state, conn, id, [{ message: `Too many subscriptions on this connection: the limit is ${state.maxSubscriptionsPerConnection}; complete one first.` }]);
  }
  waiting.push({ id: id as string, payload });
}

/** Validates a start payload's shape (the compiler checks the rest, with graphql-transport-ws's messages). */
function startPayload(payload: unknown): SubscribePayload | string {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return 'start "payload" must be an object { query, variables?, operationName?, extensions? }';
  const { query, variables, operationName, extensions } = payload as Record<string, unknown>;
  if (typeof query !== 'string') return 'start "payload.query" must be the GraphQL document as a string';
  const objectOrNull = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'object' && !Array.isArray(v));
  if (!objectOrNull(variables)) return 'start "payload.variables" must be an object';
  if (!objectOrNull(extensions)) return 'start "payload.extensions" must be an object';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return 'start "payload.operationName" must be a string';
  return payload as SubscribePayload;
}

function subscribe<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string, payload: SubscribePayload): void {
  if (conn.closed || !conn.access) return;
  // The reference server replaces a subscription whose id is started again.
  stopSubscription(state, conn, id);
  answer(state, conn, id, startSubscription(state, conn, id, payload, 'data'));
}

function answer<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string, outcome: SubscribeOutcome | undefined): void {
  answerWhenDecided(state, conn, outcome, {
    errors: (errors) => sendError(state, conn, id, errors),
    result: (result) => {
      state.writer.send(conn, JSON.stringify({ id, type: 'data', payload: result }));
      sendComplete(state, conn, id);
    },
  });
}

/** Ends a subscription, or forgets a start still waiting for the ack; either way answered `complete`. */
function onStop<C extends Connection<C>>(state: SessionState<C>, conn: C, id: unknown): void {
  if (typeof id !== 'string') return;
  const waiting = conn.waiting;
  const before = waiting?.length ?? 0;
  if (waiting) conn.waiting = waiting.filter((start) => start.id !== id);
  if (stopSubscription(state, conn, id) || (conn.waiting?.length ?? 0) < before) sendComplete(state, conn, id);
}

function sendComplete<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string): void {
  state.writer.send(conn, JSON.stringify({ id, type: 'complete' }));
}

/** An operation's error: the client hands the array to that operation's observer. */
function sendError<C extends Connection<C>>(state: SessionState<C>, conn: C, id: unknown, errors: readonly GraphQLFormattedError[]): void {
  state.writer.send(conn, JSON.stringify({ ...(typeof id === 'string' ? { id } : {}), type: 'error', payload: errors }));
}

/** The connection's error (a malformed frame, a refused init): the client hands it to its connection callback. */
function sendConnectionError<C extends Connection<C>>(state: SessionState<C>, conn: C, message: string): void {
  state.writer.send(conn, JSON.stringify({ type: 'connection_error', payload: { message } }));
}
