/**
 * The fan-in part: the same publish stream (XADD + publish per event, as ingest writes) with
 * `SPUBLISH` on the tagged channels, then with classic `PUBLISH` on the same channel names, and
 * what each node received meanwhile. In cluster mode a classic PUBLISH is broadcast over the
 * cluster bus to every node, whoever subscribes; a SPUBLISH goes only to the nodes of the channel's
 * shard (its replicas). More windows frame them: `idle`, as long, nothing published (the bus's own
 * pings, this bench's INFO reads: subtracted from the others); `unsubscribed`, SPUBLISH with no
 * subscriber (the Redis CPU of writing an event alone, the intercept of the per-subscriber cost);
 * and `burst-*`, the same two back-to-back in ingest-sized chunks, where Redis amortizes its
 * per-pipeline cost as it does at throughput (paced one-event pipelines are the low-rate cost).
 *
 * Subscribers are plain connections, `subscribers` of them as gateways would hold them: sharded,
 * one connection per primary each (SSUBSCRIBE per partition's slot); classic, one connection each,
 * on different nodes (SUBSCRIBE every wire channel). Each counts what it received.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type Cluster } from 'ioredis';
import type { BenchClock } from '@wirestream/loadgen';
import type { RedisLayout } from '@wirestream/wire';
import { keySlot } from '@wirestream/testkit';
import type { EventCorpus } from '@wirestream/bench-kit';
import { publishStream } from './publisher.js';
import { counterDelta, ownerOfSlot, readCounters, type NodeCounters, type RedisNode } from './redis-nodes.js';

// No classic burst: in a trial run its subscribers had received 24,769 of 60,000 messages 10 s after
// the last publish (each classic subscriber takes every event on one connection, where a sharded
// set spreads them over one per primary; the bench process reading them falls behind, and Redis
// drops a pubsub client whose output passes 32 MB). Classic and sharded are compared paced.
export const FAN_IN_MODES = ['idle', 'unsubscribed', 'sharded', 'classic', 'burst-unsubscribed', 'burst-sharded'] as const;
export type FanInMode = (typeof FAN_IN_MODES)[number];

export interface FanInSpec {
  /** Events of a paced window, and its rate (the idle window lasts as long). */
  readonly events: number;
  readonly ratePerSecond: number;
  /** Events of a burst window: back-to-back in chunks of `chunkEvents` per partition, ingest's batching at throughput. */
  readonly burstEvents: number;
  readonly chunkEvents: number;
  /** Subscriber sets (gateways) in the sharded and classic windows. */
  readonly subscribers: number;
}

/** Whether a mode has subscribers, and which kind. */
function subscriberKind(mode: FanInMode): 'sharded' | 'classic' | undefined {
  if (mode === 'sharded' || mode === 'burst-sharded') return 'sharded';
  return mode === 'classic' ? 'classic' : undefined;
}

export interface FanInContext {
  readonly cluster: Cluster;
  readonly layout: RedisLayout;
  readonly nodes: readonly RedisNode[];
  readonly topic: string;
  readonly shards: number;
  readonly corpus: EventCorpus;
  readonly clock: BenchClock;
  readonly log: (line: string) => void;
}

export interface FanInNode {
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shardPort: number;
  /** Counters over the window (`after − before`). */
  readonly delta: NodeCounters;
}

export interface FanInRun {
  readonly mode: FanInMode;
  readonly round: number;
  /** Events published (0 for idle; the window lasted as long as a publish window). */
  readonly events: number;
  readonly windowSeconds: number;
  readonly subscriberConnections: number;
  /** Messages the subscribers received, and what they should have (events × subscriber sets). */
  readonly received: number;
  readonly expectedReceived: number;
  readonly nodes: readonly FanInNode[];
}

interface Subscribers {
  readonly connections: readonly Redis[];
  received(): number;
  close(): void;
}

/** Opens the subscribers of a mode and resolves once Redis confirmed every subscription. */
async function openSubscribers(mode: 'sharded' | 'classic', spec: FanInSpec, ctx: FanInContext): Promise<Subscribers> {
  const primaries = ctx.nodes.filter((n) => n.role === 'primary');
  const byPartition = Array.from({ length: ctx.corpus.partitions }, (_, p) =>
    Array.from({ length: ctx.shards }, (_s, s) => ctx.layout.wireChannel(ctx.topic, p, s)),
  );
  const connections: Redis[] = [];
  let received = 0;
  const count = (): void => {
    received++;
  };
  const connect = async (node: RedisNode): Promise<Redis> => {
    const redis = new Redis({ host: '127.0.0.1', port: node.port, lazyConnect: true, connectionName: `bench-cluster-${mode}` });
    connections.push(redis);
    await redis.connect();
    return redis;
  };
  for (let s = 0; s < spec.subscribers; s++) {
    if (mode === 'sharded') {
      for (const primary of primaries) {
        const redis = await connect(primary);
        redis.on('smessageBuffer', count);
        // One SSUBSCRIBE per slot: Redis refuses channels of several slots in one command (CROSSSLOT).
        for (const channels of byPartition) {
          if (ownerOfSlot(ctx.nodes, keySlot(channels[0] as string)) === primary) await redis.ssubscribe(...channels);
        }
      }
    } else {
      const redis = await connect(primaries[s % primaries.length] as RedisNode);
      redis.on('messageBuffer', count);
      await redis.subscribe(...byPartition.flat());
    }
  }
  return {
    connections,
    received: () => received,
    close: () => connections.forEach((c) => c.disconnect()),
  };
}

/** One window of a mode; offsets continue from `offsetBase` (XADD ids must keep rising per partition). */
export async function runFanIn(mode: FanInMode, round: number, offsetBase: number, spec: FanInSpec, ctx: FanInContext): Promise<FanInRun> {
  const kind = subscriberKind(mode);
  const subscribers = kind ? await openSubscribers(kind, spec, ctx) : undefined;
  try {
    await sleep(500); // let the subscribe replies and the first pings after them pass
    const before = await readCounters(ctx.nodes);
    const startedMs = performance.now();
    const burst = mode.startsWith('burst-');
    const events = mode === 'idle' ? 0 : burst ? spec.burstEvents : spec.events;
    if (mode === 'idle') {
      await sleep((spec.events / spec.ratePerSecond) * 1_000);
    } else {
      await publishStream({
        ...ctx, // its cluster, layout, corpus, topic and clock
        offsetBase,
        count: events,
        ratePerSecond: burst ? 0 : spec.ratePerSecond,
        maxChunkEvents: spec.chunkEvents,
        mode: kind === 'classic' ? 'classic' : 'sharded',
      });
    }
    const expectedReceived = subscribers ? events * spec.subscribers : 0;
    const deadline = Date.now() + 10_000;
    while (subscribers && subscribers.received() < expectedReceived && Date.now() < deadline) await sleep(20);
    const windowSeconds = (performance.now() - startedMs) / 1_000;
    const after = await readCounters(ctx.nodes);
    const received = subscribers?.received() ?? 0;
    if (received < expectedReceived) ctx.log(`    ${mode}: subscribers received ${received}/${expectedReceived} within 10 s of the last publish`);
    return {
      mode,
      round,
      events,
      windowSeconds,
      subscriberConnections: subscribers?.connections.length ?? 0,
      received,
      expectedReceived,
      nodes: ctx.nodes.map((n) => ({
        port: n.port,
        role: n.role,
        shardPort: n.shardPort,
        delta: counterDelta(after.get(n.port) as NodeCounters, before.get(n.port) as NodeCounters),
      })),
    };
  } finally {
    subscribers?.close();
  }
}
