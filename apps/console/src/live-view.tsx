import { useEffect, useRef, useState } from 'react';
import type { Client } from 'graphql-ws';
import type { SubscriptionExample } from './examples';
import { Sparkline } from './sparkline';
import { createRateMeter } from './vitals';
import { describeError, formatClock, NO_DATA } from './format';

/** `extensions.position` of every `next` the gateway sends (`epoch` may be added by the history work). */
interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string | number;
  readonly epoch?: string | number;
}

interface LiveRow {
  readonly seq: number;
  readonly receivedAtMs: number;
  readonly position: Position | undefined;
  readonly summary: string;
  readonly error: boolean;
}

/** Rows kept on screen; older ones drop off (the count keeps going). */
const MAX_ROWS = 200;
const RATE_WINDOW_SECONDS = 60;
const SUMMARY_CHARS = 160;

export interface LiveViewProps {
  readonly client: Client;
  readonly examples: readonly SubscriptionExample[];
}

export function LiveView({ client, examples }: LiveViewProps) {
  const [field, setField] = useState(examples[0]?.field ?? '');
  const [query, setQuery] = useState(examples[0]?.query ?? '');
  const [variables, setVariables] = useState('');
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [rows, setRows] = useState<readonly LiveRow[]>([]);
  const [received, setReceived] = useState(0);
  const [rates, setRates] = useState<readonly number[]>([]);
  const meter = useRef(createRateMeter(RATE_WINDOW_SECONDS));
  const stop = useRef<(() => void) | undefined>(undefined);

  // Events are buffered and rendered at most once per animation frame: a fast stream costs one
  // React update per frame, not one per event.
  const pending = useRef<LiveRow[]>([]);
  const frame = useRef(0);
  const seq = useRef(0);
  function flush(): void {
    frame.current = 0;
    const batch = pending.current;
    pending.current = [];
    setReceived(seq.current);
    setRows((old) => [...batch.reverse(), ...old].slice(0, MAX_ROWS));
  }

  useEffect(() => {
    const tick = setInterval(() => setRates(meter.current.series(Date.now())), 1_000);
    return () => {
      clearInterval(tick);
      stop.current?.();
      cancelAnimationFrame(frame.current);
    };
  }, []);
  // A new client (new token) ends the running subscription; start again explicitly.
  useEffect(() => () => halt(), [client]);

  function halt(): void {
    stop.current?.();
    stop.current = undefined;
    setRunning(false);
  }

  function start(): void {
    halt();
    let parsedVariables: Record<string, unknown> | undefined;
    try {
      parsedVariables = variables.trim() === '' ? undefined : (JSON.parse(variables) as Record<string, unknown>);
    } catch (err) {
      setError(`variables are not JSON: ${describeError(err)}`);
      return;
    }
    setError(undefined);
    setRunning(true);
    stop.current = client.subscribe(
      { query, ...(parsedVariables ? { variables: parsedVariables } : {}) },
      {
        next(result) {
          const now = Date.now();
          meter.current.record(now);
          seq.current += 1;
          const position = (result.extensions as { position?: Position } | undefined)?.position;
          const text = result.errors ? describeError(result.errors) : JSON.stringify(result.data);
          pending.current.push({
            seq: seq.current,
            receivedAtMs: now,
            position,
            summary: text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS)}…` : text,
            error: result.errors !== undefined,
          });
          if (frame.current === 0) frame.current = requestAnimationFrame(flush);
        },
        error(err) {
          setError(describeError(err));
          setRunning(false);
        },
        complete() {
          setRunning(false);
        },
      },
    );
  }

  function choose(name: string): void {
    setField(name);
    const example = examples.find((e) => e.field === name);
    if (example) setQuery(example.query);
  }

  function clear(): void {
    seq.current = 0;
    pending.current = [];
    setRows([]);
    setReceived(0);
  }

  const hasEpoch = rows.some((r) => r.position?.epoch !== undefined);
  const lastSecond = rates.at(-1);
  return (
    <div className="live">
      <div className="live-controls">
        <label>
          Subscription{' '}
          <select value={field} onChange={(e) => choose(e.target.value)} data-testid="live-field">
            {examples.map((e) => (
              <option key={e.field} value={e.field}>
                {e.field}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={running ? halt : start} data-testid="live-toggle" className={running ? 'stop' : 'start'}>
          {running ? 'Stop' : 'Start'}
        </button>
        <button type="button" onClick={clear}>
          Clear
        </button>
        <span className="live-rate" data-testid="live-rate">
          <strong>{lastSecond === undefined ? NO_DATA : `${lastSecond}/s`}</strong> · {received} events
        </span>
        <span className="live-spark">
          <Sparkline values={rates} capacity={RATE_WINDOW_SECONDS} label="events per second, last minute" height={28} />
        </span>
        {error !== undefined && (
          <span className="error" data-testid="live-error">
            {error}
          </span>
        )}
      </div>
      <div className="live-editors">
        <textarea value={query} onChange={(e) => setQuery(e.target.value)} spellCheck={false} aria-label="subscription document" data-testid="live-query" />
        <textarea value={variables} onChange={(e) => setVariables(e.target.value)} spellCheck={false} placeholder='variables (JSON), e.g. {"listing_id": "lst-000003"}' aria-label="variables" />
      </div>
      <div className="live-table">
        <table>
          <thead>
            <tr>
              <th>#</th>
              <th>received</th>
              <th>topic</th>
              <th>partition</th>
              <th>offset</th>
              {hasEpoch && <th>epoch</th>}
              <th>data</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.seq} className={row.error ? 'error' : undefined} data-testid="live-row">
                <td>{row.seq}</td>
                <td>{formatClock(row.receivedAtMs)}</td>
                <td>{row.position?.topic ?? NO_DATA}</td>
                <td data-testid="live-partition">{row.position?.partition ?? NO_DATA}</td>
                <td data-testid="live-offset">{row.position?.offset ?? NO_DATA}</td>
                {hasEpoch && <td>{row.position?.epoch ?? NO_DATA}</td>}
                <td className="summary">{row.summary}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {rows.length === 0 && <p className="muted empty">{running ? 'subscribed: waiting for events…' : 'pick a subscription and press Start'}</p>}
      </div>
    </div>
  );
}
