/**
 * The live batch form (decision 0012): one PUBLISH per key shard per ingest chunk instead of one per
 * event. A chunk is one Kafka partition's consecutive events; its events on shard s go out as one
 * *part* on channel s:
 *
 *   {"v":2,"p":<partition>,"l":"<last offset of the chunk>","n":<events in the chunk>,"s":[<shards with events>],"i":[<index in the chunk of each envelope below>],"o":["<its offset>",…][,"r":"<routed on>","k":["<its routing key>"|null,…]]}
 *   <v1 envelope>
 *   <v1 envelope>…
 *
 * one line each (an envelope never holds a raw newline: its head is JSON.stringify'd, and the payload
 * comes from the transform, which drops whitespace and refuses raw control characters in strings).
 *
 * Per-partition order is what gateways' duplicate marks and every client's resume position rest on,
 * and parts of several shards interleave in offsets. So a subscriber re-assembles a chunk from the
 * parts on the channels it listens to ({@link createEnvelopeBatchAssembler}) and hands its envelopes
 * on in chunk order, as if they had been published one by one. `s` tells it which parts to wait for;
 * `l` tells one chunk from the next (a partition's chunks are published one after the other).
 * `o` lets a history reader skip events by position without parsing them: a chunk's history entry
 * holds the same parts (history.ts). `r` and `k` (optional; decision 0039) let a gateway drop an event
 * no subscription of its own wants without parsing it: `k` holds each envelope's routing key as the
 * gateway compares it (text), read where `r` says (the topic's key field, or {@link ROUTED_ON_KAFKA_KEY}),
 * or null where ingest cannot say it exactly (no key, a number not in its shortest form…). Readers
 * before these fields ignore them.
 */
import { EnvelopeError } from './envelope.js';

/** {@link EnvelopeBatchPart.routedOn} of a topic without a key field: ingest routes its events by their Kafka key. */
export const ROUTED_ON_KAFKA_KEY = '@key';

/** Prefix of a part; a single envelope starts with `{"v":1,`. */
const PART_MARK = '{"v":2,';
/** 0x0a, the line separator of a part. */
const NEWLINE = 10;

/** One part as read back. `envelopes[j]` is the chunk's event number `indexes[j]`, at Kafka offset `offsets[j]`. */
export interface EnvelopeBatchPart {
  readonly partition: number;
  readonly last: string;
  readonly count: number;
  readonly shards: readonly number[];
  readonly indexes: readonly number[];
  readonly offsets: readonly string[];
  readonly envelopes: readonly string[];
  /** Where `routingKeys` were read: the topic's key field, or {@link ROUTED_ON_KAFKA_KEY}; undefined from an ingest before decision 0039's part routing. */
  readonly routedOn: string | undefined;
  /** Per envelope, its routing key as text, or null when ingest could not tell it exactly; undefined with `routedOn`. */
  readonly routingKeys: readonly (string | null)[] | undefined;
}

/** An envelope's position and routing key, as its part gave them: a gateway can route the event before parsing it. */
export interface EnvelopeRoute {
  readonly partition: number;
  readonly offset: string;
  /** {@link EnvelopeBatchPart.routedOn}. */
  readonly on: string;
  readonly key: string;
}

/** How a chunk's events were routed, for its parts' heads: `keys[i]` is event i's key (see {@link EnvelopeBatchPart.routingKeys}). */
export interface ChunkRouting {
  readonly on: string;
  readonly keys: readonly (string | null)[];
}

/**
 * The routing key a gateway compares for a value ingest read from the key field (a string, or a
 * number as written): the text itself, unless it reads as a JSON number whose shortest form is other
 * text (`4.20`, `1e3`, a 64-bit integer): a gateway compares numbers by their shortest form and keeps
 * 64-bit integers as digits it does not route by, so such a value gets null (the gateway parses the event).
 */
export function routingKeyText(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!NUMBER_TEXT.test(value)) return value;
  const n = Number(value);
  return Number.isSafeInteger(n) || !Number.isInteger(n) ? (String(n) === value ? value : null) : null;
}
/** JSON's number grammar: text that could have been written as a number (`007` could not: a string). */
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** One part as encoded: the shard whose channel carries it, and its bytes. */
export interface EncodedBatchPart {
  readonly shard: number;
  readonly bytes: Buffer;
  /** With a {@link EnvelopeBatchFrame}: the frame's head, the part, the frame's tail, in one buffer (`bytes` is a view of it). */
  readonly framed?: Buffer;
}

