/**
 * The seam every replay from history shares (resume.ts from a client's positions, since.ts from a
 * time): history in chunks paced by the socket, in passes until little is left, then the live
 * payloads the subscriber held back meanwhile, past what it has — no gap, no duplicate (centrifuge's
 * `internal/recovery` is the model: buffer live, read history, merge by position). Also the chunked,
 * paced writing a snapshot's entries use (snapshot.ts).
 */
import { decodeEnvelope, type Envelope } from '@wirestream/wire';
import type { HistoryReader, SnapshotReader } from '../../broker/broker.js';
import { dropCovered, releaseCatchup } from '../delivery/catchup.js';
import type { ConnectionWriter } from '../connection-writer.js';
import { currentEpoch, type Epoch } from '../delivery/epoch.js';
import { isSubscribed, type Registry, type Subscriber } from '../delivery/groups.js';
import type { GatewayMetrics } from '../metrics.js';
import { positionExtensions } from '../delivery/positions.js';
import { renderPayload, type Renderer } from '../delivery/render.js';
import type { HubStats } from '../delivery/stats.js';

/**
 * What a subscriber catching up from history or a snapshot needs (resume.ts, since.ts, start.ts,
 * snapshot.ts): built once per hub. None of it is owned here: the epoch is asked of epoch.ts, the
 * channels of groups.ts; the counters written are the replay's own.
 */
export interface CatchupContext<C> {
  readonly writer: ConnectionWriter<C>;
  readonly history: HistoryReader | undefined;
  readonly snapshots: SnapshotReader | undefined;
  readonly stats: HubStats;
  readonly epoch: Epoch;
  readonly renderer: Renderer;
  readonly registry: Registry<C>;
  /** Prometheus series (replays by time); undefined in tests and benches without a registry. */
  readonly metrics?: GatewayMetrics | undefined;
}

/** Replay passes at most; a pass that finds fewer entries than SMALL_PASS ends the replay. */
const MAX_REPLAY_PASSES = 5;
const SMALL_PASS = 100;
/** A replay that cannot write for this long gives up: the client is told to resume again. */
const REPLAY_STALL_MS = 30_000; // 30 s
/** How often a waiting replay re-checks the socket. */
const ROOM_POLL_MS = 10;

/**
 * Replays history to a catching-up subscriber, then releases the live payloads it held back.
 * `after`: per partition, the offset the client has (or is not to get); a partition without one is
 * replayed from the oldest retained event. Live events were held from the moment it subscribed,
 * and its channels were confirmed before history is read (the caller's part), so every event is in
 * history, in the held list, or both (then sent once).
 */
export async function replayThenRelease<C>(
  state: CatchupContext<C>,
  subscriber: Subscriber<C>,
  partitions: Iterable<number>,
  after: ReadonlyMap<number, string>,
): Promise<void> {
  const alive = (): boolean => isSubscribed(subscriber);
  const progress: ReplayProgress = { sent: new Map(), last: undefined };
  const { sent } = progress;
  const from = (p: number): string | undefined => sent.get(p) ?? after.get(p);
  // Live events keep arriving while history replays, and they are in history too: replay again from
  // where the last pass ended until a pass finds little, so what is held back (in memory, then sent
  // at once) stays small.
  for (let pass = 0; pass < MAX_REPLAY_PASSES; pass++) {
    let found = 0;
    for (const p of partitions) {
      const replayed = await replayPartition(state, subscriber, p, from(p), progress, alive);
      if (replayed === undefined) return;
      found += replayed;
    }
    dropCovered(subscriber, sent);
    if (found < SMALL_PASS) break;
  }
  const covered = new Map(after);
  for (const [p, offset] of sent) covered.set(p, offset);
  // Its last replayed payload is a delta reader's base: the next frames can be deltas from it.
  releaseCatchup(state.writer, subscriber, covered, currentEpoch(state.epoch), progress.last);
}

/** Where a replay is: per partition the last offset read, and the last payload sent (its text). */
interface ReplayProgress {
  readonly sent: Map<number, string>;
  last: string | undefined;
}

/**
 * Sends a partition's history after `after` to a catching-up subscriber in chunks of about the
 * writer's replay chunk, waiting whenever its connection has no room, so a replay never trips the
 * slow-consumer limit of a client that reads. Returns the entries read, or undefined if the
 * subscriber left or stalled.
 */
