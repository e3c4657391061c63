// A client that does what our docs tell production clients to do: remember the last position per
// partition and, after any disconnect, resubscribe (to whichever gateway answers) with them.
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { RecordingClient } from './harness.js';

export interface Recovery {
  readonly recovered: boolean;
  readonly reason?: string;
  readonly partitions?: number[];
  readonly epoch?: string;
}

export interface ResumingClient extends RecordingClient {
  /** Every recovery signal received (one per resumed subscription), in order. */
  readonly recoveries: Recovery[];
  /** Gateway URLs connected to, in order. */
  readonly connectedTo: string[];
  /** Latency per delivery (receipt − `occurred_at` as epoch ms), when the payload carries it. */
  readonly latenciesMs: number[];
  /** What a resubscription would send now (undefined before the first position with an epoch). */
  resumeState(): ResumeState | undefined;
  readonly client: Client;
}

export interface ResumeState {
  readonly epoch: string;
  readonly positions: Readonly<Record<string, string>>;
}

interface Position {
  partition: number;
  offset: string;
  epoch?: string;
}

/**
 * graphql-ws re-sends a subscription's payload object as it is at reconnect time, so keeping
 * `payload.extensions.resume` up to date is all a client needs to resume.
 */
export function connectResumingClient(
  name: string,
  urls: readonly string[],
  query: string,
  options: { firstUrl?: number; resume?: ResumeState } = {},
): ResumingClient {
  let attempt = options.firstUrl ?? 0;
  const positions: Record<string, string> = { ...options.resume?.positions };
  const payload: { query: string; extensions: Record<string, unknown> } = {
    query,
    extensions: options.resume ? { resume: { epoch: options.resume.epoch, positions } } : {},
  };
  const record: Omit<ResumingClient, 'client'> & { completed: boolean } = {
    name,
    positions: [],
    errors: [],
    results: [],
    completed: false,
    recoveries: [],
    connectedTo: [],
    latenciesMs: [],
    resumeState: () => payload.extensions['resume'] as ResumeState | undefined,
  };
  const client = createClient({
    url: () => {
      const url = urls[attempt++ % urls.length] as string;
      record.connectedTo.push(url);
      return url;
    },
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 30,
    shouldRetry: () => true,
    retryWait: () => sleep(100 + Math.random() * 200), // jittered, as a fleet of clients should
  });
  client.subscribe(payload, {
    next: (result) => {
      const extensions = result.extensions as { position?: Position; recovery?: Recovery } | undefined;
      if (extensions?.recovery) {
        record.recoveries.push(extensions.recovery);
        return;
      }
      const position = extensions?.position;
      if (!position) {
        record.errors.push(new Error(`a next without extensions.position: ${JSON.stringify(result)}`));
        return;
      }
      const occurredAt = Number((result.data as { listingUpdated?: { occurred_at?: string } } | undefined)?.listingUpdated?.occurred_at);
      if (Number.isFinite(occurredAt) && occurredAt > 1e12) record.latenciesMs.push(Date.now() - occurredAt);
      record.positions.push(`${position.partition}:${position.offset}`);
      positions[String(position.partition)] = position.offset;
      if (position.epoch !== undefined) payload.extensions['resume'] = { epoch: position.epoch, positions };
    },
    error: (error: unknown) => record.errors.push(error),
    complete: () => {
      record.completed = true;
    },
  });
  return Object.assign(record, { client });
}

/** p-quantile (0..1) of a sample, in the sample's unit. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}
