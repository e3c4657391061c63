import { setTimeout as sleep } from 'node:timers/promises';
import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { readWireHeader, type SchemaDecoders } from '@wirestream/registry';
import type { Logger } from '@wirestream/telemetry';
import { backoffMs } from './backoff.js';
import type { IngestState } from './ingest-state.js';

/** A wire-format topic's schema needs: which ids a message uses (its value's and, for a registry keyFormat, its key's). */
export interface WireRoute {
  readonly decoders: SchemaDecoders;
  readonly keyInWireFormat: boolean;
}

export interface SchemaGateOptions {
  readonly state: IngestState;
  readonly logger: Logger;
  /** First pause before asking a source that failed again; doubles up to 2 s. */
  readonly retryBackoffMs: number;
  /** How long a chunk waits for its schemas inline before its partition is paused instead. @default 1_000 */
  readonly inlineWaitMs?: number;
}

/**
 * Before a chunk of a wire-format topic is converted (synchronously), every schema id it uses must
 * be loaded. When the source is down or slow, the partition is paused — only this one: the others,
 * and this topic's partitions whose ids are cached, keep flowing — and the batch returns
 * uncommitted from this chunk on; a retry loop resumes the partition once the ids are loaded, and
 * kafkajs re-fetches from the last resolved offset. Nothing is dead-lettered because the source
 * blinked: only an answer ("no such id") makes a message a dead letter.
 */
export interface SchemaGate {
  /** True when the chunk's schemas are loaded; false when the partition was paused (leave the batch). */
  readonly ready: (payload: EachBatchPayload, wire: WireRoute, start: number, end: number) => Promise<boolean>;
  /** Loads the ids of one message again (a retry after its schema was evicted). */
  readonly reload: (wire: WireRoute, message: KafkaMessage) => Promise<void>;
  /** Partitions paused for schemas now, as `topic:partition`. */
  readonly paused: () => readonly string[];
  /** Ends the retry loops (stop()). */
  readonly close: () => void;
}

export function createSchemaGate({ state, logger, retryBackoffMs, inlineWaitMs = 1_000 }: SchemaGateOptions): SchemaGate {
  const paused = new Set<string>();
  let closed = false;

  function missingIds(wire: WireRoute, messages: readonly KafkaMessage[], start: number, end: number): number[] {
    const ids = new Set<number>();
    const add = (bytes: Buffer | null): void => {
      if (bytes === null) return;
      const header = readWireHeader(bytes);
      // Not in the wire format: the converter dead-letters it with the reason; no id to load.
      if (header.ok && wire.decoders.entry(header.id) === undefined) ids.add(header.id);
    };
    for (let i = start; i < end; i++) {
      const message = messages[i] as KafkaMessage;
      add(message.value);
      if (wire.keyInWireFormat) add(message.key);
    }
    return [...ids];
  }

  async function ready(payload: EachBatchPayload, wire: WireRoute, start: number, end: number): Promise<boolean> {
    const ids = missingIds(wire, payload.batch.messages, start, end);
    if (ids.length === 0) return true;
    const loading = wire.decoders.load(ids);
    const outcome = await Promise.race([loading.then(() => 'loaded' as const, (err: unknown) => err), sleep(inlineWaitMs, 'slow' as const)]);
    if (outcome === 'loaded') return true;
    pausePartition(payload, wire, ids, loading, outcome);
    return false;
  }

  function pausePartition(payload: EachBatchPayload, wire: WireRoute, ids: readonly number[], loading: Promise<void>, why: unknown): void {
    const { topic, partition } = payload.batch;
    const name = `${topic}:${partition}`;
    const resume = payload.pause();
    state.stats.schemaPauses++;
    if (paused.has(name)) return; // a retry loop for it runs already
    paused.add(name);
    const source = wire.decoders.source.description;
    logger.warn(
      { topic, partition, ids, source, err: why === 'slow' ? undefined : why },
      `${why === 'slow' ? `${source} is slow` : `${source} could not be read`}: paused ${name} until schema ids ${ids.join(', ')} are loaded (nothing is dead-lettered meanwhile)`,
    );
    void retryUntilLoaded(wire, ids, loading).then((loaded) => {
      paused.delete(name);
      if (!loaded) return;
      resume();
      logger.info({ topic, partition, ids }, `schemas loaded from ${source}: resumed ${name}`);
    });
  }

  /** True once loaded; false when ingest stopped first. */
  async function retryUntilLoaded(wire: WireRoute, ids: readonly number[], first: Promise<void>): Promise<boolean> {
    let attempt = first;
    for (let tries = 0; ; tries++) {
      try {
        await attempt;
        return !closed && !state.stopped;
      } catch (err) {
        if (tries === 0 || tries % 10 === 0) logger.warn({ err, ids, tries }, `${wire.decoders.source.description} still not answering; retrying`);
      }
      await sleep(backoffMs(tries, retryBackoffMs));
      if (closed || state.stopped) return false;
      attempt = wire.decoders.load(ids);
    }
  }

  async function reload(wire: WireRoute, message: KafkaMessage): Promise<void> {
    const ids = missingIds(wire, [message], 0, 1);
    if (ids.length > 0) await wire.decoders.load(ids);
  }

  return {
    ready,
    reload,
    paused: () => [...paused],
    close: () => {
      closed = true;
    },
  };
}
