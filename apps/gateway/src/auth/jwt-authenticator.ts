import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import { GATEWAY_DEFAULTS } from '../defaults.js';
import type { AuthResult, Authenticator, JwtAuthOptions, Principal, TenantBinding } from './types.js';
import { checkedJwksUrl, jwksFromFile, jwksFromPem } from './key-sources.js';
import { parseFilterRules, type BoundFilter, type ClaimValue, type FilterRule } from './filter-rules.js';
import { settingName } from './settings.js';
import { authorizeField, createScopeInterner } from './scopes.js';

/** Reasons are sent as WebSocket close reasons (≤ 123 bytes); we keep them ≤ 100 characters. */
const MAX_REASON_LENGTH = 100;

/** The JWT options with defaults filled in, after every rule was checked. */
interface JwtSettings {
  readonly options: JwtAuthOptions;
  readonly clockToleranceSec: number;
  readonly allowAnonymous: boolean;
  readonly scopesClaim: string;
  readonly tenantArgs: readonly string[];
  readonly filterRules: readonly FilterRule[];
  readonly maxTokenBytes: number;
}

/** Checks every option rule once, at start-up, with a message that states the rule. */
function resolveJwtSettings(options: JwtAuthOptions): JwtSettings {
  const {
    hs256Secret,
    publicKeysPem,
    jwksFile,
    jwksUrl,
    clockToleranceSec = GATEWAY_DEFAULTS.jwtClockToleranceSec, // seconds
    allowAnonymous = GATEWAY_DEFAULTS.jwtAllowAnonymous,
    anonymousScopes,
    scopesClaim = GATEWAY_DEFAULTS.jwtScopesClaim,
    tenantClaim,
    tenantArgs = [],
    filterRules = [],
    maxTokenBytes = GATEWAY_DEFAULTS.jwtMaxTokenBytes,
  } = options;
  const publicSources = (
    [
      ['publicKeysPem', publicKeysPem],
      ['jwksFile', jwksFile],
      ['jwksUrl', jwksUrl],
    ] as const
  ).filter(([, value]) => value !== undefined);
  if (hs256Secret === undefined && publicSources.length === 0) {
    const keySettings = (['hs256Secret', 'publicKeysPem', 'jwksFile', 'jwksUrl'] as const).map(settingName);
    throw new TypeError(`auth mode 'jwt' needs a key to verify tokens: set ${keySettings.slice(0, -1).join(', ')} or ${keySettings.at(-1)}`);
  }
  if (publicSources.length > 1) {
    throw new TypeError(
      `auth: public keys must come from one source, got ${publicSources.map(([name]) => settingName(name)).join(' and ')}: keep one (a JWKS can hold several keys)`,
    );
  }
  if (hs256Secret !== undefined && Buffer.byteLength(hs256Secret) < 32) {
    throw new RangeError(
      `auth: ${settingName('hs256Secret')} is ${Buffer.byteLength(hs256Secret)} bytes; HS256 needs at least 32 (RFC 7518 §3.2): use a longer random secret`,
    );
  }
  if (!Number.isFinite(clockToleranceSec) || clockToleranceSec < 0 || clockToleranceSec > 300) {
    throw new RangeError(`auth: ${settingName('clockToleranceSec')} must be between 0 and 300 seconds, got ${String(clockToleranceSec)}`);
  }
  if (allowAnonymous && (anonymousScopes === undefined || anonymousScopes.length === 0)) {
    throw new TypeError(
      `auth: ${settingName('allowAnonymous')} needs ${settingName('anonymousScopes')}, the fields anonymous clients may use ` +
        "(e.g. ['subscribe:listingUpdated']); without them they could subscribe to nothing",
    );
  }
  if (!allowAnonymous && anonymousScopes !== undefined) {
    throw new TypeError(
      `auth: ${settingName('anonymousScopes')} is set but ${settingName('allowAnonymous')} is false: set it to true, or remove the scopes`,
    );
  }
  if (scopesClaim.trim() === '') throw new TypeError(`auth: ${settingName('scopesClaim')} must name a claim, got an empty string`);
  if (tenantClaim !== undefined && tenantClaim.trim() === '') throw new TypeError(`auth: ${settingName('tenantClaim')} must name a claim, got an empty string`);
  if (tenantArgs.length > 0 && tenantClaim === undefined) {
    throw new TypeError(
      `auth: ${settingName('tenantArgs')} = ${tenantArgs.join(', ')} are bound to the tenant claim, but ${settingName('tenantClaim')} is not set: set it`,
    );
  }
  if (!Number.isInteger(maxTokenBytes) || maxTokenBytes < 256) {
    throw new RangeError(`auth: ${settingName('maxTokenBytes')} must be an integer ≥ 256, got ${String(maxTokenBytes)}`);
  }
  return { options, clockToleranceSec, allowAnonymous, scopesClaim, tenantArgs, filterRules: parseFilterRules(filterRules), maxTokenBytes };
}

/** Verifies a token's signature and standard claims with the configured keys (jose). */
interface TokenVerifier {
  verify(token: string): Promise<JWTPayload>;
  /** The accepted algorithms, for the error that refuses another. */
  readonly algorithms: string;
}

function createTokenVerifier({ options, clockToleranceSec }: JwtSettings): TokenVerifier {
  const { hs256Secret, publicKeysPem, jwksFile, jwksUrl, audience, issuer } = options;
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
  return { verify, algorithms: algorithms.join(', ') };
}

