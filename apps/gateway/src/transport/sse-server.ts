/**
 * GraphQL over SSE on the gateway's own uWS server (graphql-sse, distinct connections mode), on the
 * GraphQL path itself: `POST` with a JSON body or `GET` with the parameters in the query string, with
 * `Accept: text/event-stream` (WebSocket upgrades on the same path go to uws-server.ts). The
 * protocol is in core/protocols/sse-session.ts; this module is HTTP: CORS, admission, body limits,
 * tickets, heartbeats, drain. See docs/decisions/0015-graphql-over-sse.md.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from '@wirestream/telemetry';
import type { Authenticator } from '../auth/authenticator.js';
import { parseSseBody, parseSseQuery } from '../core/protocols/sse-params.js';
import { createSseStreamState, HEARTBEAT, reconnectEvent, type SseParams, type SsePrepared, type SseSessions } from '../core/protocols/sse-session.js';
import type { Admission } from './admission.js';
import { createOriginCheck } from './origin.js';
import type { SseHttpStream, SseWriter } from './sse-writer.js';
import { createTicketStore, type TicketStore } from './sse-tickets.js';

export interface SseServerDeps {
  readonly sessions: SseSessions<SseHttpStream>;
  readonly writer: SseWriter;
  readonly admission: Admission;
  readonly authenticator: Authenticator;
  /** True once the gateway drains (the WebSocket listener is closed): new streams get 503. */
  readonly isDraining: () => boolean;
  readonly logger: Logger;
  /** Where tickets live (Redis, shared by every gateway, in production); default: this gateway's memory. */
  readonly tickets?: TicketStore;
}

export interface SseServerOptions {
  /** The GraphQL path (the WebSocket's); the ticket exchange is `<path>/ticket`. */
  readonly path: string;
  /** Largest `POST` body accepted (bytes), as the largest WebSocket frame. */
  readonly maxBodyBytes: number;
  /** A comment line this often on every stream, so proxies keep it open. */
  readonly heartbeatMs: number;
  readonly ticketTtlSeconds: number;
  readonly allowedOrigins: readonly string[];
  /** Streams ended per event-loop turn while draining. */
  readonly drainBatchSize: number;
}

export interface SseServer {
  /** Open streams. */
  streams(): number;
  /** Ends every stream with a reconnect event, in batches. */
  drain(): Promise<void>;
  /** Called by the writer when a stream ended (by the server or the client). */
  ended(stream: SseHttpStream): void;
}

interface SseServerState extends Omit<SseServerDeps, 'tickets'>, SseServerOptions {
  readonly streams: Set<SseHttpStream>;
  readonly tickets: TicketStore;
  readonly originAllowed: (origin: string | undefined) => boolean;
  sweep: NodeJS.Timeout | undefined;
  lastHeartbeatMs: number;
}

/** What a handler reads before returning (uWS request objects die with the handler). */
interface RequestHead {
  readonly accept: string;
  readonly origin: string;
  readonly authorization: string;
  readonly lastEventId: string;
  readonly forwardedFor: string;
  readonly contentLength: string;
  readonly query: string;
  readonly remoteAddress: string;
}

const SSE_TYPE = 'text/event-stream';
const MAX_TICKETS = 100_000;
const SWEEP_MS = 1_000;

/** Registers the SSE routes on `app` (before the catch-all 404). `writer` must call back {@link SseServer.ended}. */
export function registerSseRoutes(app: TemplatedApp, deps: SseServerDeps, options: SseServerOptions): SseServer {
  const state: SseServerState = {
    ...deps,
    ...options,
    streams: new Set(),
    tickets: deps.tickets ?? createTicketStore({ ttlSeconds: options.ticketTtlSeconds, maxTickets: MAX_TICKETS }),
    originAllowed: createOriginCheck(options.allowedOrigins),
    sweep: undefined,
    lastHeartbeatMs: Date.now(),
  };
  const ticketPath = `${options.path}/ticket`;
  app.options(options.path, (res, req) => preflight(state, res, req));
  app.options(ticketPath, (res, req) => preflight(state, res, req));
  app.get(options.path, (res, req) => onGet(state, res, readHead(state, res, req)));
  app.post(options.path, (res, req) => onPost(state, res, readHead(state, res, req)));
  app.post(ticketPath, (res, req) => onTicket(state, res, readHead(state, res, req)));
  // One sweep a second for all streams (as the WebSocket's expiry sweep), heartbeats when due.
  state.sweep = setInterval(() => sweep(state), Math.min(SWEEP_MS, options.heartbeatMs));
  state.sweep.unref();
  return { streams: () => state.streams.size, drain: () => drain(state), ended: (stream) => onEnded(state, stream) };
}

