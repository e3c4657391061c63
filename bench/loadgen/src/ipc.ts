import type { OperationPlan } from './operations.js';

/** One server endpoint (`ws://host:port/path`, parsed once by the parent). */
export interface WorkerTarget {
  readonly host: string;
  readonly port: number;
  readonly path: string;
}

/** Parent → worker: open `count` sockets, global indexes `firstIndex…`, and subscribe each. */
export interface WorkerStartMessage {
  readonly type: 'start';
  readonly workerIndex: number;
  /** Socket with global index `i` connects to `targets[i % targets.length]` (round-robin). */
  readonly targets: readonly WorkerTarget[];
  readonly firstIndex: number;
  readonly count: number;
  /** Source addresses (127.0.0.x); socket `i` binds `sourceAddresses[i % length]`. */
  readonly sourceAddresses: readonly string[];
  readonly plan: OperationPlan;
  /** Positions are tracked as a bitset of `offset - offsetBase` in `[0, maxEvents)`. */
  readonly maxEvents: number;
  readonly offsetBase: number;
  /** See `BenchClock.offsetUs`. */
  readonly clockOffsetUs: number;
  /** Handshakes in flight at once in this worker. */
  readonly connectConcurrency: number;
  readonly progressIntervalMs: number;
  /** Sockets (of `count`) to open now; more on a `connect` message. */
  readonly connectNow: number;
  /** Offer permessage-deflate in the upgrade (and inflate what comes compressed). */
  readonly deflate: boolean;
  /** Subscribe with `extensions: { delta: "fossil" }` (and apply the deltas). */
  readonly delta: boolean;
  /**
   * GraphQL over SSE instead of graphql-transport-ws: each socket POSTs its subscription to the
   * target path with `Accept: text/event-stream` and reads `next` events (sse.ts).
   */
  readonly sse: boolean;
  /**
   * The deprecated subscriptions-transport-ws protocol (subprotocol `graphql-ws`) instead of
   * graphql-transport-ws: `start` instead of `subscribe`, events as `data`, `ka` keep-alives.
   */
  readonly legacy: boolean;
  /**
   * Sign an HS256 JWT per socket (`sub: loadgen-<global index>` on top of `claims`) and send it
   * as `{ "token": … }` in `connection_init`, as a client of a gateway in jwt mode does.
   */
  readonly jwt: JwtOptions | undefined;
}

/** What the load client signs its tokens with (see `LoadgenOptions.jwt`). */
export interface JwtOptions {
  readonly hs256Secret: string;
  /** Claims of every token (`scope`, `exp`, `aud`…); `sub` is set per socket. */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Deliveries each socket should have seen, for the loss count. */
export interface ExpectedDeliveries {
  /** Events every unfiltered subscription matches. */
  readonly total: number;
  /** Events per filter key index (see `OperationPlan.filterKeys`). */
  readonly perFilterKey: readonly number[];
  /** Events each of `OperationPlan.operations` matches (same index); required when the plan lists operations. */
  readonly perOperation?: readonly number[];
}

export type ParentMessage =
  | WorkerStartMessage
  | { readonly type: 'connect'; readonly upTo: number }
  | { readonly type: 'report'; readonly expected: ExpectedDeliveries }
  | { readonly type: 'stop' };

/** Counters a worker sends every `progressIntervalMs` (cumulative since start). */
export interface WorkerCounters {
  readonly workerIndex: number;
  /** Sockets whose HTTP upgrade succeeded. */
  readonly open: number;
  /** Sockets that got `connection_ack` and sent `subscribe`. */
  readonly subscribed: number;
  /** `subscribed` per target (same order as `WorkerStartMessage.targets`). */
  readonly subscribedPerTarget: readonly number[];
  /** Sockets that never got that far (after retries). */
  readonly failed: number;
  /** Subscribed sockets the server closed (or reset). */
  readonly closedByServer: number;
  /** `next` frames received, duplicates included. */
  readonly frames: number;
  /** Distinct positions received per socket, summed. */
  readonly unique: number;
  readonly duplicates: number;
  /** `next` frames without a parsable `extensions.position` in range. */
  readonly unknownPosition: number;
  /** `next` frames without a parsable `occurred_at`. */
  readonly noTimestamp: number;
  /** Bytes of `next` frames as the application reads them: inflated, but deltas not applied. */
  readonly bytes: number;
  /** Bytes read from the sockets after the HTTP upgrade: frames as they travelled (headers, deflate). */
  readonly wireBytes: number;
  /** `next` frames that arrived deflated (RSV1), and those that carried a delta payload. */
  readonly compressedFrames: number;
  readonly deltaFrames: number;
  /** `error`/unexpected messages received. */
  readonly protocolErrors: number;
  /** This worker's CPU time (user + system), µs. */
  readonly cpuUs: number;
  readonly rssBytes: number;
}

/** The counts a worker keeps and the parent sums (WorkerCounters without its per-target, CPU and RSS figures). */
export const COUNT_NAMES = ['open', 'subscribed', 'failed', 'closedByServer', 'frames', 'unique', 'duplicates', 'unknownPosition', 'noTimestamp', 'bytes', 'wireBytes', 'compressedFrames', 'deltaFrames', 'protocolErrors'] as const;

export type Counts = { -readonly [K in (typeof COUNT_NAMES)[number]]: number };

/** Every count at 0: an object literal, so the worker's hot counters keep one shape. */
export function zeroCounts(): Counts {
  return { open: 0, subscribed: 0, failed: 0, closedByServer: 0, frames: 0, unique: 0, duplicates: 0, unknownPosition: 0, noTimestamp: 0, bytes: 0, wireBytes: 0, compressedFrames: 0, deltaFrames: 0, protocolErrors: 0 };
}

export interface WorkerProgressMessage extends WorkerCounters {
  readonly type: 'progress';
}

export interface WorkerReportMessage extends WorkerCounters {
  readonly type: 'report';
  /** Expected minus distinct received, over every planned socket (failed ones included). */
  readonly lost: number;
  /** `lost` per entry of `OperationPlan.operations` (same index); empty when the plan lists none. */
  readonly lostPerOperation: readonly number[];
  readonly expected: number;
  /** Latency histogram (µs) as sparse `[bucket, count, …]` pairs, see histogram.ts. */
  readonly histogram: readonly number[];
  readonly maxLatencyUs: number;
  /** Shared wall clock (µs) of the first and last distinct delivery; 0 when none. */
  readonly firstDeliveryUs: number;
  readonly lastDeliveryUs: number;
  /** Close codes received from the server, with counts. */
  readonly closeCodes: Readonly<Record<string, number>>;
  /** A few distinct error texts (connect errors, GraphQL errors, unexpected statuses). */
  readonly errorSamples: readonly string[];
}

export type WorkerMessage = WorkerProgressMessage | WorkerReportMessage | { readonly type: 'stopped'; readonly workerIndex: number };
