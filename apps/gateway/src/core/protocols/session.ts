/**
 * What both WebSocket protocols share (graphql-transport-ws in protocol.ts, the legacy
 * subscriptions-transport-ws in legacy-protocol.ts): the per-connection state, authentication and
 * access, every limit on a subscription, and how a subscription joins the hub. Each protocol only
 * decodes its frames and writes its own messages, so both have the same engine, limits and auth.
 */
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { CloseCode } from 'graphql-ws';
import type { WirestreamSchema } from '@wirestream/schema';
import type { Logger } from '@wirestream/telemetry';
import type { Authenticator, Principal } from '../../auth/authenticator.js';
import { GATEWAY_DEFAULTS } from '../../defaults.js';
import type { ConnectionWriter } from '../connection-writer.js';
import { parseConflateRequest, parseMaxRateRequest } from '../delivery/conflation.js';
import { parseDeltaRequest } from '../delivery/delta.js';
import type { Hub } from '../hub.js';
import type { Subscriber } from '../delivery/groups.js';
import type { AccessScope, CompileResult, CompiledSubscription, OperationCompiler } from '../operations/operations.js';
import type { RateLimiter } from './rate-limit.js';
import { parseResumeRequest, parseStartRequest, type ResumeRequest } from '../recovery/resume-request.js';
import { parseSinceRequest } from '../recovery/since-request.js';
import { resolveSnapshotAsk } from '../recovery/snapshot-request.js';
import { createAccessScopes } from '../operations/access-scope.js';
import { runSchemaQuery } from '../operations/query.js';
import { runSubscribeHook, type SubscribeHook } from '../operations/subscribe-hook.js';

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
  /** Who it is, kept only for a plugin's onSubscribe (otherwise undefined: nothing more per socket). */
  principal: Principal | undefined;
  /** When the token expires (ms since epoch), 0 for never; swept by {@link Protocol.closeExpired}. */
  expiresAtMs: number;
  /** Token bucket for `subscribe` messages, kept as two numbers on the connection. */
  tokens: number;
  lastMs: number;
  /**
   * Legacy protocol: `start` messages that arrived before the `connection_ack` (its client sends
   * them right behind `connection_init`, without waiting), run once authenticated. Undefined otherwise.
   */
  waiting: { readonly id: string; readonly payload: SubscribePayload }[] | undefined;
}

/** A subscribe (graphql-transport-ws) or start (legacy) payload, validated as far as its shape. */
export interface SubscribePayload {
  readonly query: string;
  readonly operationName?: string | null | undefined;
  readonly variables?: Record<string, unknown> | null | undefined;
  readonly extensions?: Record<string, unknown> | null | undefined;
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
  /** A plugin's onSubscribe (GATEWAY_PLUGIN): allow, refuse or narrow each subscribe (subscribe-hook.ts). */
  readonly onSubscribe?: SubscribeHook | undefined;
}

export interface ProtocolOptions {
  /** A socket that sends no `connection_init` in time is closed with 4408 (ms). */
  readonly connectionInitWaitTimeoutMs: number;
  /** Subscriptions one socket may hold at once. */
  readonly maxSubscriptionsPerConnection: number;
  /** Honour `extensions.delta` of a subscribe (GATEWAY_DELTA); off, such a subscription gets full payloads. @default GATEWAY_DEFAULTS.deltaEnabled (true) */
  readonly allowDelta?: boolean;
  /**
   * Longest subscription id in characters (GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH): an id is stored
   * per subscription and written into every one of its frames. @default GATEWAY_DEFAULTS.maxSubscriptionIdLength (128)
   */
  readonly maxSubscriptionIdLength?: number;
  /**
   * GATEWAY_SNAPSHOT_MAX_KEYS: entries of a whole-topic snapshot (`extensions.snapshot`), and keys a
   * subscription may ask the snapshot of. @default GATEWAY_DEFAULTS.snapshotMaxKeys (10,000)
   */
  readonly snapshotMaxKeys?: number;
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
  /** Keep-alive messages of protocols that have them (legacy `ka`); the transport calls it periodically. */
  keepAlive?(conns: Iterable<C>): void;
}

export interface SessionState<C extends Connection<C>> extends ProtocolDeps<C>, Required<ProtocolOptions> {
  /** Connections with equal scopes share one AccessScope: nothing per socket but a reference. */
  readonly accessFor: (principal: Principal) => AccessScope;
}

