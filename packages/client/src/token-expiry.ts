/**
 * When to renew a token: its `exp` claim, read without verifying (the gateway verifies; the client
 * only needs to know when the gateway will stop accepting it). Browser-safe: `atob`, `TextDecoder`.
 */

/** The token's `exp` in ms since the epoch, or undefined when it is not a JWT with a numeric `exp`. */
export function tokenExpiresAtMs(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const base64 = (parts[1] as string).replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), '='));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof claims !== 'object' || claims === null) return undefined;
    const exp = (claims as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined; // not base64url JSON: an opaque token, renewed only when the gateway refuses it
  }
}

/**
 * Delay until a connection made with a token expiring at `expiresAtMs` should renew it: `beforeMs`
 * before expiry, or half of the time left when that is shorter (a short-lived token is not renewed
 * in a loop). Never negative.
 */
export function renewalDelayMs(expiresAtMs: number, nowMs: number, beforeMs: number): number {
  const left = expiresAtMs - nowMs;
  if (left <= 0) return 0;
  return left - Math.min(beforeMs, left / 2);
}
