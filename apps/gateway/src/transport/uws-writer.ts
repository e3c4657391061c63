import type { ConnectionWriter } from '../core/connection-writer.js';
import { CLOSE_SLOW_CONSUMER, SEND_BACKPRESSURE, SEND_DROPPED, SEND_SUCCESS, SLOW_CONSUMER_REASON, type BackpressureLimits } from './backpressure.js';
import { createFrameScratch, type FrameScratch } from './payload-bytes.js';
import { compactPending, createPendingWrites, pendFrame, pendFrames, writePending, type PendingSink, type PendingWrites } from './pending-writes.js';
import type { Socket } from './socket.js';

const CLOSE_BRACE = 0x7d; // '}'

/** The uWS writer, plus what uWS's `drain` calls: the frames that waited for the socket go out. */
export interface UwsWriter extends ConnectionWriter<Socket> {
  readonly writable: (ws: Socket) => void;
}

/**
 * The write path to uWS sockets: frames of one flush corked into one syscall, and the slow-consumer
 * policy. A closed uWS socket throws on use, so every write checks `closed` first. With `compress`
 * (GATEWAY_COMPRESSION is not `off`), frames are deflated for sockets that negotiated
 * permessage-deflate; uWS sends them plain to the others.
 *
 * Once uWS holds more than `limits.uwsBufferBytes` for a socket, later frames wait in the socket's
 * {@link PendingWrites} (shared payload bytes, no copy) and are written on `drain`, at most that
 * many bytes a turn: uWS's own buffer, which never shrinks in this build, stays small
 * (pending-writes.ts, decision 0028).
 */
