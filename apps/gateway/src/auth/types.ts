/**
 * The authenticator's contract: its options, the principal it decides once per connection, and
 * its answers. Types only, so that the authenticator (authenticator.ts), its JWT mode
 * (jwt-authenticator.ts) and the scope rule (scopes.ts) share them without importing each other.
 */
import type { BoundFilter } from './filter-rules.js';

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
  /** Clock skew allowed on `exp` and `nbf` between the issuer and this host, in seconds. @default GATEWAY_DEFAULTS.jwtClockToleranceSec (5) */
  readonly clockToleranceSec?: number;
  /** Accept connections that send no token at all (a bad token is still refused). @default GATEWAY_DEFAULTS.jwtAllowAnonymous (false) */
  readonly allowAnonymous?: boolean;
  /** Scopes of anonymous connections; required with `allowAnonymous` (e.g. `['subscribe:listingUpdated']`). */
  readonly anonymousScopes?: readonly string[];
  /** Claim holding the scopes: a space-separated string (OAuth `scope`) or an array of strings (`scp`). @default GATEWAY_DEFAULTS.jwtScopesClaim ('scope') */
  readonly scopesClaim?: string;
  /** Claim holding the tenant (e.g. the partner's seller id); enables {@link Authenticator.bindTenant}. */
  readonly tenantClaim?: string;
  /**
   * Field arguments bound to the tenant claim: on any subscription field that has one of these
   * arguments, the argument is forced to the caller's tenant (or must equal it). Requires `tenantClaim`.
   * @default []
   */
  readonly tenantArgs?: readonly string[];
  /**
   * Filters bound to claims (decision 0025), each `[<field>:]<payload path>=<claim>`, e.g.
   * `listing.seller_info.seller_id=partner_id`: on every subscription field whose payload has the
   * path (or only on `<field>`), events must have the claim's value there (one of them, for an array
   * claim), whatever the client's own `where` says. `_key` and `_headers.<header>` are the Kafka key
   * and a copied header. A token without the claim may not subscribe to a field the rule applies to.
   * @default []
   */
  readonly filterRules?: readonly string[];
  /** Longest accepted token; longer ones are refused before decoding. @default GATEWAY_DEFAULTS.jwtMaxTokenBytes (8 KiB) */
  readonly maxTokenBytes?: number;
  /** Keep each token's claims on its principal (a gateway plugin's onSubscribe reads them). @default false */
  readonly keepClaims?: boolean;
  /**
   * Claims whose values the look-up sources' request headers read (GATEWAY_LOOKUP_HEADERS): kept on
   * the principal (`keyedClaims`) and part of its `scopeKey`, so callers with different values never
   * share an operation group, a look-up batch or a cached answer. @default []
   */
  readonly keyClaims?: readonly string[];
}

export type AuthenticatorOptions = AnonymousAuthOptions | JwtAuthOptions;

/** Who is on the other end of a connection, decided once at `connection_init`. */
export interface Principal {
  readonly scopes: ReadonlySet<string>;
  /** The tenant claim's value, when `tenantClaim` is configured and the token carries it. */
  readonly tenant?: string;
  /** The filter rules with this token's claim values (`filterRules`); absent without rules. */
  readonly bound?: readonly BoundFilter[];
  /**
   * When the token expires (its `exp`, in ms since the epoch, without the clock tolerance):
   * close the socket then. Absent for anonymous connections. Note that `setTimeout` caps at
   * ~24.8 days.
   */
  readonly expiresAtMs?: number;
  /**
   * What the fan-out dedup key must include so that one principal's permissions never decide
   * another's results: the sorted scopes, the tenant and the bound filters' claim values, as
   * canonical JSON. Equal for principals whose scopes, tenant and bound values are equal (order and
   * duplicates in the token do not matter).
   * Subscription results do not depend on the subject, so it is deliberately left out (more
   * sharing); include it if a resolver ever reads it.
   */
  readonly scopeKey: string;
  /**
   * The verified token's claims, kept only when something reads them (a plugin's onSubscribe:
   * `keepClaims`); absent otherwise, so a connection holds no more than it needs.
   */
  readonly claims?: Readonly<Record<string, unknown>>;
  /**
   * The values of the `keyClaims` the token has (absent ones left out), which `scopeKey` includes:
   * safe to show to everything shared by the principals of one scope key (operation groups' resolvers).
   */
  readonly keyedClaims?: Readonly<Record<string, string | number | boolean>>;
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
   * one of `subscribe:F`, `topic:T` or `subscribe:*`. Returns `undefined` when allowed, else a
   * GraphQL error message naming the missing scope. Anonymous mode grants `subscribe:*`.
   */
  authorizeField(principal: Principal, route: FieldRoute): string | undefined;
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
