// Snapshot tests of the gateway: a gateway over a real redis-server whose snapshot topic is written
// exactly as ingest writes it (decision 0023): per chunk, in one MULTI, the XADDs, the partitions set
// and SNAPSHOT_APPLY_SCRIPT (the real script); then the PUBLISHes. Ingest's own tests cover ingest;
// the end-to-end test (tests/e2e/src/snapshot.e2e.test.ts) runs the built ingest against Kafka.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { auctionSchemaPath, createWirestreamSchema, type WirestreamSchema } from '@wirestream/schema';
import {
  channelName,
  createEnvelopeHeadEncoder,
  encodeDeletedEnvelope,
  historyAppendArgs,
  historyEntryId,
  historyPartitionsKey,
  historyStreamKey,
  shardOf,
  snapshotHashKey,
  SNAPSHOT_APPLY_SCRIPT,
  SNAPSHOT_TOP_SUFFIX,
} from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { startRedis, uniqueName, waitFor, type RedisServer } from '@wirestream/testkit';
import { createGateway, createRedisBroker, createRedisHistory, createRedisSnapshots, type Gateway, type GatewayOptions } from '../../src/index.js';

export const PREFIX = 'wsh';

/** The example schema with `listingUpdated` on `topic`, kept as a snapshot. */
export function snapshotSchemaSdl(topic: string): string {
  return readFileSync(auctionSchemaPath, 'utf8')
    .replace('keyFormat: TopicKeyFormat = STRING)', 'keyFormat: TopicKeyFormat = STRING, snapshot: Boolean = false)')
    .replace('@topic(name: "listing-events", key: "listing_id")', `@topic(name: ${JSON.stringify(topic)}, key: "listing_id", snapshot: true)`);
}

/** One event of a chunk: a listing's new state, or its tombstone (`deleted`). */
export interface ChunkEvent {
  readonly key: string;
  readonly seq?: number;
  readonly deleted?: boolean;
}

export interface SnapshotGateway {
  readonly gateway: Gateway;
  readonly url: string;
  readonly httpBase: string;
  readonly topic: string;
  readonly schema: WirestreamSchema;
  /** Writes one chunk of one partition as ingest does; resolves with the offsets given. */
  writeChunk(partition: number, events: readonly ChunkEvent[]): Promise<string[]>;
  /** Every event written so far, in order per partition. */
  readonly written: Map<number, { offset: string; key: string; seq: number | undefined; deleted: boolean }[]>;
  stop(): Promise<void>;
}

export async function startSnapshotGateway(options: GatewayOptions = {}, existing?: RedisServer): Promise<SnapshotGateway> {
  const redisServer = existing ?? (await startRedis());
  const writer = new Redis(redisServer.url);
  const subscriberConn = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  const commands = new Redis(redisServer.url, { maxRetriesPerRequest: 2 });
  const topic = uniqueName('listing-snap');
  const schema = createWirestreamSchema(snapshotSchemaSdl(topic));
  const gateway = createGateway(
    {
      schema,
      broker: createRedisBroker(subscriberConn),
      history: createRedisHistory(commands, PREFIX),
      snapshots: createRedisSnapshots(commands, PREFIX),
      logger: createLogger({ name: 'snapshot-test', destination: createMemorySink() }),
    },
    options,
  );
  const port = await gateway.listen(0, '127.0.0.1');
  await waitFor(() => gateway.isReady(), { message: 'gateway ready' });
  const next = new Map<number, number>();
  const written: SnapshotGateway['written'] = new Map();
  const head = createEnvelopeHeadEncoder(topic);

  async function writeChunk(partition: number, events: readonly ChunkEvent[]): Promise<string[]> {
    const multi = writer.multi();
    const publishes: [string, string][] = [];
    const argv: string[] = [];
    const offsets: string[] = [];
    for (const event of events) {
      const offset = String(next.get(partition) ?? 0);
      next.set(partition, Number(offset) + 1);
      const h = head(partition, offset, event.key, Date.now());
      const envelope = event.deleted
        ? encodeDeletedEnvelope(h, 'listing_id', event.key)
        : `${h}${JSON.stringify({ event_id: `${event.key}#${event.seq ?? 0}`, event_type: 'ListingUpdated', listing_id: event.key, occurred_at: String(event.seq ?? 0) })}}`;
      const channel = channelName('ws', topic, shardOf(event.key, 16));
      multi.call('XADD', ...historyAppendArgs(PREFIX, topic, partition, offset, channel, envelope));
      argv.push(offset, event.key, event.deleted ? '' : envelope);
      publishes.push([channel, envelope]);
      offsets.push(offset);
      const list = written.get(partition) ?? [];
      list.push({ offset, key: event.key, seq: event.seq, deleted: event.deleted === true });
      written.set(partition, list);
    }
    const hash = snapshotHashKey(PREFIX, topic, partition);
    multi.sadd(historyPartitionsKey(PREFIX, topic), String(partition));
    multi.eval(SNAPSHOT_APPLY_SCRIPT, 3, hash, hash + SNAPSHOT_TOP_SUFFIX, historyStreamKey(PREFIX, topic, partition), historyEntryId(offsets[offsets.length - 1] as string), ...argv);
    await multi.exec();
    // As ingest: the publishes after the snapshot (never ahead of the stream).
    const pipeline = writer.pipeline();
    for (const [channel, envelope] of publishes) pipeline.publish(channel, envelope);
    await pipeline.exec();
    return offsets;
  }

  return {
    gateway,
    url: `ws://127.0.0.1:${port}/graphql`,
    httpBase: `http://127.0.0.1:${port}`,
    topic,
    schema,
    writeChunk,
    written,
    async stop() {
      await gateway.drain();
      writer.disconnect();
      subscriberConn.disconnect();
      commands.disconnect();
      if (!existing) await redisServer.stop();
    },
  };
}

