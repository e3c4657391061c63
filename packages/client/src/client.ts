/**
 * `createWirestreamClient`: graphql-ws's `createClient`, plus the resume contract for every
 * subscription (position-tracker.ts) and lossless token renewal. graphql-ws re-sends a
 * subscription's payload object on every reconnect, as it is then; on each `connected` this client
 * rewrites that payload's `extensions` to resume from what the subscription has, so the
 * resubscription is graphql-ws's own (same id, same retry policy), never a second protocol loop.
 */
import { createClient, type Client, type ClientOptions, type FormattedExecutionResult, type SubscribePayload } from 'graphql-ws';
import { DELTA_FOSSIL, DeltaError, createDeltaReader, type DeltaReader } from '@wirestream/delta';
import { WirestreamProtocolError } from './errors.js';
import { createPositionTracker, type PositionTracker, type ResumeState } from './position-tracker.js';
import type { Deleted, Position, Recovery, SnapshotEnd, Start } from './signals.js';
import { renewalDelayMs, tokenExpiresAtMs } from './token-expiry.js';

type ConnectionParams = Record<string, unknown>;

export interface WirestreamClientOptions extends Omit<ClientOptions, 'connectionParams' | 'retryAttempts' | 'retryWait' | 'shouldRetry'> {
  /**
   * Called on every (re)connect; its token goes into `connection_init` as
   * `{ authorization: "Bearer <token>" }` (an empty string: no authorization, anonymous). A JWT
   * with `exp` is renewed before it expires (see {@link renewTokenBeforeMs}); a connection the
   * gateway closes for an expired token (4403 `Forbidden: token expired`) reconnects at once.
   */
  readonly token?: () => string | Promise<string>;
  /** More `connection_init` fields (merged under the token's `authorization`). */
  readonly connectionParams?: ConnectionParams | (() => ConnectionParams | Promise<ConnectionParams>);
  /**
   * Reconnect with a fresh token this long before the current one's `exp` (or after half of the
   * time it has left, if shorter). Lossless: every subscription resumes. `false`: only when the
   * gateway closes the connection. @default 30_000 (30 seconds)
   */
  readonly renewTokenBeforeMs?: number | false;
  /** Reconnect attempts in a row before the subscriptions fail. @default Infinity (a client that resumes by itself keeps trying) */
  readonly retryAttempts?: number;
  /** Wait before reconnect attempt `retries` (0-based). @default exponential from 1 s, at most 30 s, plus 0.3–3 s of jitter */
  readonly retryWait?: (retries: number) => Promise<void>;
  /**
   * Whether to retry after this close event or error (graphql-ws's fatal close codes, e.g. 4400,
   * 4401, 4406, are never retried). @default close events and network errors (a WebSocket `error`
   * event: gateway unreachable); not an `Error` thrown on this side (e.g. by `token()`)
   */
  readonly shouldRetry?: (errOrCloseEvent: unknown) => boolean;
  /** Every subscription's recovery signals (after the subscription's own `onRecovery`). */
  readonly onRecovery?: (recovery: Recovery, request: SubscribePayload) => void;
}

/** A subscription's results (data or errors; never the contract's data-less signals). */
export type WirestreamResult<Data = Record<string, unknown>> = FormattedExecutionResult<Data, unknown>;

export interface WirestreamSink<Data = Record<string, unknown>> {
  next(result: WirestreamResult<Data>): void;
  /** A close graphql-ws gave up on, GraphQL errors of the operation, or a {@link WirestreamProtocolError}. */
  error(error: unknown): void;
  complete(): void;
  /** The subscription's starting point (its first `next`, data-less). */
  onStart?(start: Start): void;
  /**
   * After a resume: `recovered: true` (nothing missed) or `false` with the reason (retention,
   * epoch changed, no history) — then the events continue. Also when the epoch changes under a
   * live subscription (Redis lost its data).
   */
  onRecovery?(recovery: Recovery): void;
  /** An event at or below the last offset received on its partition, dropped. */
  onDuplicate?(position: Position): void;
  /**
   * The snapshot asked for (`snapshot: true`) is complete: every key's current value came through
   * `next` before it (each with `extensions.snapshot: true`); live events follow. A snapshot cut by
   * a reconnect is asked for again from its beginning.
   */
  onSnapshot?(snapshot: SnapshotEnd): void;
  /** A key was deleted (a tombstone on a snapshot topic): data-less, never passed to `next`. */
  onDeleted?(deleted: Deleted): void;
}

