/**
 * The hub owns local subscribers (centrifuge's `hub.go`): subscribers share a group per distinct
 * operation, groups share broker channels, channels are subscribed on first use and unsubscribed
 * when the last group leaves. The event path itself is in delivery.ts, resume in recovery.ts,
 * back-fill in backfill.ts; all of them are module-level functions over one {@link HubState}.
 */
import { createLazyContext, disposeLazyContext } from '@wirestream/context';
import { GATEWAY_DEFAULTS } from '../defaults.js';
import { onBrokerLost, onBrokerReady } from './backfill.js';
import type { ChannelState, Group, HubDeps, HubState, HubStats, Subscriber } from './hub-state.js';
import { createInboundQueue, onBrokerMessage, queuedMessages, runSlice } from './inbound.js';
import type { CompiledSubscription } from './operations.js';
import { catchUp } from './recovery.js';
import type { ResumeRequest } from './resume-request.js';
import { sendSnapshot } from './snapshot.js';
import type { SnapshotAsk } from './snapshot-request.js';
import { announceStart } from './start.js';

export interface HubSnapshot extends Readonly<HubStats> {
  readonly subscribers: number;
  readonly groups: number;
  readonly channels: number;
  readonly confirmedChannels: number;
  /** Broker messages waiting for a slice, their characters, and whether the broker is paused. */
  readonly inbound: { readonly messages: number; readonly chars: number; readonly paused: boolean };
}

/** How one subscription is served, besides its operation. */
export interface SubscribeOptions {
  /** Replay history after these positions first (recovery.ts). */
  readonly resume?: ResumeRequest | undefined;
  /** Delta payloads where it holds the base (delta.ts). @default false */
  readonly delta?: boolean | undefined;
  /** Tell the client its starting point (epoch, positions) before any event (start.ts); ignored with `resume`. @default false */
  readonly start?: boolean | undefined;
  /**
   * Send each key's current value first, then the live stream (snapshot.ts); with `start`, the
   * start is the snapshot's seam, sent with its end. Ignored with `resume` (resume wins: a client
   * that reconnects continues from its positions). @default undefined (none)
   */
  readonly snapshot?: SnapshotAsk | undefined;
  /** The `type` of its data frames: graphql-transport-ws `next`, subscriptions-transport-ws `data`. @default 'next' */
  readonly frameType?: 'next' | 'data' | undefined;
}

export interface Hub<C> {
  /**
   * Adds a subscriber (joining or opening its group), served as `options` say. Generic: one hub
   * serves several connection types (WebSocket, SSE), and each caller gets its own type back.
   */
  subscribe<T extends C>(conn: T, id: string, op: CompiledSubscription, options?: SubscribeOptions): Subscriber<T>;
  /** Removes a subscriber; its group and channels go with the last one. Idempotent. */
  unsubscribe(subscriber: Subscriber<C>): void;
  stats(): HubSnapshot;
  /** Whether it can serve `snapshot` (it has a snapshot reader). */
  readonly snapshots: boolean;
}

/**
 * Per broker event: parse the envelope once; for each group listening on that channel whose filter
 * matches, execute once and serialize once; then write the shared JSON to each subscriber.
 */
export function createHub<C>(deps: HubDeps<C>): Hub<C> {
  const state: HubState<C> = {
    ...deps,
    flow: deps.flow ?? { sliceMs: GATEWAY_DEFAULTS.sliceMs, flushDelayMs: GATEWAY_DEFAULTS.flushDelayMs, maxInboundBytes: GATEWAY_DEFAULTS.maxInboundBytes },
    groups: new Map(),
    channels: new Map(),
    topics: new Map(),
    delivered: new Map(),
    stats: { eventsIn: 0, backfilled: 0, resumes: 0, resumesNotRecovered: 0, replayed: 0, snapshots: 0, snapshotEntries: 0, duplicates: 0, badEnvelopes: 0, executions: 0, framesOut: 0, deltaFramesOut: 0, pauses: 0 },
    subscriberCount: 0,
    epoch: undefined,
    inbound: createInboundQueue(),
    held: false,
    backfillPending: false,
    backfillAgain: false,
    paused: false,
    sliceScheduled: false,
    inSlice: false,
    fanout: undefined,
    runSlice: () => runSlice(state),
    dirty: [],
    pendingSince: 0,
    pendingLargest: 0,
    flushing: undefined,
    lastFlushMs: 0,
    trips: [],
  };
  const { broker, history, logger } = deps;
  broker.attach({
    message: (channel, text) => onBrokerMessage(state, channel, text),
    lost: () => onBrokerLost(state),
    ready: () => void onBrokerReady(state).catch((err: unknown) => logger.error({ err }, 'handling Redis reconnect failed')),
  });
  if (history && broker.isReady()) {
    history.loadEpoch().then(
      (e) => (state.epoch ??= e),
      (err: unknown) => logger.warn({ err }, 'could not load the history epoch'),
    );
  }
  return {
    // A hub serves several connection types (WebSocket, SSE): each caller gets its own type back.
    subscribe: <T extends C>(conn: T, id: string, op: CompiledSubscription, options: SubscribeOptions = {}) =>
      addSubscriber(state, conn, id, op, options) as Subscriber<T>,
    unsubscribe: (subscriber) => removeSubscriber(state, subscriber),
    stats: () => snapshot(state),
    snapshots: deps.snapshots !== undefined,
  };
}

