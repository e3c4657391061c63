/**
 * GraphQL over Server-Sent Events, the `graphql-sse` protocol's distinct connections mode, without
 * any HTTP server: a transport hands over what it read from a request (the GraphQL parameters, the
 * credentials, the `Last-Event-ID`) and writes the text this module renders. One stream is one
 * subscription, and it is one more subscriber of its operation group in the same hub as the
 * WebSockets: same compiler and limits, same authenticator, same shared payload per event.
 *
 * Each `next` event carries an `id:` with the subscription's cursor (sse-cursor.ts); a client that
 * reconnects with it as `Last-Event-ID` is resumed by the hub's resume path (resume.ts), exactly
 * as a WebSocket client sending `extensions.resume`.
 */
import type { GraphQLFormattedError } from 'graphql';
import type { WirestreamSchema } from '@wirestream/schema';
import type { Logger } from '@wirestream/telemetry';
import type { Authenticator } from '../../auth/authenticator.js';
import { GATEWAY_DEFAULTS } from '../../defaults.js';
import { createAccessScopes } from '../operations/access-scope.js';
import { runSubscribeHook, type SubscribeHook } from '../operations/subscribe-hook.js';
import type { FramePositions } from '../connection-writer.js';
import type { Hub } from '../hub.js';
import type { Subscriber } from '../delivery/groups.js';
import type { CompiledSubscription, OperationCompiler } from '../operations/operations.js';
import { parseResumeRequest, type ResumeRequest } from '../recovery/resume-request.js';
import { parseSinceRequest, type SinceRequest } from '../recovery/since-request.js';
import { resolveSnapshotAsk, type SnapshotAsk } from '../recovery/snapshot-request.js';
import { parseConflateRequest, parseMaxRateRequest } from '../delivery/conflation.js';
import { advanceCursor, cursorFrom, decodeCursor, encodeCursor, startCursor, type CursorState } from './sse-cursor.js';
import { runSchemaQuery } from '../operations/query.js';

/** The core's part of one SSE response; a transport adds its own fields to the same object. */
export interface SseStream {
  /** Tells an SSE stream apart from a WebSocket where the hub serves both. */
  readonly sse: true;
  closed: boolean;
  cursor: CursorState;
  subscriber: Subscriber<SseStream> | undefined;
  /** When the token expires (ms since epoch), 0 for never; the transport's sweep ends the stream then. */
  expiresAtMs: number;
}

/** The GraphQL request of a stream, from a JSON body (POST) or the query string (GET). */
export interface SseParams {
  readonly query: string;
  readonly variables?: Record<string, unknown> | null;
  readonly operationName?: string | null;
  readonly extensions?: Record<string, unknown> | null;
}

export interface SseRequest {
  readonly params: SseParams;
  /** What the authenticator verifies, shaped like a `connection_init` payload (`{ authorization }`, `{ token }` or `{}`). */
  readonly credentials: Record<string, string>;
  /** The cursor to resume from and where it came from (named in the error when it is bad). */
  readonly lastEventId?: { readonly value: string; readonly source: string } | undefined;
}

/** The answer to a request: refused (an HTTP status), events to send then end, or a subscription to attach. */
export type SsePrepared =
  | { readonly kind: 'refused'; readonly status: 400 | 401 | 403 | 503; readonly message: string }
  | { readonly kind: 'events'; readonly events: string }
  | {
      readonly kind: 'subscription';
      readonly operation: CompiledSubscription;
      readonly resume: ResumeRequest | undefined;
      /** `extensions.since` (or `?since=`): history from that time first (ignored when resuming: resume wins). */
      readonly since?: SinceRequest | undefined;
      /** `extensions.conflate`: the latest value of each key while the stream lags. */
      readonly conflate?: boolean | undefined;
      /** `extensions.maxRate`: at most this many events a second. */
      readonly maxRate?: number | undefined;
      /** `extensions.snapshot`: the current values first (ignored when resuming: resume wins). */
      readonly snapshot?: SnapshotAsk | undefined;
      readonly expiresAtMs: number;
    };

