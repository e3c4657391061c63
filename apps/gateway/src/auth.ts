import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';

/** No authentication: every connection is accepted and may subscribe to every field. */
export interface AnonymousAuthOptions {
  readonly mode: 'anonymous';
}

/**
 * A JWT in the `connection_init` payload (`{ "token": "<JWT>" }` or
 * `{ "authorization": "Bearer <JWT>" }`), verified with jose.
 *
 * Keys: `hs256Secret` (HS256) and/or exactly one source of public keys (`publicKeysPem`,
 * `jwksFile` or `jwksUrl`; RS256 and ES256). Only the algorithms of the configured keys are
 * accepted, so `none`, an HS256 token signed with a public key as secret, or any other
 * algorithm is refused before a key is even looked up.
 *
 * Claims: `exp` is required (a socket is closed when its token expires, so a token without
 * `exp` would hold a socket forever); `nbf`, `aud` and `iss` are checked when configured or
 * present. Set `audience` whenever the issuer also signs tokens for other services: without it,
 * their tokens are accepted here too.
 */
export interface JwtAuthOptions {
  readonly mode: 'jwt';
  /** Shared secret for HS256; at least 32 bytes of UTF-8 (RFC 7518 §3.2: key ≥ hash size). */
  readonly hs256Secret?: string;
  /**
   * One or more PEM blocks (`PUBLIC KEY`, `RSA PUBLIC KEY` or `CERTIFICATE`): RSA ≥ 2048 bits
   * (RS256) or EC P-256 (ES256). Several blocks allow key rotation; `kid` is not needed.
   */
  readonly publicKeysPem?: string;
  /** Path of a JWKS file (`{"keys":[…]}`) with public RSA / EC P-256 keys, read once at start-up. */
  readonly jwksFile?: string;
  /** The issuer's JWKS URL (https; http only for localhost), fetched when a `kid` is new and cached by jose. */
  readonly jwksUrl?: string;
  /** Expected `aud`: the token must name (one of) these. */
  readonly audience?: string | readonly string[];
  /** Expected `iss`: the token must come from (one of) these. */
  readonly issuer?: string | readonly string[];
  /** Clock skew allowed on `exp` and `nbf` between the issuer and this host. @default 5 (seconds) */
  readonly clockToleranceSec?: number;
  /** Accept connections that send no token at all (a bad token is still refused). @default false */
  readonly allowAnonymous?: boolean;
  /** Scopes of anonymous connections; required with `allowAnonymous` (e.g. `['subscribe:listingUpdated']`). */
  readonly anonymousScopes?: readonly string[];
  /** Claim holding the scopes: a space-separated string (OAuth `scope`) or an array of strings (`scp`). @default 'scope' */
  readonly scopesClaim?: string;
  /** Claim holding the tenant (e.g. the partner's seller id); enables {@link Authenticator.bindTenant}. */
  readonly tenantClaim?: string;
  /**
   * Field arguments bound to the tenant claim: on any subscription field that has one of these
   * arguments, the argument is forced to the caller's tenant (or must equal it). Requires `tenantClaim`.
   * @default []
   */
  readonly tenantArgs?: readonly string[];
  /** Longest accepted token; longer ones are refused before decoding. @default 8_192 (8 KiB) */
  readonly maxTokenBytes?: number;
}

export type AuthenticatorOptions = AnonymousAuthOptions | JwtAuthOptions;

/** Who is on the other end of a connection, decided once at `connection_init`. */
export interface Principal {
  /** The token's `sub`; `''` when it has none; `'anonymous'` without a token. */
  readonly subject: string;
  readonly anonymous: boolean;
  readonly scopes: ReadonlySet<string>;
  /** The tenant claim's value, when `tenantClaim` is configured and the token carries it. */
  readonly tenant?: string;
  /**
   * When the token expires (its `exp`, in ms since the epoch, without the clock tolerance):
   * close the socket then. Absent for anonymous connections. Note that `setTimeout` caps at
   * ~24.8 days.
   */
  readonly expiresAtMs?: number;
  /**
   * What the fan-out dedup key must include so that one principal's permissions never decide
   * another's results: the sorted scopes and the tenant, as canonical JSON. Equal for principals
   * whose scopes and tenant are equal (order and duplicates in the token do not matter).
   * Subscription results do not depend on the subject, so it is deliberately left out (more
   * sharing); include it if a resolver ever reads it.
   */
  readonly scopeKey: string;
}

