/**
 * A source's request headers: static ones (e.g. `Authorization: Bearer …` for a subgraph) and ones
 * templated from the caller's token claims (`X-Partner: {claims.partner_id}`). A caller's rendered
 * headers come with a `key` — the claim-derived values, in a fixed order — that partitions both the
 * loader's batches and its cache (entity-loader.ts): a request and a cached answer never mix callers
 * whose header values differ. Static headers are the same for everyone and are not in the key.
 */
import { LookupError } from './types.js';

/** The headers one caller's look-ups are sent with, and what partitions its batches and cache entries. */
export interface LookupCaller {
  /** Empty when no header depends on the caller (every caller shares batches and the cache). */
  readonly key: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface RequestHeaders {
  /** The headers that depend on no caller: the source sends them with every request (its `headers` option). */
  readonly fixed: Readonly<Record<string, string>>;
  /** The claims the templates read (the gateway keeps their values per connection and in the dedup key). */
  readonly claims: readonly string[];
  /** The caller's headers from its claims (the templated ones only), or why they cannot be built (a missing claim: the look-up fails). */
  caller(claims: Readonly<Record<string, unknown>> | undefined): LookupCaller | LookupError;
}

/** `{claims.<name>}`: a claim's value (a dotted name that is not a top-level claim is a path into nested ones). */
const CLAIM = /\{claims\.([A-Za-z0-9_:.-]+)\}/g;
/** RFC 9110 `token`. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space, tab and obs-text: no CR/LF, so a claim cannot inject a header. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const NO_CALLER: LookupCaller = Object.freeze({ key: '', headers: Object.freeze({}) });

/** Compiles a source's header templates once; throws (naming the source and header) on a bad name or value. */
export function createRequestHeaders(source: string, headers: Readonly<Record<string, string>>): RequestHeaders {
  const fixed: Record<string, string> = {};
  const templated: [string, string][] = [];
  const claims = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new TypeError(`look-up source "${source}": "${name}" is not a valid header name`);
    if (!HEADER_VALUE.test(value)) throw new TypeError(`look-up source "${source}": header ${name} has a control character in its value`);
    const used = [...value.matchAll(CLAIM)].map((m) => m[1] as string);
    if (used.length === 0) fixed[name.toLowerCase()] = value;
    else templated.push([name.toLowerCase(), value]);
    for (const claim of used) claims.add(claim);
  }
  Object.freeze(fixed);
  if (templated.length === 0) return { fixed, claims: [], caller: () => NO_CALLER };
  return {
    fixed,
    claims: [...claims],
    caller(callerClaims) {
      const rendered: Record<string, string> = {};
      const values: string[] = [];
      for (const [name, template] of templated) {
        let missing: string | undefined;
        const value = template.replace(CLAIM, (_whole, claim: string) => {
          const v = claimValue(callerClaims, claim);
          if (v === undefined) missing ??= claim;
          return v ?? '';
        });
        if (missing !== undefined) return new LookupError(`look-up source "${source}": header ${name} needs the caller's claim "${missing}", which its token lacks`);
        if (!HEADER_VALUE.test(value)) return new LookupError(`look-up source "${source}": header ${name} from the caller's claims has a control character`);
        rendered[name] = value;
        values.push(value);
      }
      return { key: JSON.stringify(values), headers: rendered };
    },
  };
}

/** A claim as header text: a string, number or boolean (top-level name first, then a dotted path); else undefined. */
function claimValue(claims: Readonly<Record<string, unknown>> | undefined, name: string): string | undefined {
  if (claims === undefined) return undefined;
  let value: unknown = claims[name];
  if (value === undefined && name.includes('.')) {
    value = claims;
    for (const step of name.split('.')) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[step] : undefined;
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}
