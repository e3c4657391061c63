/**
 * How the core writes to a connection, implemented by a transport (uWS today; SSE later). The core
 * never sees a socket: it hands over frames and asks whether a connection has room. Every
 * backpressure number (limits, high-water marks, chunk sizes) belongs to the transport.
 */
export interface ConnectionWriter<C> {
  /** Writes one text frame. Must not throw for a closed connection. */
  send(conn: C, frame: string): void;
  /**
   * Writes `head + payload + '}'` for each payload, in order, as one text frame each, together
   * (uWS: inside one `cork`, one syscall). Must not throw for a closed connection. `positions`,
   * when given, are the payloads' Kafka positions (parallel arrays): a transport whose events carry
   * a cursor (SSE's `id:`) keeps it from them; a WebSocket ignores them. The caller never changes
   * a `payloads` array it handed over (a transport may keep an encoding of it by identity: the hub
   * hands the same array to every subscriber of a group).
   */
  sendFrames(conn: C, head: string, payloads: readonly string[], positions?: FramePositions): void;
  /** Closes the connection with a WebSocket close code and a short reason. */
  close(conn: C, code: number, reason: string): void;
  /**
   * Whether the connection can take another replay chunk now (its send buffer is below the
   * transport's high-water mark). A replay waits while this is false.
   */
  hasRoom(conn: C): boolean;
  /** Bytes a replay writes before it asks {@link hasRoom} again. */
  readonly replayChunkBytes: number;
}

/** Positions of the payloads of one {@link ConnectionWriter.sendFrames} call, index by index. */
export interface FramePositions {
  /** The history epoch the positions belong to (undefined without history). */
  readonly epoch: string | undefined;
  readonly partitions: readonly number[];
  readonly offsets: readonly string[];
  /**
   * Set on the one data-less frame that tells a subscription its starting point (start.ts): the
   * epoch and, per partition, the offset it is live after. A transport whose events carry a cursor
   * sets it from these, so that no transport parses a frame of our own making.
   */
  readonly start?: { readonly epoch?: string; readonly positions: Readonly<Record<string, string>> };
}