export type AuthResult =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      /** graphql-ws `CloseCode.Forbidden`: close the socket with it. */
      readonly code: 4403;
      /** What is wrong, ≤ 100 characters, safe to send as the close reason. */
      readonly reason: string;
      /** True only when the server side failed (the key set could not be fetched): reconnecting may help. */
      readonly retriable: boolean;
    };

/** The subscription field a principal wants, as the schema routes it (`SubscriptionRoute` fits). */
export interface FieldRoute {
  readonly fieldName: string;
  readonly topic: string;
}

export type TenantBinding =
  | { readonly ok: true; readonly args: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly message: string };

export interface Authenticator {
  readonly mode: 'anonymous' | 'jwt';
  /**
   * Verifies the `connection_init` payload. Never throws: every problem is an `{ ok: false }`
   * whose `reason` says what is wrong (missing token, expired, wrong audience, bad signature…).
   */
  authenticate(connectionInitPayload: unknown): Promise<AuthResult>;
  /**
   * Scope rule, one convention for every field: subscribing to field `F` of topic `T` needs any
   * one of `subscribe:F`, `topic:T` or `subscribe:*`. Pass `acceptedScopes` to use other names
   * for a field. Returns `undefined` when allowed, else a GraphQL error message naming the
   * missing scope. Anonymous mode grants `subscribe:*`.
   */
  authorizeField(principal: Principal, route: FieldRoute, acceptedScopes?: readonly string[]): string | undefined;
  /**
   * Tenant binding: for each of the route's arguments listed in `tenantArgs`, an absent (or null)
   * argument is set to the principal's tenant, and a present one must equal it. Returns the
   * arguments to use (the same object when nothing changed) or an error message. A principal
   * without a tenant may not use a tenant-bound field. Without `tenantClaim`, always `{ ok: true, args }`.
   */
  bindTenant(
    principal: Principal,
    route: { readonly fieldName: string; readonly filterArgs: readonly string[] },
    args: Readonly<Record<string, unknown>>,
  ): TenantBinding;
}

/** Scope sets kept shared between principals with equal scopes: thousands of sockets, a few distinct sets. */
const MAX_INTERNED_SCOPE_SETS = 1_000;
const ALL_FIELDS_SCOPE = 'subscribe:*';
/** Reasons are sent as WebSocket close reasons (≤ 123 bytes); we keep them ≤ 100 characters. */
const MAX_REASON_LENGTH = 100;

