import { Sparkline } from './sparkline';
import { formatCount, formatMiB, formatMs, formatRate } from './format';
import { VITALS_CAPACITY, type VitalsState } from './use-vitals';
import type { VitalsSample } from './vitals';

interface Vital {
  readonly key: string;
  readonly title: string;
  readonly read: (s: VitalsSample) => number | undefined;
  readonly format: (v: number | undefined) => string;
  readonly note?: string;
}

/** One minute of samples: the narrowest x axis. */
const MIN_SPAN_SAMPLES = 60;

const VITALS: readonly Vital[] = [
  { key: 'connections', title: 'Connections', read: (s) => s.connections, format: formatCount },
  { key: 'subscriptions', title: 'Active subscriptions', read: (s) => s.subscriptions, format: formatCount },
  { key: 'operations', title: 'Distinct operations', read: (s) => s.operations, format: formatCount, note: 'executions per event' },
  { key: 'events-in', title: 'Events in', read: (s) => s.eventsInPerSecond, format: formatRate, note: 'from Redis' },
  { key: 'frames-out', title: 'Frames out', read: (s) => s.framesOutPerSecond, format: formatRate, note: 'to sockets' },
  { key: 'p99', title: 'p99 event → wire', read: (s) => s.p99LatencyMs, format: formatMs, note: 'Kafka timestamp to socket write, last 10 s' },
  { key: 'rss', title: 'RSS', read: (s) => s.rssBytes, format: formatMiB },
  { key: 'heap', title: 'Heap used', read: (s) => s.heapUsedBytes, format: formatMiB },
];

export function VitalsView({ vitals, metricsEnabled }: { vitals: VitalsState; metricsEnabled: boolean }) {
  const { samples, error } = vitals;
  const latest = samples.at(-1);
  // The x axis starts at one minute and grows to the full history, so a fresh console is not a sliver at the right.
  const span = Math.min(VITALS_CAPACITY, Math.max(MIN_SPAN_SAMPLES, samples.length));
  return (
    <div className="vitals">
      <div className="vitals-head">
        <span className={`badge ${latest?.ready ? 'ok' : 'bad'}`} data-testid="vitals-ready">
          {latest === undefined ? 'waiting for the first sample' : latest.ready ? 'gateway ready' : 'gateway not ready'}
        </span>
        <span className="muted">
          one sample per second, up to the last {Math.round(VITALS_CAPACITY / 60)} minutes · {samples.length} samples
        </span>
        {!metricsEnabled && <span className="muted">latency and memory need GATEWAY_METRICS=true</span>}
        {error !== undefined && <span className="error">{error}</span>}
      </div>
      <div className="vitals-grid">
        {VITALS.map((vital) => {
          const values = samples.map(vital.read);
          return (
            <section className="vital" key={vital.key} data-testid={`vital-${vital.key}`}>
              <h3>{vital.title}</h3>
              <div className="vital-value">{vital.format(latest === undefined ? undefined : vital.read(latest))}</div>
              <Sparkline values={values} capacity={span} label={`${vital.title} over the last minutes`} />
              {vital.note !== undefined && <div className="muted small">{vital.note}</div>}
            </section>
          );
        })}
      </div>
    </div>
  );
}
