/**
 * Look-ups batched and cached around a source, with DataLoader (MIT) and lru-cache (BlueOak-1.0.0):
 * every `load` of one event-loop turn — a slice renders every operation group of its events in one
 * turn — becomes one request per source with each distinct key once, whatever the number of groups
 * or subscribers; an answer is kept `ttlMs` (at most `maxEntries`, least recently used out first),
 * so a warm cache sends nothing. A failure is not cached: the next event asks again.
 */
import { performance } from 'node:perf_hooks';
import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { EntityResult, EntitySource, Representation } from './types.js';

export interface EntityLoaderOptions {
  /** How long an answer is reused. @default 30_000 (30 s) */
  readonly ttlMs?: number;
  /** Answers kept at most. @default 10_000 */
  readonly maxEntries?: number;
  /** Representations in one request at most. @default 100 */
  readonly maxBatchSize?: number;
  /** Told of every request and every load (metrics): bind its labels once, it runs per look-up. @default undefined */
  readonly observer?: EntityLoaderObserver | undefined;
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
  load(representation: Representation): Promise<Readonly<Record<string, unknown>> | null>;
  readonly stats: Readonly<EntityLoaderStats>;
}

export function createEntityLoader(source: EntitySource, options: EntityLoaderOptions = {}): EntityLoader {
  const { ttlMs = 30_000, maxEntries = 10_000, maxBatchSize = 100, observer } = options;
  const stats: EntityLoaderStats = { requests: 0, representations: 0, cacheHits: 0, errors: 0 };
  const cache = new LRUCache<string, Promise<EntityResult>>({ max: maxEntries, ttl: ttlMs });
  const batch = async (keys: readonly Representation[]): Promise<readonly EntityResult[]> => {
    stats.requests++;
    stats.representations += keys.length;
    const started = performance.now();
    let failed = keys.length;
    try {
      const results = await source.fetchEntities(keys);
      failed = 0;
      for (const r of results) if (r instanceof Error) failed++;
      return results;
    } finally {
      stats.errors += failed;
      observer?.request(keys.length, (performance.now() - started) / 1_000, failed);
    }
  };
  const loader = new DataLoader<Representation, EntityResult, string>(batch, { cacheKeyFn: representationKey, cacheMap: cache, maxBatchSize });
  return {
    source: source.name,
    stats,
    load(representation) {
      const hit = cache.has(representationKey(representation));
      if (hit) stats.cacheHits++;
      observer?.load(hit);
      // DataLoader keeps a key that failed alone (an Error in the batch's answers) cached: cleared
      // here, so the next event asks again; a failed batch it clears itself.
      return (loader.load(representation) as Promise<Readonly<Record<string, unknown>> | null>).catch((err: unknown) => {
        loader.clear(representation);
        throw err;
      });
    },
  };
}

/** The cache key: the type and the key fields' values in their order (built by the caller in a fixed order). */
export function representationKey(representation: Representation): string {
  return JSON.stringify(representation);
}