/**
 * Builds the authenticator. Reads key files and checks every option now, failing fast with a
 * message that states the rule when options contradict each other (e.g. mode 'jwt' with no key).
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const mode = (options as { mode?: unknown }).mode;
  if (mode === 'anonymous') return createAnonymousAuthenticator(options as AnonymousAuthOptions);
  if (mode === 'jwt') return createJwtAuthenticator(options as JwtAuthOptions);
  throw new TypeError(`auth mode must be 'anonymous' or 'jwt', got ${JSON.stringify(mode)}`);
}

function createAnonymousAuthenticator(options: AnonymousAuthOptions): Authenticator {
  const stray = Object.keys(options).filter((key) => key !== 'mode');
  if (stray.length > 0) {
    throw new TypeError(
      `auth mode 'anonymous' takes no other options, got ${stray.join(', ')}: use mode 'jwt' to verify tokens, or remove them`,
    );
  }
  const scopes = createScopeInterner();
  const principal = scopes.principal({ subject: 'anonymous', anonymous: true }, [ALL_FIELDS_SCOPE], undefined);
  const result: AuthResult = Object.freeze({ ok: true, principal });
  return {
    mode: 'anonymous',
    authenticate: () => Promise.resolve(result),
    authorizeField,
    bindTenant: (_principal, _route, args) => ({ ok: true, args }),
  };
}

function createJwtAuthenticator(options: JwtAuthOptions): Authenticator {
  const {
    hs256Secret,
    publicKeysPem,
    jwksFile,
    jwksUrl,
    audience,
    issuer,
    clockToleranceSec = 5, // seconds
    allowAnonymous = false,
    anonymousScopes,
    scopesClaim = 'scope',
    tenantClaim,
    tenantArgs = [],
    maxTokenBytes = 8_192, // 8 KiB
  } = options;

  // ---- options: every rule checked here, once ----
  const publicSources = (
    [
      ['publicKeysPem', publicKeysPem],
      ['jwksFile', jwksFile],
      ['jwksUrl', jwksUrl],
    ] as const
  ).filter(([, value]) => value !== undefined);
  if (hs256Secret === undefined && publicSources.length === 0) {
    throw new TypeError("auth mode 'jwt' needs a key to verify tokens: set hs256Secret, publicKeysPem, jwksFile or jwksUrl");
  }
  if (publicSources.length > 1) {
    throw new TypeError(
      `auth: public keys must come from one source, got ${publicSources.map(([name]) => name).join(' and ')}: keep one (a JWKS can hold several keys)`,
    );
  }
  if (hs256Secret !== undefined && Buffer.byteLength(hs256Secret) < 32) {
    throw new RangeError(
      `auth: hs256Secret is ${Buffer.byteLength(hs256Secret)} bytes; HS256 needs at least 32 (RFC 7518 §3.2): use a longer random secret`,
    );
  }
  if (!Number.isFinite(clockToleranceSec) || clockToleranceSec < 0 || clockToleranceSec > 300) {
    throw new RangeError(`auth: clockToleranceSec must be between 0 and 300 seconds, got ${String(clockToleranceSec)}`);
  }
  if (allowAnonymous && (anonymousScopes === undefined || anonymousScopes.length === 0)) {
    throw new TypeError(
      "auth: allowAnonymous needs anonymousScopes, the fields anonymous clients may use (e.g. ['subscribe:listingUpdated']); without them they could subscribe to nothing",
    );
  }
  if (!allowAnonymous && anonymousScopes !== undefined) {
    throw new TypeError('auth: anonymousScopes is set but allowAnonymous is false: set allowAnonymous: true, or remove anonymousScopes');
  }
  if (scopesClaim.trim() === '') throw new TypeError('auth: scopesClaim must name a claim, got an empty string');
  if (tenantClaim !== undefined && tenantClaim.trim() === '') throw new TypeError('auth: tenantClaim must name a claim, got an empty string');
  if (tenantArgs.length > 0 && tenantClaim === undefined) {
    throw new TypeError(`auth: tenantArgs (${tenantArgs.join(', ')}) are bound to the tenant claim, but tenantClaim is not set: set it`);
  }
  if (!Number.isInteger(maxTokenBytes) || maxTokenBytes < 256) {
    throw new RangeError(`auth: maxTokenBytes must be an integer ≥ 256, got ${String(maxTokenBytes)}`);
  }

  // ---- keys ----
  const secret = hs256Secret === undefined ? undefined : new TextEncoder().encode(hs256Secret);
  let publicKeys: JWTVerifyGetKey | undefined;
  if (publicKeysPem !== undefined) publicKeys = createLocalJWKSet({ keys: jwksFromPem(publicKeysPem) });
  else if (jwksFile !== undefined) publicKeys = createLocalJWKSet({ keys: jwksFromFile(jwksFile) });
  else if (jwksUrl !== undefined) publicKeys = createRemoteJWKSet(checkedJwksUrl(jwksUrl));

  const algorithms = [...(secret ? ['HS256'] : []), ...(publicKeys ? ['RS256', 'ES256'] : [])];
  // jose checks `alg` against `algorithms` before asking for a key, so each branch only sees its own algorithms.
  let key: JWTVerifyGetKey | Uint8Array;
  if (secret && publicKeys) key = (header, token) => (header.alg === 'HS256' ? secret : publicKeys(header, token));
  else if (secret) key = secret;
  else if (publicKeys) key = publicKeys;
  else throw new Error('unreachable: a key source was checked above');
  const verifyOptions: JWTVerifyOptions = {
    algorithms,
    clockTolerance: clockToleranceSec,
    requiredClaims: ['exp'],
    ...(audience === undefined ? {} : { audience: typeof audience === 'string' ? audience : [...audience] }),
    ...(issuer === undefined ? {} : { issuer: typeof issuer === 'string' ? issuer : [...issuer] }),
  };

  const scopes = createScopeInterner();
  const anonymousResult: AuthResult | undefined = allowAnonymous
    ? Object.freeze({ ok: true, principal: scopes.principal({ subject: 'anonymous', anonymous: true }, anonymousScopes ?? [], undefined) })
    : undefined;
  const boundArgs = new Set(tenantArgs);
  const allowedAlgs = algorithms.join(', ');

  async function authenticate(payload: unknown): Promise<AuthResult> {
    const token = tokenFrom(payload);
    if (token === undefined) {
      return anonymousResult ?? refuse('missing token: send {"token":"<JWT>"} in the connection_init payload');
    }
    if (token === BAD_TOKEN_FIELD) return refuse('malformed token field: expected a string');
    if (token === BAD_AUTHORIZATION) return refuse('malformed authorization: expected "Bearer <JWT>"');
    // JWTs are ASCII, so length is bytes; refused before any base64 or JSON decoding.
    if (token.length > maxTokenBytes) return refuse(`token too large: over ${maxTokenBytes} bytes`);
    let claims: JWTPayload;
    try {
      claims = await verify(token);
    } catch (err) {
      return refuseVerification(err);
    }
    const scopeList = scopesFrom(claims[scopesClaim]);
    if (scopeList === undefined) return refuse(`malformed ${scopesClaim} claim: expected a space-separated string or string array`);
    let tenant: string | undefined;
    if (tenantClaim !== undefined) {
      const value = claims[tenantClaim];
      if (typeof value === 'string' && value !== '') tenant = value;
      else if (typeof value === 'number' && Number.isFinite(value)) tenant = String(value);
      else if (value !== undefined) return refuse(`malformed ${tenantClaim} claim: expected a string`);
    }
    const identity: { subject: string; anonymous: boolean; expiresAtMs?: number } = {
      subject: typeof claims.sub === 'string' ? claims.sub : '',
      anonymous: false,
    };
    if (typeof claims.exp === 'number') identity.expiresAtMs = claims.exp * 1000;
    return { ok: true, principal: scopes.principal(identity, scopeList, tenant) };
  }

  async function verify(token: string): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, key, verifyOptions)).payload;
    } catch (err) {
      // Keys without `kid` (PEM blocks, rotation): jose hands back every key that fits the
      // algorithm and leaves trying them to the caller. Only a bad signature moves on to the next
      // key; any other failure (expired, audience…) is the token's, whichever key signed it.
      if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
      let last: unknown = new errors.JWSSignatureVerificationFailed();
      for await (const candidate of err) {
        try {
          return (await jwtVerify(token, candidate, verifyOptions)).payload;
        } catch (candidateErr) {
          if (!(candidateErr instanceof errors.JWSSignatureVerificationFailed)) throw candidateErr;
          last = candidateErr;
        }
      }
      throw last;
    }
  }

  function refuseVerification(err: unknown): AuthResult {
    if (err instanceof errors.JWTExpired) return refuse('token expired');
    if (err instanceof errors.JWTClaimValidationFailed) {
      switch (err.claim) {
        case 'nbf':
          return refuse('token not valid yet (nbf is in the future)');
        case 'aud':
          return refuse('wrong audience (aud)');
        case 'iss':
          return refuse('wrong issuer (iss)');
        default:
          return refuse(err.reason === 'missing' ? `token has no ${err.claim} claim` : `invalid ${err.claim} claim`);
      }
    }
    if (err instanceof errors.JWSSignatureVerificationFailed) return refuse('bad signature');
    if (err instanceof errors.JOSEAlgNotAllowed) return refuse(`algorithm not allowed: use ${allowedAlgs}`);
    if (err instanceof errors.JWKSNoMatchingKey) return refuse('no known key matches the token (kid/alg)');
    if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return refuse('malformed token: expected a signed JWT');
    if (err instanceof errors.JWKSTimeout) return refuse('signing keys unavailable: reconnect later', true);
    // Anything else while a remote key set is configured is its fetch failing (network, non-200).
    if (jwksUrl !== undefined && (!(err instanceof errors.JOSEError) || err.code === 'ERR_JOSE_GENERIC')) {
      return refuse('signing keys unavailable: reconnect later', true);
    }
    return refuse('token rejected');
  }

  function bindTenant(
    principal: Principal,
    route: { readonly fieldName: string; readonly filterArgs: readonly string[] },
    args: Readonly<Record<string, unknown>>,
  ): TenantBinding {
    if (boundArgs.size === 0) return { ok: true, args };
    let bound: Record<string, unknown> | undefined;
    for (const name of route.filterArgs) {
      if (!boundArgs.has(name)) continue;
      const { tenant } = principal;
      if (tenant === undefined) {
        return {
          ok: false,
          message: `Field ${route.fieldName} is limited to your tenant (argument ${name}), but your token has no "${tenantClaim}" claim: connect with a tenant token.`,
        };
      }
      const value = args[name];
      if (value === undefined || value === null) {
        bound ??= { ...args };
        bound[name] = tenant;
      } else if ((typeof value !== 'string' && typeof value !== 'number') || String(value) !== tenant) {
        return {
          ok: false,
          message: `Argument ${name} of ${route.fieldName} must be your tenant "${tenant}" (claim ${tenantClaim}); got ${preview(value)}. Omit it to get your own.`,
        };
      }
    }
    return { ok: true, args: bound ?? args };
  }

  return { mode: 'jwt', authenticate, authorizeField, bindTenant };
}

function authorizeField(principal: Principal, route: FieldRoute, acceptedScopes?: readonly string[]): string | undefined {
  const { scopes } = principal;
  if (acceptedScopes !== undefined) {
    for (const scope of acceptedScopes) if (scopes.has(scope)) return undefined;
    return `Missing scope to subscribe to ${route.fieldName}: your token needs one of ${acceptedScopes.map((s) => `"${s}"`).join(', ')}.`;
  }
  const fieldScope = `subscribe:${route.fieldName}`;
  if (scopes.has(ALL_FIELDS_SCOPE) || scopes.has(fieldScope) || scopes.has(`topic:${route.topic}`)) return undefined;
  return `Missing scope "${fieldScope}" to subscribe to ${route.fieldName} (or "topic:${route.topic}", or "subscribe:*"): ask for a token that grants it.`;
}

/**
 * Builds principals whose scope sets and keys are shared when equal: a gateway holds thousands of
 * sockets with a handful of distinct scope sets, and per-connection state is the memory floor.
 */