function readHead(state: SseServerState, res: HttpResponse, req: HttpRequest): RequestHead {
  return {
    accept: req.getHeader('accept'),
    origin: req.getHeader('origin'),
    authorization: req.getHeader('authorization'),
    lastEventId: req.getHeader('last-event-id'),
    forwardedFor: state.admission.readsForwardedFor ? req.getHeader('x-forwarded-for') : '',
    contentLength: req.getHeader('content-length'),
    query: req.getQuery() ?? '',
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
  };
}

function onGet(state: SseServerState, res: HttpResponse, head: RequestHead): void {
  const search = new URLSearchParams(head.query);
  const params = parseSseQuery(search);
  const ticket = search.get('ticket');
  const lastEventId = head.lastEventId !== '' ? head.lastEventId : search.get('lastEventId') ?? '';
  const source = head.lastEventId !== '' ? 'the Last-Event-ID header' : 'the lastEventId query parameter';
  let aborted = false;
  res.onAborted(() => (aborted = true));
  void openStream(state, res, head, params, { ticket, lastEventId, source }, () => aborted);
}

function onPost(state: SseServerState, res: HttpResponse, head: RequestHead): void {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  readBody(state, res, head, (body) => {
    if (aborted) return;
    void openStream(state, res, head, parseSseBody(body), { ticket: null, lastEventId: head.lastEventId, source: 'the Last-Event-ID header' }, () => aborted);
  });
}

/** Reads a body of at most `maxBodyBytes`; a larger one is answered with 413 and not read further. */
function readBody(state: SseServerState, res: HttpResponse, head: RequestHead, done: (body: string) => void): void {
  const tooLarge = (): void => respondJson(state, res, head, '413 Payload Too Large', `the request body is larger than ${state.maxBodyBytes} bytes (GATEWAY_MAX_PAYLOAD_BYTES)`);
  if (Number(head.contentLength) > state.maxBodyBytes) return tooLarge();
  const chunks: Buffer[] = [];
  let bytes = 0;
  let refused = false;
  res.onData((chunk, isLast) => {
    if (refused) return;
    bytes += chunk.byteLength;
    if (bytes > state.maxBodyBytes) {
      refused = true;
      return tooLarge();
    }
    // The ArrayBuffer is only valid during this callback: copy it.
    chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
    if (!isLast) return;
    // uWS keeps the data handler as long as the response lives: let go of this closure (and the body) now.
    res.onData(ignoreData);
    done(Buffer.concat(chunks).toString('utf8'));
  });
}

function ignoreData(): void {}

interface ResumeSource {
  readonly ticket: string | null;
  readonly lastEventId: string;
  readonly source: string;
}

/** Admission, credentials, then the session decides; the stream opens only if everything passed. */
async function openStream(
  state: SseServerState,
  res: HttpResponse,
  head: RequestHead,
  params: SseParams | string,
  from: ResumeSource,
  aborted: () => boolean,
): Promise<void> {
  const refused = admit(state, head);
  if (refused) return respondJson(state, res, head, refused.status, refused.message);
  if (typeof params === 'string') return respondJson(state, res, head, '400 Bad Request', params);
  let credentials: Record<string, string> | undefined;
  try {
    credentials = await credentialsOf(state, head, from.ticket);
  } catch (err) {
    state.logger.warn({ err }, 'redeeming an SSE ticket failed (ticket store unreachable)');
    if (!aborted()) respondJson(state, res, head, '503 Service Unavailable', 'tickets cannot be checked now (the ticket store is unreachable): retry');
    return;
  }
  if (aborted()) return;
  if (credentials === undefined) return respondJson(state, res, head, '401 Unauthorized', 'the ticket is unknown, already used or expired: get a new one from POST <path>/ticket');
  const lastEventId = from.lastEventId === '' ? undefined : { value: from.lastEventId, source: from.source };
  let prepared: SsePrepared;
  try {
    prepared = await state.sessions.prepare({ params, credentials, lastEventId });
  } catch (err) {
    state.logger.error({ err }, 'preparing an SSE stream failed');
    prepared = { kind: 'refused', status: 503, message: 'internal error: retry' };
  }
  if (aborted()) return;
  if (prepared.kind === 'refused') return respondJson(state, res, head, STATUS_TEXT[prepared.status], prepared.message);
  const admitted = state.admission.admit({ origin: head.origin, remoteAddress: head.remoteAddress, forwardedFor: head.forwardedFor });
  if (!admitted.ok) return respondJson(state, res, head, admitted.status, admitted.message);
  res.cork(() => {
    writeStreamHeaders(state, res, head);
    if (prepared.kind === 'events') res.end(prepared.events);
    else startStream(state, res, admitted.address, prepared);
  });
}

