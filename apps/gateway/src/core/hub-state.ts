import type { LazyFactories } from '@wirestream/context';
import type { Envelope, WirestreamSchema } from '@wirestream/schema';
import type { Logger, Tracer } from '@wirestream/telemetry';
import type { Broker, HistoryReader, SnapshotReader } from '../broker/broker.js';
import type { ConnectionWriter } from './connection-writer.js';
import type { Flush } from './flush.js';
import type { FlowLimits, InboundQueue } from './inbound.js';
import type { GatewayMetrics } from './metrics.js';
import type { CompiledSubscription } from './operations.js';
import type { DeliveredMarks } from './positions.js';
import type { Trip } from './trip-tracing.js';

/** One client subscription (one graphql-ws `id` on one connection). Returned as the handle to remove it. */
export interface Subscriber<C> {
  readonly conn: C;
  readonly id: string;
  /** `{"id":<id>,"type":"next","payload":` — built once so each delivery is a concatenation. */
  readonly head: string;
  readonly group: Group<C>;
  /**
   * Set while a resuming subscriber is replayed from history: live payloads wait here (with their
   * positions) so history and live meet without a gap or a duplicate. Undefined otherwise.
   */
  catchup: Catchup | undefined;
  /** Asked for delta payloads (`extensions.delta`, allowed by the server): see delta.ts. */
  readonly delta: boolean;
  /**
   * Delta mode: the last payload this subscriber received is the group's {@link Group.deltaBase}
   * (it received the group's previous payload live), so the next one can be a delta. False for a
   * new subscriber and whenever it was not written live (catching up): it then gets a full one first.
   */
  hasBase: boolean;
}

export interface Catchup {
  readonly held: HeldPayload[];
  /**
   * Set when the replay is done: per partition, the last offset the client already has. A live
   * event can be replayed from history before its PUBLISH arrives, so live payloads are checked
   * against it until each partition has moved past it; then the subscriber is plainly live.
   */
  covered: Map<number, string> | undefined;
}

/** A live payload held back while its subscriber catches up. */
export interface HeldPayload {
  readonly partition: number;
  readonly offset: string;
  readonly payload: string;
}

/**
 * Subscribers whose operations are identical (same dedup key): one execution per event serves all.
 * "Group" is the one name of this concept in the code; metrics and docs call the count of groups
 * "operations" (distinct operations = executions per event).
 */
export interface Group<C> {
  readonly op: CompiledSubscription;
  readonly subscribers: Set<Subscriber<C>>;
  /** Payloads (execution results as JSON) of this event-loop turn, in event order, not yet written. */
  pending: string[];
  /** Kafka timestamps of `pending`, for the event-to-wire histogram. */
  pendingTs: number[];
  /** Positions of `pending` (partition, offset), for subscribers that are catching up. */
  pendingPartition: number[];
  pendingOffset: string[];
  /** Characters of `pending`, for the flush's per-group bound. */
  pendingChars: number;
  /** Sum of the subscribers' frame-head lengths, for bytes-out without a per-subscriber loop. */
  headBytes: number;
  /** Subscribers in delta mode; deltas are computed (once per event for the group) only while some are. */
  deltaSubscribers: number;
  /**
   * UTF-8 bytes of the group's last payload written live while it had delta subscribers: the base
   * of the next event's delta. Undefined while no subscriber can hold it.
   */
  deltaBase: Uint8Array | undefined;
  /** Resolver context of this group (lazy: members are built on first use), if factories were given. */
  readonly context: object | undefined;
}

/** What every group context offers before any lazy member is built. */
export interface GroupContextBase {
  /** The operation's dedup key (document, variables, arguments and scope). */
  readonly dedupKey: string;
  readonly fieldName: string;
  readonly topic: string;
}

/** A broker channel some group needs. */
export interface ChannelState<C> {
  readonly groups: Set<Group<C>>;
  /** Resolves once the broker confirmed the SUBSCRIBE (live events flow from then on). */
  readonly ready: Promise<void>;
  confirmed: boolean;
}

/** A topic some group listens to. */
export interface TopicState {
  groups: number;
  /**
   * History's newest offset per partition when the topic gained its first group. A back-fill starts
   * at the later of this and the delivered mark, so it replays only what was published while someone
   * listened. Forgotten with the topic's last group.
   */
  readonly floor: Promise<Map<number, string>>;
}

