/**
 * Which WebSocket subprotocol a connection speaks, chosen at the upgrade from the client's
 * `Sec-WebSocket-Protocol` offer. Transport-neutral: the transport reads the header and applies
 * the answer (select the protocol, or refuse the upgrade with the message as its body).
 */
import { GRAPHQL_TRANSPORT_WS_PROTOCOL } from 'graphql-ws';
import { LEGACY_GRAPHQL_WS_PROTOCOL } from './legacy-protocol.js';

/** Subprotocols this gateway can speak, in the order it prefers them when a client offers several. */
export const SUBPROTOCOLS = [GRAPHQL_TRANSPORT_WS_PROTOCOL, LEGACY_GRAPHQL_WS_PROTOCOL] as const;
export type Subprotocol = (typeof SUBPROTOCOLS)[number];

export type SubprotocolChoice =
  /** `protocol` undefined: the client offered none (graphql-ws's rule: accept, then close with 4406). */
  | { readonly ok: true; readonly protocol: Subprotocol | undefined }
  | { readonly ok: false; readonly message: string };

/** Longest offer quoted back in a refusal (the header is the client's, of any length). */
const MAX_QUOTED_CHARS = 100;

/**
 * The subprotocol to select for an offer (the header's value, comma-separated tokens). An offer
 * naming none of {@link SUBPROTOCOLS} is refused: upgrading without a subprotocol would make a
 * strict client (browsers, `ws`) fail the handshake with nothing but 1006.
 */
export function chooseSubprotocol(offer: string, spoken: readonly Subprotocol[] = SUBPROTOCOLS): SubprotocolChoice {
  const offered = offer.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (offered.length === 0) return { ok: true, protocol: undefined };
  const protocol = spoken.find((p) => offered.includes(p));
  if (protocol !== undefined) return { ok: true, protocol };
  const quoted = JSON.stringify(offered.join(', ').slice(0, MAX_QUOTED_CHARS));
  return { ok: false, message: `Subprotocol not acceptable: offered ${quoted}; this gateway speaks ${describeSubprotocols(spoken)} (Sec-WebSocket-Protocol)` };
}

/** The spoken subprotocols for a message: the legacy one marked as such. */
export function describeSubprotocols(spoken: readonly Subprotocol[]): string {
  return spoken.map((p) => (p === LEGACY_GRAPHQL_WS_PROTOCOL ? `${p} (subscriptions-transport-ws, deprecated)` : p)).join(', ');
}
