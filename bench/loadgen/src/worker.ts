/**
 * One load worker process: opens its share of sockets, speaks graphql-transport-ws
 * (connection_init → connection_ack → subscribe) or GraphQL over SSE (a POST stream, sse.ts), and
 * counts every `next` frame or event.
 *
 * Built to cost little per socket and per frame, so that the server is what a run measures:
 * - raw TCP (`net`) with `onread` into one buffer shared by every socket of the process (reads are
 *   handled synchronously, one at a time): no Buffer, no stream `data` event per read;
 * - frames are scanned in place: no UTF-8 decode, no JSON.parse of `next` payloads. The position
 *   is found backwards from the frame end (`extensions` is last), the producer's timestamp a few
 *   bytes in (`occurred_at` is selected first);
 * - per socket: one small state object, a bitset row of positions and a counter. A frame split
 *   across reads is the only case that copies, into a buffer of exactly that frame's size.
 * Aggregates go to the parent on a timer and on request, never per message.
 */
import net from 'node:net';
import zlib from 'node:zlib';
import { DeltaError, createDeltaReader, type DeltaReader } from '@wirestream/delta';
import { clockWithOffset, type BenchClock } from './clock.js';
import {
  OPCODE_CLOSE,
  OPCODE_PING,
  OPCODE_PONG,
  OPCODE_TEXT,
  US_PER_DAY,
  clientFrame,
  clientTextFrame,
  frameSize,
  headerSize,
  isoTimeOfDayUs,
  parseDigits,
  timeOfDayDeltaUs,
} from './frames.js';
import { bucketOf, createHistogram, toSparse } from './histogram.js';
import { zeroCounts, type ExpectedDeliveries, type JwtOptions, type ParentMessage, type WorkerCounters, type WorkerMessage, type WorkerStartMessage, type WorkerTarget } from './ipc.js';
import { signHs256 } from './jwt.js';
import { variantOf, variantsOf } from './operations.js';
import { readSseChunks, sseRequest, type SseReadState } from './sse.js';

const Phase = { Connecting: 0, Upgrading: 1, AwaitingAck: 2, Subscribed: 3, Closed: 4 } as const;
type Phase = (typeof Phase)[keyof typeof Phase];

interface ClientSocket {
  /** Index within this worker (row of the position bitset). */
  readonly index: number;
  readonly variant: number;
  /** Index into `config.targets`. */
  readonly target: number;
  readonly sourceAddress: string;
  socket: net.Socket | undefined;
  phase: Phase;
  attempts: number;
  everSubscribed: boolean;
  /** The HTTP response head while it arrives (a few hundred bytes, once). */
  http: string;
  /** A frame split across reads: exactly its size once the header is known. */
  partial: Buffer | undefined;
  partialLength: number;
  partialNeed: number;
  partialSized: boolean;
  /** permessage-deflate was negotiated; with context takeover, the last 32 KiB inflated are the next frame's dictionary. */
  deflate: boolean;
  contextTakeover: boolean;
  inflateWindow: Buffer | undefined;
  /** Delta mode: reconstructs full payloads from deltas (one per socket, like one per subscription). */
  delta: DeltaReader | undefined;
  /** SSE mode: the response's unparsed tail. */
  readonly sse: SseReadState;
}

const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);
const MAX_ATTEMPTS = 3;
const NEXT_MARK = Buffer.from('"type":"next"');
/** The legacy protocol's event message type (subscriptions-transport-ws). */
const DATA_MARK = Buffer.from('"type":"data"');
const OFFSET_MARK = Buffer.from('"offset":"');
const OCCURRED_MARK = Buffer.from('"occurred_at":"');
const ACK_MARK = Buffer.from('"connection_ack"');
const INIT_FRAME = clientTextFrame('{"type":"connection_init"}');
const NEXT_HEAD = '{"id":"1","type":"next","payload":';
/** RFC 7692 §7.2.2: the sender strips this from each message; the receiver appends it to inflate. */
const DEFLATE_TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);
const INFLATE_WINDOW_BYTES = 32_768; // the largest LZ77 window, whatever the server negotiated
const INFLATE_SYNC = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
const MAX_ERROR_SAMPLES = 8;