/** What starting a subscription came to; the protocol writes it in its own messages. */
export type SubscribeOutcome =
  | { readonly kind: 'subscribed' }
  | { readonly kind: 'errors'; readonly errors: readonly GraphQLFormattedError[] }
  /** A query (the schema's own Query fields): one result, then complete. */
  | { readonly kind: 'result'; readonly result: ExecutionResult }
  /**
   * A plugin's onSubscribe answered with a promise: the subscription is held meanwhile; `decided`
   * settles with what to write then (undefined: nothing — subscribed, or the client left meanwhile).
   */
  | { readonly kind: 'pending'; readonly decided: Promise<SubscribeOutcome | undefined> };

/** How a protocol writes a decided subscribe that is not plainly subscribed: its error frame, a query's result. */
export interface SubscribeAnswers {
  readonly errors: (errors: readonly GraphQLFormattedError[]) => void;
  readonly result: (result: ExecutionResult) => void;
}

/**
 * Writes a subscribe's outcome through the protocol's `answers`: at once, or once a plugin's
 * onSubscribe that answered with a promise decided (the subscription is held meanwhile); nothing
 * to a connection closed by then.
 */
export function answerWhenDecided<C extends Connection<C>>(state: SessionState<C>, conn: C, outcome: SubscribeOutcome | undefined, answers: SubscribeAnswers): void {
  if (outcome === undefined || conn.closed) return;
  if (outcome.kind === 'pending') {
    outcome.decided.then(
      (decided) => answerWhenDecided(state, conn, decided, answers),
      (err: unknown) => state.logger.error({ err }, 'deciding a subscription failed'),
    );
  } else if (outcome.kind === 'errors') answers.errors(outcome.errors);
  else if (outcome.kind === 'result') answers.result(outcome.result);
}

/** WebSocket close reasons are limited to 123 bytes of UTF-8 (RFC 6455 §5.5). */
const MAX_CLOSE_REASON_BYTES = 123;

export function createSessionState<C extends Connection<C>>(deps: ProtocolDeps<C>, options: ProtocolOptions): SessionState<C> {
  const {
    allowDelta = GATEWAY_DEFAULTS.deltaEnabled,
    maxSubscriptionIdLength = GATEWAY_DEFAULTS.maxSubscriptionIdLength,
    snapshotMaxKeys = GATEWAY_DEFAULTS.snapshotMaxKeys,
  } = options;
  return { ...deps, ...options, allowDelta, maxSubscriptionIdLength, snapshotMaxKeys, accessFor: createAccessScopes(deps.authenticator) };
}

/** A fresh per-connection state (a transport copies these fields onto its own connection object). */
export function createConnectionState<Self>(rateLimiter: RateLimiter): Connection<Self> {
  const { tokens, lastMs } = rateLimiter.initialState();
  return { initReceived: false, acknowledged: false, subscriptions: undefined, initTimer: undefined, closed: false, access: undefined, principal: undefined, expiresAtMs: 0, tokens, lastMs, waiting: undefined };
}

