import type { HttpResponse } from 'uWebSockets.js';
import type { ConnectionWriter, FramePositions } from '../core/connection-writer.js';
import { nextEventHead, reconnectEvent, type SseStream } from '../core/sse-session.js';
import { SLOW_CONSUMER_REASON, type BackpressureLimits } from './backpressure.js';
import { createFrameScratch, type FrameScratch } from './payload-bytes.js';

const LF = 0x0a;

/** One SSE response on uWS: the core's stream state plus the response and what it has buffered. */
export interface SseHttpStream extends SseStream {
  readonly res: HttpResponse;
  /** Remote address as counted by admission. */
  readonly address: string;
  /**
   * Upper bound of the bytes waiting in user space: uWS buffers an HTTP write it cannot hand to the
   * kernel and reports it (`write` returns false), but exposes no buffered amount for responses. A
   * write that goes through completely drained everything before it, so the count restarts at 0.
   */
  buffered: number;
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
   * it, uWS leaves draining to us: a comment line flushes what waits (and tells whether all went out).
   */
  writable(stream: SseHttpStream): boolean;
}

/**
 * Slow-consumer policy as for WebSockets: past `slowConsumerBytes` buffered, the stream gets a last
 * event telling it to reconnect and resume, and ends. Every write is corked (writes happen outside
 * uWS callbacks, from the hub's flushes).
 */
export function createSseWriter(
  limits: BackpressureLimits,
  onSlowConsumer: () => void,
  ended: (stream: SseHttpStream) => void,
  scratch: FrameScratch = createFrameScratch(),
): SseWriter {
  // The cork callbacks read these instead of closing over them: no closure per stream per write.
  let corkRes: HttpResponse | undefined;
  let corkText = '';
  let corkOk = false;
  const writeCorked = (): void => {
    corkOk = (corkRes as HttpResponse).write(corkText);
  };
  const afterWrite = (stream: SseHttpStream, bytes: number): void => {
    stream.buffered = corkOk ? 0 : stream.buffered + bytes;
    if (stream.buffered > limits.slowConsumerBytes) {
      onSlowConsumer();
      end(stream, reconnectEvent('slow_consumer', SLOW_CONSUMER_REASON));
    }
  };
  const write = (stream: SseHttpStream, text: string): void => {
    if (stream.closed) return;
    corkRes = stream.res;
    corkText = text;
    stream.res.cork(writeCorked);
    corkRes = undefined;
    corkText = '';
    afterWrite(stream, text.length);
  };
  const end = (stream: SseHttpStream, last: string): void => {
    if (stream.closed) return;
    stream.closed = true;
    stream.res.cork(() => stream.res.end(last));
    ended(stream);
  };

  // Events: each stream's `id:` differs, its payloads are the group's: the payloads are encoded once
  // per group write and each stream's write is laid out from bytes (payload-bytes.ts), as one HTTP
  // chunk — which also keeps every line inside one chunk, as cheap readers expect.
  let corkBytes: Buffer | undefined;
  const writeBytesCorked = (): void => {
    corkOk = (corkRes as HttpResponse).write(corkBytes as Buffer);
  };
  const writeEvents = (stream: SseHttpStream, payloads: readonly string[], positions: FramePositions | undefined): void => {
    if (stream.closed || payloads.length === 0) return;
    const bodies = scratch.bytesOf(payloads);
    scratch.reset();
    for (let i = 0; i < bodies.length; i++) {
      scratch.text(nextEventHead(stream, positions, i), true); // ASCII: a cursor, `event:` and `data:`
      scratch.bytes(bodies[i] as Buffer);
      scratch.byte(LF);
      scratch.byte(LF);
    }
    corkRes = stream.res;
    corkBytes = scratch.frame();
    stream.res.cork(writeBytesCorked);
    corkRes = undefined;
    corkBytes = undefined;
    afterWrite(stream, scratch.length);
    scratch.shrink();
  };

  return {
    write,
    end,
    writable(stream) {
      write(stream, ':\n');
      return true;
    },
    send: (stream, frame) => write(stream, `event: next\ndata: ${frame}\n\n`),
    sendFrames: (stream, _head, payloads, positions?: FramePositions) => writeEvents(stream, payloads, positions),
    close: (stream, code, reason) => end(stream, reconnectEvent(code === 1013 ? 'slow_consumer' : 'server_error', reason)),
    hasRoom(stream) {
      if (stream.closed || stream.buffered <= limits.replayHighWaterBytes) return true;
      // Nothing tells when uWS drained a response: a comment line probes it (true: all went out).
      write(stream, ':\n');
      return stream.buffered <= limits.replayHighWaterBytes;
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
