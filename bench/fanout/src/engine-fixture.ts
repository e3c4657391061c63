/**
 * What the in-process engine benches share, once: the real engine (`createHub` on the in-process
 * bus) with a writer that builds each frame and drops it, listing events of the example schema's
 * listing route (each bench gives its own payload), envelopes fed in bursts as ioredis hands over
 * socket reads, CPU per round, sides measured in alternating rounds and their table, forced GC.
 * A bench (micro.ts runs them) declares only its sides, payloads and columns.
 */
import { channelName, shardOf, type EnvelopeRoute } from '@wirestream/wire';
import { auctionSchemaPath, loadWirestreamSchema, type SubscriptionRoute } from '@wirestream/schema';
import { createLogger, createMetricsRegistry, type Tracer } from '@wirestream/telemetry';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createKeyTransformer } from '@wirestream/transform';
import { createGatewayMetrics, createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter, type Hub } from '@wirestream/gateway/internals';
import { createEnvelopeWriter, markdownTable, median, requireGc } from '@wirestream/bench-kit';
import type { OptionSpecs, OptionValues } from './scenario.js';

export const schema = loadWirestreamSchema(auctionSchemaPath);
export const TOPIC = 'listing-events';
const found = schema.routesForTopic(TOPIC)[0];
if (!found) throw new Error(`the example schema has no ${TOPIC} route`);
export const route: SubscriptionRoute = found;

/** Every operation allowed, its arguments as given. */
export const allowAll = { key: 'bench', authorize: (_route: unknown, args: Readonly<Record<string, unknown>>) => ({ ok: true as const, args }) };

export type OperationCompiler = ReturnType<typeof createOperationCompiler>;

/** A compiler of the example schema on the `ws` channel prefix. */
export function createCompiler(options: Omit<NonNullable<Parameters<typeof createOperationCompiler>[1]>, 'channelPrefix'> = {}): OperationCompiler {
  return createOperationCompiler(schema, { channelPrefix: 'ws', ...options });
}

/** What a client sends: the query text, or with its operation name and variables. */
export type SubscribeRequest = string | { readonly query: string; readonly operationName?: string; readonly variables?: Readonly<Record<string, unknown>> };

/** A subscription compiled (with {@link allowAll} unless `access` is null), or a thrown error saying why not. */
export function compileSubscription(compiler: OperationCompiler, query: SubscribeRequest, operationName?: string, access: typeof allowAll | null = allowAll): CompiledSubscription {
  const request = typeof query === 'string' ? (operationName === undefined ? { query } : { query, operationName }) : { ...query, variables: query.variables === undefined ? undefined : { ...query.variables } };
  const compiled = access === null ? compiler.compile(request) : compiler.compile(request, access);
  if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error(`bench operation does not compile: ${JSON.stringify(compiled)}`);
  return compiled.operation;
}

/** A listing event as the engine gets it: its key, payload JSON, wire channel and Kafka partition. */
export interface EngineEvent {
  readonly key: string;
  readonly payload: string;
  readonly channel: string;
  readonly partition: number;
}

/** `count` events of the listing route, event i on partition i % 6, its key and payload given by the bench. */
export function listingEvents(count: number, eventOf: (i: number) => { key: string; payload: string }): EngineEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const { key, payload } = eventOf(i);
    return { key, payload, channel: channelName('ws', route.topic, shardOf(key, route.shards)), partition: i % 6 };
  });
}

/** A `ListingUpdated` payload around the bench's own `listing` object. */
export function listingUpdated(i: number, key: string, listing: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ event_id: `evt-${i}`, event_type: 'ListingUpdated', listing_id: key, occurred_at: '2026-01-01T00:00:00.000Z', listing });
}

/** Listing id `lst-000042`. */
export const listingKey = (i: number): string => `lst-${String(i).padStart(6, '0')}`;

/** The unicast benches' document: listing i's events (the key written in it, as partners write it), a few fields. */
export const unicastQuery = (i: number): string => `subscription { listingUpdated(listing_id: "${listingKey(i)}") { listing_id event_type occurred_at listing { title current_price { amount_cents } } } }`;

