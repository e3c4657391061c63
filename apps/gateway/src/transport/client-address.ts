/**
 * The client's address for per-address limits. Behind an ingress or load balancer every socket
 * comes from the proxy; a proxy that appends the peer it saw to `X-Forwarded-For` lets us count
 * users instead. Only the entries our own proxies appended can be trusted (a client can send any
 * header), so with `trustedHops` proxies in front the client is the `trustedHops`-th entry from
 * the right. Without the header (a direct connection, a health check) the socket's peer counts.
 */
export function clientAddress(remoteAddress: string, forwardedFor: string, trustedHops: number): string {
  if (trustedHops <= 0 || forwardedFor === '') return remoteAddress;
  const entries = forwardedFor.split(',');
  const entry = entries[Math.max(0, entries.length - trustedHops)]?.trim() ?? '';
  // Bounded and plausible (IPv4, IPv6, or a name): anything else falls back to the socket's peer.
  return entry.length > 0 && entry.length <= 64 && /^[0-9A-Za-z.:_[\]-]+$/.test(entry) ? entry : remoteAddress;
}