/**
 * Bytes to write around each part in its buffer, so that a caller that sends the part inside a
 * larger message (ingest: a Redis command) does not copy it once more. UTF-8.
 */
export interface EnvelopeBatchFrame {
  /** Written before the part, given its shard and its length in bytes. */
  readonly head: (shard: number, partLength: number) => string;
  /** Written after the part. */
  readonly tail: string;
}

/** Whether a message is a part (else it is a single envelope). */
export function isEnvelopeBatchPart(text: string): boolean {
  return text.startsWith(PART_MARK);
}

/**
 * Encodes a chunk's parts: for each shard that has events, in ascending shard order, the part's
 * bytes (one buffer, the envelopes copied once). `offsets[i]`, `shards[i]` and `envelopes[i]` are the
 * chunk's event i, in offset order. Deliberately imperative: loops run per event.
 */
export function encodeEnvelopeBatch(
  partition: number,
  offsets: readonly string[],
  shards: readonly number[],
  envelopes: readonly Buffer[],
  frame?: EnvelopeBatchFrame,
  routing?: ChunkRouting,
): EncodedBatchPart[] {
  const count = envelopes.length;
  const last = offsets[count - 1];
  if (last === undefined) throw new RangeError('encodeEnvelopeBatch needs at least one event');
  const byShard = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const shard = shards[i] as number;
    let indexes = byShard.get(shard);
    if (indexes === undefined) byShard.set(shard, (indexes = []));
    indexes.push(i);
  }
  const present = [...byShard.keys()].sort((a, b) => a - b);
  const head = `{"v":2,"p":${partition},"l":"${last}","n":${count},"s":[${present.join(',')}],"i":[`;
  return present.map((shard) => {
    const indexes = byShard.get(shard) as number[];
    let listed = '';
    for (const i of indexes) listed += (listed === '' ? '"' : ',"') + (offsets[i] as string) + '"';
    const first = Buffer.from(`${head}${indexes.join(',')}],"o":[${listed}]${routing === undefined ? '' : routingFields(routing, indexes)}}`);
    let length = first.length;
    for (const i of indexes) length += 1 + (envelopes[i] as Buffer).length;
    const frameHead = frame === undefined ? '' : frame.head(shard, length);
    const headLength = Buffer.byteLength(frameHead);
    const tailLength = frame === undefined ? 0 : Buffer.byteLength(frame.tail);
    const total = headLength + length + tailLength;
    // Parts are tens of KiB: a buffer of their own rather than a slice of Node's 8 KiB pool.
    const buffer = total > 4096 ? Buffer.allocUnsafeSlow(total) : Buffer.allocUnsafe(total);
    if (headLength > 0) buffer.write(frameHead, 0, 'utf8');
    let at = headLength;
    buffer.set(first, at);
    at += first.length;
    for (const i of indexes) {
      const envelope = envelopes[i] as Buffer;
      buffer[at++] = NEWLINE;
      // TypedArray#set, not Buffer#copy: the same memmove without copy's argument checks in JS (per event).
      buffer.set(envelope, at);
      at += envelope.length;
    }
    if (frame === undefined) return { shard, bytes: buffer };
    if (tailLength > 0) buffer.write(frame.tail, at, 'utf8');
    return { shard, bytes: buffer.subarray(headLength, headLength + length), framed: buffer };
  });
}

/** `,"r":"<on>","k":[…]` of a part's events. */
function routingFields(routing: ChunkRouting, indexes: readonly number[]): string {
  let keys = '';
  for (const i of indexes) {
    const key = routing.keys[i];
    keys += (keys === '' ? '' : ',') + (key === null || key === undefined ? 'null' : JSON.stringify(key));
  }
  return `,"r":${JSON.stringify(routing.on)},"k":[${keys}]`;
}