function createScopeInterner() {
  const interned = new Map<string, ReadonlySet<string>>();
  return {
    principal(
      identity: { readonly subject: string; readonly anonymous: boolean; readonly expiresAtMs?: number },
      scopeList: readonly string[],
      tenant: string | undefined,
    ): Principal {
      const sorted = [...new Set(scopeList)].sort();
      const scopeKey = JSON.stringify(tenant === undefined ? [sorted] : [sorted, tenant]);
      let scopes = interned.get(scopeKey);
      if (!scopes) {
        scopes = new Set(sorted);
        if (interned.size < MAX_INTERNED_SCOPE_SETS) interned.set(scopeKey, scopes);
      }
      const principal: Principal = {
        subject: identity.subject,
        anonymous: identity.anonymous,
        scopes,
        scopeKey,
        ...(tenant === undefined ? {} : { tenant }),
        ...(identity.expiresAtMs === undefined ? {} : { expiresAtMs: identity.expiresAtMs }),
      };
      return Object.freeze(principal);
    },
  };
}

// Sentinels (never valid JWTs: they contain NUL) so the token lookup allocates nothing.
const BAD_TOKEN_FIELD = '\u0000token';
const BAD_AUTHORIZATION = '\u0000authorization';
const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * The token from `{ token }` or `{ authorization: "Bearer …" }` (also `Authorization`, as many
 * clients capitalize it like the HTTP header). Undefined when there is none.
 */
