import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, base64url, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, type AuthResult, type Authenticator, type AuthenticatorOptions, type Principal } from './authenticator.js';

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';
const nowSec = (): number => Math.floor(Date.now() / 1000);

const listing = { fieldName: 'listingUpdated', topic: 'listing-events', filterArgs: ['listing_id', 'seller_id'] } as const;
const bids = { fieldName: 'bidPlaced', topic: 'bid-events', filterArgs: ['listing_id', 'bidder_id'] } as const;

interface Keys {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}
let es: Keys;
let es2: Keys;
let rs: Keys;
let workDir: string;

beforeAll(async () => {
  [es, es2, rs] = await Promise.all([generateKeyPair('ES256'), generateKeyPair('ES256'), generateKeyPair('RS256')]);
  workDir = mkdtempSync(join(tmpdir(), 'wirestream-auth-'));
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** A token with sensible defaults (`exp` in an hour); `claims` override or, when undefined, remove them. */
async function sign(
  key: CryptoKey | Uint8Array,
  claims: Record<string, unknown> = {},
  header: { alg: string; kid?: string } = { alg: key instanceof Uint8Array ? 'HS256' : 'ES256' },
): Promise<string> {
  const payload: JWTPayload = { sub: 'user-1', exp: nowSec() + 3_600, scope: 'subscribe:listingUpdated', ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload).setProtectedHeader(header).sign(key);
}

const hs = (claims?: Record<string, unknown>) => sign(new TextEncoder().encode(SECRET), claims);

function principalOf(result: AuthResult): Principal {
  if (!result.ok) throw new Error(`expected ok, got ${result.reason}`);
  return result.principal;
}
function reasonOf(result: AuthResult): string {
  if (result.ok) throw new Error('expected a refusal');
  expect(result.code).toBe(4403);
  expect(result.reason.length).toBeLessThanOrEqual(100);
  return result.reason;
}

describe('createAuthenticator — jwt', () => {
  const hsAuth = (options: Partial<Extract<AuthenticatorOptions, { mode: 'jwt' }>> = {}): Authenticator =>
    createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, ...options });

  it('accepts a valid HS256 token from {token} or {authorization: "Bearer …"}', async () => {
    const auth = hsAuth();
    const token = await hs({ scope: 'subscribe:listingUpdated topic:bid-events' });
    for (const payload of [{ token }, { authorization: `Bearer ${token}` }, { Authorization: `bearer  ${token}` }]) {
      const principal = principalOf(await auth.authenticate(payload));
      expect([...principal.scopes]).toEqual(['subscribe:listingUpdated', 'topic:bid-events']);
      expect(principal.tenant).toBeUndefined();
      expect(principal.expiresAtMs).toBeGreaterThan(Date.now());
      expect(principal.expiresAtMs! % 1000).toBe(0);
    }
  });

  it('verifies ES256 and RS256 tokens against PEM public keys, trying every key (rotation)', async () => {
    const pem = [await exportSPKI(es.publicKey), await exportSPKI(es2.publicKey), await exportSPKI(rs.publicKey)].join('\n');
    const auth = createAuthenticator({ mode: 'jwt', publicKeysPem: pem });
    expect(principalOf(await auth.authenticate({ token: await sign(es.privateKey) })).expiresAtMs).toBeGreaterThan(Date.now());
    expect(principalOf(await auth.authenticate({ token: await sign(es2.privateKey) })).expiresAtMs).toBeGreaterThan(Date.now());
    expect(principalOf(await auth.authenticate({ token: await sign(rs.privateKey, {}, { alg: 'RS256' }) })).expiresAtMs).toBeGreaterThan(Date.now());
    // Trying keys does not hide the real problem of a genuinely signed token…
    expect(reasonOf(await auth.authenticate({ token: await sign(es2.privateKey, { exp: nowSec() - 60 }) }))).toBe('Forbidden: token expired');
    // …and a key nobody configured still fails on its signature.
    const stranger = await generateKeyPair('ES256');
    expect(reasonOf(await auth.authenticate({ token: await sign(stranger.privateKey) }))).toBe('Forbidden: bad signature');
  });

  it('verifies against a JWKS file, by kid', async () => {
    const path = join(workDir, 'jwks.json');
    const encKey = { ...(await exportJWK(es2.publicKey)), kid: 'enc', use: 'enc' }; // skipped: not for signatures
    writeFileSync(path, JSON.stringify({ keys: [{ ...(await exportJWK(es.publicKey)), kid: 'k1' }, encKey] }));
    const auth = createAuthenticator({ mode: 'jwt', jwksFile: path });
    expect(principalOf(await auth.authenticate({ token: await sign(es.privateKey, {}, { alg: 'ES256', kid: 'k1' }) })).expiresAtMs).toBeGreaterThan(Date.now());
    expect(reasonOf(await auth.authenticate({ token: await sign(es2.privateKey, {}, { alg: 'ES256', kid: 'k2' }) }))).toBe(
      'Forbidden: no known key matches the token (kid/alg)',
    );
  });

  describe('with a JWKS URL', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(es.publicKey)), kid: 'k1', alg: 'ES256' }] });
      server = createServer((req, res) => {
        if (req.url === '/jwks.json') res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
        else res.writeHead(500).end('down');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('fetches the keys and verifies', async () => {
      const auth = createAuthenticator({ mode: 'jwt', jwksUrl: `${url}/jwks.json` });
      expect(principalOf(await auth.authenticate({ token: await sign(es.privateKey, {}, { alg: 'ES256', kid: 'k1' }) })).expiresAtMs).toBeGreaterThan(Date.now());
    });

    it('reports an unreachable key set as retriable, not as the client’s fault', async () => {
      const auth = createAuthenticator({ mode: 'jwt', jwksUrl: `${url}/broken` });
      const result = await auth.authenticate({ token: await sign(es.privateKey, {}, { alg: 'ES256', kid: 'k1' }) });
      expect(reasonOf(result)).toBe('Forbidden: signing keys unavailable: reconnect later');
      expect(result).toMatchObject({ retriable: true });
    });
  });

  it('refuses an expired token, but allows the clock tolerance', async () => {
    const auth = hsAuth({ clockToleranceSec: 5 });
    const expired = await auth.authenticate({ token: await hs({ exp: nowSec() - 60 }) });
    expect(reasonOf(expired)).toBe('Forbidden: token expired');
    expect(expired).toMatchObject({ retriable: false });
    expect((await auth.authenticate({ token: await hs({ exp: nowSec() - 2 }) })).ok).toBe(true);
  });

  it('refuses a token whose nbf is in the future', async () => {
    expect(reasonOf(await hsAuth().authenticate({ token: await hs({ nbf: nowSec() + 60 }) }))).toBe(
      'Forbidden: token not valid yet (nbf is in the future)',
    );
  });

  it('refuses a token without exp (it would hold a socket forever)', async () => {
    expect(reasonOf(await hsAuth().authenticate({ token: await hs({ exp: undefined }) }))).toBe('Forbidden: token has no exp claim');
  });

  it('refuses a forged signature', async () => {
    const pem = await exportSPKI(es.publicKey);
    const auth = createAuthenticator({ mode: 'jwt', publicKeysPem: pem });
    expect(reasonOf(await auth.authenticate({ token: await sign(es2.privateKey) }))).toBe('Forbidden: bad signature');
    // A valid token whose payload was edited (scopes widened) keeps its old signature.
    const [head, , signature] = (await hs()).split('.');
    const widened = base64url.encode(JSON.stringify({ sub: 'user-1', exp: nowSec() + 60, scope: 'subscribe:*' }));
    expect(reasonOf(await hsAuth().authenticate({ token: `${head}.${widened}.${signature}` }))).toBe('Forbidden: bad signature');
  });

  it('checks audience and issuer', async () => {
    const auth = hsAuth({ audience: ['wirestream', 'wirestream-eu'], issuer: 'https://id.example.com/' });
    const claims = { aud: 'wirestream', iss: 'https://id.example.com/' };
    expect((await auth.authenticate({ token: await hs(claims) })).ok).toBe(true);
    expect(reasonOf(await auth.authenticate({ token: await hs({ ...claims, aud: 'billing' }) }))).toBe('Forbidden: wrong audience (aud)');
    expect(reasonOf(await auth.authenticate({ token: await hs({ ...claims, aud: undefined }) }))).toBe('Forbidden: wrong audience (aud)');
    expect(reasonOf(await auth.authenticate({ token: await hs({ ...claims, iss: 'https://evil.example/' }) }))).toBe(
      'Forbidden: wrong issuer (iss)',
    );
  });

  it('refuses alg "none" and algorithms the configured keys are not for', async () => {
    const unsigned = `${base64url.encode('{"alg":"none","typ":"JWT"}')}.${base64url.encode(JSON.stringify({ sub: 'x', exp: nowSec() + 60, scope: 'subscribe:*' }))}.`;
    expect(reasonOf(await hsAuth().authenticate({ token: unsigned }))).toBe('Forbidden: algorithm not allowed: use HS256');

    // The classic confusion: an HS256 token "signed" with the server's public key as the secret.
    const pem = await exportSPKI(es.publicKey);
    const esAuth = createAuthenticator({ mode: 'jwt', publicKeysPem: pem });
    const confused = await sign(new TextEncoder().encode(pem));
    expect(reasonOf(await esAuth.authenticate({ token: confused }))).toBe('Forbidden: algorithm not allowed: use RS256, ES256');
    const hs512 = await sign(new TextEncoder().encode(SECRET), {}, { alg: 'HS512' });
    expect(reasonOf(await hsAuth().authenticate({ token: hs512 }))).toBe('Forbidden: algorithm not allowed: use HS256');
  });

  it('says what is wrong with a missing or malformed token', async () => {
    const auth = hsAuth();
    for (const payload of [undefined, null, {}, { token: '' }, 'x', { authorization: '' }]) {
      expect(reasonOf(await auth.authenticate(payload))).toBe('Forbidden: missing token: send {"token":"<JWT>"} in the connection_init payload');
    }
    expect(reasonOf(await auth.authenticate({ authorization: 'Basic dXNlcjpwYXNz' }))).toBe(
      'Forbidden: malformed authorization: expected "Bearer <JWT>"',
    );
    expect(reasonOf(await auth.authenticate({ token: 42 }))).toBe('Forbidden: malformed token field: expected a string');
    expect(reasonOf(await auth.authenticate({ token: 'not-a-jwt' }))).toBe('Forbidden: malformed token: expected a signed JWT');
    expect(reasonOf(await auth.authenticate({ token: 'x'.repeat(100_000) }))).toBe('Forbidden: token too large: over 8192 bytes');
  });

  it('denies anonymous connections unless allowed; a bad token is never downgraded to anonymous', async () => {
    expect((await hsAuth().authenticate({})).ok).toBe(false);
    const auth = hsAuth({ allowAnonymous: true, anonymousScopes: ['subscribe:listingUpdated'] });
    const anonymous = principalOf(await auth.authenticate({}));
    expect([...anonymous.scopes]).toEqual(['subscribe:listingUpdated']);
    expect(anonymous.expiresAtMs).toBeUndefined();
    expect(auth.authorizeField(anonymous, listing)).toBeUndefined();
    expect(auth.authorizeField(anonymous, bids)).toMatch(/^Missing scope "subscribe:bidPlaced"/);
    expect(reasonOf(await auth.authenticate({ token: await hs({ exp: nowSec() - 60 }) }))).toBe('Forbidden: token expired');
  });

  it('parses scopes from a space-separated string or an array, from the configured claim', async () => {
    const auth = hsAuth();
    expect([...principalOf(await auth.authenticate({ token: await hs({ scope: '  b   a\tc ' }) })).scopes]).toEqual(['a', 'b', 'c']);
    expect(principalOf(await auth.authenticate({ token: await hs({ scope: undefined }) })).scopes.size).toBe(0);
    expect(reasonOf(await auth.authenticate({ token: await hs({ scope: 42 }) }))).toBe(
      'Forbidden: malformed scope claim: expected a space-separated string or string array',
    );
    const scp = hsAuth({ scopesClaim: 'scp' });
    expect([...principalOf(await scp.authenticate({ token: await hs({ scp: ['topic:bid-events', 'subscribe:x'] }) })).scopes]).toEqual([
      'subscribe:x',
      'topic:bid-events',
    ]);
    expect((await scp.authenticate({ token: await hs({ scp: ['ok', 3] }) })).ok).toBe(false);
  });

  it('gives equal scopes and tenant one stable scopeKey (and one shared Set)', async () => {
    const auth = hsAuth({ tenantClaim: 'tenant' });
    const a = principalOf(await auth.authenticate({ token: await hs({ sub: 'a', scope: 'y x x', tenant: 'acme' }) }));
    const b = principalOf(await auth.authenticate({ token: await hs({ sub: 'b', scope: ['x', 'y'], tenant: 'acme' }) }));
    expect(a.scopeKey).toBe('[["x","y"],"acme"]');
    expect(b.scopeKey).toBe(a.scopeKey);
    expect(b.scopes).toBe(a.scopes);
    const other = principalOf(await auth.authenticate({ token: await hs({ scope: 'x y', tenant: 'globex' }) }));
    const noTenant = principalOf(await auth.authenticate({ token: await hs({ scope: 'x y' }) }));
    const fewer = principalOf(await auth.authenticate({ token: await hs({ scope: 'x', tenant: 'acme' }) }));
    expect(new Set([a.scopeKey, other.scopeKey, noTenant.scopeKey, fewer.scopeKey]).size).toBe(4);
    expect(noTenant.scopeKey).toBe('[["x","y"]]');
  });

  it('reads the tenant claim (string or number) and refuses a malformed one', async () => {
    const auth = hsAuth({ tenantClaim: 'seller' });
    expect(principalOf(await auth.authenticate({ token: await hs({ seller: 'sel-9' }) })).tenant).toBe('sel-9');
    expect(principalOf(await auth.authenticate({ token: await hs({ seller: 42 }) })).tenant).toBe('42');
    expect(reasonOf(await auth.authenticate({ token: await hs({ seller: { id: 1 } }) }))).toBe('Forbidden: malformed seller claim: expected a string');
  });
});