/** Reads one part (external input: validated; throws {@link EnvelopeError} naming the field). The envelopes are not parsed. */
export function parseEnvelopeBatchPart(text: string): EnvelopeBatchPart {
  const end = text.indexOf('\n');
  const headText = end < 0 ? text : text.slice(0, end);
  let head: unknown;
  try {
    head = JSON.parse(headText);
  } catch (err) {
    throw new EnvelopeError(`batch part head is not JSON: ${(err as Error).message}`);
  }
  const h = head as Record<string, unknown>;
  if (h['v'] !== 2) throw new EnvelopeError(`batch part v must be 2, got ${JSON.stringify(h['v'])}`);
  const { p: partition, l: last, n: count, s: shards, i: indexes, o: offsets } = h;
  if (!Number.isInteger(partition) || (partition as number) < 0) throw new EnvelopeError(`batch part p must be a partition number, got ${JSON.stringify(partition)}`);
  if (typeof last !== 'string' || !/^\d+$/.test(last)) throw new EnvelopeError(`batch part l must be an offset as a decimal string, got ${JSON.stringify(last)}`);
  if (!Number.isInteger(count) || (count as number) < 1) throw new EnvelopeError(`batch part n must be a positive integer, got ${JSON.stringify(count)}`);
  if (!isIntArray(shards, Infinity)) throw new EnvelopeError(`batch part s must be an array of shard numbers, got ${JSON.stringify(shards)}`);
  if (!isIntArray(indexes, count as number)) throw new EnvelopeError(`batch part i must be ascending indexes below n (${String(count)}), got ${JSON.stringify(indexes)}`);
  if (!Array.isArray(offsets) || offsets.length !== indexes.length || !offsets.every((o) => typeof o === 'string' && /^\d+$/.test(o))) {
    throw new EnvelopeError(`batch part o must list an offset (decimal string) per index, got ${JSON.stringify(offsets)}`);
  }
  const envelopes = end < 0 ? [] : text.slice(end + 1).split('\n');
  if (envelopes.length !== indexes.length) throw new EnvelopeError(`batch part holds ${envelopes.length} envelopes, its head lists ${indexes.length}`);
  const { r: routedOn, k: routingKeys } = h;
  if (routedOn === undefined && routingKeys === undefined) return { partition: partition as number, last, count: count as number, shards, indexes, offsets: offsets as string[], envelopes, routedOn: undefined, routingKeys: undefined };
  if (typeof routedOn !== 'string') throw new EnvelopeError(`batch part r must name the key field its k were read from, got ${JSON.stringify(routedOn)}`);
  if (!Array.isArray(routingKeys) || routingKeys.length !== indexes.length || !routingKeys.every((k) => k === null || typeof k === 'string')) {
    throw new EnvelopeError(`batch part k must list a routing key (string or null) per index, got ${JSON.stringify(routingKeys)}`);
  }
  return { partition: partition as number, last, count: count as number, shards, indexes, offsets: offsets as string[], envelopes, routedOn, routingKeys: routingKeys as (string | null)[] };
}

/** Ascending non-negative integers below `below`. */
function isIntArray(value: unknown, below: number): value is number[] {
  if (!Array.isArray(value)) return false;
  let previous = -1;
  for (const x of value) {
    if (!Number.isInteger(x) || (x as number) <= previous || (x as number) >= below) return false;
    previous = x as number;
  }
  return true;
}

export interface EnvelopeBatchAssemblerOptions {
  /**
   * Each envelope, single or from a re-assembled chunk in chunk (offset) order, with the channel it
   * came under, and its routing key when its part gave one.
   */
  readonly emit: (channel: string, envelope: string, route: EnvelopeRoute | undefined) => void;
  /**
   * Whether this process listens on a wire channel, or is about to (its subscribe sent): a chunk's
   * parts are awaited only on those.
   */
  readonly listens: (wireChannel: string) => boolean;
  /**
   * Whether the subscribe on a wire channel was confirmed: a confirmation comes in the same stream,
   * in the order the server ran the commands, so a chunk whose first part arrives after it was
   * published after the subscribe took effect, and its part on that channel will come. Parts on
   * confirmed channels are awaited without a deadline (but `stallMs`); only the others (a subscribe
   * still on its way) are given up after `waitMs`. @default none is confirmed (every part has waitMs)
   */
  readonly confirmed?: (wireChannel: string) => boolean;
  /** A message that starts like a part but is not one (the assembler drops it; a gateway hands it on, to be counted and logged as a malformed envelope). */
  readonly onMalformed: (channel: string, text: string, err: unknown) => void;
  /**
   * How long an incomplete chunk waits for its missing parts before what arrived is handed on: a
   * part published just before its channel's subscribe took effect never comes (its events were
   * published before that channel's first subscriber could see them). @default 50
   */
  readonly waitMs?: number;
  /**
   * Longest an incomplete chunk waits for parts on confirmed channels (a part that cannot come: its
   * channel was unsubscribed meanwhile). Not a timing guess: a stalled event loop runs its timers
   * before it reads the socket where the missing parts already wait, so a short deadline here handed
   * on chunks with holes, whose late parts were then dropped as duplicates. @default 10000
   */
  readonly stallMs?: number;
}

