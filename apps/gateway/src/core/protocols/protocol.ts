/**
 * The graphql-transport-ws protocol, transport-agnostic (graphql-ws's `makeServer` is the model):
 * a transport adapter feeds it frames and gives it a {@link ConnectionWriter}. Message validation
 * is graphql-ws's own (`parseMessage`), so errors name the offending field exactly as the
 * reference server does. What it shares with the legacy protocol (state, auth, limits, the hub) is
 * in session.ts.
 */
import type { GraphQLFormattedError } from 'graphql';
import { CloseCode, MessageType, parseMessage, type Message } from 'graphql-ws';
import { toError } from '@wirestream/telemetry';
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
} from './session.js';

export { createConnectionState, type Connection, type Protocol, type ProtocolDeps, type ProtocolOptions } from './session.js';

export function createProtocol<C extends Connection<C>>(deps: ProtocolDeps<C>, options: ProtocolOptions): Protocol<C> {
  const state = createSessionState(deps, options);
  return {
    open: (conn) => startInitTimer(state, conn),
    message: (conn, data) => receiveMessage(state, conn, data),
    closeExpired: (conns, nowMs) => closeExpired(state, conns, nowMs),
    closed: (conn) => connectionClosed(state, conn),
  };
}

function receiveMessage<C extends Connection<C>>(state: SessionState<C>, conn: C, data: string): void {
  let message: Message;
  try {
    message = parseMessage(data);
  } catch (err) {
    return closeWith(state, conn, CloseCode.BadRequest, toError(err).message || 'Invalid message received');
  }
  switch (message.type) {
    case MessageType.ConnectionInit:
      if (conn.initReceived) return closeWith(state, conn, CloseCode.TooManyInitialisationRequests, 'Too many initialisation requests');
      return authenticateInit(state, conn, message.payload, (outcome) => {
        if (outcome.ok) state.writer.send(conn, '{"type":"connection_ack"}');
        else closeWith(state, conn, outcome.code, outcome.reason);
      });
    case MessageType.Ping:
      return state.writer.send(conn, message.payload ? JSON.stringify({ type: MessageType.Pong, payload: message.payload }) : '{"type":"pong"}');
    case MessageType.Pong:
      return;
    case MessageType.Subscribe:
      return onSubscribe(state, conn, message);
    case MessageType.Complete:
      stopSubscription(state, conn, message.id);
      return;
    default:
      return closeWith(state, conn, CloseCode.BadRequest, `Unexpected message of type ${message.type} received`);
  }
}

function onSubscribe<C extends Connection<C>>(state: SessionState<C>, conn: C, message: Extract<Message, { type: MessageType.Subscribe }>): void {
  const { id, payload } = message;
  if (!conn.acknowledged || !conn.access) return closeWith(state, conn, CloseCode.Unauthorized, 'Unauthorized');
  // Refused before it is stored or echoed: an id may otherwise fill the whole frame.
  const badId = subscriptionIdProblem(state, id);
  if (badId !== undefined) return closeWith(state, conn, CloseCode.BadRequest, `Invalid subscribe: ${badId}`);
  if (conn.subscriptions?.has(id)) return closeWith(state, conn, CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
  answer(state, conn, id, startSubscription(state, conn, id, payload, 'next'));
}

function answer<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string, outcome: SubscribeOutcome | undefined): void {
  answerWhenDecided(state, conn, outcome, {
    errors: (errors) => sendError(state, conn, id, errors),
    result: (result) => {
      state.writer.send(conn, JSON.stringify({ id, type: MessageType.Next, payload: result }));
      state.writer.send(conn, JSON.stringify({ id, type: MessageType.Complete }));
    },
  });
}

function sendError<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string, errors: readonly GraphQLFormattedError[]): void {
  state.writer.send(conn, JSON.stringify({ id, type: MessageType.Error, payload: errors }));
}