export interface SubscribeOptions {
  /** Ask for delta payloads (`extensions.delta: "fossil"`) and hand on the full results. @default false */
  readonly delta?: boolean;
  /** Resume from a state kept elsewhere (e.g. across a page reload) instead of asking for a start. */
  readonly resumeFrom?: ResumeState;
  /**
   * Ask for each key's current value first (`extensions.snapshot: true`, a `@topic(snapshot: true)`
   * topic); after a reconnect the subscription resumes instead (the gateway lets resume win). @default false
   */
  readonly snapshot?: boolean;
  /**
   * Replay from a time first (`extensions.since`, RFC 3339): the events from the first one at or after
   * it on each partition, then live. `onRecovery` says first whether history reached back that far
   * (`recovered: false` with `oldest` when not). After a reconnect the subscription resumes from its
   * positions instead (the gateway lets resume win). Not with `snapshot`. @default undefined (live only)
   */
  readonly since?: Date | string;
  /**
   * Latest-value conflation (`extensions.conflate: true`): while the connection lags, the gateway
   * keeps the newest event of each key instead of every event, and does not close it as slow below
   * its key bound; a frame that replaced others carries `extensions.conflated`. @default false
   */
  readonly conflate?: boolean;
  /**
   * At most this many events a second (`extensions.maxRate`); between them the newest value of each
   * key wins (conflation). The gateway lowers it to its ceiling. @default undefined (no cap)
   */
  readonly maxRate?: number;
}

/** Ends the subscription; `resumeState()` is what it would resume from now. */
export interface WirestreamSubscription {
  (): void;
  resumeState(): ResumeState | undefined;
}

export interface WirestreamClient {
  subscribe<Data = Record<string, unknown>>(request: SubscribePayload, sink: WirestreamSink<Data>, options?: SubscribeOptions): WirestreamSubscription;
  /** The results as an async iterator (`return()` ends the subscription); signals through `options`. */
  iterate<Data = Record<string, unknown>>(
    request: SubscribePayload,
    options?: SubscribeOptions & Pick<WirestreamSink<Data>, SignalHandlers>,
  ): AsyncIterableIterator<WirestreamResult<Data>>;
  readonly on: Client['on'];
  dispose(): Promise<void>;
  /** Drops the socket at once; the subscriptions reconnect and resume (graphql-ws `terminate`). */
  terminate(): void;
}

type SignalHandlers = 'onStart' | 'onRecovery' | 'onDuplicate' | 'onSnapshot' | 'onDeleted';

interface Active {
  readonly payload: { -readonly [K in keyof SubscribePayload]: SubscribePayload[K] };
  readonly userExtensions: Readonly<Record<string, unknown>>;
  readonly tracker: PositionTracker;
  readonly report: (recovery: Recovery) => void;
}

interface SubscriptionContext {
  readonly client: Client;
  readonly active: Set<Active>;
  readonly onRecovery: WirestreamClientOptions['onRecovery'];
}

const MAX_TIMER_MS = 2 ** 31 - 1; // setTimeout's limit (~24.8 days); a later renewal is left to the gateway's close
const FORBIDDEN = 4403;