export interface EnvelopeBatchAssembler {
  /** A message as received: `wireChannel` as Redis named it, `channel` what to hand on with it (the logical channel). */
  message(wireChannel: string, channel: string, text: string): void;
  /**
   * Forgets every incomplete chunk: the connection is gone, and a gateway's back-fill re-reads them
   * from history after its last delivered position. Handing on part of a chunk would move that
   * position past the events of the missing parts.
   */
  discard(): void;
  /**
   * The connection is not read for now (the gateway's inbound queue is full): the missing parts
   * wait in the socket, so no incomplete chunk may be handed on meanwhile. Idempotent.
   */
  pause(): void;
  /** Reading again: incomplete chunks wait `waitMs` from now for their missing parts. Idempotent. */
  resume(): void;
}

interface PendingChunk {
  readonly key: string;
  /** Partition and channel base: the chunks of one partition on one process. */
  readonly partitionKey: string;
  readonly last: string;
  readonly envelopes: (string | undefined)[];
  readonly channels: (string | undefined)[];
  readonly routes: (EnvelopeRoute | undefined)[];
  /** Wire channels whose part has not arrived yet. */
  readonly waiting: Set<string>;
  /** Those of `waiting` whose subscribe was not confirmed when the chunk's first part came: their part may never come. */
  readonly unsure: Set<string>;
  timer: NodeJS.Timeout | undefined;
  /** The timer is the `stallMs` one (no unsure part was left when it was set). */
  stalling: boolean;
}

/**
 * Re-assembles chunks from their parts (see the module comment). Single envelopes pass through.
 * Wire channels are `<base>:<shard>` in every layout (`RedisLayout`), so the parts of one chunk are
 * on `<base>:<s>` for each `s` of the head, and a chunk is known by its base and partition.
 */