export interface HubStats {
  eventsIn: number;
  /** Events re-read from history after a broker reconnect. */
  backfilled: number;
  /** Subscriptions that asked to resume, and those told history could not cover their gap. */
  resumes: number;
  resumesNotRecovered: number;
  /** Events sent from history to resuming subscribers. */
  replayed: number;
  /** Subscriptions served a snapshot, and the entries sent to them. */
  snapshots: number;
  snapshotEntries: number;
  /** Envelopes dropped because their position was already delivered (ingest re-publishes after a crash or rebalance). */
  duplicates: number;
  badEnvelopes: number;
  executions: number;
  framesOut: number;
  /** Frames of `framesOut` that carried a delta payload instead of the full one. */
  deltaFramesOut: number;
  /** Times the broker was paused because the inbound queue passed its bound. */
  pauses: number;
}

export interface HubDeps<C> {
  readonly schema: WirestreamSchema;
  readonly broker: Broker;
  readonly logger: Logger;
  readonly writer: ConnectionWriter<C>;
  /** Prometheus series; optional so tests and benchmarks can run without a registry. */
  readonly metrics?: GatewayMetrics | undefined;
  /**
   * Backends a custom resolver may need (clients, DataLoaders), built lazily per group on first use
   * and disposed with the group. Defined once per server: connections hold nothing.
   */
  readonly contextFactories?: LazyFactories<object, GroupContextBase> | undefined;
  /**
   * History (what ingest writes next to each publish): enables resume, back-fill after a broker
   * reconnect, and the epoch in positions. Without it the gateway is live-only.
   */
  readonly history?: HistoryReader | undefined;
  /**
   * Snapshots of `@topic(snapshot: true)` topics: a subscription that asks (`extensions.snapshot`)
   * receives each key's current value first, then the live stream (snapshot.ts). Without it such a
   * request is refused.
   */
  readonly snapshots?: SnapshotReader | undefined;
  /** Time slices and the inbound bound (inbound.ts). @default GATEWAY_DEFAULTS.sliceMs, .maxInboundBytes */
  readonly flow?: FlowLimits | undefined;
  /** OpenTelemetry tracer: spans for events whose envelope carries a sampled trace (trip-tracing.ts). @default undefined (none) */
  readonly tracer?: Tracer | undefined;
}

/** Everything the hub knows, in one object that its module-level functions take. */
/** The rest of one message's fan-out, taken up by the next slice before anything new. */
export interface FanoutInProgress<C> {
  readonly envelope: Envelope;
  readonly extensions: Record<string, unknown>;
  /** The groups still to render, as they were when the message came (a group that joined later is live after it). */
  readonly groups: readonly Group<C>[];
  next: number;
  /** Its spans, when the event is traced. */
  readonly trip: Trip<C> | undefined;
}

export interface HubState<C> extends HubDeps<C> {
  readonly flow: FlowLimits;
  /** By dedup key. */
  readonly groups: Map<string, Group<C>>;
  readonly channels: Map<string, ChannelState<C>>;
  readonly topics: Map<string, TopicState>;
  readonly delivered: DeliveredMarks;
  readonly stats: HubStats;
  subscriberCount: number;
  /** Current history epoch; part of every position, so a client can tell positions of a lost history apart. */
  epoch: string | undefined;
  /** Broker messages not processed yet, in arrival order (inbound.ts). */
  readonly inbound: InboundQueue;
  /** While re-reading history after a broker reconnect, the queue is held: live messages wait, then follow in order. */
  held: boolean;
  /** The broker was lost with history on: the next `ready` back-fills. */
  backfillPending: boolean;
  /** The held queue overflowed during a back-fill and was dropped: the back-fill makes one more pass. */
  backfillAgain: boolean;
  /** The broker is paused because the queue passed `flow.maxInboundBytes`. */
  paused: boolean;
  sliceScheduled: boolean;
  /** True while a slice runs: payloads it renders are flushed at its end, not on a turn of their own. */
  inSlice: boolean;
  /** A message whose fan-out did not fit its slice: its remaining groups render first in the next one (delivery.ts). */
  fanout: FanoutInProgress<C> | undefined;
  /** `runSlice` bound to this state once, so scheduling a slice allocates nothing. */
  readonly runSlice: () => void;
  /** Groups with payloads waiting for a flush (flush.ts). */
  dirty: Group<C>[];
  /** When the oldest of them got its first payload (performance.now()). */
  pendingSince: number;
  /** The most pending characters any of them holds. */
  pendingLargest: number;
  /** A flush being written across slices. */
  flushing: Flush<C> | undefined;
  /** How long the last flush took (ms, start to last write): paces the next one under load. */
  lastFlushMs: number;
  /** Traced events rendered since the last flush started: the next flush ends their spans (trip-tracing.ts). */
  trips: Trip<C>[];
}
