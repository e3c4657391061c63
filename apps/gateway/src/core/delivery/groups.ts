/**
 * Local subscribers and what they share (centrifuge's `hub.go`): subscribers share a group per
 * distinct operation, groups share broker channels, channels are subscribed on first use and
 * unsubscribed when the last group leaves; topics are counted for their history floor. This module
 * is the one writer of the registry (groups, channels, topics, the subscriber count) and of each
 * group's membership; the flush writes a group's pending payloads (flush.ts), delta.ts its base.
 * A group's subscribers and a key's groups in the channel index are one reference until a second
 * one comes (one-or-set.ts): a unicast group has one subscriber, and a key one group.
 */
import { createLazyContext, disposeLazyContext, type LazyFactories } from '@wirestream/context';
import type { Logger } from '@wirestream/telemetry';
import type { Broker, HistoryReader } from '../../broker/broker.js';
import { createCatchup, type CatchingUp } from './catchup.js';
import type { ConflationState, Conflating } from './conflation.js';
import type { CompiledSubscription } from '../operations/operations.js';
import type { EnvelopeRoute } from '@wirestream/wire';
import { KAFKA_KEY } from '../operations/where.js';
import { addOne, countOf, hasOne, listOf, removeOne, type OneOrSet } from './one-or-set.js';
import type { WhereEvent } from '../operations/where-compile.js';

/** One client subscription (one graphql-ws `id` on one connection). Returned as the handle to remove it. */
export interface Subscriber<C> extends CatchingUp<C>, Conflating<C> {
  readonly id: string;
  readonly group: Group<C>;
  /** Its queue when it asked for latest-value conflation or a rate cap (conflation.ts writes it). */
  readonly conflation: ConflationState<C> | undefined;
  /** Asked for delta payloads (`extensions.delta`, allowed by the server): see delta.ts. */
  readonly delta: boolean;
  /**
   * Delta mode: the last payload this subscriber received is the group's {@link Group.deltaBase}
   * (it received the group's previous payload live), so the next one can be a delta. False for a
   * new subscriber and whenever it was not written live (catching up): it then gets a full one
   * first, unless its catch-up left it a known base ({@link CatchingUp.catchupBase}).
   * Written by the flush (flush.ts).
   */
  hasBase: boolean;
}

/**
 * Subscribers whose operations are identical (same dedup key): one execution per event serves all.
 * "Group" is the one name of this concept in the code; metrics and docs call the count of groups
 * "operations" (distinct operations = executions per event).
 */
export interface Group<C> {
  readonly op: CompiledSubscription;
  /**
   * Its subscribers, in the order they joined: the one itself until a second joins, then a Set
   * (one-or-set.ts; ask {@link isSubscribed}, {@link subscriberCount}, {@link subscribersOf}).
   * Undefined once the last one left (the group is closed).
   */
  members: OneOrSet<Subscriber<C>> | undefined;
  /**
   * Payloads of this event-loop turn not yet written (flush.ts), with what the flush needs of each;
   * undefined while none wait, as for most groups most of the time (ten thousand idle groups hold no arrays).
   */
  pending: PendingPayloads | undefined;
  /** Sum of the subscribers' frame-head lengths, for bytes-out without a per-subscriber loop. */
  headBytes: number;
  /** Subscribers in delta mode; deltas are computed (once per event for the group) only while some are. */
  deltaSubscribers: number;
  /**
   * UTF-8 bytes of the group's last payload written live while it had delta subscribers: the base
   * of the next event's delta (delta.ts). Undefined while no subscriber can hold it.
   */
  deltaBase: Uint8Array | undefined;
  /** The same payload as text: what a subscriber's own last payload is compared with (delta.ts). */
  deltaBaseText: string | undefined;
  /** Resolver context of this group (lazy: members are built on first use), if factories were given. */
  readonly context: object | undefined;
}

/** A group's payloads waiting for a flush, in event order (flush.ts is their one writer). */
export interface PendingPayloads {
  /** Execution results as JSON. */
  readonly payloads: string[];
  /** Kafka timestamps, for the event-to-wire histogram. */
  readonly timestamps: number[];
  /** Positions (partition, offset), for subscribers that are catching up. */
  readonly partitions: number[];
  readonly offsets: string[];
  /** Routing keys (the envelopes' `key`), for conflating subscribers (conflation.ts). */
  readonly keys: (string | null)[];
  /** Characters of `payloads`, for the flush's per-group bound. */
  chars: number;
}