export function createEnvelopeBatchAssembler({ emit, listens, confirmed = () => false, onMalformed, waitMs = 50, stallMs = 10_000 }: EnvelopeBatchAssemblerOptions): EnvelopeBatchAssembler {
  /** By partition, base, last offset and count: two ingests redoing a partition (a rebalance) may interleave their chunks. */
  const pending = new Map<string, PendingChunk>();
  const openByPartition = new Map<string, Set<PendingChunk>>();
  let paused = false;

  /** Parts on unconfirmed channels get `waitMs`, then are given up; the rest get `stallMs`. */
  function arm(chunk: PendingChunk): void {
    if (paused || chunk.timer !== undefined) return;
    chunk.stalling = chunk.unsure.size === 0;
    chunk.timer = setTimeout(() => expire(chunk), chunk.stalling ? stallMs : waitMs);
    chunk.timer.unref();
  }

  function expire(chunk: PendingChunk): void {
    chunk.timer = undefined;
    if (chunk.stalling) return complete(chunk);
    // After this turn's reads (the check phase follows the poll phase): a late loop turn runs its
    // timers before reading what arrived meanwhile, and the missing parts may be in it.
    setImmediate(() => giveUpUnsure(chunk));
  }

  function giveUpUnsure(chunk: PendingChunk): void {
    if (pending.get(chunk.key) !== chunk || paused || chunk.timer !== undefined) return;
    for (const wire of chunk.unsure) chunk.waiting.delete(wire);
    chunk.unsure.clear();
    if (chunk.waiting.size === 0) complete(chunk);
    else arm(chunk);
  }

  function complete(chunk: PendingChunk): void {
    if (pending.get(chunk.key) !== chunk) return;
    pending.delete(chunk.key);
    const open = openByPartition.get(chunk.partitionKey);
    open?.delete(chunk);
    if (open?.size === 0) openByPartition.delete(chunk.partitionKey);
    clearTimeout(chunk.timer);
    const { envelopes, channels, routes } = chunk;
    // Deliberately imperative: runs per event. Holes are events on shards this process does not listen to.
    for (let i = 0; i < envelopes.length; i++) {
      const envelope = envelopes[i];
      if (envelope !== undefined) emit(channels[i] as string, envelope, routes[i]);
    }
  }

  function start(key: string, partitionKey: string, base: string, part: EnvelopeBatchPart): PendingChunk {
    const waiting = new Set<string>();
    const unsure = new Set<string>();
    for (const shard of part.shards) {
      const wire = base + shard;
      if (!listens(wire)) continue;
      waiting.add(wire);
      if (!confirmed(wire)) unsure.add(wire);
    }
    const chunk: PendingChunk = { key, partitionKey, last: part.last, envelopes: new Array<string | undefined>(part.count), channels: new Array<string | undefined>(part.count), routes: new Array<EnvelopeRoute | undefined>(part.count), waiting, unsure, timer: undefined, stalling: false };
    pending.set(key, chunk);
    let open = openByPartition.get(partitionKey);
    if (!open) openByPartition.set(partitionKey, (open = new Set()));
    open.add(chunk);
    return chunk;
  }

  /**
   * A part of a chunk that comes after an open one (every offset of the part above the open chunk's
   * last): one publisher sends a partition's chunks one after the other, so the open one is all here.
   * A part that overlaps an open chunk is another ingest redoing it (a rebalance): both stay open.
   */
  function completeEarlier(partitionKey: string, part: EnvelopeBatchPart): void {
    const open = openByPartition.get(partitionKey);
    if (!open) return;
    let lowest: bigint | undefined;
    for (const offset of part.offsets) {
      const o = BigInt(offset);
      if (lowest === undefined || o < lowest) lowest = o;
    }
    if (lowest === undefined) return;
    const below = [...open].filter((c) => BigInt(c.last) < lowest).sort((a, b) => (BigInt(a.last) < BigInt(b.last) ? -1 : 1));
    for (const chunk of below) complete(chunk);
  }

  return {
    message(wireChannel, channel, text) {
      if (!isEnvelopeBatchPart(text)) {
        emit(channel, text, undefined);
        return;
      }
      let part: EnvelopeBatchPart;
      try {
        part = parseEnvelopeBatchPart(text);
      } catch (err) {
        onMalformed(channel, text, err);
        return;
      }
      const base = wireChannel.slice(0, wireChannel.lastIndexOf(':') + 1);
      const partitionKey = `${part.partition}@${base}`;
      const key = `${partitionKey}|${part.last}|${part.count}`;
      let chunk = pending.get(key);
      if (chunk === undefined) {
        completeEarlier(partitionKey, part);
        chunk = start(key, partitionKey, base, part);
      }
      const { indexes, envelopes, offsets, routedOn, routingKeys } = part;
      for (let j = 0; j < indexes.length; j++) {
        const i = indexes[j] as number;
        chunk.envelopes[i] = envelopes[j];
        chunk.channels[i] = channel;
        const key = routingKeys?.[j];
        if (typeof key === 'string') chunk.routes[i] = { partition: part.partition, offset: offsets[j] as string, on: routedOn as string, key };
      }
      chunk.waiting.delete(wireChannel);
      chunk.unsure.delete(wireChannel);
      if (chunk.waiting.size === 0) complete(chunk);
      else arm(chunk);
    },
    discard() {
      for (const chunk of pending.values()) clearTimeout(chunk.timer);
      pending.clear();
      openByPartition.clear();
    },
    pause() {
      paused = true;
      for (const chunk of pending.values()) {
        clearTimeout(chunk.timer);
        chunk.timer = undefined;
      }
    },
    resume() {
      paused = false;
      for (const chunk of pending.values()) arm(chunk);
    },
  };
}