function addSubscriber<C>(state: HubState<C>, conn: C, id: string, op: CompiledSubscription, options: SubscribeOptions): Subscriber<C> {
  const { resume, delta = false, frameType = 'next' } = options;
  const start = resume === undefined && options.start === true;
  const snapshotAsk = resume === undefined ? options.snapshot : undefined;
  const group = state.groups.get(op.dedupKey) ?? openGroup(state, op);
  const subscriber: Subscriber<C> = {
    conn,
    id,
    head: `{"id":${JSON.stringify(id)},"type":"${frameType}","payload":`,
    group,
    catchup: resume || start || snapshotAsk ? { held: [], covered: undefined } : undefined,
    delta,
    hasBase: false,
  };
  group.subscribers.add(subscriber);
  group.headBytes += subscriber.head.length;
  if (delta) group.deltaSubscribers++;
  state.subscriberCount++;
  if (resume) {
    state.stats.resumes++;
    catchUp(state, subscriber, resume).catch((err: unknown) => {
      state.logger.error({ err }, 'resume from history failed');
      state.writer.close(conn, 1011, 'resume from history failed: reconnect and resume again');
    });
  } else if (snapshotAsk) {
    sendSnapshot(state, subscriber, snapshotAsk, start).catch((err: unknown) => {
      state.logger.error({ err }, 'reading the snapshot of a subscription failed');
      state.writer.close(conn, 1011, 'could not read the snapshot: reconnect and subscribe again');
    });
  } else if (start) {
    announceStart(state, subscriber).catch((err: unknown) => {
      state.logger.error({ err }, 'reading the starting point of a subscription failed');
      state.writer.close(conn, 1011, 'could not read the starting point from history: reconnect and subscribe again');
    });
  }
  return subscriber;
}

function removeSubscriber<C>(state: HubState<C>, subscriber: Subscriber<C>): void {
  const { group } = subscriber;
  if (!group.subscribers.delete(subscriber)) return;
  group.headBytes -= subscriber.head.length;
  if (subscriber.delta) group.deltaSubscribers--;
  state.subscriberCount--;
  if (group.subscribers.size === 0) closeGroup(state, group);
}

function openGroup<C>(state: HubState<C>, op: CompiledSubscription): Group<C> {
  const { fieldName, topic } = op.route;
  const context = state.contextFactories ? createLazyContext(state.contextFactories, { dedupKey: op.dedupKey, fieldName, topic }) : undefined;
  const group: Group<C> = { op, subscribers: new Set(), pending: [], pendingTs: [], pendingPartition: [], pendingOffset: [], pendingChars: 0, headBytes: 0, deltaSubscribers: 0, deltaBase: undefined, context };
  state.groups.set(op.dedupKey, group);
  retainTopic(state, topic);
  for (const channel of op.channels) retainChannel(state, channel, group);
  return group;
}

function closeGroup<C>(state: HubState<C>, group: Group<C>): void {
  state.groups.delete(group.op.dedupKey);
  releaseTopic(state, group.op.route.topic);
  for (const channel of group.op.channels) releaseChannel(state, channel, group);
  if (group.context) {
    disposeLazyContext(group.context).catch((err: unknown) => state.logger.warn({ err }, 'disposing an operation context failed'));
  }
}

/** Counts a group on its topic; the first one reads the topic's history floor. */
function retainTopic<C>(state: HubState<C>, topic: string): void {
  const known = state.topics.get(topic);
  if (known) known.groups++;
  else state.topics.set(topic, { groups: 1, floor: readFloor(state, topic) });
}

/** A topic whose last group leaves forgets its floor (it gets a fresh one on return). */
function releaseTopic<C>(state: HubState<C>, topic: string): void {
  const known = state.topics.get(topic);
  if (!known) return;
  if (--known.groups <= 0) state.topics.delete(topic);
}

/** History's newest offset per partition now; empty without history or when it cannot be read. */
function readFloor<C>(state: HubState<C>, topic: string): Promise<Map<number, string>> {
  const { history } = state;
  if (!history) return Promise.resolve(new Map<number, string>());
  // Without history (or with Redis down) the floor is empty: a back-fill then starts at the delivered marks.
  return history
    .partitions(topic)
    .then((partitions) => history.tops(topic, partitions))
    .catch((err: unknown) => {
      state.logger.warn({ err, topic }, 'could not read the history floor of a topic');
      return new Map<number, string>();
    });
}

function retainChannel<C>(state: HubState<C>, channel: string, group: Group<C>): void {
  const known = state.channels.get(channel);
  if (known) {
    known.groups.add(group);
    return;
  }
  const floor = state.topics.get(group.op.route.topic)?.floor ?? Promise.resolve();
  const entry: ChannelState<C> = {
    groups: new Set([group]),
    // The floor is read before SUBSCRIBE so that everything after it is either live or in history.
    ready: floor
      .then(() => state.broker.subscribe(channel))
      .then(
        () => {
          // Still wanted (and not replaced by a later subscribe of the same channel).
          if (state.channels.get(channel) === entry) entry.confirmed = true;
        },
        (err: unknown) => state.logger.error({ err, channel }, 'Redis SUBSCRIBE failed'),
      ),
    confirmed: false,
  };
  state.channels.set(channel, entry);
}

function releaseChannel<C>(state: HubState<C>, channel: string, group: Group<C>): void {
  const known = state.channels.get(channel);
  if (!known) return;
  known.groups.delete(group);
  if (known.groups.size > 0) return;
  state.channels.delete(channel);
  state.broker.unsubscribe(channel).catch((err: unknown) => state.logger.warn({ err, channel }, 'Redis UNSUBSCRIBE failed'));
}

function snapshot<C>(state: HubState<C>): HubSnapshot {
  let confirmedChannels = 0;
  for (const channel of state.channels.values()) if (channel.confirmed) confirmedChannels++;
  const inbound = { messages: queuedMessages(state.inbound), chars: state.inbound.chars, paused: state.paused };
  return { ...state.stats, subscribers: state.subscriberCount, groups: state.groups.size, channels: state.channels.size, confirmedChannels, inbound };
}
