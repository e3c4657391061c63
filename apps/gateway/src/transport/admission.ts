import { clientAddress } from './client-address.js';
import { createOriginCheck } from './origin.js';

export interface AdmissionOptions {
  /** Browser origins allowed to open a socket (see createOriginCheck). */
  readonly allowedOrigins: readonly string[];
  /** Open sockets per client address; more are refused at the upgrade with 429. */
  readonly maxConnectionsPerAddress: number;
  /** Proxies in front that append the client's address to `X-Forwarded-For` (0: the socket's peer counts). */
  readonly trustedProxyHops: number;
}

/** What the upgrade handler read from the request (uWS request objects die when the handler returns). */
export interface UpgradeRequest {
  readonly origin: string;
  readonly remoteAddress: string;
  readonly forwardedFor: string;
}

export type AdmissionResult =
  | { readonly ok: true; readonly address: string }
  | { readonly ok: false; readonly status: string; readonly message: string };

/** Who may open a socket: origin allowlist and per-address counts, decided at the upgrade. */
export interface Admission {
  /** Whether the headers of an upgrade are needed at all (`X-Forwarded-For` only behind trusted proxies). */
  readonly readsForwardedFor: boolean;
  admit(request: UpgradeRequest): AdmissionResult;
  /** A socket of `address` opened / closed: keeps the per-address counts. */
  opened(address: string): void;
  closed(address: string): void;
}

export function createAdmission(options: AdmissionOptions): Admission {
  const { allowedOrigins, maxConnectionsPerAddress, trustedProxyHops } = options;
  const originAllowed = createOriginCheck(allowedOrigins);
  /** Open sockets per remote address (only addresses with at least one). */
  const connectionsByAddress = new Map<string, number>();
  return {
    readsForwardedFor: trustedProxyHops > 0,
    admit({ origin, remoteAddress, forwardedFor }) {
      if (!originAllowed(origin === '' ? undefined : origin)) {
        return { ok: false, status: '403 Forbidden', message: `origin ${origin} is not allowed (GATEWAY_ALLOWED_ORIGINS)` };
      }
      const address = clientAddress(remoteAddress, forwardedFor, trustedProxyHops);
      if ((connectionsByAddress.get(address) ?? 0) >= maxConnectionsPerAddress) {
        return { ok: false, status: '429 Too Many Requests', message: `too many connections from ${address}: the limit is ${maxConnectionsPerAddress}` };
      }
      return { ok: true, address };
    },
    opened(address) {
      connectionsByAddress.set(address, (connectionsByAddress.get(address) ?? 0) + 1);
    },
    closed(address) {
      const left = (connectionsByAddress.get(address) ?? 1) - 1;
      if (left > 0) connectionsByAddress.set(address, left);
      else connectionsByAddress.delete(address);
    },
  };
}