/**
 * The JWT authenticator: reads key files and checks every option now, failing fast with a message
 * that states the rule when options contradict each other (e.g. mode 'jwt' with no key).
 */
export function createJwtAuthenticator(options: JwtAuthOptions): Authenticator {
  const settings = resolveJwtSettings(options);
  const verifier = createTokenVerifier(settings);
  const { scopesClaim, maxTokenBytes } = settings;
  const { tenantClaim, anonymousScopes, jwksUrl } = options;
  const scopes = createScopeInterner();
  const { filterRules } = settings;
  // Anonymous connections carry no claims: a field a rule applies to is refused to them.
  const anonymousBound = filterRules.map((rule): BoundFilter => ({ rule, values: undefined }));
  const anonymousResult: AuthResult | undefined = settings.allowAnonymous
    ? Object.freeze({ ok: true, principal: scopes.principal(anonymousScopes ?? [], undefined, undefined, anonymousBound) })
    : undefined;
  const boundArgs = new Set(settings.tenantArgs);

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
      claims = await verifier.verify(token);
    } catch (err) {
      return refuseVerification(err, verifier.algorithms, jwksUrl !== undefined);
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
    const bound: BoundFilter[] = [];
    for (const rule of filterRules) {
      const values = claimValues(claims, rule.claim);
      if (values === MALFORMED) return refuse(`malformed ${rule.claim} claim: expected a string, number, boolean or an array of them`);
      bound.push({ rule, values });
    }
    const expiresAtMs = typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
    const principal = withKeyedClaims(scopes.principal(scopeList, tenant, expiresAtMs, bound), claims, options.keyClaims);
    return { ok: true, principal: options.keepClaims === true ? { ...principal, claims: Object.freeze({ ...claims }) } : principal };
  }

  return {
    mode: 'jwt',
    authenticate,
    authorizeField,
    bindTenant: (principal, route, args) => bindTenantArgs(boundArgs, tenantClaim, principal, route, args),
  };
}

/** What the client is told when verification fails; `remoteKeys`: a JWKS URL is configured. */
function refuseVerification(err: unknown, allowedAlgs: string, remoteKeys: boolean): AuthResult {
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
  if (remoteKeys && (!(err instanceof errors.JOSEError) || err.code === 'ERR_JOSE_GENERIC')) {
    return refuse('signing keys unavailable: reconnect later', true);
  }
  return refuse('token rejected');
}

/** {@link Authenticator.bindTenant} for the arguments bound to the tenant claim. */
function bindTenantArgs(
  boundArgs: ReadonlySet<string>,
  tenantClaim: string | undefined,
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
        message: `Field ${route.fieldName} is limited to your tenant (argument ${name}), but your token has no "${String(tenantClaim)}" claim: connect with a tenant token.`,
      };
    }
    const value = args[name];
    if (value === undefined || value === null) {
      bound ??= { ...args };
      bound[name] = tenant;
    } else if ((typeof value !== 'string' && typeof value !== 'number') || String(value) !== tenant) {
      return {
        ok: false,
        message: `Argument ${name} of ${route.fieldName} must be your tenant "${tenant}" (claim ${String(tenantClaim)}); got ${preview(value)}. Omit it to get your own.`,
      };
    }
  }
  return { ok: true, args: bound ?? args };
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

const MALFORMED = Symbol('malformed claim');

/**
 * A bound filter's claim as values: a string, number or boolean, or an array of them; undefined when
 * absent (or null). The claim is looked up by its name as written (`https://example.com/partner`),
 * then, for a dotted name, as a path into nested claims (`org.region`).
 */
function claimValues(claims: JWTPayload, name: string): readonly ClaimValue[] | undefined | typeof MALFORMED {
  let value: unknown = claims[name];
  if (value === undefined && name.includes('.')) {
    value = claims;
    for (const segment of name.split('.')) value = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[segment] : undefined;
  }
  if (value === undefined || value === null) return undefined;
  const isLeaf = (x: unknown): x is ClaimValue => typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
  if (isLeaf(value)) return [value];
  if (Array.isArray(value) && value.every(isLeaf)) return value;
  return MALFORMED;
}

/**
 * The principal with the `keyClaims` values (look-up headers read them, decision 0042) kept and in
 * its scope key: operation groups — their look-up batches and cache entries with them — never mix
 * callers whose values differ. A claim that is absent or not a string, number or boolean is left out.
 */
function withKeyedClaims(principal: Principal, claims: JWTPayload, names: readonly string[] | undefined): Principal {
  if (names === undefined || names.length === 0) return principal;
  const keyed: Record<string, string | number | boolean> = {};
  for (const name of names) {
    const values = claimValues(claims, name);
    if (values !== undefined && values !== MALFORMED && values.length === 1 && !Array.isArray(claimAt(claims, name))) keyed[name] = values[0] as ClaimValue;
  }
  return Object.freeze({ ...principal, scopeKey: JSON.stringify([principal.scopeKey, names.map((n) => keyed[n] ?? null)]), keyedClaims: Object.freeze(keyed) });
}

function claimAt(claims: JWTPayload, name: string): unknown {
  return claims[name] ?? name.split('.').reduce<unknown>((v, step) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[step] : undefined), claims);
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