export function createUwsWriter(limits: BackpressureLimits, onSlowConsumer: () => void, compress = false, scratch: FrameScratch = createFrameScratch()): UwsWriter {
  /** Bytes waiting for the socket: in uWS and in ours. */
  const waiting = (ws: Socket): number => ws.getBufferedAmount() + (ws.pending?.bytes ?? 0);

  /**
   * Slow-consumer policy: once more than the limit waits for a socket (in uWS's buffer and ours),
   * it is closed with 1013 and a resume hint (no frame after that is sent). Memory stays bounded,
   * and the client loses nothing: it resumes from its last position on reconnect.
   */
  function closeIfSlow(ws: Socket): boolean {
    if (waiting(ws) <= limits.slowConsumerBytes) return false;
    onSlowConsumer();
    ws.closed = true; // no more sends into a socket that is going away
    ws.pending = undefined;
    ws.end(CLOSE_SLOW_CONSUMER, SLOW_CONSUMER_REASON);
    return true;
  }

  /** After a send that did not go straight to the kernel: from now on frames wait in ours, past uWS's small buffer. */
  function afterBackpressure(ws: Socket, status: number): void {
    if (status === SEND_DROPPED || ws.getBufferedAmount() > limits.uwsBufferBytes) ws.pending ??= createPendingWrites();
    closeIfSlow(ws);
  }

  // Frames are `head + payload + '}'`: the head is the socket's (its subscription id), the payload
  // the group's, encoded once per group write; each frame is laid out from bytes and handed to uWS,
  // which copies it (payload-bytes.ts).
  const sendFrame = (ws: Socket, head: string, body: Buffer): number => {
    scratch.reset();
    scratch.text(head, false);
    scratch.bytes(body);
    scratch.byte(CLOSE_BRACE);
    return ws.send(scratch.frame(), false, compress);
  };

  /** {@link sendFrame} from the payload's text: one UTF-8 encoding straight into the scratch buffer. */
  const sendTextFrame = (ws: Socket, head: string, payload: string): number => {
    scratch.reset();
    scratch.text(head, false);
    scratch.text(payload, false);
    scratch.byte(CLOSE_BRACE);
    return ws.send(scratch.frame(), false, compress);
  };

  // The cork callbacks read these instead of closing over them: no closure allocated per socket per flush.
  let corkSocket: Socket | undefined;
  let corkHead = '';
  let corkBodies: readonly Buffer[] = [];
  let corkNext = 0;
  /**
   * Writes bodies from `corkNext` on, corked, about `uwsBufferBytes` of them (one block: what uWS
   * buffers when the kernel refuses it all stays that small). Past backpressure beyond uWS's small
   * buffer the rest waits in ours.
   */
  const writeCorked = (): void => {
    const ws = corkSocket as Socket;
    let budget = limits.uwsBufferBytes;
    while (corkNext < corkBodies.length && budget > 0) {
      const body = corkBodies[corkNext] as Buffer;
      const status = sendFrame(ws, corkHead, body);
      if (status !== SEND_SUCCESS && (status === SEND_DROPPED || ws.getBufferedAmount() > limits.uwsBufferBytes)) {
        // A dropped frame was not written: it waits too.
        ws.pending ??= createPendingWrites();
        pendFrames(ws.pending, corkHead, corkBodies, status === SEND_DROPPED ? corkNext : corkNext + 1);
        corkNext = corkBodies.length;
        return;
      }
      corkNext++;
      budget -= corkHead.length + body.length + 1;
    }
  };
  /** A flush's frames for one socket, block by block while uWS takes them; the rest waits in ours. */
  const writeBlocks = (ws: Socket, head: string, bodies: readonly Buffer[]): void => {
    corkSocket = ws;
    corkHead = head;
    corkBodies = bodies;
    corkNext = 0;
    for (;;) {
      ws.cork(writeCorked);
      if (ws.closed || ws.pending || corkNext >= bodies.length) break;
      // A corked block's backpressure shows only after the uncork.
      if (ws.getBufferedAmount() > limits.uwsBufferBytes) {
        ws.pending = createPendingWrites();
        pendFrames(ws.pending, head, bodies, corkNext);
        break;
      }
    }
    corkSocket = undefined;
    // Waiting frames: only the slow-consumer check is left; else whether uWS now holds more than it may.
    if (ws.pending) closeIfSlow(ws);
    else if (ws.getBufferedAmount() > limits.uwsBufferBytes) afterBackpressure(ws, SEND_BACKPRESSURE);
  };

  /** Where the queue's frames go while a socket is corked (corkSocket). */
  const corkSink: PendingSink = {
    text: (frame) => (corkSocket as Socket).send(frame, false, compress),
    frame: (head, body) => sendFrame(corkSocket as Socket, head, body),
  };
  /** Writes waiting frames, corked, until about `uwsBufferBytes` went out or none is left. */
  const writePendingCorked = (): void => writePending((corkSocket as Socket).pending as PendingWrites, limits.uwsBufferBytes, corkSink);

  /**
   * uWS's `drain`: the socket took some of uWS's buffer. Writes waiting frames, a block at a time,
   * while uWS holds at most `uwsBufferBytes`; stops once it holds more (then another `drain` will
   * come: frames never wait while uWS holds little) or nothing waits.
   */
  function writable(ws: Socket): void {
    while (!ws.closed && ws.pending) {
      if (ws.getBufferedAmount() > limits.uwsBufferBytes) return;
      corkSocket = ws;
      ws.cork(writePendingCorked);
      corkSocket = undefined;
      const pending = ws.pending;
      if (pending.first === pending.items.length) {
        ws.pending = undefined;
        return;
      }
      compactPending(pending);
    }
  }

  return {
    send(ws, frame) {
      if (ws.closed) return;
      if (ws.pending) {
        pendFrame(ws.pending, frame);
        closeIfSlow(ws);
        return;
      }
      const status = ws.send(frame, false, compress);
      if (status !== SEND_SUCCESS) afterBackpressure(ws, status);
    },
    sendFrames(ws, head, payloads) {
      if (ws.closed || payloads.length === 0) return;
      if (payloads.length === 1 && !ws.pending && scratch.firstUse(payloads)) {
        // The group's first socket, one frame: laid out from the text (a group of one encodes nothing twice).
        const status = sendTextFrame(ws, head, payloads[0] as string);
        if (status !== SEND_SUCCESS) afterBackpressure(ws, status);
        scratch.shrink();
        return;
      }
      const bodies = scratch.bytesOf(payloads);
      if (ws.pending) {
        pendFrames(ws.pending, head, bodies, 0);
        closeIfSlow(ws);
        return;
      }
      if (bodies.length === 1) {
        const status = sendFrame(ws, head, bodies[0] as Buffer);
        if (status !== SEND_SUCCESS) afterBackpressure(ws, status);
      } else writeBlocks(ws, head, bodies);
      scratch.shrink();
    },
    close(ws, code, reason) {
      ws.pending = undefined; // what waited is lost with the socket: the client resumes from its last position
      if (!ws.closed) ws.end(code, reason);
    },
    hasRoom: (ws) => ws.closed || waiting(ws) <= limits.replayHighWaterBytes,
    replayChunkBytes: limits.replayChunkBytes,
    writable,
  };
}
