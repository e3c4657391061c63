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
   * (uWS: inside one `cork`, one syscall). Must not throw for a closed connection.
   */
  sendFrames(conn: C, head: string, payloads: readonly string[]): void;
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
