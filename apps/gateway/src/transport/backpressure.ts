/**
 * Every backpressure number of the uWS transport, derived from one setting
 * (`GATEWAY_MAX_BACKPRESSURE_BYTES`), so the slow-consumer limit, uWS's own limit and the replay
 * pacing cannot drift apart.
 */

/** uWS `send` status: written to the kernel at once (anything else means bytes are waiting in user space). */
export const SEND_SUCCESS = 1;
/** uWS `send` status: written in part or not at all; the rest waits in uWS's buffer for the socket. */
export const SEND_BACKPRESSURE = 0;
/** uWS `send` status: the frame was dropped because the socket is past uWS's maxBackpressure. */
export const SEND_DROPPED = 2;
/** WebSocket "try again later": the slow-consumer close. graphql-ws clients treat it as retryable. */
export const CLOSE_SLOW_CONSUMER = 1013;
export const SLOW_CONSUMER_REASON = 'slow consumer: reconnect and resume from your last position';
/** Frames a resuming subscriber gets per write during a replay (then it waits for its socket to drain). */
const REPLAY_CHUNK_BYTES = 65_536; // 64 KiB

export interface BackpressureLimits {
  /** Ours: past this many buffered bytes a socket is closed with 1013 and a resume hint. */
  readonly slowConsumerBytes: number;
  /**
   * uWS's: it drops any frame past its own limit, the close frame included (the client would see
   * 1006, no hint). Ours is enforced by the writer; uWS's sits above it so the close frame always
   * fits. A slow socket holds at most twice our limit plus one frame.
   */
  readonly uwsMaxBackpressure: number;
  /** A replay writes a chunk only while the socket holds less than this (a quarter of our limit). */
  readonly replayHighWaterBytes: number;
  /** A chunk on top of the high-water mark must stay under the slow-consumer limit. */
  readonly replayChunkBytes: number;
  /** Past this many bytes in uWS's buffer, frames wait in the writer's queue; also what one `drain` writes. */
  readonly uwsBufferBytes: number;
}

/**
 * `socketBufferBytes` (GATEWAY_SOCKET_BUFFER_BYTES): what uWS may hold for one socket before further
 * frames wait in the writer's queue — uWS's buffer keeps its peak size for the socket's life in this
 * build, ours is garbage-collected (pending-writes.ts, decision 0028).
 */
export function backpressureLimits(maxBackpressureBytes: number, socketBufferBytes = 8_192): BackpressureLimits {
  const replayHighWaterBytes = Math.floor(maxBackpressureBytes / 4);
  return Object.freeze({
    slowConsumerBytes: maxBackpressureBytes,
    uwsMaxBackpressure: maxBackpressureBytes * 2 + 65_536,
    replayHighWaterBytes,
    replayChunkBytes: Math.min(REPLAY_CHUNK_BYTES, replayHighWaterBytes),
    uwsBufferBytes: Math.min(socketBufferBytes, replayHighWaterBytes),
  });
}
