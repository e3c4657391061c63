/**
 * The SSE side of a load worker: the request each socket sends, and a reader of the chunked
 * `text/event-stream` response that hands each `data:` line to the same position counter as a
 * WebSocket `next` frame. In place like the frame scanner: a chunk split across reads is the only
 * case that copies.
 */
import type { WorkerTarget } from './ipc.js';

const CRLF = Buffer.from('\r\n');
const DATA_MARK = Buffer.from('data: ');
const LF = 0x0a;
const CR = 0x0d;

/** One POST per target and operation variant, built once. */
export function sseRequest(target: WorkerTarget, payload: unknown): Buffer {
  const body = JSON.stringify(payload);
  return Buffer.from(
    `POST ${target.path} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\nAccept: text/event-stream\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    'utf8',
  );
}

/** What a reader keeps per socket between reads: bytes left of the current chunk, and a partial line. */
export interface SseReadState {
  chunkLeft: number;
  pending: Buffer | undefined;
}

/**
 * Parses `b[pos, end)` (the pending partial line first) as HTTP chunks and calls `onData` with each
 * `data:` line's value as soon as the line is complete: a chunk (one server write, possibly many
 * events) is read as it arrives, only a line split across reads is copied. Our server writes whole
 * events per chunk, so a line never spans two chunks. Returns false once the terminating chunk came.
 */
export function readSseChunks(state: SseReadState, b: Buffer, pos: number, end: number, onData: (b: Buffer, start: number, end: number) => void): boolean {
  if (state.pending !== undefined) {
    b = Buffer.concat([state.pending, b.subarray(pos, end)]);
    pos = 0;
    end = b.length;
    state.pending = undefined;
  }
  while (pos < end) {
    if (state.chunkLeft === 0) {
      while (pos < end && (b[pos] === CR || b[pos] === LF)) pos++;
      if (pos === end) return true;
      const lineEnd = b.indexOf(CRLF, pos);
      if (lineEnd < 0 || lineEnd >= end) break;
      const size = Number.parseInt(b.toString('latin1', pos, lineEnd), 16);
      if (size === 0) return false;
      state.chunkLeft = size;
      pos = lineEnd + 2;
      continue;
    }
    const segmentEnd = pos + Math.min(state.chunkLeft, end - pos);
    const consumed = eachLine(b, pos, segmentEnd, onData);
    state.chunkLeft -= consumed - pos;
    pos = consumed;
    if (pos < segmentEnd) break; // a partial line: wait for the rest
  }
  if (pos < end) state.pending = Buffer.from(b.subarray(pos, end));
  return true;
}

/** Hands over the `data: ` lines complete in `[start, end)`; returns where the first incomplete line starts. */
function eachLine(b: Buffer, start: number, end: number, onData: (b: Buffer, start: number, end: number) => void): number {
  let pos = start;
  for (;;) {
    const lineEnd = b.indexOf(LF, pos);
    if (lineEnd < 0 || lineEnd >= end) return pos;
    if (lineEnd - pos > DATA_MARK.length && b.compare(DATA_MARK, 0, DATA_MARK.length, pos, pos + DATA_MARK.length) === 0) {
      onData(b, pos + DATA_MARK.length, lineEnd);
    }
    pos = lineEnd + 1;
  }
}