async function replayPartition<C>(
  state: CatchupContext<C>,
  subscriber: Subscriber<C>,
  p: number,
  after: string | undefined,
  progress: ReplayProgress,
  alive: () => boolean,
): Promise<number | undefined> {
  const { history } = state;
  if (!history) return 0;
  const { group } = subscriber;
  let read = 0;
  const chunks = createReplayChunks(state, subscriber, alive, { cursor: true, onSent: (n) => (state.stats.replayed += n) });
  for await (const page of history.read(group.op.route.topic, p, after)) {
    if (!alive()) return undefined;
    for (const entry of page) {
      read++;
      let envelope: Envelope;
      try {
        envelope = decodeEnvelope(entry.envelope);
      } catch {
        continue; // a malformed entry was never delivered live either
      }
      const rendered = renderPayload(state.renderer, group, envelope, positionExtensions(envelope, currentEpoch(state.epoch)));
      const json = typeof rendered === 'string' || rendered === undefined ? rendered : await rendered;
      progress.sent.set(p, entry.offset);
      if (json === undefined) continue;
      progress.last = json;
      if (chunks.add(json, p, entry.offset) && !(await chunks.flush())) return undefined;
    }
  }
  return (await chunks.flush()) ? read : undefined;
}

/** How {@link createReplayChunks} writes. */
export interface ReplayChunkOptions {
  /**
   * Give the frames their positions with the epoch (a transport whose events carry a cursor, SSE,
   * then advances it). False for frames a client cannot resume from (a snapshot's entries).
   */
  readonly cursor: boolean;
  /** Frames written, per chunk. */
  readonly onSent: (frames: number) => void;
}

/** Frames of a replay (history, a snapshot) gathered into chunks and written a chunk at a time. */
export interface ReplayChunks {
  /** Adds a frame; true when the chunk is full (then {@link flush} it before adding more). */
  add(payload: string, partition: number, offset: string): boolean;
  /** Writes the chunk and waits for room; false if the subscriber left or stalled (then it is closed). */
  flush(): Promise<boolean>;
}

/**
 * Chunks of about the writer's replay chunk for one subscriber, each written in one go and followed
 * by a wait for room ({@link waitForRoom}): a replay of any length never trips the slow-consumer
 * limit of a client that reads, and never holds more than a chunk of it in memory.
 */
export function createReplayChunks<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, alive: () => boolean, options: ReplayChunkOptions): ReplayChunks {
  const { writer } = state;
  let payloads: string[] = [];
  let partitions: number[] = [];
  let offsets: string[] = [];
  let bytes = 0;
  return {
    add(payload, partition, offset) {
      payloads.push(payload);
      partitions.push(partition);
      offsets.push(offset);
      bytes += payload.length + subscriber.head.length;
      return bytes >= writer.replayChunkBytes;
    },
    async flush() {
      if (payloads.length === 0) return alive();
      writer.sendFrames(subscriber.conn, subscriber.head, payloads, { epoch: options.cursor ? currentEpoch(state.epoch) : undefined, partitions, offsets });
      options.onSent(payloads.length);
      payloads = [];
      partitions = [];
      offsets = [];
      bytes = 0;
      return waitForRoom(writer, subscriber.conn, alive);
    },
  };
}

/** Waits while the connection has no room; false if the subscriber left or stalled (then it is closed). */
export async function waitForRoom<C>(writer: ConnectionWriter<C>, conn: C, alive: () => boolean): Promise<boolean> {
  const deadline = Date.now() + REPLAY_STALL_MS;
  while (!writer.hasRoom(conn)) {
    if (!alive()) return false;
    if (Date.now() > deadline) {
      writer.close(conn, 1013, 'slow consumer during a resume or snapshot: reconnect and resume from your last position');
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS));
  }
  return alive();
}

/** What a resume or a replay by time answers first, as a data-less `next` (graphql-ws has no other message for it). */
export interface Recovery {
  readonly recovered: boolean;
  readonly reason?: string;
  readonly partitions?: number[];
  /** A replay by time that history does not reach: the earliest time (RFC 3339) from which it holds every partition named. */
  readonly oldest?: string;
}

/** Sends the recovery signal (with the epoch) as a data-less frame. */
export function signalRecovery<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, recovery: Recovery): void {
  state.writer.sendFrames(subscriber.conn, subscriber.head, [JSON.stringify({ extensions: { recovery: { ...recovery, epoch: currentEpoch(state.epoch) } } })]);
}
