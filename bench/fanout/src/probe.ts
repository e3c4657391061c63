/**
 * The responsiveness probe of the burst scenario (issue 18): while traffic runs, `GET /healthz`
 * every 50 ms with a 2 s timeout, and (when the server exposes it) `GET /metrics` once a second
 * for the gateway's own event-loop delay.
 *
 * The probe runs in the bench's main process, which shares two cores with the server, the load
 * workers and Redis: a late answer can be the probe's fault (its timer fired late, or its loop was
 * busy when the answer arrived). So it watches its own loop with a 10 ms heartbeat, and every
 * answer slower than 100 ms during which the probe itself lagged more than 20 ms is counted as
 * "suspect" next to the plain figure — the reader sees how much of a slow share the bench could
 * have caused. The gateway's `wirestream_gateway_event_loop_delay_seconds` is measured inside the
 * gateway and is not affected by the probe at all.
 */
import http from 'node:http';
import { quantile } from '@wirestream/bench-kit';

export interface ProbeOptions {
  /** `http://host:port` of the server. */
  readonly httpBase: string;
  /** @default 50 */
  readonly healthzEveryMs?: number;
  /** An answer later than this counts as unanswered. @default 2_000 */
  readonly timeoutMs?: number;
  /** Scrape `/metrics` this often; 0 = never. @default 1_000 */
  readonly metricsEveryMs?: number;
}

/** One `/metrics` scrape: the gateway's event-loop delay over the interval since the previous one. */
export interface MetricsScrape {
  /** Milliseconds since the probe started. */
  readonly atMs: number;
  readonly eldP50Ms: number | undefined;
  readonly eldP99Ms: number | undefined;
  readonly eldMaxMs: number | undefined;
  readonly inboundQueueBytes: number | undefined;
  readonly redisPausedTotal: number | undefined;
}

export interface ProbeSummary {
  readonly polls: number;
  /** Answered `/healthz` response times, ms (sorted ascending). */
  readonly answeredMs: readonly number[];
  readonly unanswered: number;
  readonly over100Ms: number;
  /** Answers over 100 ms (or unanswered) while the probe's own loop lagged > 20 ms. */
  readonly suspect: number;
  /** The probe's own timer lag (heartbeat every 10 ms): p99 and max, ms. */
  readonly ownLagP99Ms: number;
  readonly ownLagMaxMs: number;
  /** Scrapes after the first (which only resets the gateway's interval); empty when `/metrics` has no ELD. */
  readonly scrapes: readonly MetricsScrape[];
  /** Scrapes that did not answer within the timeout. */
  readonly scrapesUnanswered: number;
  /** The server exposes `wirestream_gateway_event_loop_delay_seconds`. */
  readonly eldExposed: boolean;
}

export interface Probe {
  stop(): Promise<ProbeSummary>;
}

const HEARTBEAT_MS = 10;
const SUSPECT_LAG_MS = 20;
const SLOW_MS = 100;

/** One `/healthz` poll: sent at, answered at (undefined while in flight or on error), and whether it was a 2xx. */
export interface Poll {
  readonly sentMs: number;
  doneMs: number | undefined;
  ok: boolean;
}

/** Starts polling now; `stop()` waits for the requests in flight (at most `timeoutMs`). */
export function startProbe(options: ProbeOptions): Probe {
  const { httpBase, healthzEveryMs = 50, timeoutMs = 2_000, metricsEveryMs = 1_000 } = options;
  // Keep-alive, unlimited sockets: a stuck server gets a new connection per poll rather than a queue behind one.
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const startedMs = performance.now();
  const polls: Poll[] = [];
  const lags: { atMs: number; lagMs: number }[] = [];
  const scrapes: MetricsScrape[] = [];
  const inFlight = new Set<Promise<void>>();
  let scrapesUnanswered = 0;
  let scrapeBusy = false;
  let firstScrapeDone = false;
  let eldExposed = false;
  let stopped = false;

  const track = (p: Promise<void>): void => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  let lastBeat = performance.now();
  const heartbeat = setInterval(() => {
    const now = performance.now();
    lags.push({ atMs: now, lagMs: Math.max(0, now - lastBeat - HEARTBEAT_MS) });
    lastBeat = now;
  }, HEARTBEAT_MS);

  // Scheduled against the start: a late timer does not shift every later poll.
  let pollIndex = 0;
  const schedule = (): void => {
    if (stopped) return;
    pollIndex++;
    const dueMs = startedMs + pollIndex * healthzEveryMs;
    timer = setTimeout(fire, Math.max(0, dueMs - performance.now()));
  };
  const fire = (): void => {
    const poll: Poll = { sentMs: performance.now(), doneMs: undefined, ok: false };
    polls.push(poll);
    track(
      get(agent, `${httpBase}/healthz`, timeoutMs).then((body) => {
        poll.doneMs = performance.now();
        poll.ok = body !== undefined;
      }),
    );
    schedule();
  };
  let timer = setTimeout(fire, 0);

  const scrape = (final = false): void => {
    if (scrapeBusy || (stopped && !final)) return;
    scrapeBusy = true;
    track(
      get(agent, `${httpBase}/metrics`, timeoutMs).then((body) => {
        scrapeBusy = false;
        if (body === undefined) {
          if (firstScrapeDone) scrapesUnanswered++;
          return;
        }
        const parsed = parseMetrics(body, performance.now() - startedMs);
        if (parsed.eldP99Ms !== undefined) eldExposed = true;
        // The first scrape only starts the gateway's interval: its figures cover the time before the probe.
        if (firstScrapeDone && eldExposed) scrapes.push(parsed);
        firstScrapeDone = true;
      }),
    );
  };
  const metricsTimer = metricsEveryMs > 0 ? setInterval(() => scrape(), metricsEveryMs) : undefined;
  if (metricsEveryMs > 0) scrape();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (metricsTimer) clearInterval(metricsTimer);
      // One last scrape covers the end of the window.
      if (metricsEveryMs > 0) scrape(true);
      await Promise.all([...inFlight]);
      clearInterval(heartbeat);
      agent.destroy();
      return summarize(polls, lags, timeoutMs, { scrapes, scrapesUnanswered, eldExposed });
    },
  };
}

