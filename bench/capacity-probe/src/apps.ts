// The built apps this probe starts (as deployed: NODE_ENV=production, only PATH inherited) and their metrics.
import { startNodeProcess, type ManagedProcess } from '@wirestream/bench-kit';

/** `node <args>` with `env` and NODE_ENV=production; stop() gives it 10 s to drain before SIGKILL. */
export function startApp(label: string, args: readonly string[], env: Readonly<Record<string, string>>): ManagedProcess {
  return startNodeProcess(label, args, { inheritEnv: false, graceMs: 10_000, env: { NODE_ENV: 'production', ...env } });
}

/** Prometheus text → per metric name, the sum of its series (one series for the process gauges). */
export async function scrape(url: string, timeoutMs = 2_000): Promise<Map<string, number> | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const values = new Map<string, number>();
    for (const line of (await res.text()).split('\n')) {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
      if (m) values.set(m[1] as string, (values.get(m[1] as string) ?? 0) + Number(m[3]));
    }
    return values;
  } catch {
    return undefined;
  }
}
