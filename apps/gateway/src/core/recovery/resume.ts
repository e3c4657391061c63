/**
 * Resume: replay history to a subscriber that reconnected with its last positions, then release
 * the live payloads it held back meanwhile, so history and live meet with no gap and no duplicate
 * (centrifuge's `internal/recovery` is the model: buffer live, read history, merge by position).
 */
import { decodeEnvelope, type Envelope } from '@wirestream/schema';
import type { HistoryReader, SnapshotReader } from '../../broker/broker.js';
import { dropCovered, releaseCatchup } from '../delivery/catchup.js';
import type { ConnectionWriter } from '../connection-writer.js';
import { currentEpoch, knownEpoch, type Epoch } from '../delivery/epoch.js';
import { channelsConfirmed, type Registry, type Subscriber } from '../delivery/groups.js';
import { positionExtensions } from '../delivery/positions.js';
import { renderPayload, type Renderer } from '../delivery/render.js';
import type { ResumeRequest } from './resume-request.js';
import type { HubStats } from '../delivery/stats.js';

/**
 * What a subscriber catching up from history or a snapshot needs (resume here, start.ts,
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
}

/** Replay passes at most; a pass that finds fewer entries than SMALL_PASS ends the replay. */
const MAX_REPLAY_PASSES = 5;
const SMALL_PASS = 100;
/** A replay that cannot write for this long gives up: the client is told to resume again. */
const REPLAY_STALL_MS = 30_000; // 30 s
/** How often a waiting replay re-checks the socket. */
const ROOM_POLL_MS = 10;

/** What a resume answers first, as a data-less `next` (graphql-ws has no other message for it). */
interface Recovery {
  readonly recovered: boolean;
  readonly reason?: string;
  readonly partitions?: number[];
}

/**
 * Replays history to a resuming subscriber, then releases the live payloads it held back.
 * Live events were held from the moment it subscribed, and its channels were confirmed before
 * history is read, so every event is in history, in the held list, or both (then sent once).
 */
export async function catchUp<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, resume: ResumeRequest): Promise<void> {
  const { group } = subscriber;
  const { topic } = group.op.route;
  const { history } = state;
  const alive = (): boolean => group.subscribers.has(subscriber);
  await channelsConfirmed(state.registry, group);
  if (!history) {
    signalRecovery(state, subscriber, { recovered: false, reason: 'this gateway keeps no history' });
    return release(state.writer, subscriber, new Map(), undefined, currentEpoch(state.epoch));
  }
  const epoch = await knownEpoch(state.epoch);
  if (!alive()) return;

  // Positions of another epoch mean nothing here: such a client gets what history has, from its start.
  // A partition without a position is one the client's start did not list (it had no history then):
  // everything history holds for it is after the start.
  const sameEpoch = resume.epoch === epoch;
  const partitions = new Set([...(await history.partitions(topic)), ...resume.positions.keys()]);
  const gaps = sameEpoch ? await partitionsWithGaps(state, topic, partitions, resume) : [];
  if (!alive()) return;
  if (!sameEpoch) signalRecovery(state, subscriber, { recovered: false, reason: 'epoch changed: the history your positions belong to was lost' });
  else if (gaps.length > 0) signalRecovery(state, subscriber, { recovered: false, reason: 'history no longer covers the gap (retention)', partitions: gaps });
  else signalRecovery(state, subscriber, { recovered: true });

  const sent = new Map<number, string>();
  const from = (p: number): string | undefined => sent.get(p) ?? (sameEpoch ? resume.positions.get(p) : undefined);
  // Live events keep arriving while history replays, and they are in history too: replay again from
  // where the last pass ended until a pass finds little, so what is held back (in memory, then sent
  // at once) stays small.
  for (let pass = 0; pass < MAX_REPLAY_PASSES; pass++) {
    let found = 0;
    for (const p of partitions) {
      const replayed = await replayPartition(state, subscriber, p, from(p), sent, alive);
      if (replayed === undefined) return;
      found += replayed;
    }
    dropCovered(subscriber, sent);
    if (found < SMALL_PASS) break;
  }
  release(state.writer, subscriber, sent, sameEpoch ? resume : undefined, currentEpoch(state.epoch));
}

/** Partitions where history may have lost something after the client's position. */
async function partitionsWithGaps<C>(state: CatchupContext<C>, topic: string, partitions: Iterable<number>, resume: ResumeRequest): Promise<number[]> {
  const gaps: number[] = [];
  for (const p of partitions) {
    const after = resume.positions.get(p);
    if (after !== undefined && (await state.history?.lostAfter(topic, p, after))) gaps.push(p);
  }
  return gaps;
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
  sent: Map<number, string>,
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
      sent.set(p, entry.offset);
      if (json !== undefined && chunks.add(json, p, entry.offset) && !(await chunks.flush())) return undefined;
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

function signalRecovery<C>(state: CatchupContext<C>, subscriber: Subscriber<C>, recovery: Recovery): void {
  if (!recovery.recovered) state.stats.resumesNotRecovered++;
  state.writer.sendFrames(subscriber.conn, subscriber.head, [JSON.stringify({ extensions: { recovery: { ...recovery, epoch: currentEpoch(state.epoch) } } })]);
}

/** Ends a replay: from now on held payloads are sent as they come, minus what the client already has. */
function release<C>(
  writer: ConnectionWriter<C>,
  subscriber: Subscriber<C>,
  sent: ReadonlyMap<number, string>,
  resume: ResumeRequest | undefined,
  epoch: string | undefined,
): void {
  const covered = new Map(resume?.positions);
  for (const [p, offset] of sent) covered.set(p, offset);
  releaseCatchup(writer, subscriber, covered, epoch);
}