/**
 * Opens the stream. Its own function so that the handlers uWS keeps for the life of the response
 * close over the stream alone, not over the request's head, parameters and credentials.
 */
function startStream(state: SseServerState, res: HttpResponse, address: string, prepared: Extract<SsePrepared, { kind: 'subscription' }>): void {
  const stream: SseHttpStream = { ...createSseStreamState(), res, address, buffered: 0, pending: undefined };
  // The client went away: nothing may touch `res` any more.
  res.onAborted(() => onEnded(state, stream));
  res.onWritable(() => state.writer.writable(stream));
  state.streams.add(stream);
  state.admission.opened(address);
  res.write(HEARTBEAT); // sends the headers now: the client knows it is connected
  state.sessions.attach(stream, prepared);
}

const STATUS_TEXT = { 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 503: '503 Service Unavailable' } as const;

/**
 * Draining, `Accept`, origin and per-address connections (admission.ts), as for a WebSocket upgrade.
 * No per-address rate of new streams: a stream carries exactly one subscribe (the WebSocket's
 * per-connection subscribe rate cannot be exceeded), and many users behind one corporate proxy
 * share an address.
 */
function admit(state: SseServerState, head: RequestHead): { status: string; message: string } | undefined {
  if (state.isDraining()) return { status: '503 Service Unavailable', message: 'draining: reconnect to another gateway' };
  if (!head.accept.includes(SSE_TYPE)) {
    return { status: '406 Not Acceptable', message: `send Accept: ${SSE_TYPE} for GraphQL over SSE (WebSockets: upgrade with graphql-transport-ws)` };
  }
  const admitted = state.admission.admit({ origin: head.origin, remoteAddress: head.remoteAddress, forwardedFor: head.forwardedFor });
  return admitted.ok ? undefined : admitted;
}

/** `Authorization` wins; else a ticket stands for the header it was issued for; else none. Undefined: a bad ticket. */
async function credentialsOf(state: SseServerState, head: RequestHead, ticket: string | null): Promise<Record<string, string> | undefined> {
  if (head.authorization !== '') return { authorization: head.authorization };
  if (ticket === null) return {};
  const credential = await state.tickets.redeem(ticket);
  return credential === undefined ? undefined : { authorization: credential };
}

/** `POST <path>/ticket` with `Authorization: Bearer …`: a single-use ticket for a GET, if the token is valid now. */
function onTicket(state: SseServerState, res: HttpResponse, head: RequestHead): void {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  if (state.isDraining()) return respondJson(state, res, head, '503 Service Unavailable', 'draining: ask another gateway');
  if (head.authorization === '') return respondJson(state, res, head, '401 Unauthorized', 'send Authorization: Bearer <token> to get a ticket');
  if (!state.originAllowed(head.origin === '' ? undefined : head.origin)) {
    return respondJson(state, res, head, '403 Forbidden', `origin ${head.origin} is not allowed (GATEWAY_ALLOWED_ORIGINS)`);
  }
  void issueTicket(state, res, head, () => aborted);
}

