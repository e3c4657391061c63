import type { WebSocket } from 'uWebSockets.js';
import type { Connection } from '../core/protocols/protocol.js';
import type { Subprotocol } from '../core/protocols/subprotocols.js';
import type { PendingWrites } from './pending-writes.js';

/** What the transport keeps per socket beside the protocol's state. */
export interface SocketData extends Connection<Socket> {
  /** The subprotocol chosen at the upgrade; undefined when the client offered none (closed with 4406 on open). */
  subprotocol: Subprotocol | undefined;
  /** Remote IP as text, for the per-address connection count. */
  address: string;
  /** Frames waiting for the socket beyond uWS's small buffer (uws-writer.ts); undefined while none wait. */
  pending: PendingWrites | undefined;
}

/**
 * uWS copies the user data given at upgrade onto the socket object itself (`getUserData()`
 * returns the socket), so the protocol state lives directly on the socket: no wrapper objects,
 * no back-references — the fewest bytes per connection. The core sees this object as its
 * connection; only the transport knows it is a uWS socket.
 */
export type Socket = WebSocket<SocketData> & SocketData;

/** The connection object of a uWS socket: the socket itself, carrying its user data (see {@link Socket}). */
export function socketOf(ws: WebSocket<SocketData>): Socket {
  return ws.getUserData() as Socket;
}