async function backoff(retries: number): Promise<void> {
  const ms = Math.min(1_000 * 2 ** retries, 30_000) + 300 + Math.random() * 2_700;
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Close events and a socket's `error` events are retried; an `Error` thrown here (a bug, a bad `token()`) is not. */
function retryable(errOrCloseEvent: unknown): boolean {
  return isCloseLike(errOrCloseEvent) || !(errOrCloseEvent instanceof Error);
}

function isCloseLike(value: unknown): value is { code: number; reason: string } {
  return typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'number';
}

export function createWirestreamClient(options: WirestreamClientOptions): WirestreamClient {
  const {
    token,
    connectionParams,
    renewTokenBeforeMs = 30_000, // 30 seconds
    retryAttempts = Infinity,
    retryWait = backoff,
    shouldRetry = retryable,
    onRecovery,
    on,
    ...graphqlWsOptions
  } = options;
  if (renewTokenBeforeMs !== false && !(Number.isFinite(renewTokenBeforeMs) && renewTokenBeforeMs >= 0)) {
    throw new Error(`createWirestreamClient: renewTokenBeforeMs must be a number of ms ≥ 0 or false, got ${String(renewTokenBeforeMs)}`);
  }
  const active = new Set<Active>();
  /** The token the connection being opened sent; read when it is acknowledged. */
  let sentToken: string | undefined;
  let renewal: ReturnType<typeof setTimeout> | undefined;
  /** The next reconnect is ours (renewal) or follows an expired token: no back-off for it. */
  let reconnectNow = false;
  let acknowledged = false;

  const client = createClient({
    ...graphqlWsOptions,
    ...(on ? { on } : {}),
    retryAttempts,
    shouldRetry,
    retryWait: async (retries) => {
      if (reconnectNow) {
        reconnectNow = false;
        return;
      }
      await retryWait(retries);
    },
    connectionParams: async () => {
      const base = typeof connectionParams === 'function' ? await connectionParams() : connectionParams;
      if (!token) return base;
      const value: unknown = await token();
      if (typeof value !== 'string') throw new Error(`createWirestreamClient: token() must return a string (a JWT, or '' for none), got ${typeof value}`);
      sentToken = value;
      return value === '' ? base : { ...base, authorization: `Bearer ${value}` };
    },
  });

  client.on('connected', () => {
    acknowledged = true;
    scheduleRenewal();
    // Runs before graphql-ws re-sends the subscriptions of this connection: each resumes.
    for (const entry of active) {
      const gap = entry.tracker.reconnecting();
      if (gap) entry.report(gap);
      entry.payload.extensions = { ...entry.userExtensions, ...entry.tracker.requestExtensions() };
    }
  });
  client.on('closed', (event) => {
    clearTimeout(renewal);
    if (acknowledged && isCloseLike(event) && event.code === FORBIDDEN && /expired/i.test(event.reason)) reconnectNow = true;
    acknowledged = false;
  });

  function scheduleRenewal(): void {
    clearTimeout(renewal);
    if (renewTokenBeforeMs === false || sentToken === undefined) return;
    const expiresAtMs = tokenExpiresAtMs(sentToken);
    if (expiresAtMs === undefined) return;
    const delay = renewalDelayMs(expiresAtMs, Date.now(), renewTokenBeforeMs);
    if (delay > MAX_TIMER_MS) return;
    renewal = setTimeout(() => {
      reconnectNow = true;
      client.terminate();
    }, delay);
  }

  const ctx: SubscriptionContext = { client, active, onRecovery };
  const subscribe: WirestreamClient['subscribe'] = (request, sink, subscribeOptions) => subscribeWith(ctx, request, sink, subscribeOptions);
  return {
    subscribe,
    iterate: (request, iterateOptions = {}) => iterate(subscribe, request, iterateOptions),
    on: client.on.bind(client),
    dispose: async () => {
      clearTimeout(renewal);
      active.clear();
      // graphql-ws's dispose awaits a connection attempt in progress and rejects with its failure
      // (gateway unreachable): irrelevant to a client being put away.
      try {
        await client.dispose();
      } catch {
        // nothing to do: the socket never opened
      }
    },
    terminate: () => client.terminate(),
  };
}

/**
 * One subscription: graphql-ws's, with its payload kept in `ctx.active` so each reconnect rewrites
 * its resume. In delta mode, a delta the reader cannot apply (its base is not the gateway's) starts
 * the subscription again under a new id, resuming: a new subscription begins with a full payload.
 */
function subscribeWith<Data>(
  ctx: SubscriptionContext,
  request: SubscribePayload,
  sink: WirestreamSink<Data>,
  subscribeOptions: SubscribeOptions = {},
): WirestreamSubscription {
  const { client, active, onRecovery } = ctx;
  const { delta = false, resumeFrom, snapshot = false, since, conflate = false, maxRate } = subscribeOptions;
  const tracker = createPositionTracker(resumeFrom);
  const userExtensions = {
    ...request.extensions,
    ...(delta ? { delta: DELTA_FOSSIL } : {}),
    ...(snapshot ? { snapshot: true } : {}),
    ...(since === undefined ? {} : { since: since instanceof Date ? since.toISOString() : since }),
    ...(conflate ? { conflate: true } : {}),
    ...(maxRate === undefined ? {} : { maxRate }),
  };
  const entry: Active = {
    payload: { ...request, extensions: { ...userExtensions, ...tracker.requestExtensions() } },
    userExtensions,
    tracker,
    report: (recovery) => {
      sink.onRecovery?.(recovery);
      onRecovery?.(recovery, request);
    },
  };
  let reader: DeltaReader | undefined = delta ? createDeltaReader() : undefined;
  /** Restarted for a delta it could not apply, and nothing read since: a second one fails. */
  let restartedWithoutProgress = false;
  let generation = 0;
  let ended = false;
  let dispose: () => void = () => {};
  const end = (): void => {
    ended = true;
    active.delete(entry);
  };
  const fail = (error: unknown): void => {
    if (ended) return;
    end();
    dispose();
    sink.error(error);
  };
  const restart = (): void => {
    generation++; // the old subscription's late complete is ignored
    dispose();
    reader = createDeltaReader();
    restartedWithoutProgress = true;
    entry.payload.extensions = { ...userExtensions, ...tracker.requestExtensions() };
    open();
  };
  const handle = (raw: unknown): void => {
    let result: unknown;
    try {
      result = reader ? reader.read(raw) : raw;
    } catch (err) {
      if (err instanceof DeltaError && !restartedWithoutProgress) restart();
      else fail(err);
      return;
    }
    const verdict = tracker.accept(result);
    switch (verdict.kind) {
      case 'start':
        sink.onStart?.(verdict.start);
        return;
      case 'recovery':
        entry.report(verdict.recovery);
        return;
      case 'snapshot':
        sink.onSnapshot?.(verdict.snapshot);
        if (verdict.start) sink.onStart?.(verdict.start);
        return;
      case 'deleted':
        if (verdict.recovery) entry.report(verdict.recovery);
        sink.onDeleted?.({ key: verdict.key, position: verdict.position });
        return;
      case 'duplicate':
        sink.onDuplicate?.(verdict.position);
        return;
      case 'malformed':
        fail(new WirestreamProtocolError(`the gateway sent a malformed next: ${verdict.message}`));
        return;
      case 'event':
        restartedWithoutProgress = false;
        if (verdict.recovery) entry.report(verdict.recovery);
        sink.next(result as WirestreamResult<Data>);
        return;
    }
  };
  function open(): void {
    const mine = generation;
    const current = (): boolean => !ended && mine === generation;
    dispose = client.subscribe<Data, unknown>(entry.payload, {
      next: (raw) => {
        if (current()) handle(raw);
      },
      error: (error) => {
        if (!current()) return;
        end();
        sink.error(error);
      },
      complete: () => {
        if (!current()) return;
        end();
        sink.complete();
      },
    });
  }
  active.add(entry);
  open();
  return Object.assign(
    () => {
      end();
      dispose();
    },
    { resumeState: () => tracker.resumeState() },
  );
}

/** {@link WirestreamClient.iterate} over {@link WirestreamClient.subscribe}: a queue between sink and iterator. */
function iterate<Data>(
  subscribe: WirestreamClient['subscribe'],
  request: SubscribePayload,
  options: SubscribeOptions & Pick<WirestreamSink<Data>, SignalHandlers>,
): AsyncIterableIterator<WirestreamResult<Data>> {
  const pending: WirestreamResult<Data>[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let wake: () => void = () => {};
  const { onStart, onRecovery, onDuplicate, onSnapshot, onDeleted, ...subscribeOptions } = options;
  const stop = subscribe<Data>(
    request,
    {
      next: (result) => {
        pending.push(result);
        wake();
      },
      error: (error) => {
        failure = { error };
        done = true;
        wake();
      },
      complete: () => {
        done = true;
        wake();
      },
      ...(onStart ? { onStart } : {}),
      ...(onRecovery ? { onRecovery } : {}),
      ...(onDuplicate ? { onDuplicate } : {}),
      ...(onSnapshot ? { onSnapshot } : {}),
      ...(onDeleted ? { onDeleted } : {}),
    },
    subscribeOptions,
  );
  const iterator: AsyncIterableIterator<WirestreamResult<Data>> = {
    async next() {
      while (pending.length === 0 && !done) await new Promise<void>((resolve) => (wake = resolve));
      const value = pending.shift();
      if (value !== undefined) return { done: false, value };
      if (failure) {
        const { error } = failure;
        failure = undefined;
        throw error;
      }
      return { done: true, value: undefined };
    },
    return() {
      done = true;
      pending.length = 0;
      stop();
      wake();
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