/** The probe's figures from its polls and heartbeat (exported for its unit test). */
export function summarize(
  polls: readonly Poll[],
  lags: readonly { atMs: number; lagMs: number }[],
  timeoutMs: number,
  metrics: Pick<ProbeSummary, 'scrapes' | 'scrapesUnanswered' | 'eldExposed'>,
): ProbeSummary {
  const answeredMs: number[] = [];
  let unanswered = 0;
  let over100Ms = 0;
  let suspect = 0;
  // Lags sorted by time already; a poll's window is [sent, done] (or the timeout).
  for (const p of polls) {
    const answered = p.ok && p.doneMs !== undefined && p.doneMs - p.sentMs <= timeoutMs;
    const ms = answered ? (p.doneMs as number) - p.sentMs : undefined;
    if (ms === undefined) unanswered++;
    else answeredMs.push(ms);
    if (ms === undefined || ms > SLOW_MS) {
      // Unanswered polls are added to the slow ones once, below.
      if (ms !== undefined) over100Ms++;
      const end = p.sentMs + (ms ?? timeoutMs) + HEARTBEAT_MS;
      if (lags.some((l) => l.atMs >= p.sentMs && l.atMs <= end && l.lagMs > SUSPECT_LAG_MS)) suspect++;
    }
  }
  answeredMs.sort((a, b) => a - b);
  const lagValues = lags.map((l) => l.lagMs).sort((a, b) => a - b);
  return {
    polls: polls.length,
    answeredMs,
    unanswered,
    // Unanswered polls are also slower than 100 ms: counted in both shares.
    over100Ms: over100Ms + unanswered,
    suspect,
    ownLagP99Ms: quantile(lagValues, 0.99),
    ownLagMaxMs: lagValues.at(-1) ?? 0,
    ...metrics,
  };
}

const ELD = /^wirestream_gateway_event_loop_delay_seconds\{[^}]*quantile="([^"]+)"[^}]*\}\s+(\S+)/;
const QUEUE = /^wirestream_gateway_inbound_queue_bytes(?:\{[^}]*\})?\s+(\S+)/;
const PAUSED = /^wirestream_gateway_redis_paused_total(?:\{[^}]*\})?\s+(\S+)/;

/** The few series the probe reads from a Prometheus text exposition. */
export function parseMetrics(text: string, atMs: number): MetricsScrape {
  const eld = new Map<string, number>();
  let inboundQueueBytes: number | undefined;
  let redisPausedTotal: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('wirestream_gateway_')) continue;
    const e = ELD.exec(line);
    if (e) {
      eld.set(e[1] as string, Number(e[2]) * 1_000);
      continue;
    }
    const q = QUEUE.exec(line);
    if (q) inboundQueueBytes = Number(q[1]);
    const p = PAUSED.exec(line);
    if (p) redisPausedTotal = Number(p[1]);
  }
  const finite = (v: number | undefined): number | undefined => (v !== undefined && Number.isFinite(v) ? v : undefined);
  return {
    atMs,
    eldP50Ms: finite(eld.get('0.5')),
    eldP99Ms: finite(eld.get('0.99')),
    eldMaxMs: finite(eld.get('1')),
    inboundQueueBytes,
    redisPausedTotal,
  };
}

/** GET, resolving to the body on 2xx, undefined on error, non-2xx or timeout. */
function get(agent: http.Agent, url: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(res.statusCode !== undefined && res.statusCode < 300 ? Buffer.concat(chunks).toString('utf8') : undefined));
      res.on('error', () => resolve(undefined));
    });
    // `timeout` is socket inactivity; the hard deadline is ours.
    const deadline = setTimeout(() => req.destroy(), timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}
