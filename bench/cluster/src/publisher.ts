/**
 * Publishes the corpus into the cluster as ingest does in cluster mode (bypassing Kafka and ingest,
 * so the gateways and Redis are what is measured): a chunk is one partition's events, sent as one
 * pipeline to that partition's slot, every `XADD <history stream>` then one `EVAL` of the layout's
 * PUBLISH_IF_STORED_SCRIPT that SPUBLISHes the chunk on its wire channels once the stream holds it
 * (ingest's cluster path; decision 0005: a partition's stream and channels share a hash tag, so the
 * pipeline goes to one node and no event is live before its history).
 *
 * Chunks form as in ingest's consumer: at a fixed rate, what fell due since the last tick (a fetch
 * loop) grouped by partition — at a few hundred events/s over a dozen partitions, mostly one event
 * per pipeline; back-to-back (rate 0), slices of `maxChunkEvents` per partition, each slice answered
 * before the next (ingest publishes a batch before it commits it): the batched cost at throughput.
 *
 * `classic` sends the same XADDs, then plain `PUBLISH`es on the same channel names: the baseline
 * of the fan-in comparison. ioredis routes a pipeline by its XADD keys (PUBLISH names no key), so
 * both modes enter the cluster at the same node; only what Redis does with the message differs.
 * Ingest may add `WAIT` for a replica (INGEST_REDIS_WAIT_REPLICAS, off by default); this does not.
 */
import { createHash } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { encodeEnvelope, historyEntryArgs, historyEntryId, PUBLISH_IF_STORED_SCRIPT, type RedisLayout } from '@wirestream/wire';
import { isoWithMicros } from '@wirestream/loadgen';
import { paceStream, type CorpusEvent, type EventCorpus, type StreamOptions } from '@wirestream/bench-kit';

export type PublishMode = 'sharded' | 'classic';

/** The stream (offsets unique over partitions, rising in each); at rate 0, slices of `maxChunkEvents` per partition. */
export interface PublishOptions extends StreamOptions<EventCorpus> {
  readonly cluster: Cluster;
  readonly layout: RedisLayout;
  /** Most events of one partition in one pipeline (ingest's INGEST_PUBLISH_CHUNK_SIZE is 500). @default 100 */
  readonly maxChunkEvents?: number;
  /** At a fixed rate, how often due events are sent (a consumer's fetch loop). @default 10 (ms) */
  readonly tickMs?: number;
  readonly mode: PublishMode;
  /** History stream `MAXLEN ~` (ingest's INGEST_HISTORY_LENGTH default). @default '10000' */
  readonly historyMaxLen?: string;
}

export interface PublishResult {
  /** Shared-clock µs of the first and last publish. */
  readonly firstPublishUs: number;
  readonly lastPublishUs: number;
}

interface Sender {
  /** Sends events `[from, to)` as one pipeline per partition (≤ maxChunkEvents each); resolves when all are answered. */
  send(from: number, to: number): Promise<void>;
  readonly failure: () => Error | undefined;
}

/** SHA-1 of the guarded publish, loaded on every primary before a sharded run (EVALSHA then sends no script text). */
const publishSha = createHash('sha1').update(PUBLISH_IF_STORED_SCRIPT).digest('hex');

function createSender(options: PublishOptions): Sender {
  const { cluster, layout, corpus, topic, clock, offsetBase, mode, historyMaxLen = '10000', maxChunkEvents = 100 } = options;
  let failure: Error | undefined;
  const sendChunk = (partition: number, indexes: readonly number[]): Promise<void> => {
    const pipeline = cluster.pipeline();
    const envelopes: string[] = [];
    const streamKey = layout.streamKey(topic, partition);
    for (const i of indexes) {
      const event = corpus.events[i] as CorpusEvent;
      const nowUs = clock.nowUs();
      const envelope = encodeEnvelope(
        { topic, partition, offset: String(offsetBase + i), key: event.key, ts: Math.floor(nowUs / 1_000) },
        event.before + isoWithMicros(nowUs) + event.after,
      );
      envelopes.push(envelope);
      pipeline.call('xadd', historyEntryArgs(streamKey, String(offsetBase + i), layout.channel(topic, event.shard), envelope, historyMaxLen));
    }
    if (mode === 'sharded') {
      // As ingest: KEYS = the stream and the wire channels the chunk uses, ARGV = the last entry id, then per event its channel's KEYS index and envelope.
      const keys = [streamKey];
      const keyIndex = new Map<string, number>();
      const argv: string[] = [historyEntryId(String(offsetBase + (indexes[indexes.length - 1] as number)))];
      indexes.forEach((i, k) => {
        const wire = layout.wireChannel(topic, partition, (corpus.events[i] as CorpusEvent).shard);
        let at = keyIndex.get(wire);
        if (at === undefined) {
          keys.push(wire);
          at = keys.length;
          keyIndex.set(wire, at);
        }
        argv.push(String(at), envelopes[k] as string);
      });
      pipeline.evalsha(publishSha, keys.length, ...keys, ...argv);
    } else {
      indexes.forEach((i, k) => pipeline.publish(layout.wireChannel(topic, partition, (corpus.events[i] as CorpusEvent).shard), envelopes[k] as string));
    }
    return pipeline.exec().then((results) => {
      for (const [err] of results ?? []) if (err) failure ??= new Error(`${mode} publish to ${topic}[${partition}]: ${err.message}`);
    });
  };
  return {
    failure: () => failure,
    async send(from, to) {
      const byPartition = new Map<number, number[]>();
      for (let i = from; i < to; i++) {
        const p = (corpus.events[i] as CorpusEvent).partition;
        const chunk = byPartition.get(p);
        if (chunk) chunk.push(i);
        else byPartition.set(p, [i]);
      }
      const answered: Promise<void>[] = [];
      for (const [p, indexes] of byPartition) {
        for (let k = 0; k < indexes.length; k += maxChunkEvents) answered.push(sendChunk(p, indexes.slice(k, k + maxChunkEvents)));
      }
      await Promise.all(answered);
    },
  };
}

/** Publishes and resolves once Redis answered every pipeline; any error fails the run. */
export async function publishStream(options: PublishOptions): Promise<PublishResult> {
  const { corpus, clock, count, ratePerSecond, maxChunkEvents = 100, tickMs = 10 } = options;
  if (count > corpus.events.length) throw new RangeError(`publishStream: ${count} events asked, the corpus has ${corpus.events.length}`);
  if (options.mode === 'sharded') await Promise.all(options.cluster.nodes('master').map((node) => node.script('LOAD', PUBLISH_IF_STORED_SCRIPT)));
  const sender = createSender(options);
  const { firstPublishUs } = await paceStream({
    count,
    ratePerSecond,
    slice: maxChunkEvents * corpus.partitions,
    tickMs,
    nowUs: () => clock.nowUs(),
    send: (from, to) => sender.send(from, to),
    stopped: () => sender.failure() !== undefined,
  });
  // When Redis answered the last pipeline.
  const lastPublishUs = clock.nowUs();
  const failure = sender.failure();
  if (failure) throw failure;
  return { firstPublishUs, lastPublishUs };
}