/**
 * Event i's listing `key` (`lst-000042`: titled `Listing 42`), about `descriptionChars` + 200 bytes
 * of JSON (the engine benches' ~2 KB events: 1,200 to 1,600), `extra` fields added, its price rising with i.
 */
export function benchListing(i: number, key: string, descriptionChars: number, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  return { listing_id: key, title: `Listing ${Number(key.slice(4))}`, description: 'x'.repeat(descriptionChars), status: 'ACTIVE', ...extra, current_price: { amount_cents: 1_000 + i, currency_code: 'EUR' } };
}

/** `count` events of `keys` listings (event i of `lst-<i mod keys>`), each a {@link benchListing} of `descriptionChars` and `extra`. */
export function benchEvents(count: number, keys: number, descriptionChars: number, extra: Readonly<Record<string, unknown>> = {}): EngineEvent[] {
  return listingEvents(count, (i) => {
    const key = listingKey(i % keys);
    return { key, payload: listingUpdated(i, key, benchListing(i, key, descriptionChars, extra)) };
  });
}

/** The listing operation the engine benches subscribe with: ~2 KB events' title, description and price. */
export const LISTING_QUERY = 'subscription { listingUpdated { listing_id event_type occurred_at listing { title description current_price { amount_cents currency_code } } } }';

/** The options of a bench that feeds a hub's subscribers rounds of events, with the bench's defaults. */
export function engineOptions(subscribers: number, events: number, rounds: number): OptionSpecs {
  return {
    subscribers: { arg: 'N', default: String(subscribers), help: 'subscribers of the hub' },
    events: { arg: 'N', default: String(events), help: 'listing events per round' },
    rounds: { arg: 'N', default: String(rounds), help: 'rounds per side after a warm-up' },
  };
}

/** The counts {@link engineOptions} declares. */
export function engineCounts(o: OptionValues): { subscribers: number; count: number; rounds: number } {
  return { subscribers: o.positiveInt('subscribers'), count: o.positiveInt('events'), rounds: o.positiveInt('rounds') };
}

/** `count` demo events of a kind (seed 42, 50 listings) as ingest publishes them: snake_cased, as JSON. */
export function demoEvents(kind: 'listing' | 'bid', count: number): { key: string; json: string }[] {
  const generator = createAuctionEventGenerator({ seed: 42, listings: 50 });
  const transformer = createKeyTransformer();
  return Array.from({ length: count }, () => {
    const event = kind === 'listing' ? generator.listingEvent() : generator.bidEvent();
    return { key: event.key, json: JSON.stringify(transformer.transform(event.value)) };
  });
}

/** A writer that lays out every frame and drops it, counting frames (and bytes, when asked or copied). */
export interface FrameSink<C> {
  readonly writer: ConnectionWriter<C>;
  frames(): number;
  bytes(): number;
}

export interface FrameSinkOptions<C> {
  /**
   * `string`: each frame built as `head + payload + '}'` (the uWS writer's string); `copy`: as the
   * gateway's writer lays frames out (decision 0021), a group's payloads encoded to UTF-8 once (the
   * hub hands every subscriber of a group the same array), each frame copied into one scratch buffer;
   * `drop`: nothing built, frames only counted (what the engine allocates is then all its own).
   * @default 'string'
   */
  readonly layout?: 'string' | 'copy' | 'drop';
  /**
   * `string` layout: also sum the frames' bytes. Off unless asked: past 2 GB the sum is a heap
   * number, and a store per frame costs what a bench of small frames would see. @default false
   */
  readonly countBytes?: boolean;
  /** @default every connection has room */
  readonly hasRoom?: (conn: C) => boolean;
}

