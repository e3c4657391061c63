import type { ChainableCommander } from 'ioredis';
import { PUBLISH_IF_STORED_SCRIPT } from '@wirestream/wire';
import type { IngestRedis } from './redis-client.js';

// The script and its error code are the layout's contract (packages/wire, redis-layout.ts): the
// cluster bench publishes through the same script.
export { NOT_STORED_YET, PUBLISH_IF_STORED_SCRIPT } from '@wirestream/wire';

/**
 * The method `defineCommand` gives the script on the client and on its pipelines (EVALSHA, and EVAL
 * on a node connection that has not run it yet or answered NOSCRIPT: ioredis does that per socket).
 */
export const PUBLISH_IF_STORED = 'wirestreamPublishIfStored';

/** A pipeline of a client that {@link definePublishIfStored} was called on. */
export type PublishIfStoredPipeline = ChainableCommander &
  Readonly<
    Record<
      typeof PUBLISH_IF_STORED,
      /** `keys` and `argv` are spliced into the command as they are (ioredis flattens one level): no copy per event. */
      (numberOfKeys: number, keys: readonly string[], argv: readonly (string | Buffer)[]) => ChainableCommander
    >
  >;

/**
 * Defines the script on `redis` (before its first pipeline: a pipeline copies the client's scripts
 * when it is made). Defining it again replaces it with the same script.
 */
export function definePublishIfStored(redis: IngestRedis): void {
  redis.defineCommand(PUBLISH_IF_STORED, { lua: PUBLISH_IF_STORED_SCRIPT });
}