/** Starts the connection-init timer: a socket that sends no `connection_init` in time is closed with 4408. */
export function startInitTimer<C extends Connection<C>>(state: SessionState<C>, conn: C): void {
  conn.initTimer = setTimeout(() => {
    conn.initTimer = undefined;
    if (!conn.initReceived) closeWith(state, conn, CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
  }, state.connectionInitWaitTimeoutMs);
}

/** The result of `connection_init`: access granted (`ok`), or the close code and reason. */
export type InitOutcome = { readonly ok: true } | { readonly ok: false; readonly code: number; readonly reason: string };

/** Authenticates `connection_init`'s payload; on success the connection is acknowledged with its access. */
export function authenticateInit<C extends Connection<C>>(state: SessionState<C>, conn: C, payload: unknown, done: (outcome: InitOutcome) => void): void {
  conn.initReceived = true;
  if (conn.initTimer) clearTimeout(conn.initTimer);
  conn.initTimer = undefined;
  state.authenticator.authenticate(payload).then(
    (result) => {
      if (conn.closed) return;
      if (!result.ok) {
        // The server's own failure (e.g. the key set could not be fetched) is the operator's to see.
        if (result.retriable) state.logger.warn({ reason: result.reason }, 'authentication could not be completed');
        return done({ ok: false, code: result.code, reason: result.reason });
      }
      conn.access = state.accessFor(result.principal);
      if (state.onSubscribe !== undefined) conn.principal = result.principal;
      conn.expiresAtMs = result.principal.expiresAtMs ?? 0;
      conn.acknowledged = true;
      done({ ok: true });
    },
    () => done({ ok: false, code: CloseCode.InternalServerError, reason: 'Internal error while authenticating' }),
  );
}

/** Why a subscription id is refused (every protocol checks it before storing it), or undefined. */
export function subscriptionIdProblem<C extends Connection<C>>(state: SessionState<C>, id: unknown): string | undefined {
  if (typeof id !== 'string' || id.length === 0) return 'the subscription id must be a non-empty string';
  if (id.length > state.maxSubscriptionIdLength) {
    return `the subscription id has ${id.length} characters; the limit is ${state.maxSubscriptionIdLength} (GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH)`;
  }
  return undefined;
}

/**
 * Every limit, then compile, then the hub: the one way a subscription starts on either protocol.
 * The connection must be acknowledged and the id checked and free.
 */
export function startSubscription<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string, payload: SubscribePayload, frameType: 'next' | 'data'): SubscribeOutcome {
  const access = conn.access as AccessScope;
  const subscriptions = (conn.subscriptions ??= new Map());
  if (!state.subscribeRateLimiter.take(conn, performance.now())) {
    return { kind: 'errors', errors: [{ message: 'Too many subscribe messages on this connection: slow down and retry.' }] };
  }
  if (subscriptions.size >= state.maxSubscriptionsPerConnection) {
    return { kind: 'errors', errors: [{ message: `Too many subscriptions on this connection: the limit is ${state.maxSubscriptionsPerConnection}; complete one first.` }] };
  }
  let compiled: CompileResult | Promise<CompileResult> = state.compiler.compile(payload, access);
  if (compiled.ok && compiled.operation.kind === 'subscription' && state.onSubscribe !== undefined) {
    const transport = frameType === 'data' ? 'graphql-ws' : 'graphql-transport-ws';
    const original = compiled.operation;
    compiled = runSubscribeHook({ hook: state.onSubscribe, compiler: state.compiler, logger: state.logger, transport }, payload, original, access, conn.principal);
    if (compiled instanceof Promise) return { kind: 'pending', decided: holdWhileDecided(state, conn, id, payload, frameType, original, compiled) };
  }
  return finishSubscription(state, conn, id, payload, frameType, compiled, undefined);
}

/** Compiled (and hooked): a query's result, or the subscription's options checked and the hub joined. */
function finishSubscription<C extends Connection<C>>(
  state: SessionState<C>,
  conn: C,
  id: string,
  payload: SubscribePayload,
  frameType: 'next' | 'data',
  compiled: CompileResult,
  /** Where a subscription held while decided is live after: resumed from there unless the client asked its own replay. */
  heldFrom: ResumeRequest | undefined,
): SubscribeOutcome {
  if (!compiled.ok) return { kind: 'errors', errors: compiled.errors };
  const { operation } = compiled;
  if (operation.kind === 'query') {
    const result = runSchemaQuery(state.schema, operation);
    return typeof result === 'string' ? { kind: 'errors', errors: [{ message: result }] } : { kind: 'result', result };
  }
  const asked = subscribeOptions(state, payload, operation);
  if (typeof asked === 'string') return { kind: 'errors', errors: [{ message: asked }] };
  const ownReplay = asked.resume !== undefined || asked.since !== undefined || asked.snapshot !== undefined || asked.start;
  const resume = ownReplay || heldFrom === undefined ? asked.resume : { ...heldFrom, quiet: true };
  const subscriptions = (conn.subscriptions ??= new Map());
  subscriptions.set(id, state.hub.subscribe(conn, id, operation, { ...asked, resume, frameType }));
  return { kind: 'subscribed' };
}