export function createFrameSink<C extends object>({ layout = 'string', countBytes = false, hasRoom = () => true }: FrameSinkOptions<C> = {}): FrameSink<C> {
  let frames = 0;
  let bytes = 0;
  let encodedFor: readonly string[] | undefined;
  let encoded: Buffer[] = [];
  const scratch = layout === 'copy' ? Buffer.allocUnsafe(1 << 20) : Buffer.alloc(0);
  const buildCounting = (head: string, payloads: readonly string[]): void => {
    for (const payload of payloads) {
      const frame = head + payload + '}';
      bytes += frame.length;
      frames++;
    }
  };
  const build = (head: string, payloads: readonly string[]): void => {
    for (const payload of payloads) if ((head + payload + '}').length > 0) frames++;
  };
  const copy = (head: string, payloads: readonly string[]): void => {
    if (payloads !== encodedFor) {
      encoded = payloads.map((payload) => Buffer.from(payload, 'utf8'));
      encodedFor = payloads;
    }
    for (const payload of encoded) {
      const at = scratch.write(head, 0);
      if (at + payload.length + 1 > scratch.length) throw new Error('a frame larger than the scratch buffer');
      scratch.set(payload, at);
      scratch[at + payload.length] = 0x7d; // '}'
      bytes += at + payload.length + 1;
    }
    frames += payloads.length;
  };
  const drop = (_head: string, payloads: readonly string[]): void => {
    frames += payloads.length;
  };
  const lay = layout === 'copy' ? copy : layout === 'drop' ? drop : countBytes ? buildCounting : build;
  const writer: ConnectionWriter<C> = {
    send: () => undefined,
    sendFrames: (_conn, head, payloads) => lay(head, payloads),
    close: () => undefined,
    hasRoom,
    replayChunkBytes: 65_536,
  };
  return { writer, frames: () => frames, bytes: () => bytes };
}

export type MemoryBus = ReturnType<typeof createMemoryBus>;

export interface Engine<C> {
  readonly bus: MemoryBus;
  readonly hub: Hub<C>;
}

export interface EngineOptions<C> {
  readonly writer: ConnectionWriter<C>;
  /** The real Prometheus series (`createGatewayMetrics`). @default false */
  readonly metrics?: boolean;
  /** The gateway's tracer (telemetry's `startTracing`). @default none */
  readonly tracer?: Tracer | undefined;
  /** Subscribes the bench's subscribers; the engine is returned once the bus routes every channel. */
  readonly subscribe: (hub: Hub<C>) => void;
}

const logger = createLogger({ name: 'bench', level: 'error' });

/** A hub on a fresh in-process bus, subscribed, after every channel's SUBSCRIBE is confirmed (a turn later, after the history floor). */
export async function startEngine<C>({ writer, metrics = false, tracer, subscribe }: EngineOptions<C>): Promise<Engine<C>> {
  const bus = createMemoryBus();
  const hub = createHub<C>({
    schema,
    broker: bus.broker,
    logger,
    writer,
    ...(metrics ? { metrics: createGatewayMetrics(createMetricsRegistry({ service: 'bench' })) } : {}),
    ...(tracer === undefined ? {} : { tracer }),
  });
  subscribe(hub);
  while (hub.stats().confirmedChannels < hub.stats().channels) await turn();
  return { bus, hub };
}

/**
 * The sides' engines (started one after the other) fed the same events in alternating rounds
 * ({@link alternate}): CPU µs per round and side, and each side's engine (its hub's stats).
 */
export async function feedSides<S, C>(
  sides: readonly S[],
  rounds: number,
  events: readonly EngineEvent[],
  optionsOf: (side: S) => EngineOptions<C>,
  feedOf: (side: S) => FeedOptions = () => ({}),
): Promise<{ samples: Map<S, number[]>; engineOf: (side: S) => Engine<C> }> {
  const engines = new Map<S, Engine<C>>();
  for (const side of sides) engines.set(side, await startEngine(optionsOf(side)));
  const engineOf = (side: S): Engine<C> => {
    const engine = engines.get(side);
    if (engine === undefined) throw new Error(`no engine for side ${String(side)}`);
    return engine;
  };
  const { samples } = await alternate(sides, rounds, (side) => cpuMicros(() => feed(engineOf(side).bus, events, feedOf(side))));
  return { samples, engineOf };
}