/** A frame as a subscriber saw it: a snapshot entry, the end, a live event, a deletion, or another signal. */
export type Seen =
  | { readonly kind: 'entry'; readonly key: string; readonly seq: string; readonly partition: number; readonly offset: string }
  | { readonly kind: 'end'; readonly keys: number; readonly truncated: boolean; readonly positions: Record<string, string>; readonly start?: unknown }
  | { readonly kind: 'live'; readonly key: string; readonly seq: string; readonly partition: number; readonly offset: string }
  | { readonly kind: 'deleted'; readonly key: string; readonly partition: number; readonly offset: string }
  | { readonly kind: 'other'; readonly payload: unknown };

/** Classifies a `next` payload of `subscription { listingUpdated { listing_id occurred_at } }`. */
export function classify(payload: unknown): Seen {
  const p = payload as { data?: { listingUpdated?: { listing_id: string; occurred_at: string } }; extensions?: Record<string, unknown> };
  const ext = p.extensions ?? {};
  const position = ext['position'] as { partition: number; offset: string } | undefined;
  if (p.data?.listingUpdated && position) {
    const { listing_id: key, occurred_at: seq } = p.data.listingUpdated;
    return { kind: ext['snapshot'] === true ? 'entry' : 'live', key, seq, partition: position.partition, offset: position.offset };
  }
  if (ext['snapshot'] !== undefined && p.data === undefined) {
    const s = ext['snapshot'] as { keys: number; truncated: boolean; positions: Record<string, string> };
    return { kind: 'end', keys: s.keys, truncated: s.truncated, positions: s.positions, ...(ext['start'] === undefined ? {} : { start: ext['start'] }) };
  }
  if (ext['deleted'] !== undefined && position) return { kind: 'deleted', key: (ext['deleted'] as { key: string }).key, partition: position.partition, offset: position.offset };
  return { kind: 'other', payload };
}

/**
 * Checks one subscriber's view against what was written: entries, one end, then live; per
 * partition the live events (and deletions) are exactly the written ones above the seam that the
 * subscription matches (0 gap, 0 duplicate); each entry is its key's latest state at or below the
 * seam; entries then live give each key's latest state. Returns what was counted.
 */
export function checkView(seen: readonly Seen[], written: SnapshotGateway['written'], matches: (key: string) => boolean = () => true) {
  const endAt = seen.findIndex((s) => s.kind === 'end');
  if (endAt < 0) throw new Error(`no end frame among ${seen.length} frames`);
  const end = seen[endAt] as Extract<Seen, { kind: 'end' }>;
  const before = seen.slice(0, endAt);
  const after = seen.slice(endAt + 1);
  const problems: string[] = [];
  if (before.some((s) => s.kind !== 'entry')) problems.push('a frame other than an entry before the end');
  if (after.some((s) => s.kind === 'entry' || s.kind === 'end' || s.kind === 'other')) problems.push('an entry, a second end or another frame after the end');
  const state = new Map<string, string>();
  let gaps = 0;
  let duplicates = 0;
  for (const [partition, events] of written) {
    const top = end.positions[String(partition)];
    const above = events.filter((e) => matches(e.key) && (top === undefined || BigInt(e.offset) > BigInt(top)));
    const live = after.filter((s): s is Extract<Seen, { kind: 'live' | 'deleted' }> => (s.kind === 'live' || s.kind === 'deleted') && s.partition === partition);
    const got = new Set(live.map((s) => s.offset));
    // At or below the seam: already in the snapshot (or overwritten there) — a duplicate.
    duplicates += live.length - got.size + live.filter((s) => top !== undefined && BigInt(s.offset) <= BigInt(top)).length;
    gaps += above.filter((e) => !got.has(e.offset)).length;
    if (live.length !== got.size || live.some((s, i) => i > 0 && BigInt(s.offset) <= BigInt((live[i - 1] as { offset: string }).offset))) problems.push(`partition ${partition}: live not strictly rising`);
    // Each entry: its key's latest state at or below the seam.
    const latest = new Map<string, { offset: string; deleted: boolean; seq: number | undefined }>();
    for (const e of events) if (top !== undefined && BigInt(e.offset) <= BigInt(top)) latest.set(e.key, e);
    for (const entry of before) {
      if (entry.kind !== 'entry' || entry.partition !== partition) continue;
      const want = latest.get(entry.key);
      if (!want || want.deleted || want.offset !== entry.offset) problems.push(`entry ${entry.key}@${partition}:${entry.offset} is not its latest state at the seam (${JSON.stringify(want)})`);
    }
    const expectedEntries = [...latest].filter(([key, e]) => !e.deleted && matches(key)).length;
    const entries = before.filter((s) => s.kind === 'entry' && s.partition === partition).length;
    if (!end.truncated && entries !== expectedEntries) problems.push(`partition ${partition}: ${entries} entries, expected ${expectedEntries}`);
  }
  for (const s of seen) {
    if (s.kind === 'entry' || s.kind === 'live') state.set(s.key, s.seq);
    if (s.kind === 'deleted') state.delete(s.key);
  }
  const final = new Map<string, string>();
  for (const events of written.values()) {
    for (const e of events) {
      if (!matches(e.key)) continue;
      if (e.deleted) final.delete(e.key);
      else final.set(e.key, String(e.seq ?? 0));
    }
  }
  const stateMismatches = [...new Set([...state.keys(), ...final.keys()])].filter((k) => state.get(k) !== final.get(k)).length;
  return { entries: before.length, live: after.length, gaps, duplicates, stateMismatches, problems, end };
}