function tokenFrom(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const record = payload as Record<string, unknown>;
  const token = record['token'];
  if (typeof token === 'string' && token !== '') return token;
  if (token !== undefined && token !== null && token !== '') return BAD_TOKEN_FIELD;
  const header = record['authorization'] ?? record['Authorization'];
  if (header === undefined || header === null || header === '') return undefined;
  if (typeof header !== 'string') return BAD_AUTHORIZATION;
  return BEARER.exec(header)?.[1] ?? BAD_AUTHORIZATION;
}

/** A space-separated string or an array of strings; a missing claim means no scopes. Undefined when malformed. */
function scopesFrom(claim: unknown): readonly string[] | undefined {
  if (claim === undefined || claim === null) return [];
  if (typeof claim === 'string') return claim.split(/\s+/).filter((s) => s !== '');
  if (Array.isArray(claim) && claim.every((s): s is string => typeof s === 'string' && s !== '' && !/\s/.test(s))) {
    return claim;
  }
  return undefined;
}

function refuse(what: string, retriable = false): AuthResult {
  const reason = `Forbidden: ${what}`;
  return {
    ok: false,
    code: 4403,
    reason: reason.length <= MAX_REASON_LENGTH ? reason : `${reason.slice(0, MAX_REASON_LENGTH - 1)}…`,
    retriable,
  };
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 64 ? text : `${text.slice(0, 63)}…`;
}