let config: WorkerStartMessage;
let clock: BenchClock;
let sockets: ClientSocket[] = [];
let subscribeFrames: Buffer[] = [];
/** What marks an event message, and the subprotocol offered: per protocol (graphql-transport-ws or the legacy graphql-ws). */
let eventMark = NEXT_MARK;
let subprotocol = 'graphql-transport-ws';
let filterKeyOfVariant: number[] = [];
/** Index into `ExpectedDeliveries.perOperation` per variant (-1: the variant is not an explicit operation). */
let operationOfVariant: number[] = [];
/** One HTTP upgrade request per target (the Host header differs), built once. */
let upgradeRequests: Buffer[] = [];
/** SSE mode: one POST per target and variant (`[target][variant]`), built once. */
let sseRequests: Buffer[][] = [];

let bytesPerSocket = 0;
let received = new Uint8Array(0);
let receivedCount = new Uint32Array(0);
const histogram = createHistogram();

const counters = zeroCounts();
let subscribedPerTarget: number[] = [];
let maxLatencyUs = 0;
let firstDeliveryUs = 0;
let lastDeliveryUs = 0;
const closeCodes = new Map<number, number>();
const errorSamples = new Set<string>();

let nextToConnect = 0;
/** Sockets this worker may open so far (connect waves). */
let connectLimit = 0;
let inFlight = 0;
let stopping = false;
/** Shared wall clock of the current read, taken once per read (every frame in it arrived together). */
let readNowUs = 0;
let readNowOfDayUs = 0;
/** The text message being handled arrived deflated. */
let readCompressed = false;

function noteError(text: string): void {
  if (errorSamples.size < MAX_ERROR_SAMPLES) errorSamples.add(text.slice(0, 200));
}