/** What every group context offers before any lazy member is built. */
export interface GroupContextBase {
  /** The operation's dedup key (document, variables, arguments and scope). */
  readonly dedupKey: string;
  readonly fieldName: string;
  readonly topic: string;
  /** The caller's claims the dedup key includes (CompiledSubscription.claims); absent without any. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

/** A broker channel some group needs. */
export interface ChannelState<C> {
  /** The topic whose events the channel carries. */
  readonly topic: string;
  /** Every group on the channel. */
  readonly groups: Set<Group<C>>;
  /** The groups that pin no routing key: every event of the channel is tested against each. */
  readonly unpinned: Set<Group<C>>;
  /**
   * The groups that pin routing keys (decision 0039), by where the key is read (a payload field's
   * name, or KAFKA_KEY), then by key: an event finds them by its key, one lookup per pin field. A
   * key's lone group is filed as itself, several as a Set (one-or-set.ts).
   */
  readonly pinned: Map<string, Map<string, OneOrSet<Group<C>>>>;
  /** Resolves once the broker confirmed the SUBSCRIBE (live events flow from then on). */
  readonly ready: Promise<void>;
  confirmed: boolean;
  /**
   * Groups that read an event's payload as an object ({@link readsPayloadObject}): while there is
   * none, the channel's events are scanned and rendered from their text (decision 0043).
   */
  objectReaders: number;
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

/** The hub's subscribers, groups, channels and topics. */
export interface Registry<C> {
  readonly broker: Broker;
  readonly history: HistoryReader | undefined;
  readonly logger: Logger;
  readonly contextFactories: LazyFactories<object, GroupContextBase> | undefined;
  /** By dedup key. */
  readonly groups: Map<string, Group<C>>;
  readonly channels: Map<string, ChannelState<C>>;
  readonly topics: Map<string, TopicState>;
  subscribers: number;
}

export function createRegistry<C>(
  broker: Broker,
  history: HistoryReader | undefined,
  logger: Logger,
  contextFactories: LazyFactories<object, GroupContextBase> | undefined,
): Registry<C> {
  return { broker, history, logger, contextFactories, groups: new Map(), channels: new Map(), topics: new Map(), subscribers: 0 };
}

/** How a new subscriber joins: its frames' type, delta mode, and whether it holds live payloads at first. */
export interface JoinOptions<C> {
  readonly frameType: 'next' | 'data';
  readonly delta: boolean;
  /** It catches up first (resume, start, snapshot): live payloads are held from this moment. */
  readonly catchup: boolean;
  /** Its queue when it asked for latest-value conflation or a rate cap (conflation.ts). @default undefined */
  readonly conflation?: ConflationState<C> | undefined;
}

/** Adds a subscriber to its operation's group (opening the group, and its channels, if it is the first). */
export function joinGroup<C>(registry: Registry<C>, conn: C, id: string, op: CompiledSubscription, options: JoinOptions<C>): Subscriber<C> {
  const group = registry.groups.get(op.dedupKey) ?? openGroup(registry, op);
  const subscriber: Subscriber<C> = {
    conn,
    id,
    // Joined, not concatenated: one flat string, not a chain of four (~70 bytes less per subscriber).
    head: ['{"id":', JSON.stringify(id), ',"type":"', options.frameType, '","payload":'].join(''),
    group,
    catchup: options.catchup ? createCatchup() : undefined,
    delta: options.delta,
    hasBase: false,
    catchupBase: undefined,
    conflation: options.conflation,
  };
  group.members = addOne(group.members, subscriber);
  group.headBytes += subscriber.head.length;
  if (options.delta) group.deltaSubscribers++;
  registry.subscribers++;
  return subscriber;
}

/** Removes a subscriber; its group and channels go with the last one. Idempotent. */
export function leaveGroup<C>(registry: Registry<C>, subscriber: Subscriber<C>): void {
  const { group } = subscriber;
  if (!hasOne(group.members, subscriber)) return;
  group.members = removeOne(group.members, subscriber);
  group.headBytes -= subscriber.head.length;
  if (subscriber.delta) group.deltaSubscribers--;
  registry.subscribers--;
  if (group.members === undefined) closeGroup(registry, group);
}

/** Whether the subscriber is still in its group (it has not left, nor been removed). */
export function isSubscribed<C>(subscriber: Subscriber<C>): boolean {
  return hasOne(subscriber.group.members, subscriber);
}

/** How many subscribers a group has now (0 once it closed). */
export function subscriberCount<C>(group: Group<C>): number {
  return countOf(group.members);
}

/** A group's subscribers now, as a new array in the order they joined. */
export function subscribersOf<C>(group: Group<C>): Subscriber<C>[] {
  return listOf(group.members);
}

/** A broker channel's state (undefined when no group listens on it). */
export function channelState<C>(registry: Registry<C>, channel: string): ChannelState<C> | undefined {
  return registry.channels.get(channel);
}

/**
 * The groups of the channel an event can match (decision 0039): those pinned to its key, then those
 * that pin none; every group is still filtered in full (render.ts), the index only leaves out groups
 * that cannot match. A key read from a payload field is compared as text, as the filters do: a
 * string is itself, a number its decimal text; any other value (null, a list, a 64-bit integer kept
 * as digits…) tests every group, as before the index. An event whose batch part gave its key
 * (`route`, read by ingest from the same field) is looked up by that key, so its payload need not be
 * parsed for this (decision 0043). No array is made when one list serves, and a key's lone group with
 * no unpinned group beside it is returned as itself (unicast's common case).
 */
export function groupsForEvent<C>(state: ChannelState<C>, event: WhereEvent, route?: EnvelopeRoute): Group<C> | ReadonlySet<Group<C>> | readonly Group<C>[] {
  if (state.pinned.size === 0) return state.unpinned;
  let found: OneOrSet<Group<C>> | undefined;
  let more: Group<C>[] | undefined;
  for (const [on, byKey] of state.pinned) {
    // The batch part's key (ingest read it from this field) spares parsing the payload; every group found still filters on the payload.
    const value = on === KAFKA_KEY ? event.key : route !== undefined && route.on === on ? route.key : event.payload[on];
    let key: string;
    if (typeof value === 'string') key = value;
    else if (typeof value === 'number') key = String(value);
    else if (on === KAFKA_KEY) continue; // a null Kafka key: no `_key` comparison matches it
    else return state.groups;
    const groups = byKey.get(key);
    if (groups === undefined) continue;
    if (found === undefined) found = groups;
    else (more ??= listOf(found)).push(...listOf(groups));
  }
  if (found === undefined) return state.unpinned;
  if (state.unpinned.size === 0 && more === undefined) return found;
  const all = more ?? listOf(found);
  for (const group of state.unpinned) all.push(group);
  return all;
}

/** Whether {@link groupsForEvent} found one group, returned as itself rather than in a collection. */
export function isOneGroup<C>(found: Group<C> | ReadonlySet<Group<C>> | readonly Group<C>[]): found is Group<C> {
  return 'op' in found;
}

/**
 * Whether an event whose batch part gave its routing key may match a group of the channel: false
 * only when every group pins a key read where the part read it and none pins this one. Then
 * {@link groupsForEvent} would find no group for the event, and it can be dropped unparsed (decision 0039).
 */
export function mayMatchRoute<C>(state: ChannelState<C>, route: EnvelopeRoute): boolean {
  if (state.unpinned.size > 0 || state.pinned.size !== 1) return true;
  const byKey = state.pinned.get(route.on);
  return byKey === undefined || byKey.has(route.key);
}

/** Resolves once every channel of the group is subscribed (or failed): live events flow from then on. */
export async function channelsConfirmed<C>(registry: Registry<C>, group: Group<C>): Promise<void> {
  await Promise.all(group.op.channels.map((c) => registry.channels.get(c)?.ready ?? Promise.resolve()));
}

/** The topics someone listens to now, with their floors (a copy: the back-fill awaits between them). */
export function listenedTopics<C>(registry: Registry<C>): [string, TopicState][] {
  return [...registry.topics];
}

/** Channels whose SUBSCRIBE the broker confirmed. */
export function confirmedChannels<C>(registry: Registry<C>): number {
  let confirmed = 0;
  for (const channel of registry.channels.values()) if (channel.confirmed) confirmed++;
  return confirmed;
}

function openGroup<C>(registry: Registry<C>, op: CompiledSubscription): Group<C> {
  const { fieldName, topic } = op.route;
  const base: GroupContextBase = { dedupKey: op.dedupKey, fieldName, topic, ...(op.claims === undefined ? {} : { claims: op.claims }) };
  // Without factories a context still carries the claims look-up headers read (decision 0042).
  const context = registry.contextFactories ? createLazyContext(registry.contextFactories, base) : op.claims === undefined ? undefined : Object.freeze(base);
  const group: Group<C> = { op, members: undefined, pending: undefined, headBytes: 0, deltaSubscribers: 0, deltaBase: undefined, deltaBaseText: undefined, context };
  registry.groups.set(op.dedupKey, group);
  retainTopic(registry, topic);
  for (const channel of op.channels) retainChannel(registry, channel, group);
  return group;
}

function closeGroup<C>(registry: Registry<C>, group: Group<C>): void {
  registry.groups.delete(group.op.dedupKey);
  releaseTopic(registry, group.op.route.topic);
  for (const channel of group.op.channels) releaseChannel(registry, channel, group);
  if (group.context && registry.contextFactories) {
    disposeLazyContext(group.context).catch((err: unknown) => registry.logger.warn({ err }, 'disposing an operation context failed'));
  }
}

/** Counts a group on its topic; the first one reads the topic's history floor. */
function retainTopic<C>(registry: Registry<C>, topic: string): void {
  const known = registry.topics.get(topic);
  if (known) known.groups++;
  else registry.topics.set(topic, { groups: 1, floor: readFloor(registry, topic) });
}

/** A topic whose last group leaves forgets its floor (it gets a fresh one on return). */
function releaseTopic<C>(registry: Registry<C>, topic: string): void {
  const known = registry.topics.get(topic);
  if (!known) return;
  if (--known.groups <= 0) registry.topics.delete(topic);
}

/** History's newest offset per partition now; empty without history or when it cannot be read. */
function readFloor<C>(registry: Registry<C>, topic: string): Promise<Map<number, string>> {
  const { history } = registry;
  if (!history) return Promise.resolve(new Map<number, string>());
  // Without history (or with Redis down) the floor is empty: a back-fill then starts at the delivered marks.
  return history
    .partitions(topic)
    .then((partitions) => history.tops(topic, partitions))
    .catch((err: unknown) => {
      registry.logger.warn({ err, topic }, 'could not read the history floor of a topic');
      return new Map<number, string>();
    });
}

function retainChannel<C>(registry: Registry<C>, channel: string, group: Group<C>): void {
  const known = registry.channels.get(channel);
  if (known) {
    addToChannel(known, group);
    return;
  }
  const floor = registry.topics.get(group.op.route.topic)?.floor ?? Promise.resolve();
  const entry: ChannelState<C> = {
    topic: group.op.route.topic,
    groups: new Set(),
    unpinned: new Set(),
    pinned: new Map(),
    // The floor is read before SUBSCRIBE so that everything after it is either live or in history.
    ready: floor
      .then(() => registry.broker.subscribe(channel))
      .then(
        () => {
          // Still wanted (and not replaced by a later subscribe of the same channel).
          if (registry.channels.get(channel) === entry) entry.confirmed = true;
        },
        (err: unknown) => registry.logger.error({ err, channel }, 'Redis SUBSCRIBE failed'),
      ),
    confirmed: false,
    objectReaders: 0,
  };
  addToChannel(entry, group);
  registry.channels.set(channel, entry);
}

function releaseChannel<C>(registry: Registry<C>, channel: string, group: Group<C>): void {
  const known = registry.channels.get(channel);
  if (!known) return;
  removeFromChannel(known, group);
  if (known.groups.size > 0) return;
  registry.channels.delete(channel);
  registry.broker.unsubscribe(channel).catch((err: unknown) => registry.logger.warn({ err, channel }, 'Redis UNSUBSCRIBE failed'));
}

/** Adds a group to a channel's groups and to its routing: under each key it pins, or with the unpinned. */
function addToChannel<C>(state: ChannelState<C>, group: Group<C>): void {
  state.groups.add(group);
  if (readsPayloadObject(group.op)) state.objectReaders++;
  const { pin } = group.op;
  if (pin === undefined) {
    state.unpinned.add(group);
    return;
  }
  let byKey = state.pinned.get(pin.on);
  if (byKey === undefined) state.pinned.set(pin.on, (byKey = new Map<string, OneOrSet<Group<C>>>()));
  for (const key of pin.keys) byKey.set(key, addOne(byKey.get(key), group));
}

function removeFromChannel<C>(state: ChannelState<C>, group: Group<C>): void {
  if (state.groups.delete(group) && readsPayloadObject(group.op)) state.objectReaders--;
  const { pin } = group.op;
  if (pin === undefined) {
    state.unpinned.delete(group);
    return;
  }
  const byKey = state.pinned.get(pin.on);
  if (byKey === undefined) return;
  for (const key of pin.keys) {
    const left = removeOne(byKey.get(key), group);
    if (left === undefined) byKey.delete(key);
    else byKey.set(key, left);
  }
  if (byKey.size === 0) state.pinned.delete(pin.on);
}

/**
 * Whether rendering an event for this operation reads its payload as an object: it has no byte plan
 * (execute, enums, custom scalars, look-ups) or a `where` (its predicate reads the payload).
 */
export function readsPayloadObject(op: CompiledSubscription): boolean {
  return op.projector?.bytes === undefined || op.where !== undefined;
}
