import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import { settingName } from './settings.js';

/** Where the JWT authenticator's public keys come from: PEM text, a JWKS file, or the issuer's JWKS URL. */

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/** Public keys from PEM blocks, each pinned to its algorithm. */
export function jwksFromPem(pem: string): JWK[] {
  const keys: JWK[] = [];
  for (const match of pem.matchAll(PEM_BLOCK)) {
    const label = match[1] ?? '';
    if (label.includes('PRIVATE')) {
      throw new TypeError(`auth: ${settingName('publicKeysPem')} contains a ${label}: give the gateway only public keys (openssl pkey -pubout)`);
    }
    let keyObject: KeyObject;
    try {
      keyObject = createPublicKey(match[0]);
    } catch (err) {
      throw new TypeError(`auth: ${settingName('publicKeysPem')} block ${keys.length + 1} (${label}) is not a public key: ${(err as Error).message}`);
    }
    keys.push(signingJwk(keyObject.export({ format: 'jwk' }), `${settingName('publicKeysPem')} block ${keys.length + 1}`));
  }
  if (keys.length === 0) {
    throw new TypeError(`auth: ${settingName('publicKeysPem')} holds no PEM block: expected "-----BEGIN PUBLIC KEY-----" … "-----END PUBLIC KEY-----"`);
  }
  return keys;
}

/** Signing keys of a JWKS file; encryption keys and other key types are skipped. */
export function jwksFromFile(path: string): JWK[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new TypeError(`auth: ${settingName('jwksFile')} ${path} could not be read as JSON: ${(err as Error).message}`);
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new TypeError(`auth: ${settingName('jwksFile')} ${path} must be a JWKS: {"keys":[…]}`);
  const keys: JWK[] = [];
  list.forEach((entry: unknown, i) => {
    const jwk = entry as JWK;
    const where = `${settingName('jwksFile')} ${path} key ${i}${typeof jwk?.kid === 'string' ? ` (kid ${jwk.kid})` : ''}`;
    if (typeof jwk !== 'object' || jwk === null) throw new TypeError(`auth: ${where} is not a JWK object`);
    // Encryption keys and other key types may share a published set; they are not ours to use.
    if (jwk.use === 'enc' || (jwk.kty !== 'RSA' && jwk.kty !== 'EC')) return;
    keys.push(signingJwk(jwk, where));
  });
  if (keys.length === 0) throw new TypeError(`auth: ${settingName('jwksFile')} ${path} has no RSA or EC P-256 signing key`);
  return keys;
}

/** Checks one public JWK and pins its `alg`, so a key can only verify the algorithm it is for. */
function signingJwk(jwk: JWK, where: string): JWK {
  if ('d' in jwk || 'p' in jwk) throw new TypeError(`auth: ${where} is a private key: give the gateway only public keys`);
  if (jwk.kty === 'RSA') {
    const bits = typeof jwk.n === 'string' ? Buffer.from(jwk.n, 'base64url').length * 8 : 0;
    if (bits < 2048) throw new RangeError(`auth: ${where} is a ${bits}-bit RSA key; RS256 needs at least 2048 bits`);
    if (jwk.alg !== undefined && jwk.alg !== 'RS256') throw new TypeError(`auth: ${where} is for ${jwk.alg}; only RS256 and ES256 are accepted`);
    return { ...jwk, alg: 'RS256' };
  }
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    if (jwk.alg !== undefined && jwk.alg !== 'ES256') throw new TypeError(`auth: ${where} is for ${jwk.alg}; only RS256 and ES256 are accepted`);
    return { ...jwk, alg: 'ES256' };
  }
  throw new TypeError(
    `auth: ${where} is ${jwk.kty ?? 'an unknown key type'}${jwk.crv ? ` ${jwk.crv}` : ''}; only RSA (RS256) and EC P-256 (ES256) keys are accepted`,
  );
}

/** The issuer's JWKS URL: https, or http for localhost only. */
export function checkedJwksUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`auth: ${settingName('jwksUrl')} is not a URL: ${JSON.stringify(text)}`);
  }
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
    throw new TypeError(`auth: ${settingName('jwksUrl')} must use https (keys fetched in clear text can be swapped), got ${url.protocol}//${url.host}`);
  }
  return url;
}