function start(message: WorkerStartMessage): void {
  config = message;
  clock = clockWithOffset(message.clockOffsetUs);
  const variants = variantsOf(message.plan);
  const subscribeType = message.legacy ? 'start' : 'subscribe';
  eventMark = message.legacy ? DATA_MARK : NEXT_MARK;
  subprotocol = message.legacy ? 'graphql-ws' : 'graphql-transport-ws';
  subscribeFrames = variants.map((v) =>
    clientTextFrame(JSON.stringify({ id: '1', type: subscribeType, payload: message.delta ? { ...v.payload, extensions: { ...v.payload.extensions, delta: 'fossil' } } : v.payload })),
  );
  filterKeyOfVariant = variants.map((v) => v.filterKey);
  operationOfVariant = variants.map((v) => v.operation ?? -1);
  upgradeRequests = message.targets.map((t) =>
    Buffer.from(
      `GET ${t.path} HTTP/1.1\r\nHost: ${t.host}:${t.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
        `Sec-WebSocket-Protocol: ${subprotocol}\r\n` +
        // What browsers offer: context takeover both ways, the client's window left to the server.
        (message.deflate ? 'Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n' : '') +
        '\r\n',
      'latin1',
    ),
  );
  sseRequests = message.sse ? message.targets.map((t) => variants.map((v) => sseRequest(t, v.payload))) : [];
  subscribedPerTarget = message.targets.map(() => 0);
  bytesPerSocket = Math.ceil(message.maxEvents / 8);
  received = new Uint8Array(bytesPerSocket * message.count);
  receivedCount = new Uint32Array(message.count);
  sockets = new Array<ClientSocket>(message.count);
  for (let i = 0; i < message.count; i++) {
    const globalIndex = message.firstIndex + i;
    sockets[i] = {
      index: i,
      variant: variantOf(message.plan, globalIndex),
      target: globalIndex % message.targets.length,
      sourceAddress: message.sourceAddresses[globalIndex % message.sourceAddresses.length] as string,
      socket: undefined,
      phase: Phase.Connecting,
      attempts: 0,
      everSubscribed: false,
      http: '',
      partial: undefined,
      partialLength: 0,
      partialNeed: 0,
      partialSized: false,
      deflate: false,
      contextTakeover: false,
      inflateWindow: undefined,
      delta: undefined,
      sse: { chunkLeft: 0, pending: undefined },
    };
  }
  connectLimit = Math.min(message.count, message.connectNow);
  setInterval(sendProgress, message.progressIntervalMs).unref();
  pump();
}

/** Starts handshakes until `connectConcurrency` are in flight (a SYN flood would overflow the server's backlog). */
function pump(): void {
  while (!stopping && inFlight < config.connectConcurrency && nextToConnect < connectLimit) {
    connect(sockets[nextToConnect++] as ClientSocket);
  }
}

function connect(s: ClientSocket): void {
  s.attempts++;
  s.phase = Phase.Upgrading;
  s.http = '';
  inFlight++;
  const target = config.targets[s.target] as WorkerTarget;
  const socket = net.connect({
    host: target.host,
    port: target.port,
    localAddress: s.sourceAddress,
    onread: {
      buffer: READ_BUFFER,
      callback: (nread: number, buf: Uint8Array): boolean => {
        onRead(s, nread, buf as Buffer);
        return true;
      },
    },
  });
  s.socket = socket;
  socket.setNoDelay(true);
  socket.on('connect', () => socket.write(config.sse ? (sseRequests[s.target]?.[s.variant] as Buffer) : (upgradeRequests[s.target] as Buffer)));
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (!stopping) noteError(`socket error (phase ${s.phase}): ${err.code ?? err.message}`);
  });
  socket.on('close', () => onClose(s, socket));
}

function onClose(s: ClientSocket, socket: net.Socket): void {
  if (s.socket !== socket) return;
  s.socket = undefined;
  s.partial = undefined;
  const phase = s.phase;
  s.phase = Phase.Closed;
  if (stopping) return;
  if (phase === Phase.Subscribed) {
    counters.closedByServer++;
    return;
  }
  if (phase === Phase.Closed) return;
  inFlight--;
  if (s.attempts < MAX_ATTEMPTS) {
    setTimeout(() => connect(s), 100 * s.attempts);
  } else {
    counters.failed++;
    pump();
  }
}

/**
 * The HTTP response head once all of it has arrived, and how many bytes of this read follow it;
 * undefined until then (failing the handshake when the head passes 8 KiB).
 */
function responseHead(s: ClientSocket, nread: number, buf: Buffer): { head: string; rest: number } | undefined {
  s.http += buf.toString('latin1', 0, nread);
  const headEnd = s.http.indexOf('\r\n\r\n');
  if (headEnd < 0) {
    if (s.http.length > 8_192) failHandshake(s, 'HTTP response head over 8 KiB');
    return undefined;
  }
  const head = s.http.slice(0, headEnd);
  const rest = s.http.length - (headEnd + 4);
  s.http = '';
  return { head, rest };
}

function onRead(s: ClientSocket, nread: number, buf: Buffer): void {
  if (config.sse) return onSseRead(s, nread, buf);
  if (s.phase === Phase.Upgrading) {
    const response = responseHead(s, nread, buf);
    if (response === undefined) return;
    const { head, rest } = response;
    if (!head.startsWith('HTTP/1.1 101')) return failHandshake(s, `upgrade refused: ${head.split('\r\n')[0] ?? ''}`);
    if (!new RegExp(`^sec-websocket-protocol:\\s*${subprotocol}\\s*$`, 'im').test(head)) {
      return failHandshake(s, `server did not select the ${subprotocol} subprotocol`);
    }
    const extensions = /^sec-websocket-extensions:\s*(.*)$/im.exec(head)?.[1] ?? '';
    s.deflate = extensions.includes('permessage-deflate');
    s.contextTakeover = s.deflate && !extensions.includes('server_no_context_takeover');
    s.inflateWindow = undefined;
    s.delta = config.delta ? createDeltaReader() : undefined;
    s.phase = Phase.AwaitingAck;
    counters.open++;
    counters.wireBytes += rest;
    s.socket?.write(config.jwt === undefined ? INIT_FRAME : initFrameWithToken(config.firstIndex + s.index, config.jwt));
    if (rest > 0) onFrames(s, buf, nread - rest, nread);
    return;
  }
  readNowUs = clock.nowUs();
  readNowOfDayUs = readNowUs % US_PER_DAY;
  counters.wireBytes += nread;
  onFrames(s, buf, 0, nread);
}

/** SSE mode: the response head (200, an event stream), then chunks whose `data:` lines are `next` payloads. */
function onSseRead(s: ClientSocket, nread: number, buf: Buffer): void {
  let pos = 0;
  if (s.phase === Phase.Upgrading) {
    const response = responseHead(s, nread, buf);
    if (response === undefined) return;
    const { head, rest } = response;
    pos = nread - rest;
    if (!head.startsWith('HTTP/1.1 200')) return failHandshake(s, `stream refused: ${head.split('\r\n')[0] ?? ''}`);
    if (!/^content-type:\s*text\/event-stream/im.test(head)) return failHandshake(s, 'the response is not text/event-stream');
    s.phase = Phase.Subscribed;
    s.everSubscribed = true;
    counters.open++;
    counters.subscribed++;
    subscribedPerTarget[s.target] = (subscribedPerTarget[s.target] as number) + 1;
    inFlight--;
    pump();
  }
  readNowUs = clock.nowUs();
  readNowOfDayUs = readNowUs % US_PER_DAY;
  counters.wireBytes += nread - pos;
  sseSocket = s;
  if (!readSseChunks(s.sse, buf, pos, nread, onSseData)) s.socket?.end();
}

let sseSocket: ClientSocket | undefined;
/** The reader's callback reads its socket from here: no closure per socket per read. */
function onSseData(b: Buffer, start: number, end: number): void {
  onNext(sseSocket as ClientSocket, b, start, end);
}

function failHandshake(s: ClientSocket, reason: string): void {
  noteError(reason);
  s.attempts = MAX_ATTEMPTS; // a refusal is an answer: do not retry
  s.socket?.destroy();
}

/** Splits `buf[pos, end)` into frames, carrying a partial frame across reads. */
function onFrames(s: ClientSocket, buf: Buffer, pos: number, end: number): void {
  while (s.partial !== undefined) {
    const partial = s.partial;
    const take = Math.min(s.partialNeed - s.partialLength, end - pos);
    buf.copy(partial, s.partialLength, pos, pos + take);
    s.partialLength += take;
    pos += take;
    if (s.partialLength < s.partialNeed) return;
    if (!s.partialSized) {
      const size = frameSize(partial, 0, s.partialLength);
      if (size < 0) {
        s.partialNeed = -size;
        continue;
      }
      const sized = Buffer.allocUnsafe(size);
      partial.copy(sized, 0, 0, s.partialLength);
      s.partial = sized;
      s.partialNeed = size;
      s.partialSized = true;
      continue;
    }
    s.partial = undefined;
    onFrame(s, partial, 0, partial.length);
  }
  while (pos < end) {
    const available = end - pos;
    const size = frameSize(buf, pos, available);
    if (size < 0 || size > available) {
      // Keep the tail for the next read: sized now when the header is complete, else header first.
      const sized = size > 0;
      const partial = Buffer.allocUnsafe(sized ? size : 14);
      buf.copy(partial, 0, pos, end);
      s.partial = partial;
      s.partialLength = available;
      s.partialNeed = sized ? size : -size;
      s.partialSized = sized;
      return;
    }
    onFrame(s, buf, pos, pos + size);
    pos += size;
  }
}

function onFrame(s: ClientSocket, b: Buffer, pos: number, end: number): void {
  const b0 = b[pos] as number;
  const opcode = b0 & 0x0f;
  const start = pos + headerSize(b, pos);
  if ((b0 & 0x80) === 0 || opcode === 0) {
    // The servers measured here never fragment; counting beats a reassembly path nobody uses.
    counters.protocolErrors++;
    noteError('fragmented frame received');
    return;
  }
  switch (opcode) {
    case OPCODE_TEXT:
      if ((b0 & 0x40) !== 0) {
        // RSV1: a deflated message (only data frames are; the servers measured never fragment).
        const inflated = inflate(s, b, start, end);
        if (inflated === undefined) return;
        readCompressed = true;
        onText(s, inflated, 0, inflated.length);
        readCompressed = false;
        return;
      }
      return onText(s, b, start, end);
    case OPCODE_PING:
      s.socket?.write(clientFrame(OPCODE_PONG, b.subarray(start, end)));
      return;
    case OPCODE_PONG:
      return;
    case OPCODE_CLOSE: {
      const code = end - start >= 2 ? b.readUInt16BE(start) : 1005;
      closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1);
      if (code !== 1000 && code !== 1001) noteError(`closed by server: ${code} ${b.toString('utf8', start + 2, end)}`);
      s.socket?.end(clientFrame(OPCODE_CLOSE, Buffer.from([code >> 8, code & 0xff])));
      return;
    }
    default:
      counters.protocolErrors++;
      noteError(`unexpected opcode ${opcode}`);
  }
}

/** Inflates one permessage-deflate message; undefined (counted) when it does not inflate. */
function inflate(s: ClientSocket, b: Buffer, start: number, end: number): Buffer | undefined {
  if (!s.deflate) {
    counters.protocolErrors++;
    noteError('RSV1 set but permessage-deflate was not negotiated');
    return undefined;
  }
  const input = Buffer.concat([b.subarray(start, end), DEFLATE_TAIL]);
  let out: Buffer;
  try {
    // Context takeover: the frame may refer back into earlier messages; the window of the last
    // 32 KiB inflated, as a dictionary, is exactly what a streaming inflater would hold.
    out = s.inflateWindow === undefined ? zlib.inflateRawSync(input, INFLATE_SYNC) : zlib.inflateRawSync(input, { ...INFLATE_SYNC, dictionary: s.inflateWindow });
  } catch (err) {
    counters.protocolErrors++;
    noteError(`inflate failed: ${(err as Error).message}`);
    return undefined;
  }
  if (s.contextTakeover) {
    const window = s.inflateWindow === undefined ? out : Buffer.concat([s.inflateWindow, out]);
    s.inflateWindow = window.length > INFLATE_WINDOW_BYTES ? Buffer.from(window.subarray(window.length - INFLATE_WINDOW_BYTES)) : window;
  }
  return out;
}

/** A text message (inflated if it came deflated). */
function onText(s: ClientSocket, b: Buffer, start: number, end: number): void {
  if (s.phase === Phase.Subscribed) {
    const mark = b.indexOf(eventMark, start);
    if (mark >= 0 && mark < start + 64 && mark < end) onNext(s, b, start, end);
    else onOtherText(s, b, start, end);
  } else if (s.phase === Phase.AwaitingAck) {
    const ack = b.indexOf(ACK_MARK, start);
    if (ack >= 0 && ack < end) {
      s.phase = Phase.Subscribed;
      s.everSubscribed = true;
      counters.subscribed++;
      subscribedPerTarget[s.target] = (subscribedPerTarget[s.target] as number) + 1;
      s.socket?.write(subscribeFrames[s.variant] as Buffer);
      inFlight--;
      pump();
    } else {
      onOtherText(s, b, start, end);
    }
  }
}

/** The hot path: one `next` frame. Deliberately allocation-free (delta mode aside). */
function onNext(s: ClientSocket, b: Buffer, start: number, end: number): void {
  counters.frames++;
  counters.bytes += end - start;
  if (readCompressed) counters.compressedFrames++;
  if (s.delta !== undefined) {
    const full = applyDelta(s, s.delta, b, start, end);
    if (full !== undefined) onPosition(s, full, 0, full.length);
    return;
  }
  onPosition(s, b, start, end);
}

/** Delta mode: the full payload of a `next` frame (reconstructed when it is a delta). */
function applyDelta(s: ClientSocket, reader: DeltaReader, b: Buffer, start: number, end: number): Buffer | undefined {
  const text = b.toString('utf8', start, end);
  if (!text.startsWith(NEXT_HEAD)) {
    counters.unknownPosition++;
    return undefined;
  }
  const payload = text.slice(NEXT_HEAD.length, -1);
  try {
    const full = reader.readText(payload);
    if (full !== payload) counters.deltaFrames++;
    return Buffer.from(full);
  } catch (err) {
    counters.protocolErrors++;
    noteError(err instanceof DeltaError ? err.message : `delta: ${String(err)}`);
    return undefined;
  }
}

/** Dedup by position and latency of one full payload. */
function onPosition(s: ClientSocket, b: Buffer, start: number, end: number): void {
  const mark = b.lastIndexOf(OFFSET_MARK, end - OFFSET_MARK.length);
  if (mark < start) {
    counters.unknownPosition++;
    return;
  }
  const seq = parseDigits(b, mark + OFFSET_MARK.length, end) - config.offsetBase;
  if (!(seq >= 0 && seq < config.maxEvents)) {
    counters.unknownPosition++;
    return;
  }
  const bit = s.index * bytesPerSocket * 8 + seq;
  const byte = bit >>> 3;
  const mask = 1 << (bit & 7);
  const seen = received[byte] as number;
  if ((seen & mask) !== 0) {
    counters.duplicates++;
    return;
  }
  received[byte] = seen | mask;
  receivedCount[s.index] = (receivedCount[s.index] as number) + 1;
  counters.unique++;
  if (firstDeliveryUs === 0) firstDeliveryUs = readNowUs;
  lastDeliveryUs = readNowUs;
  const ts = b.indexOf(OCCURRED_MARK, start);
  const sentOfDayUs = ts >= 0 && ts < end ? isoTimeOfDayUs(b, ts + OCCURRED_MARK.length, end) : Number.NaN;
  if (Number.isNaN(sentOfDayUs)) {
    counters.noTimestamp++;
    return;
  }
  const latencyUs = timeOfDayDeltaUs(readNowOfDayUs, sentOfDayUs);
  const bucket = bucketOf(latencyUs);
  histogram[bucket] = (histogram[bucket] as number) + 1;
  if (latencyUs > maxLatencyUs) maxLatencyUs = latencyUs;
}

/** Anything but `next` after subscribing (rare): errors, completes, protocol pings. */
function onOtherText(s: ClientSocket, b: Buffer, start: number, end: number): void {
  const text = b.toString('utf8', start, end);
  let message: { type?: unknown; payload?: unknown };
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    counters.protocolErrors++;
    noteError(`not JSON: ${text}`);
    return;
  }
  if (message.type === 'ping') {
    s.socket?.write(clientTextFrame('{"type":"pong"}'));
    return;
  }
  if (message.type === 'pong' || message.type === 'ka') return;
  counters.protocolErrors++;
  noteError(`${String(message.type)}: ${JSON.stringify(message.payload ?? null)}`);
}

function snapshot(): WorkerCounters {
  const cpu = process.cpuUsage();
  return { workerIndex: config.workerIndex, ...counters, subscribedPerTarget, cpuUs: cpu.user + cpu.system, rssBytes: process.memoryUsage.rss() };
}

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

function sendProgress(): void {
  send({ type: 'progress', ...snapshot() });
}

/** `connection_init` with a token of its own for socket `globalIndex` (signed at handshake, outside the traffic window). */
function initFrameWithToken(globalIndex: number, jwt: JwtOptions): Buffer {
  const token = signHs256({ ...jwt.claims, sub: `loadgen-${globalIndex}` }, jwt.hs256Secret);
  return clientTextFrame(JSON.stringify({ type: 'connection_init', payload: { token } }));
}

/** Events socket `s` should have received: its operation's, its filter key's or every event. */
function wantedOf(s: ClientSocket, expected: ExpectedDeliveries): number {
  const operation = operationOfVariant[s.variant] as number;
  if (operation >= 0) {
    const count = expected.perOperation?.[operation];
    if (count === undefined) throw new RangeError(`expected.perOperation has no count for operation ${operation}: give one per plan.operations entry`);
    return count;
  }
  const filterKey = filterKeyOfVariant[s.variant] as number;
  return filterKey < 0 ? expected.total : (expected.perFilterKey[filterKey] ?? 0);
}

function report(expected: ExpectedDeliveries): void {
  let lost = 0;
  let expectedTotal = 0;
  const lostPerOperation = (expected.perOperation ?? []).map(() => 0);
  for (const s of sockets) {
    const wanted = wantedOf(s, expected);
    expectedTotal += wanted;
    const short = Math.max(0, wanted - (receivedCount[s.index] as number));
    lost += short;
    const operation = operationOfVariant[s.variant] as number;
    if (operation >= 0) lostPerOperation[operation] = (lostPerOperation[operation] ?? 0) + short;
  }
  send({
    type: 'report',
    ...snapshot(),
    lost,
    lostPerOperation,
    expected: expectedTotal,
    histogram: toSparse(histogram),
    maxLatencyUs,
    firstDeliveryUs,
    lastDeliveryUs,
    closeCodes: Object.fromEntries([...closeCodes].map(([code, count]) => [String(code), count])),
    errorSamples: [...errorSamples],
  });
}

function stop(): void {
  stopping = true;
  for (const s of sockets) s.socket?.destroy();
  send({ type: 'stopped', workerIndex: config?.workerIndex ?? -1 });
  // Let the IPC message flush, then go.
  setTimeout(() => process.exit(0), 50);
}

process.on('message', (message: ParentMessage) => {
  switch (message.type) {
    case 'start':
      return start(message);
    case 'connect':
      connectLimit = Math.min(sockets.length, Math.max(connectLimit, message.upTo));
      return pump();
    case 'report':
      return report(message.expected);
    case 'stop':
      return stop();
  }
});
// The parent is gone (or closed the channel): nobody will read our numbers.
process.on('disconnect', () => process.exit(0));