describe('authorizeField', () => {
  const auth = createAuthenticator({ mode: 'jwt', hs256Secret: SECRET });
  const withScopes = async (scope: string) => principalOf(await auth.authenticate({ token: await hs({ scope }) }));

  it('grants a field by subscribe:<field>, topic:<topic> or subscribe:*', async () => {
    expect(auth.authorizeField(await withScopes('subscribe:listingUpdated'), listing)).toBeUndefined();
    expect(auth.authorizeField(await withScopes('topic:listing-events'), listing)).toBeUndefined();
    expect(auth.authorizeField(await withScopes('subscribe:*'), bids)).toBeUndefined();
  });

  it('names the missing scope', async () => {
    expect(auth.authorizeField(await withScopes('subscribe:listingUpdated topic:other'), bids)).toBe(
      'Missing scope "subscribe:bidPlaced" to subscribe to bidPlaced (or "topic:bid-events", or "subscribe:*"): ask for a token that grants it.',
    );
  });
});

describe('bindTenant', () => {
  const auth = createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, tenantClaim: 'tenant', tenantArgs: ['seller_id'] });
  const tenantPrincipal = async (tenant?: string) => principalOf(await auth.authenticate({ token: await hs({ tenant }) }));

  it('forces an absent tenant argument to the caller’s tenant, without touching the input', async () => {
    const args = { listing_id: 'lst-1' };
    const bound = auth.bindTenant(await tenantPrincipal('sel-7'), listing, args);
    expect(bound).toEqual({ ok: true, args: { listing_id: 'lst-1', seller_id: 'sel-7' } });
    expect(args).toEqual({ listing_id: 'lst-1' });
    expect(auth.bindTenant(await tenantPrincipal('sel-7'), listing, { seller_id: null })).toEqual({ ok: true, args: { seller_id: 'sel-7' } });
  });

  it('accepts the caller’s own tenant and returns the same arguments object', async () => {
    const args = { seller_id: 'sel-7' };
    const bound = auth.bindTenant(await tenantPrincipal('sel-7'), listing, args);
    expect(bound.ok && bound.args).toBe(args);
  });

  it('refuses another tenant, and a principal without one', async () => {
    expect(auth.bindTenant(await tenantPrincipal('sel-7'), listing, { seller_id: 'sel-8' })).toEqual({
      ok: false,
      message: 'Argument seller_id of listingUpdated must be your tenant "sel-7" (claim tenant); got "sel-8". Omit it to get your own.',
    });
    expect(auth.bindTenant(await tenantPrincipal(), listing, {})).toEqual({
      ok: false,
      message: 'Field listingUpdated is limited to your tenant (argument seller_id), but your token has no "tenant" claim: connect with a tenant token.',
    });
  });

  it('leaves fields without a tenant argument alone', async () => {
    const args = { listing_id: 'x' };
    const bound = auth.bindTenant(await tenantPrincipal(), bids, args);
    expect(bound.ok && bound.args).toBe(args);
  });
});

