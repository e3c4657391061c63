import type { ConnectionWriter } from '../core/connection-writer.js';
import { CLOSE_SLOW_CONSUMER, SEND_DROPPED, SEND_SUCCESS, SLOW_CONSUMER_REASON, type BackpressureLimits } from './backpressure.js';
import { createFrameScratch, type FrameScratch } from './payload-bytes.js';
import type { Socket } from './socket.js';

const CLOSE_BRACE = 0x7d; // '}'

/**
 * The write path to uWS sockets: frames of one flush corked into one syscall, and the slow-consumer
 * policy. A closed uWS socket throws on use, so every write checks `closed` first. With `compress`
 * (GATEWAY_COMPRESSION is not `off`), frames are deflated for sockets that negotiated
 * permessage-deflate; uWS sends them plain to the others.
 */
export function createUwsWriter(limits: BackpressureLimits, onSlowConsumer: () => void, compress = false, scratch: FrameScratch = createFrameScratch()): ConnectionWriter<Socket> {
  /**
   * Slow-consumer policy: once more than the limit waits in a socket's buffer, the socket is closed
   * with 1013 and a resume hint (no frame after that is sent). Memory stays bounded, and the client
   * loses nothing: it resumes from its last position on reconnect.
   */
  function closeIfSlow(ws: Socket, status: number): void {
    // Checked only when a send could not go straight to the kernel: the common case costs nothing.
    if (status === SEND_SUCCESS || (status !== SEND_DROPPED && ws.getBufferedAmount() <= limits.slowConsumerBytes)) return;
    onSlowConsumer();
    ws.closed = true; // no more sends into a socket that is going away
    ws.end(CLOSE_SLOW_CONSUMER, SLOW_CONSUMER_REASON);
  }

  // Frames are `head + payload + '}'`: the head is the socket's (its subscription id), the payload
  // the group's, encoded once per group write; each frame is laid out from bytes and handed to uWS,
  // which copies it (payload-bytes.ts). The cork callback reads these instead of closing over them:
  // no closure allocated per socket per flush.
  const sendFrame = (ws: Socket, head: string, body: Buffer): void => {
    scratch.reset();
    scratch.text(head, false);
    scratch.bytes(body);
    scratch.byte(CLOSE_BRACE);
    closeIfSlow(ws, ws.send(scratch.frame(), false, compress));
  };
  let corkSocket: Socket | undefined;
  let corkHead = '';
  let corkBodies: readonly Buffer[] = [];
  const writeCorked = (): void => {
    const ws = corkSocket as Socket;
    for (let i = 0; i < corkBodies.length && !ws.closed; i++) sendFrame(ws, corkHead, corkBodies[i] as Buffer);
  };

  return {
    send(ws, frame) {
      // Status 2 (dropped) happens only past uWS's maxBackpressure, far above the slow-consumer limit.
      if (!ws.closed) ws.send(frame, false, compress);
    },
    sendFrames(ws, head, payloads) {
      if (ws.closed || payloads.length === 0) return;
      const bodies = scratch.bytesOf(payloads);
      if (bodies.length === 1) sendFrame(ws, head, bodies[0] as Buffer);
      else {
        corkSocket = ws;
        corkHead = head;
        corkBodies = bodies;
        ws.cork(writeCorked);
        corkSocket = undefined;
      }
      scratch.shrink();
    },
    close(ws, code, reason) {
      if (!ws.closed) ws.end(code, reason);
    },
    hasRoom: (ws) => ws.closed || ws.getBufferedAmount() <= limits.replayHighWaterBytes,
    replayChunkBytes: limits.replayChunkBytes,
  };
}
