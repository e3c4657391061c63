import type { HttpResponse } from 'uWebSockets.js';
import type { ConnectionWriter, FramePositions } from '../core/connection-writer.js';
import { nextEventHead, reconnectEvent, type SseStream } from '../core/protocols/sse-session.js';
import { SLOW_CONSUMER_REASON, type BackpressureLimits } from './backpressure.js';
import { createFrameScratch, type FrameScratch } from './payload-bytes.js';
import { compactPending, createPendingWrites, pendFrame, pendFrames, writePending, type PendingSink, type PendingWrites } from './pending-writes.js';

const LF = 0x0a;
/**
 * Most bytes of events in one HTTP chunk (but for a single bigger event), and so what one writable
 * event writes before it looks again. uWS's cork buffer is 16 KiB; a corked write that does not fit
 * in it takes uWS's uncork path, which in this build loses the write's data when the kernel refuses
 * the cork buffer's bytes (v20.30 `AsyncSocket::uncork` returns without writing or buffering
 * them). A chunk and its framing (`\r\n<hex>\r\n`) stay inside the cork buffer.
 */
const SSE_CHUNK_BYTES = 16 * 1024 - 64;
/** A comment line: flushes what uWS holds and tells whether all of it went out. */
const PROBE = ':\n';

/** One SSE response on uWS: the core's stream state plus the response and what it has buffered. */
export interface SseHttpStream extends SseStream {
  readonly res: HttpResponse;
  /** Remote address as counted by admission. */
  readonly address: string;
  /**
   * Upper bound of the bytes uWS holds for the response: uWS exposes no buffered amount for
   * responses, only whether a write went through (`write` returns false when it had to buffer). A
   * write that goes through found uWS's buffer empty and may leave at most its own bytes there (the
   * uncork after it can buffer them); one that does not adds its bytes to what was held.
   */
  buffered: number;
  /** Events waiting beyond uWS's small buffer (pending-writes.ts); undefined while none wait. */
  pending: PendingWrites | undefined;
}

/** The SSE side of the hub's writer, plus the stream ends the server needs. */
export interface SseWriter extends ConnectionWriter<SseHttpStream> {
  /** Writes raw event-stream text (a heartbeat, events). */
  write(stream: SseHttpStream, text: string): void;
  /** Ends the response after `last` (if any); the stream is released through `ended`. */
  end(stream: SseHttpStream, last: string): void;
  /**
   * uWS's writable event for a stream (register with `res.onWritable`). uWS arms a 10 s timeout
   * whenever a write of a response has to be buffered, and nothing but this event disarms it: without
   * the handler a stream that was once backpressured is cut 10 s later however well it reads. With
   * it, uWS leaves draining to us: the events that waited go out (or, with none waiting, a comment
   * line flushes what uWS holds).
   */
  writable(stream: SseHttpStream): boolean;
}

/**
 * Slow-consumer policy as for WebSockets: past `slowConsumerBytes` waiting (uWS's and ours), the
 * stream gets a last event telling it to reconnect and resume, and ends. Every write is corked
 * (writes happen outside uWS callbacks, from the hub's flushes) and is one HTTP chunk of whole events.
 *
 * As the WebSocket writer (decision 0028): once a write had to be buffered and uWS may hold more than
 * `limits.uwsBufferBytes`, later events wait in the stream's {@link PendingWrites} (the group's
 * payload bytes, each event's own head) and go out on uWS's writable event, a chunk at a time while
 * uWS takes them. Events wait only after a write that uWS buffered: uWS then polls the socket for
 * writability, so a writable event follows (decision 0030).
 */
