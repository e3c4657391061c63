/**
 * Look-ups batched and cached around a source, with DataLoader (MIT) and lru-cache (BlueOak-1.0.0):
 * every `load` of one event-loop turn — a slice renders every operation group of its events in one
 * turn — becomes one request per source with each distinct key once, whatever the number of groups
 * or subscribers; an answer is kept `ttlMs` (at most `maxEntries`, least recently used out first),
 * so a warm cache sends nothing. A failure is not cached: the next event asks again.
 *
 * Callers whose request headers differ (headers from token claims, request-headers.ts) are
 * partitions: each has its own batches, and its cache entries are keyed by its header values too,
 * so one caller's answer is never served to another. Callers without such headers share one.
 */
import { performance } from 'node:perf_hooks';
import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { LookupCaller, RequestHeaders } from './request-headers.js';
import type { EntityResult, EntitySource, Representation, RequestOutcome } from './types.js';

/** Partitions (distinct callers' header values) whose batchers are kept; their cache entries are the cache's. */
const MAX_PARTITIONS = 1_000;
/** Traced loads remembered per request (a parent and links): a span of a thousand links helps no one. */
const MAX_TRACE_PARENTS = 32;

export interface EntityLoaderOptions {
  /** How long an answer is reused. @default 30_000 (30 s) */
  readonly ttlMs?: number;
  /** Answers kept at most. @default 10_000 */
  readonly maxEntries?: number;
  /** Representations in one request at most. @default 100 */
  readonly maxBatchSize?: number;
  /** Told of every request and every load (metrics): bind its labels once, it runs per look-up. @default undefined */
  readonly observer?: EntityLoaderObserver | undefined;
  /** The source's headers (createRequestHeaders), kept for whoever builds callers for `load`. @default undefined */
  readonly requestHeaders?: RequestHeaders | undefined;
  /** Spans per request (the gateway's are OpenTelemetry's, lookup-tracing.ts). @default undefined (none) */
  readonly tracer?: EntityLoaderTracer | undefined;
}

/**
 * Traces of a loader's requests, kept apart from any tracing library: `capture` runs at each load
 * and returns the traced context asking (undefined: none), `begin` runs as a request starts with the
 * distinct captured ones that joined it and returns what ends the span (undefined: no span).
 */
export interface EntityLoaderTracer {
  capture(): unknown;
  begin(request: LookupRequestTrace): ((outcome: LookupRequestEnd) => void) | undefined;
}

export interface LookupRequestTrace {
  readonly source: string;
  /** Representations in the request. */
  readonly batchSize: number;
  /** Loads of this batcher answered from the cache since its previous request. */
  readonly cacheHits: number;
  /** What `capture` returned for the loads in the request (distinct, at most 32): the first is the parent, the others links. */
  readonly parents: readonly unknown[];
}

export interface LookupRequestEnd {
  /** The HTTP status, when an answer arrived. */
  readonly status: number | undefined;
  /** Representations that failed (all of them when the request did). */
  readonly failed: number;
  /** Why the whole request failed (timeout, unreachable, an HTTP error). */
  readonly error: Error | undefined;
}

/** What a loader reports as it goes, for metrics. */
export interface EntityLoaderObserver {
  /** A load answered from the cache (`hit`) or sent on to a request. */
  load(hit: boolean): void;
  /** A request ended: its representations, how long it took, how many of them failed. */
  request(representations: number, seconds: number, failed: number): void;
}

/** Counters of one loader, written here only. */
export interface EntityLoaderStats {
  /** Requests sent, representations in them, loads answered from the cache, representations that failed. */
  requests: number;
  representations: number;
  cacheHits: number;
  errors: number;
}

export interface EntityLoader {
  readonly source: string;
  /** `caller`: whose headers the request carries (request-headers.ts); undefined: the source's own only. */
  /** The answer itself when the cache holds one that arrived; a promise otherwise. */
  load(representation: Representation, caller?: LookupCaller): Promise<Readonly<Record<string, unknown>> | null> | Readonly<Record<string, unknown>> | null;
  readonly stats: Readonly<EntityLoaderStats>;
  /** As given in the options: what `load`'s callers are built with. */
  readonly requestHeaders: RequestHeaders | undefined;
}