describe('createAuthenticator — anonymous', () => {
  it('accepts every connection and every field', async () => {
    const auth = createAuthenticator({ mode: 'anonymous' });
    const principal = principalOf(await auth.authenticate({ token: 'whatever' }));
    expect(principal).toMatchObject({ scopeKey: '[["subscribe:*"]]' });
    expect(auth.authorizeField(principal, bids)).toBeUndefined();
    const args = { seller_id: 'any' };
    expect(auth.bindTenant(principal, listing, args)).toEqual({ ok: true, args });
  });
});

describe('createAuthenticator — options fail fast', () => {
  const jwt = (options: Record<string, unknown>) => () => createAuthenticator({ mode: 'jwt', ...options });

  it('explains each rule', async () => {
    const pem = await exportSPKI(es.publicKey);
    expect(() => createAuthenticator({ mode: 'oauth' } as unknown as AuthenticatorOptions)).toThrow(
      `auth mode must be 'anonymous' or 'jwt', got "oauth"`,
    );
    expect(() => createAuthenticator({ mode: 'anonymous', hs256Secret: SECRET } as unknown as AuthenticatorOptions)).toThrow(
      "auth mode 'anonymous' takes no other options, got hs256Secret",
    );
    // Each names the GATEWAY_JWT_* setting an operator changes, then the option it feeds.
    expect(jwt({})).toThrow(
      "auth mode 'jwt' needs a key to verify tokens: set GATEWAY_JWT_HS256_SECRET (hs256Secret), GATEWAY_JWT_PUBLIC_KEYS_FILE (publicKeysPem), " +
        'GATEWAY_JWT_JWKS_FILE (jwksFile) or GATEWAY_JWT_JWKS_URL (jwksUrl)',
    );
    expect(jwt({ publicKeysPem: pem, jwksUrl: 'https://id.example.com/jwks' })).toThrow(
      'auth: public keys must come from one source, got GATEWAY_JWT_PUBLIC_KEYS_FILE (publicKeysPem) and GATEWAY_JWT_JWKS_URL (jwksUrl)',
    );
    expect(jwt({ hs256Secret: 'short' })).toThrow('auth: GATEWAY_JWT_HS256_SECRET (hs256Secret) is 5 bytes; HS256 needs at least 32');
    expect(jwt({ hs256Secret: SECRET, clockToleranceSec: -1 })).toThrow(/GATEWAY_JWT_CLOCK_TOLERANCE_SEC \(clockToleranceSec\) must be between 0 and 300/);
    expect(jwt({ hs256Secret: SECRET, allowAnonymous: true })).toThrow(/GATEWAY_JWT_ALLOW_ANONYMOUS \(allowAnonymous\) needs GATEWAY_JWT_ANONYMOUS_SCOPES \(anonymousScopes\)/);
    expect(jwt({ hs256Secret: SECRET, anonymousScopes: ['a'] })).toThrow(/GATEWAY_JWT_ANONYMOUS_SCOPES \(anonymousScopes\) is set but GATEWAY_JWT_ALLOW_ANONYMOUS \(allowAnonymous\) is false/);
    expect(jwt({ hs256Secret: SECRET, tenantArgs: ['seller_id'] })).toThrow(/GATEWAY_JWT_TENANT_ARGS \(tenantArgs\) = seller_id .* GATEWAY_JWT_TENANT_CLAIM \(tenantClaim\) is not set/);
    expect(jwt({ jwksUrl: 'http://id.example.com/jwks' })).toThrow(/GATEWAY_JWT_JWKS_URL \(jwksUrl\) must use https/);
    expect(jwt({ jwksUrl: 'not a url' })).toThrow('auth: GATEWAY_JWT_JWKS_URL (jwksUrl) is not a URL: "not a url"');
  });

  it('refuses private keys and keys for other algorithms', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const { exportPKCS8 } = await import('jose');
    expect(jwt({ publicKeysPem: await exportPKCS8(privateKey) })).toThrow(/contains a PRIVATE KEY: give the gateway only public keys/);
    expect(jwt({ publicKeysPem: 'hello' })).toThrow(/holds no PEM block/);
    const p384 = await generateKeyPair('ES384');
    expect(jwt({ publicKeysPem: await exportSPKI(p384.publicKey) })).toThrow(/is EC P-384; only RSA \(RS256\) and EC P-256 \(ES256\)/);
    const path = join(workDir, 'private.json');
    writeFileSync(path, JSON.stringify({ keys: [await exportJWK(privateKey)] }));
    expect(jwt({ jwksFile: path })).toThrow(/is a private key/);
    expect(jwt({ jwksFile: join(workDir, 'missing.json') })).toThrow(/^auth: GATEWAY_JWT_JWKS_FILE \(jwksFile\) .*missing.json could not be read as JSON/);
  });
});