export interface SseSessionDeps<S extends SseStream> {
  readonly schema: WirestreamSchema;
  readonly compiler: OperationCompiler;
  readonly hub: Hub<S>;
  readonly authenticator: Authenticator;
  /** GATEWAY_SNAPSHOT_MAX_KEYS (session.ts's `snapshotMaxKeys`). @default GATEWAY_DEFAULTS.snapshotMaxKeys */
  readonly snapshotMaxKeys?: number;
  /** A plugin's onSubscribe (GATEWAY_PLUGIN) and where its throws are logged (subscribe-hook.ts). */
  readonly onSubscribe?: { readonly hook: SubscribeHook; readonly logger: Logger } | undefined;
}

export interface SseSessions<S extends SseStream> {
  /** Authenticates, compiles and validates a request; nothing is subscribed yet. */
  prepare(request: SseRequest): Promise<SsePrepared>;
  /** Subscribes a stream whose response headers are written (events may follow at once). */
  attach(stream: S, prepared: Extract<SsePrepared, { kind: 'subscription' }>): void;
  /** The stream ended, for whatever reason: releases its subscription. Idempotent. */
  detach(stream: S): void;
}

/** SSE event names of the protocol; `data:` must be present for EventSource to dispatch `complete`. */
export const COMPLETE_EVENT = 'event: complete\ndata:\n\n';
/** A comment line: keeps proxies and the connection from timing out; clients ignore it. */
export const HEARTBEAT = ':\n\n';

export function createSseSessions<S extends SseStream>(deps: SseSessionDeps<S>): SseSessions<S> {
  const accessFor = createAccessScopes(deps.authenticator);
  return {
    prepare: (request) => prepare(deps, accessFor, request),
    attach(stream, prepared) {
      stream.cursor = cursorFrom(prepared.resume);
      stream.expiresAtMs = prepared.expiresAtMs;
      // Not resuming: the stream learns its starting point first, so its first event already has an
      // id a client can resume from, covering every partition (architecture.md, the SSE contract).
      stream.subscriber = deps.hub.subscribe(stream, 'sse', prepared.operation, {
        resume: prepared.resume,
        start: prepared.resume === undefined,
        since: prepared.since,
        conflate: prepared.conflate,
        maxRate: prepared.maxRate,
        snapshot: prepared.snapshot,
      });
    },
    detach(stream) {
      stream.closed = true;
      // The stream was attached as S, so its subscriber is one of S.
      if (stream.subscriber) deps.hub.unsubscribe(stream.subscriber as Subscriber<S>);
      stream.subscriber = undefined;
    },
  };
}

/** A fresh stream state (a transport copies these fields onto its own stream object). */
export function createSseStreamState(): SseStream {
  return { sse: true, closed: false, cursor: cursorFrom(undefined), subscriber: undefined, expiresAtMs: 0 };
}