export function createSseWriter(
  limits: BackpressureLimits,
  onSlowConsumer: () => void,
  ended: (stream: SseHttpStream) => void,
  scratch: FrameScratch = createFrameScratch(),
): SseWriter {
  // Chunks as big as the cork buffer allows, whatever the queue's threshold: a write per 8 KiB
  // instead of per ~16 KiB cost 2.57 vs 1.69 µs of CPU per delivery (decision 0030). uWS then holds
  // at most the threshold plus one chunk for a stream that lags.
  const chunkBytes = SSE_CHUNK_BYTES;
  /** Bytes waiting for the stream: in uWS (at most) and in ours. */
  const waiting = (stream: SseHttpStream): number => stream.buffered + (stream.pending?.bytes ?? 0);

  // The cork callbacks read these instead of closing over them: no closure per stream per write.
  let corkRes: HttpResponse | undefined;
  let corkText = '';
  let corkOk = false;
  const writeCorked = (): void => {
    corkOk = (corkRes as HttpResponse).write(corkText);
  };
  const writeBytesCorked = (): void => {
    corkOk = (corkRes as HttpResponse).write(scratch.frame());
  };
  /** Writes what is laid out in the scratch buffer as one chunk; true if uWS did not have to buffer it. */
  const writeScratch = (stream: SseHttpStream): boolean => {
    corkRes = stream.res;
    stream.res.cork(writeBytesCorked);
    corkRes = undefined;
    return corkOk;
  };

  function closeIfSlow(stream: SseHttpStream): boolean {
    if (waiting(stream) <= limits.slowConsumerBytes) return false;
    onSlowConsumer();
    end(stream, reconnectEvent('slow_consumer', SLOW_CONSUMER_REASON));
    return true;
  }
  /** After a write of `bytes`: what uWS may hold now; past a buffered write beyond the small buffer, later events wait in ours. */
  /** What uWS may hold after a write of `bytes` (see {@link SseHttpStream.buffered}). */
  const noteWrite = (stream: SseHttpStream, ok: boolean, bytes: number): void => {
    stream.buffered = ok ? bytes : stream.buffered + bytes;
  };
  const afterWrite = (stream: SseHttpStream, ok: boolean, bytes: number): void => {
    noteWrite(stream, ok, bytes);
    if (!ok && stream.buffered > limits.uwsBufferBytes) stream.pending ??= createPendingWrites();
    closeIfSlow(stream);
  };
  const write = (stream: SseHttpStream, text: string): void => {
    if (stream.closed) return;
    if (stream.pending) {
      pendFrame(stream.pending, text);
      closeIfSlow(stream);
      return;
    }
    corkRes = stream.res;
    corkText = text;
    stream.res.cork(writeCorked);
    corkRes = undefined;
    corkText = '';
    afterWrite(stream, corkOk, text.length);
  };
  const end = (stream: SseHttpStream, last: string): void => {
    if (stream.closed) return;
    stream.closed = true;
    stream.pending = undefined; // what waited is lost with the stream: the client resumes from its last `id:`
    stream.res.cork(() => stream.res.end(last));
    ended(stream);
  };

  // Events: each stream's `id:` differs, its payloads are the group's: the payloads are encoded once
  // per group write and each stream's chunk is laid out from bytes (payload-bytes.ts) — which also
  // keeps every line inside one chunk, as cheap readers expect.
  const layOut = (head: string, body: Buffer): void => {
    scratch.text(head, true); // ASCII: a cursor, `event:` and `data:`
    scratch.bytes(body);
    scratch.byte(LF);
    scratch.byte(LF);
  };
  const sink: PendingSink = { text: (frame) => scratch.text(frame, false), frame: layOut };
  /** The heads of events `from` on, at their indexes: `taken` for `from` if it was taken already, the others now (each advances the cursor, in order). */
  const headsFrom = (stream: SseHttpStream, positions: FramePositions | undefined, from: number, count: number, taken: string): string[] => {
    const heads = new Array<string>(count).fill('', 0, from);
    for (let i = from; i < count; i++) heads[i] = i === from && taken !== '' ? taken : nextEventHead(stream, positions, i);
    return heads;
  };
  /** Queues events `from` on, then the slow-consumer check. */
  const pendEvents = (stream: SseHttpStream, pending: PendingWrites, bodies: readonly Buffer[], positions: FramePositions | undefined, from: number, taken: string): void => {
    pendFrames(pending, headsFrom(stream, positions, from, bodies.length, taken), bodies, from, 2);
    closeIfSlow(stream);
  };
  /** A flush's events for one stream, a chunk of at most `chunkBytes` per write while uWS takes them; the rest waits in ours. */
  const writeEvents = (stream: SseHttpStream, payloads: readonly string[], positions: FramePositions | undefined): void => {
    if (stream.closed || payloads.length === 0) return;
    const bodies = scratch.bytesOf(payloads);
    if (stream.pending) return pendEvents(stream, stream.pending, bodies, positions, 0, '');
    let next = 0;
    let head = ''; // event `next`'s head, once taken (it advanced the cursor) but not laid out yet
    while (next < bodies.length) {
      scratch.reset();
      // Whole events up to `chunkBytes` (a bigger event alone).
      for (; next < bodies.length; next++) {
        if (head === '') head = nextEventHead(stream, positions, next);
        const body = bodies[next] as Buffer;
        if (scratch.length > 0 && scratch.length + head.length + body.length + 2 > chunkBytes) break;
        layOut(head, body);
        head = '';
      }
      afterWrite(stream, writeScratch(stream), scratch.length);
      if (stream.closed) break;
      if (stream.pending) {
        pendEvents(stream, stream.pending, bodies, positions, next, head);
        break;
      }
    }
    scratch.shrink();
  };

  /**
   * uWS's writable event: the socket takes bytes again, and uWS leaves it to us to write. Waiting
   * events go out a chunk at a time; after a chunk uWS had to buffer, it stops (uWS polls for the
   * next writable event). With none waiting, a comment line flushes what uWS holds: uWS writes
   * nothing of its own buffer when a writable handler is registered, and stops polling once a
   * writable event wrote nothing.
   */
  function writable(stream: SseHttpStream): boolean {
    if (stream.closed) return true;
    if (!stream.pending || stream.pending.first === stream.pending.items.length) {
      // Something must be written, or uWS stops polling with its buffer unsent.
      stream.pending = undefined;
      write(stream, PROBE);
      return true;
    }
    for (let pending: PendingWrites | undefined = stream.pending; pending && !stream.closed; pending = stream.pending) {
      scratch.reset();
      writePending(pending, chunkBytes, sink, true);
      const ok = writeScratch(stream);
      noteWrite(stream, ok, scratch.length);
      if (pending.first === pending.items.length) stream.pending = undefined;
      else compactPending(pending);
      if (!ok) break;
    }
    scratch.shrink();
    return true;
  }

  return {
    write,
    end,
    writable,
    send: (stream, frame) => write(stream, `event: next\ndata: ${frame}\n\n`),
    sendFrames: (stream, _head, payloads, positions?: FramePositions) => writeEvents(stream, payloads, positions),
    close: (stream, code, reason) => end(stream, reconnectEvent(code === 1013 ? 'slow_consumer' : 'server_error', reason)),
    hasRoom(stream) {
      if (stream.closed || waiting(stream) <= limits.replayHighWaterBytes) return true;
      // Nothing tells when uWS drained a response: with nothing of ours waiting, a comment line probes it.
      if (!stream.pending) write(stream, PROBE);
      return waiting(stream) <= limits.replayHighWaterBytes;
    },
    replayChunkBytes: limits.replayChunkBytes,
  };
}

/** The hub's writer for both transports: SSE streams to `sse`, everything else to `ws`. */
export function withSseStreams<W>(ws: ConnectionWriter<W>, sse: ConnectionWriter<SseHttpStream>): ConnectionWriter<W | SseHttpStream> {
  const isSse = (conn: W | SseHttpStream): conn is SseHttpStream => (conn as Partial<SseStream>).sse === true;
  return {
    send: (conn, frame) => (isSse(conn) ? sse.send(conn, frame) : ws.send(conn, frame)),
    sendFrames: (conn, head, payloads, positions) => (isSse(conn) ? sse.sendFrames(conn, head, payloads, positions) : ws.sendFrames(conn, head, payloads)),
    close: (conn, code, reason) => (isSse(conn) ? sse.close(conn, code, reason) : ws.close(conn, code, reason)),
    hasRoom: (conn) => (isSse(conn) ? sse.hasRoom(conn) : ws.hasRoom(conn)),
    replayChunkBytes: Math.min(ws.replayChunkBytes, sse.replayChunkBytes),
  };
}