export function createEntityLoader(source: EntitySource, options: EntityLoaderOptions = {}): EntityLoader {
  const { ttlMs = 30_000, maxEntries = 10_000, maxBatchSize = 100, observer, requestHeaders, tracer } = options;
  const stats: EntityLoaderStats = { requests: 0, representations: 0, cacheHits: 0, errors: 0 };
  const cache = new LRUCache<string, Promise<EntityResult>>({ max: maxEntries, ttl: ttlMs });
  // Answers that arrived, by their cached promise: a warm load answers with the value itself, so an
  // operation whose look-ups all hit the cache executes synchronously (graphql-js returns a result,
  // not a promise) and takes the core's synchronous path, like a projected one. Entries go with
  // their promise when the cache drops it.
  const settled = new WeakMap<Promise<EntityResult>, Readonly<Record<string, unknown>> | null>();
  const cacheMap = {
    get: (key: string) => cache.get(key),
    set: (key: string, answer: Promise<EntityResult>) => {
      answer.then(
        (value) => {
          if (!(value instanceof Error)) settled.set(answer, value);
        },
        () => undefined, // DataLoader's caller sees the failure; nothing is remembered
      );
      cache.set(key, answer);
    },
    delete: (key: string) => cache.delete(key),
    clear: () => cache.clear(),
  };
  /** A load's representation with its cache key, worked out once by `load` (DataLoader reads the key back, not a second JSON.stringify). */
  interface Keyed {
    readonly cacheKey: string;
    readonly representation: Representation;
  }
  type Loader = DataLoader<Keyed, EntityResult, string>;
  /** What a batcher's next request's span is told: the traced loads that joined it, the cache hits since the last. */
  interface TraceState {
    parents: unknown[];
    hits: number;
  }
  type Partition = TraceState & { readonly loader: Loader };
  const batchFor = (p: TraceState, headers: Readonly<Record<string, string>> | undefined) => async (keyed: readonly Keyed[]): Promise<readonly EntityResult[]> => {
    const keys = keyed.map((k) => k.representation);
    stats.requests++;
    stats.representations += keys.length;
    const started = performance.now();
    let failed = keys.length;
    const end = tracer?.begin({ source: source.name, batchSize: keys.length, cacheHits: p.hits, parents: p.parents });
    p.parents = [];
    p.hits = 0;
    const outcome: RequestOutcome = { status: undefined };
    let error: unknown;
    try {
      const results = await source.fetchEntities(keys, headers, outcome);
      failed = 0;
      for (const r of results) if (r instanceof Error) failed++;
      return results;
    } catch (err) {
      error = err;
      throw err;
    } finally {
      stats.errors += failed;
      observer?.request(keys.length, (performance.now() - started) / 1_000, failed);
      end?.({ status: outcome.status, failed, error: error instanceof Error ? error : undefined });
    }
  };
  const newPartition = (headers: Readonly<Record<string, string>> | undefined): Partition => {
    const trace: TraceState = { parents: [], hits: 0 };
    return Object.assign(trace, { loader: new DataLoader(batchFor(trace, headers), { cacheKeyFn: cacheKeyOf, cacheMap, maxBatchSize }) });
  };
  const shared = newPartition(undefined);
  // One batcher per caller partition: DataLoader batches per instance, so a batch holds one caller's headers.
  // Evicting one loses nothing: its cache entries live in `cache`, a scheduled batch still runs.
  const partitions = new LRUCache<string, Partition>({ max: MAX_PARTITIONS });
  const partitionOf = (caller: LookupCaller): Partition => {
    let partition = partitions.get(caller.key);
    if (partition === undefined) {
      partition = newPartition(caller.headers);
      partitions.set(caller.key, partition);
    }
    return partition;
  };
  return {
    source: source.name,
    stats,
    requestHeaders,
    load(representation, caller) {
      const partitioned = caller !== undefined && caller.key !== '';
      const partition = partitioned ? partitionOf(caller) : shared;
      const { loader } = partition;
      // A partition's entries are keyed by its caller too: one caller's answer is never another's.
      const cacheKey = partitioned ? `${caller.key}\u0000${representationKey(representation)}` : representationKey(representation);
      const cached = cache.get(cacheKey);
      const hit = cached !== undefined;
      if (hit) stats.cacheHits++;
      observer?.load(hit);
      if (tracer !== undefined) {
        if (hit) partition.hits++;
        // The traced event asking (its span, active while it renders): the request's span parent or a link.
        const parent = tracer.capture();
        if (parent !== undefined && partition.parents.length < MAX_TRACE_PARENTS && !partition.parents.includes(parent)) partition.parents.push(parent);
      }
      if (hit) {
        const answer = settled.get(cached);
        if (answer !== undefined) return answer;
      }
      // DataLoader keeps a key that failed alone (an Error in the batch's answers) cached: cleared
      // here, so the next event asks again; a failed batch it clears itself.
      const keyed: Keyed = { cacheKey, representation };
      return (loader.load(keyed) as Promise<Readonly<Record<string, unknown>> | null>).catch((err: unknown) => {
        loader.clear(keyed);
        throw err;
      });
    },
  };
}

const cacheKeyOf = (keyed: { readonly cacheKey: string }): string => keyed.cacheKey;

/** The cache key: the type and the key fields' values in their order (built by the caller in a fixed order). */
export function representationKey(representation: Representation): string {
  return JSON.stringify(representation);
}
