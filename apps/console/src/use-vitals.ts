import { useEffect, useState } from 'react';
import { readMetrics } from './prometheus';
import type { ConsoleSettings } from './settings';
import { createVitalsHistory, type GatewayStatsReading, type VitalsSample } from './vitals';
import { describeError } from './format';

export const VITALS_POLL_MS = 1_000;
export const VITALS_CAPACITY = 300; // 5 minutes at one poll per second

export interface VitalsState {
  readonly samples: readonly VitalsSample[];
  /** Why the last poll failed, or undefined. */
  readonly error: string | undefined;
}

/**
 * Polls `/stats` and `/metrics` once a second from the moment the console opens, so the charts
 * already hold the last minutes when the vital-signs view is shown.
 */
export function useVitals(settings: ConsoleSettings): VitalsState {
  const [state, setState] = useState<VitalsState>({ samples: [], error: undefined });
  useEffect(() => {
    const history = createVitalsHistory({ capacity: VITALS_CAPACITY });
    let stopped = false;
    let inFlight = false;
    async function poll(): Promise<void> {
      if (inFlight) return; // a slow gateway gets no pile-up of requests
      inFlight = true;
      try {
        const [stats, metricsText] = await Promise.all([
          fetch(settings.statsPath, { cache: 'no-store' }).then((r) => {
            if (!r.ok) throw new Error(`GET ${settings.statsPath} answered ${r.status}`);
            return r.json() as Promise<GatewayStatsReading>;
          }),
          settings.metricsPath === null ? undefined : fetch(settings.metricsPath, { cache: 'no-store' }).then((r) => (r.ok ? r.text() : undefined)),
        ]);
        if (stopped) return;
        history.push({ atMs: Date.now(), stats, metrics: metricsText === undefined ? undefined : readMetrics(metricsText) });
        setState({ samples: [...history.samples()], error: undefined });
      } catch (err) {
        if (!stopped) setState((s) => ({ samples: s.samples, error: describeError(err) }));
      } finally {
        inFlight = false;
      }
    }
    void poll();
    const timer = setInterval(() => void poll(), VITALS_POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [settings]);
  return state;
}