async function prepare<S extends SseStream>(
  deps: SseSessionDeps<S>,
  accessFor: ReturnType<typeof createAccessScopes>,
  request: SseRequest,
): Promise<SsePrepared> {
  const resume = resumeOf(request);
  if (typeof resume === 'string') return { kind: 'refused', status: 400, message: resume };
  const auth = await deps.authenticator.authenticate(request.credentials);
  if (!auth.ok) return { kind: 'refused', status: auth.retriable ? 503 : 401, message: auth.reason };
  const access = accessFor(auth.principal);
  let compiled = deps.compiler.compile(request.params, access);
  /** Positions read as the request arrived, while an async onSubscribe decides: the stream resumes from them. */
  let arrivedAt: Promise<ResumeRequest | undefined> | undefined;
  if (compiled.ok && compiled.operation.kind === 'subscription' && deps.onSubscribe !== undefined) {
    const call = { ...deps.onSubscribe, compiler: deps.compiler, transport: 'graphql-sse' };
    const hooked = runSubscribeHook(call, request.params, compiled.operation, access, auth.principal);
    if (hooked instanceof Promise) {
      // Nothing joins the hub before the stream exists (a client gone meanwhile leaves nothing behind):
      // the events published while the hook decides are replayed from history after these positions.
      arrivedAt = deps.hub.positions(compiled.operation.route.topic);
      compiled = await hooked;
    } else compiled = hooked;
  }
  // graphql-sse: errors found before execution go through an accepted stream, not a 4xx.
  if (!compiled.ok) return { kind: 'events', events: errorEvents(compiled.errors) };
  const { operation } = compiled;
  if (operation.kind === 'query') {
    const result = runSchemaQuery(deps.schema, operation);
    const data = typeof result === 'string' ? { errors: [{ message: result }] } : result;
    return { kind: 'events', events: `event: next\ndata: ${JSON.stringify(data)}\n\n${COMPLETE_EVENT}` };
  }
  const since = parseSinceRequest(request.params.extensions);
  if (typeof since === 'string') return { kind: 'events', events: errorEvents([{ message: since }]) };
  const conflate = parseConflateRequest(request.params.extensions);
  if (typeof conflate === 'string') return { kind: 'events', events: errorEvents([{ message: conflate }]) };
  const maxRate = parseMaxRateRequest(request.params.extensions);
  if (typeof maxRate === 'string') return { kind: 'events', events: errorEvents([{ message: maxRate }]) };
  const snapshot = resolveSnapshotAsk(request.params.extensions, operation, { maxKeys: deps.snapshotMaxKeys ?? GATEWAY_DEFAULTS.snapshotMaxKeys, available: deps.hub.snapshots });
  if (typeof snapshot === 'string') return { kind: 'events', events: errorEvents([{ message: snapshot }]) };
  // Decided later: resumed from where it arrived, unless it asked a replay of its own.
  const arrived = arrivedAt !== undefined && resume === undefined && since === undefined && snapshot === undefined ? await arrivedAt : undefined;
  const from = arrived === undefined ? resume : { ...arrived, quiet: true };
  return { kind: 'subscription', operation, resume: from, since, conflate, maxRate, snapshot, expiresAtMs: auth.principal.expiresAtMs ?? 0 };
}

/** The resume point: `Last-Event-ID` (header or query parameter) first, else `extensions.resume`. */
function resumeOf(request: SseRequest): ResumeRequest | undefined | string {
  const { lastEventId } = request;
  if (lastEventId !== undefined && lastEventId.value !== '') {
    const decoded = decodeCursor(lastEventId.value);
    return typeof decoded === 'string' ? `${lastEventId.source} ${decoded}` : decoded;
  }
  return parseResumeRequest(request.params.extensions);
}

function errorEvents(errors: readonly GraphQLFormattedError[]): string {
  return `event: next\ndata: ${JSON.stringify({ errors })}\n\n${COMPLETE_EVENT}`;
}

/**
 * What goes before one payload of a write to a stream: its `id:` line (the cursor after it) and
 * `event: next` / `data: `. The transport writes the payload itself after it, then `\n\n`. Payloads
 * without positions (a recovery signal) carry no id: the client keeps its last one. The starting
 * point's frame sets the cursor to the start's positions, so its id is the stream's first cursor.
 */
export function nextEventHead(stream: SseStream, positions: FramePositions | undefined, index: number): string {
  let id: string | undefined;
  if (positions?.start !== undefined) {
    startCursor(stream.cursor, positions.start);
    id = encodeCursor(stream.cursor);
  } else if (positions?.epoch !== undefined) {
    advanceCursor(stream.cursor, positions.epoch, positions.partitions[index] as number, positions.offsets[index] as string);
    id = encodeCursor(stream.cursor);
  }
  return id === undefined ? 'event: next\ndata: ' : 'id: ' + id + '\nevent: next\ndata: ';
}

/**
 * The last event of a stream the server ends (slow consumer, drain, expired token, failed resume): a
 * data-less `next` whose `extensions.reconnect` says why, then the response ends without `complete`,
 * so the client reconnects (with its `Last-Event-ID`) and loses nothing.
 */
export function reconnectEvent(code: string, reason: string): string {
  return `event: next\ndata: ${JSON.stringify({ extensions: { reconnect: { code, reason } } })}\n\n`;
}
