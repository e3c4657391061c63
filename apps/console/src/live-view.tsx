import { useState } from 'react';
import type { WirestreamClient } from '@wirestream/client';
import type { SubscriptionExample } from './examples';
import { Sparkline } from './sparkline';
import { formatClock, NO_DATA } from './format';
import { RATE_WINDOW_SECONDS, useLiveSubscription, type LiveRow } from './use-live-subscription';

export interface LiveViewProps {
  readonly client: WirestreamClient;
  readonly examples: readonly SubscriptionExample[];
}

export function LiveView({ client, examples }: LiveViewProps) {
  const [field, setField] = useState(examples[0]?.field ?? '');
  const [query, setQuery] = useState(examples[0]?.query ?? '');
  const [variables, setVariables] = useState('');
  const [conflate, setConflate] = useState(false);
  const live = useLiveSubscription(client);
  const example = examples.find((e) => e.field === field);

  function choose(name: string): void {
    setField(name);
    const example = examples.find((e) => e.field === name);
    if (example) setQuery(example.query);
  }

  return (
    <div className="live">
      <LiveControls
        examples={examples}
        field={field}
        onChoose={choose}
        running={live.running}
        onStart={() => live.start(query, variables, { conflate })}
        conflate={conflate}
        onConflate={setConflate}
        onStop={live.halt}
        onClear={live.clear}
        rates={live.rates}
        received={live.received}
        conflated={live.conflated}
        error={live.error}
      />
      <div className="live-editors">
        <textarea value={query} onChange={(e) => setQuery(e.target.value)} spellCheck={false} aria-label="subscription document" data-testid="live-query" />
        <textarea value={variables} onChange={(e) => setVariables(e.target.value)} spellCheck={false} placeholder={variablesHint(example)} aria-label="variables" data-testid="live-variables" />
      </div>
      <LiveTable rows={live.rows} running={live.running} />
    </div>
  );
}

/** The variables box's placeholder: the chosen example's own variables, as a JSON object to fill in. */
function variablesHint(example: SubscriptionExample | undefined): string {
  const names = example?.variables ?? [];
  if (names.length === 0) return 'variables (JSON): this example takes none';
  return `variables (JSON), e.g. {${names.map((name) => `"${name}": "…"`).join(', ')}}`;
}

interface LiveControlsProps {
  readonly examples: readonly SubscriptionExample[];
  readonly field: string;
  readonly onChoose: (field: string) => void;
  readonly running: boolean;
  readonly onStart: () => void;
  readonly onStop: () => void;
  readonly onClear: () => void;
  readonly rates: readonly number[];
  readonly received: number;
  /** Events skipped for newer ones of their key (conflation), since the last clear. */
  readonly conflated: number;
  readonly conflate: boolean;
  readonly onConflate: (conflate: boolean) => void;
  readonly error: string | undefined;
}

function LiveControls({ examples, field, onChoose, running, onStart, onStop, onClear, rates, received, conflated, conflate, onConflate, error }: LiveControlsProps) {
  const lastSecond = rates.at(-1);
  const topic = examples.find((e) => e.field === field)?.topic;
  return (
    <div className="live-controls">
      <label>
        Subscription{' '}
        <select value={field} onChange={(e) => onChoose(e.target.value)} data-testid="live-field">
          {examples.map((e) => (
            <option key={e.field} value={e.field}>
              {e.field}
            </option>
          ))}
        </select>
      </label>
      {topic !== undefined && (
        <span className="live-topic" data-testid="live-topic" title="the Kafka topic and how ingest decodes its values and keys (@topic in the SDL)">
          {topic.name} · {topic.format}
          {topic.keyFormat === 'STRING' ? '' : ` (key ${topic.keyFormat})`}
        </span>
      )}
      <label title="latest value per key: while this view lags, the gateway skips older events of a key for the newest (extensions.conflate; applies at the next Start)">
        <input type="checkbox" checked={conflate} onChange={(e) => onConflate(e.target.checked)} data-testid="live-conflate" /> latest per key
      </label>
      <button type="button" onClick={running ? onStop : onStart} data-testid="live-toggle" className={running ? 'stop' : 'start'}>
        {running ? 'Stop' : 'Start'}
      </button>
      <button type="button" onClick={onClear}>
        Clear
      </button>
      <span className="live-rate" data-testid="live-rate">
        <strong>{lastSecond === undefined ? NO_DATA : `${lastSecond}/s`}</strong> · {received} events
        {conflated > 0 && <span data-testid="live-conflated"> · {conflated} skipped for newer values</span>}
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
  );
}

function LiveTable({ rows, running }: { readonly rows: readonly LiveRow[]; readonly running: boolean }) {
  const hasEpoch = rows.some((r) => r.position?.epoch !== undefined);
  const hasConflated = rows.some((r) => r.conflated !== undefined);
  return (
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
            {hasConflated && <th title="older events of this key the gateway skipped (extensions.conflated)">skipped</th>}
            <th>data</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <LiveTableRow key={row.seq} row={row} hasEpoch={hasEpoch} hasConflated={hasConflated} />
          ))}
        </tbody>
      </table>
      {rows.length === 0 && <p className="muted empty">{running ? 'subscribed: waiting for events…' : 'pick a subscription and press Start'}</p>}
    </div>
  );
}

function LiveTableRow({ row, hasEpoch, hasConflated }: { readonly row: LiveRow; readonly hasEpoch: boolean; readonly hasConflated: boolean }) {
  return (
    <tr className={row.error ? 'error' : undefined} data-testid="live-row">
      <td>{row.seq}</td>
      <td>{formatClock(row.receivedAtMs)}</td>
      <td>{row.position?.topic ?? NO_DATA}</td>
      <td data-testid="live-partition">{row.position?.partition ?? NO_DATA}</td>
      <td data-testid="live-offset">{row.position?.offset ?? NO_DATA}</td>
      {hasEpoch && <td>{row.position?.epoch ?? NO_DATA}</td>}
      {hasConflated && <td data-testid="live-row-conflated">{row.conflated ?? ''}</td>}
      <td className="summary">{row.summary}</td>
    </tr>
  );
}