describe('filter rules bound to claims (GATEWAY_JWT_FILTER_RULES)', () => {
  const auth = (filterRules: readonly string[]) => createAuthenticator({ mode: 'jwt', hs256Secret: SECRET, filterRules });

  it('refuses a malformed rule at start, naming the setting', () => {
    expect(() => auth(['seller.seller_id'])).toThrow(/^GATEWAY_JWT_FILTER_RULES: "seller.seller_id" has no =/);
  });

  it('keeps each rule with the token’s values (a missing claim as missing; nested and namespaced claims), in the scope key', async () => {
    const a = auth(['seller.seller_id=partner_id', 'region=org.region', 'tier=https://example.com/tier']);
    const p7 = principalOf(await a.authenticate({ token: await hs({ partner_id: '7', org: { region: ['eu', 'us'] }, 'https://example.com/tier': 2 }) }));
    expect(p7.bound?.map((b) => b.values)).toEqual([['7'], ['eu', 'us'], [2]]);
    const p7number = principalOf(await a.authenticate({ token: await hs({ partner_id: 7, org: { region: ['us', 'eu'] }, 'https://example.com/tier': '2', other: 'x' }) }));
    // 7 and "7" (and the array's order) filter alike, so the two principals share; another partner does not.
    expect(p7number.scopeKey).toBe(p7.scopeKey);
    const p3 = principalOf(await a.authenticate({ token: await hs({ partner_id: '3' }) }));
    expect(p3.scopeKey).not.toBe(p7.scopeKey);
    expect(p3.bound?.map((b) => b.values)).toEqual([['3'], undefined, undefined]);
  });

  it('refuses a token whose bound claim is an object', async () => {
    expect(reasonOf(await auth(['seller.seller_id=partner_id']).authenticate({ token: await hs({ partner_id: { id: 7 } }) }))).toBe(
      'Forbidden: malformed partner_id claim: expected a string, number, boolean or an array of them',
    );
  });
});
