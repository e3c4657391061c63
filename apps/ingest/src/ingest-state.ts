import type { Consumer, Producer } from 'kafkajs';

export interface IngestStats {
  consumed: number;
  published: number;
  deadLettered: number;
  commits: number;
  /** Times consumption was paused because a chunk could not be delivered. */
  pauses: number;
  /** Times a partition was paused because the schema source could not give a schema id it needs (schema-gate.ts). */
  schemaPauses: number;
}

/**
 * What the parts of one ingest share, in one explicit object: `createIngest` creates it, the
 * lifecycle writes it, the batch processor and flow control read it. Nothing else is shared.
 */
export interface IngestState {
  readonly stats: IngestStats;
  /** Created by start(): the group member that consumes the schema's topics. */
  consumer: Consumer | undefined;
  /** Created by start(): writes dead letters. */
  producer: Producer | undefined;
  /** The consumer is in its group (set on GROUP_JOIN, cleared on a crash and by stop()). */
  joined: boolean;
  /** stop() was called; an ingest is not restarted. */
  stopped: boolean;
  /** Date.now() after which a batch waiting for Redis or the dead-letter topic gives up (stop() sets it). */
  stopDeadline: number;
  /** Dead-letter topic → `max.message.bytes`, read by start() (prepare-topics.ts). */
  deadLetterLimits: ReadonlyMap<string, number>;
}

export function createIngestState(): IngestState {
  return {
    stats: { consumed: 0, published: 0, deadLettered: 0, commits: 0, pauses: 0, schemaPauses: 0 },
    consumer: undefined,
    producer: undefined,
    joined: false,
    stopped: false,
    stopDeadline: Infinity,
    deadLetterLimits: new Map(),
  };
}