/** The subscribe's `extensions` as hub options, or the first problem. */
function subscribeOptions<C extends Connection<C>>(state: SessionState<C>, payload: SubscribePayload, operation: CompiledSubscription) {
  const resume = parseResumeRequest(payload.extensions);
  if (typeof resume === 'string') return resume;
  const delta = parseDeltaRequest(payload.extensions);
  if (typeof delta === 'string') return delta;
  const start = parseStartRequest(payload.extensions);
  if (typeof start === 'string') return start;
  const since = parseSinceRequest(payload.extensions);
  if (typeof since === 'string') return since;
  const conflate = parseConflateRequest(payload.extensions);
  if (typeof conflate === 'string') return conflate;
  const maxRate = parseMaxRateRequest(payload.extensions);
  if (typeof maxRate === 'string') return maxRate;
  const snapshot = resolveSnapshotAsk(payload.extensions, operation, { maxKeys: state.snapshotMaxKeys, available: state.hub.snapshots });
  if (typeof snapshot === 'string') return snapshot;
  return { resume, since, conflate, maxRate, delta: delta && state.allowDelta, start, snapshot };
}

/**
 * While a plugin's onSubscribe decides, the operation as asked is held in the hub under the
 * subscription's id: it joins its group and keeps the events that arrive, in order, sending none. A
 * `complete` or a closed socket meanwhile drops it like any subscription (nothing is left behind).
 * Then: refused, it is dropped and the errors answered; allowed as it was, with plain options, what
 * it held is sent and it goes on live; otherwise (narrowed variables, or options the hold did not
 * apply) it is replaced by the decided operation resuming from where the hold was live after
 * (history), so nothing published meanwhile is lost.
 */
async function holdWhileDecided<C extends Connection<C>>(
  state: SessionState<C>,
  conn: C,
  id: string,
  payload: SubscribePayload,
  frameType: 'next' | 'data',
  original: CompiledSubscription,
  decision: Promise<CompileResult>,
): Promise<SubscribeOutcome | undefined> {
  const held = state.hub.hold(conn, id, original, frameType);
  (conn.subscriptions ??= new Map()).set(id, held.subscriber);
  const ours = (): boolean => !conn.closed && conn.subscriptions?.get(id) === held.subscriber;
  const compiled = await decision;
  if (!ours()) return undefined;
  if (!compiled.ok) {
    stopSubscription(state, conn, id);
    return { kind: 'errors', errors: compiled.errors };
  }
  const same = compiled.operation.kind === 'subscription' && compiled.operation.dedupKey === original.dedupKey;
  if (same && plainExtensions(payload.extensions)) {
    held.release();
    return undefined;
  }
  const from = await held.positions;
  if (!ours()) return undefined;
  stopSubscription(state, conn, id);
  const outcome = finishSubscription(state, conn, id, payload, frameType, compiled, from);
  return outcome.kind === 'subscribed' ? undefined : outcome;
}

/** No extension that changes how a subscription is served (the hold applies none). */
function plainExtensions(extensions: SubscribePayload['extensions']): boolean {
  if (extensions === null || extensions === undefined) return true;
  for (const name of ['resume', 'since', 'snapshot', 'start', 'conflate', 'maxRate', 'delta']) {
    const value = extensions[name];
    if (value !== undefined && value !== null && value !== false) return false;
  }
  return true;
}

/** Ends one subscription of a connection; false if it had none of that id. */
export function stopSubscription<C extends Connection<C>>(state: SessionState<C>, conn: C, id: string): boolean {
  const subscriber = conn.subscriptions?.get(id);
  if (!subscriber) return false;
  conn.subscriptions?.delete(id);
  state.hub.unsubscribe(subscriber);
  return true;
}

export function closeExpired<C extends Connection<C>>(state: SessionState<C>, conns: Iterable<C>, nowMs: number): void {
  for (const conn of conns) {
    if (conn.expiresAtMs !== 0 && conn.expiresAtMs <= nowMs) closeWith(state, conn, CloseCode.Forbidden, 'Forbidden: token expired');
  }
}

export function connectionClosed<C extends Connection<C>>(state: SessionState<C>, conn: C): void {
  conn.closed = true;
  if (conn.initTimer) clearTimeout(conn.initTimer);
  conn.initTimer = undefined;
  conn.waiting = undefined;
  if (!conn.subscriptions) return;
  for (const subscriber of conn.subscriptions.values()) state.hub.unsubscribe(subscriber);
  conn.subscriptions = undefined;
}

export function closeWith<C extends Connection<C>>(state: SessionState<C>, conn: C, code: number, reason: string): void {
  if (conn.closed) return;
  state.writer.close(conn, code, truncateReason(reason));
}

function truncateReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_CLOSE_REASON_BYTES);
  // '…' takes 3 bytes of UTF-8.
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}