/** The next turn of the event loop (after I/O). */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let offset = 0;
const writeEnvelope = createEnvelopeWriter(TOPIC);

export interface FeedOptions {
  /** Events published per turn. @default 50 */
  readonly burst?: number;
  /** Where the routing key each envelope carries is read (the route's key field or the Kafka key), as a batch part gives it; none when undefined. */
  readonly routedOn?: string | undefined;
}

/** Publishes the events as envelopes (offsets rising across calls), `burst` per turn, a turn after each burst. */
export async function feed(bus: MemoryBus, events: readonly EngineEvent[], { burst = 50, routedOn }: FeedOptions = {}): Promise<void> {
  for (let i = 0; i < events.length; i += burst) {
    for (const event of events.slice(i, i + burst)) {
      const at = String(offset++);
      const envelope = writeEnvelope(event.partition, at, event.key, Date.now(), event.payload);
      const routing: EnvelopeRoute | undefined = routedOn === undefined ? undefined : { partition: event.partition, offset: at, on: routedOn, key: event.key };
      bus.publish(event.channel, envelope, undefined, routing);
    }
    await turn();
  }
}

/** CPU µs (user + system) of this process while `work` runs. */
export async function cpuMicros(work: () => unknown): Promise<number> {
  const started = process.cpuUsage();
  await work();
  const used = process.cpuUsage(started);
  return used.user + used.system;
}

export interface AlternateOptions {
  /**
   * `mirror`: the sides in order in even rounds, reversed in odd ones; `rotate`: round r starts at
   * side r (mod the count). Either way drift in machine load does not favour one side. @default 'mirror'
   */
  readonly order?: 'mirror' | 'rotate';
}

/**
 * Measures each side once (the warm-up: JIT, caches; its figure is `first`), then `rounds` times
 * in alternating order; `measure` gets the side and the round (-1 for the warm-up).
 */
export async function alternate<S>(
  sides: readonly S[],
  rounds: number,
  measure: (side: S, round: number) => number | Promise<number>,
  { order = 'mirror' }: AlternateOptions = {},
): Promise<{ first: Map<S, number>; samples: Map<S, number[]> }> {
  const first = new Map<S, number>();
  for (const side of sides) first.set(side, await measure(side, -1));
  const samples = new Map<S, number[]>(sides.map((side) => [side, []]));
  for (let r = 0; r < rounds; r++) {
    const ordered = order === 'rotate' ? sides.map((_, k) => sides[(k + r) % sides.length] as S) : r % 2 === 0 ? sides : [...sides].reverse();
    for (const side of ordered) samples.get(side)?.push(await measure(side, r));
  }
  return { first, samples };
}

/** `median unit (min–max)` of the samples, each written by `format`. */
export function medianRange(samples: readonly number[], format: (value: number) => string, unit = ''): string {
  return `${format(median(samples))}${unit} (${format(Math.min(...samples))}–${format(Math.max(...samples))})`;
}

/**
 * The sides' CPU per round as a table: a row per side (in the samples' order), `label` its first
 * column's header, then `CPU per round, median (min–max)` (`12.3 ms (11.9–13.0)`), then the bench's own columns of the
 * side's median µs.
 */
export function cpuTable<S extends string>(label: string, samples: ReadonlyMap<S, readonly number[]>, columns: Readonly<Record<string, (medianUs: number, side: S) => string>>): string {
  const rows = [...samples].map(([side, us]) => [side, medianRange(us, (v) => (v / 1_000).toFixed(1), ' ms'), ...Object.values(columns).map((column) => column(median(us), side))]);
  return markdownTable([[label, 'CPU per round, median (min–max)', ...Object.keys(columns)], ...rows]);
}

/** A full GC (twice: what the first frees may let the second free more); the bench must run under `node --expose-gc`. */
export function collectGarbage(): void {
  const gc = requireGc();
  gc();
  gc();
}