/** Verifies the token now, then stores a ticket for it; a store that cannot be reached is a 503 (retry). */
async function issueTicket(state: SseServerState, res: HttpResponse, head: RequestHead, aborted: () => boolean): Promise<void> {
  let result: Awaited<ReturnType<Authenticator['authenticate']>>;
  try {
    result = await state.authenticator.authenticate({ authorization: head.authorization });
  } catch {
    if (!aborted()) respondJson(state, res, head, '503 Service Unavailable', 'internal error while authenticating');
    return;
  }
  if (aborted()) return;
  if (!result.ok) return respondJson(state, res, head, result.retriable ? '503 Service Unavailable' : '401 Unauthorized', result.reason);
  let issued: { readonly ticket: string; readonly expiresIn: number };
  try {
    issued = await state.tickets.issue(head.authorization);
  } catch (err) {
    state.logger.warn({ err }, 'issuing an SSE ticket failed (ticket store unreachable)');
    if (!aborted()) respondJson(state, res, head, '503 Service Unavailable', 'no ticket can be issued now (the ticket store is unreachable): retry');
    return;
  }
  if (!aborted()) respond(state, res, head, '200 OK', 'application/json', JSON.stringify(issued));
}

function preflight(state: SseServerState, res: HttpResponse, req: HttpRequest): void {
  const origin = req.getHeader('origin');
  res.cork(() => {
    res.writeStatus('204 No Content');
    writeCors(state, res, origin);
    if (state.originAllowed(origin === '' ? undefined : origin)) {
      res.writeHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
      res.writeHeader('access-control-allow-headers', 'authorization, content-type, last-event-id');
      res.writeHeader('access-control-max-age', '600');
    }
    res.end();
  });
}

function writeStreamHeaders(state: SseServerState, res: HttpResponse, head: RequestHead): void {
  res.writeStatus('200 OK');
  writeCors(state, res, head.origin);
  res.writeHeader('content-type', 'text/event-stream; charset=utf-8');
  res.writeHeader('cache-control', 'no-cache');
  // nginx buffers responses by default, which would hold events back.
  res.writeHeader('x-accel-buffering', 'no');
}

/** CORS for an allowed browser origin (the WebSocket's allowlist); nothing for others. */
function writeCors(state: SseServerState, res: HttpResponse, origin: string): void {
  if (origin === '' || !state.originAllowed(origin)) return;
  res.writeHeader('access-control-allow-origin', origin);
  res.writeHeader('vary', 'origin');
}

function respondJson(state: SseServerState, res: HttpResponse, head: RequestHead, status: string, message: string): void {
  respond(state, res, head, status, 'application/json; charset=utf-8', JSON.stringify({ errors: [{ message }] }));
}

function respond(state: SseServerState, res: HttpResponse, head: RequestHead, status: string, type: string, body: string): void {
  res.cork(() => {
    res.writeStatus(status);
    writeCors(state, res, head.origin);
    res.writeHeader('content-type', type).writeHeader('cache-control', 'no-store').end(body);
  });
}

function onEnded(state: SseServerState, stream: SseHttpStream): void {
  stream.closed = true;
  if (!state.streams.delete(stream)) return;
  state.admission.closed(stream.address);
  state.sessions.detach(stream);
}

/** Every second: expired tokens end; every `heartbeatMs` a comment on each stream; spent tickets go. */
function sweep(state: SseServerState): void {
  const now = Date.now();
  const beat = now - state.lastHeartbeatMs >= state.heartbeatMs - SWEEP_MS / 2;
  if (beat) state.lastHeartbeatMs = now;
  for (const stream of state.streams) {
    if (stream.expiresAtMs !== 0 && stream.expiresAtMs <= now) state.writer.end(stream, reconnectEvent('token_expired', 'Forbidden: token expired: reconnect with a fresh token'));
    else if (beat) state.writer.write(stream, HEARTBEAT);
  }
  state.tickets.sweep(now);
}

async function drain(state: SseServerState): Promise<void> {
  clearInterval(state.sweep);
  const all = [...state.streams];
  for (let i = 0; i < all.length; i += state.drainBatchSize) {
    for (const stream of all.slice(i, i + state.drainBatchSize)) {
      state.writer.end(stream, reconnectEvent('draining', 'server shutting down: reconnect to another gateway and resume'));
    }
    await new Promise<void>((r) => setImmediate(r));
  }
}