// ---- public key sources ----

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

function jwksFromPem(pem: string): JWK[] {
  const keys: JWK[] = [];
  for (const match of pem.matchAll(PEM_BLOCK)) {
    const label = match[1] ?? '';
    if (label.includes('PRIVATE')) {
      throw new TypeError(`auth: publicKeysPem contains a ${label}: give the gateway only public keys (openssl pkey -pubout)`);
    }
    let keyObject: KeyObject;
    try {
      keyObject = createPublicKey(match[0]);
    } catch (err) {
      throw new TypeError(`auth: publicKeysPem block ${keys.length + 1} (${label}) is not a public key: ${(err as Error).message}`);
    }
    keys.push(signingJwk(keyObject.export({ format: 'jwk' }) as JWK, `publicKeysPem block ${keys.length + 1}`));
  }
  if (keys.length === 0) {
    throw new TypeError('auth: publicKeysPem holds no PEM block: expected "-----BEGIN PUBLIC KEY-----" … "-----END PUBLIC KEY-----"');
  }
  return keys;
}

function jwksFromFile(path: string): JWK[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new TypeError(`auth: jwksFile ${path} could not be read as JSON: ${(err as Error).message}`);
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new TypeError(`auth: jwksFile ${path} must be a JWKS: {"keys":[…]}`);
  const keys: JWK[] = [];
  list.forEach((entry: unknown, i) => {
    const jwk = entry as JWK;
    const where = `jwksFile ${path} key ${i}${typeof jwk?.kid === 'string' ? ` (kid ${jwk.kid})` : ''}`;
    if (typeof jwk !== 'object' || jwk === null) throw new TypeError(`auth: ${where} is not a JWK object`);
    // Encryption keys and other key types may share a published set; they are not ours to use.
    if (jwk.use === 'enc' || (jwk.kty !== 'RSA' && jwk.kty !== 'EC')) return;
    keys.push(signingJwk(jwk, where));
  });
  if (keys.length === 0) throw new TypeError(`auth: jwksFile ${path} has no RSA or EC P-256 signing key`);
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

function checkedJwksUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`auth: jwksUrl is not a URL: ${JSON.stringify(text)}`);
  }
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
    throw new TypeError(`auth: jwksUrl must use https (keys fetched in clear text can be swapped), got ${url.protocol}//${url.host}`);
  }
  return url;
}
