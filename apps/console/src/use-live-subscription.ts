import { useEffect, useRef, useState } from 'react';
import type { WirestreamClient, WirestreamResult } from '@wirestream/client';
import { createRateMeter } from './vitals';
import { describeError } from './format';
import { checkVariables } from './variables';

/** `extensions.position` of every `next` the gateway sends (`epoch` may be added by the history work). */
export interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string | number;
  readonly epoch?: string | number;
}

export interface LiveRow {
  readonly seq: number;
  readonly receivedAtMs: number;
  readonly position: Position | undefined;
  readonly summary: string;
  readonly error: boolean;
  /** `extensions.conflated`: older events of this frame's key the gateway skipped (a conflating subscription). */
  readonly conflated: number | undefined;
}

/** How the live view subscribes: `conflate` asks for the latest value per key (`extensions.conflate`). */
export interface LiveOptions {
  readonly conflate: boolean;
}

/** Rows kept on screen; older ones drop off (the count keeps going). */
const MAX_ROWS = 200;
export const RATE_WINDOW_SECONDS = 60;
const SUMMARY_CHARS = 160;

type SubscriptionResult = WirestreamResult;

export interface LiveSubscription {
  readonly running: boolean;
  /** Why the last start or the running subscription failed, or undefined. */
  readonly error: string | undefined;
  /** Newest first, at most {@link MAX_ROWS}. */
  readonly rows: readonly LiveRow[];
  /** Events received since the last clear (keeps counting when old rows drop off). */
  readonly received: number;
  /** Events the gateway skipped for newer ones of their key since the last clear (the frames' `extensions.conflated`). */
  readonly conflated: number;
  /** Events per second over the last {@link RATE_WINDOW_SECONDS}, oldest first, refreshed every second. */
  readonly rates: readonly number[];
  /** Ends any running subscription and subscribes to `query`; `variablesText` is JSON or empty. */
  readonly start: (query: string, variablesText: string, options?: LiveOptions) => void;
  readonly halt: () => void;
  /** Empties the table and the count (the rate and a running subscription go on). */
  readonly clear: () => void;
}

/** One subscription of the live view at a time: its rows, count, rate and error. */
export function useLiveSubscription(client: WirestreamClient): LiveSubscription {
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | undefined>();
  // Declaration order is unmount order: the rate timer, then the subscription, then the pending frame.
  const rates = useRateSeries();
  const stop = useRef<(() => void) | undefined>(undefined);
  useEffect(() => () => stop.current?.(), []);
  const feed = useFrameBatchedRows();
  // A new client (new token) ends the running subscription; start again explicitly.
  useEffect(() => () => halt(), [client]);

  function halt(): void {
    stop.current?.();
    stop.current = undefined;
    setRunning(false);
  }

  function start(query: string, variablesText: string, options: LiveOptions = { conflate: false }): void {
    halt();
    const parsed = checkVariables(query, variablesText);
    if ('error' in parsed) {
      setError(parsed.error);
      return;
    }
    const { variables } = parsed;
    setError(undefined);
    setRunning(true);
    stop.current = client.subscribe(
      { query, ...(variables ? { variables } : {}) },
      {
        next(result) {
          const now = Date.now();
          rates.record(now);
          feed.add(result, now);
        },
        error(err) {
          setError(describeError(err));
          setRunning(false);
        },
        complete() {
          setRunning(false);
        },
      },
      options.conflate ? { conflate: true } : {},
    );
  }

  return { running, error, rows: feed.rows, received: feed.received, conflated: feed.conflated, rates: rates.series, start, halt, clear: feed.clear };
}

/** Counts events per second and publishes the last minute's series once a second. */
function useRateSeries(): { readonly series: readonly number[]; readonly record: (atMs: number) => void } {
  const [series, setSeries] = useState<readonly number[]>([]);
  const meter = useRef(createRateMeter(RATE_WINDOW_SECONDS));
  useEffect(() => {
    const tick = setInterval(() => setSeries(meter.current.series(Date.now())), 1_000);
    return () => clearInterval(tick);
  }, []);
  return { series, record: (atMs) => meter.current.record(atMs) };
}

interface RowFeed {
  readonly rows: readonly LiveRow[];
  readonly received: number;
  readonly conflated: number;
  readonly add: (result: SubscriptionResult, receivedAtMs: number) => void;
  readonly clear: () => void;
}

function useFrameBatchedRows(): RowFeed {
  const [rows, setRows] = useState<readonly LiveRow[]>([]);
  const [received, setReceived] = useState(0);
  const [conflated, setConflated] = useState(0);
  // Events are buffered and rendered at most once per animation frame: a fast stream costs one
  // React update per frame, not one per event.
  const pending = useRef<LiveRow[]>([]);
  const frame = useRef(0);
  const seq = useRef(0);
  const skipped = useRef(0);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  function flush(): void {
    frame.current = 0;
    const batch = pending.current;
    pending.current = [];
    setReceived(seq.current);
    setConflated(skipped.current);
    setRows((old) => [...batch.reverse(), ...old].slice(0, MAX_ROWS));
  }

  function add(result: SubscriptionResult, receivedAtMs: number): void {
    seq.current += 1;
    const row = toLiveRow(seq.current, receivedAtMs, result);
    skipped.current += row.conflated ?? 0;
    pending.current.push(row);
    if (frame.current === 0) frame.current = requestAnimationFrame(flush);
  }

  function clear(): void {
    seq.current = 0;
    skipped.current = 0;
    pending.current = [];
    setRows([]);
    setReceived(0);
    setConflated(0);
  }

  return { rows, received, conflated, add, clear };
}

/** A frame as a row of the live table (exported for its test). */
export function toLiveRow(seq: number, receivedAtMs: number, result: SubscriptionResult): LiveRow {
  const extensions = result.extensions as { position?: Position; conflated?: unknown } | undefined;
  const position = extensions?.position;
  const conflated = typeof extensions?.conflated === 'number' && extensions.conflated > 0 ? extensions.conflated : undefined;
  const text = result.errors ? describeError(result.errors) : JSON.stringify(result.data);
  return {
    seq,
    receivedAtMs,
    position,
    summary: text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS)}…` : text,
    error: result.errors !== undefined,
    conflated,
  };
}

