import { createHmac } from 'node:crypto';

/**
 * A compact HS256 JWT (RFC 7519) of `claims`, signed with node:crypto: what the load client sends
 * a gateway in jwt mode. No library: the header is fixed and signing is one HMAC.
 */
export function signHs256(claims: Readonly<Record<string, unknown>>, secret: string): string {
  const head = base64Url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = base64Url(JSON.stringify(claims));
  const signature = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${signature}`;
}

function base64Url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
