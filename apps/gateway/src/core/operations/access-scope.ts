import type { Authenticator, Principal } from '../../auth/authenticator.js';
import type { AccessScope } from './operations.js';

/** Distinct scope sets whose AccessScope is shared between connections. */
const MAX_SHARED_SCOPES = 1_000;

/**
 * What a principal may subscribe to, as the operation compiler asks it: the field's scopes, then the
 * tenant binding, and the filters its claims bind (where-bound.ts; their values are in the scope key). Principals with equal scopes share one AccessScope (bounded: past the cap new
 * scopes still work, they are just not shared).
 */
export function createAccessScopes(authenticator: Authenticator): (principal: Principal) => AccessScope {
  const byScope = new Map<string, AccessScope>();
  return (principal) => {
    const known = byScope.get(principal.scopeKey);
    if (known) return known;
    const access: AccessScope = {
      key: principal.scopeKey,
      ...(principal.keyedClaims === undefined ? {} : { claims: principal.keyedClaims }),
      authorize(route, args) {
        const missing = authenticator.authorizeField(principal, route);
        if (missing !== undefined) return { ok: false, message: missing };
        const bound = authenticator.bindTenant(principal, route, args);
        if (!bound.ok) return { ok: false, message: bound.message };
        return principal.bound === undefined ? { ok: true, args: bound.args } : { ok: true, args: bound.args, bound: principal.bound };
      },
    };
    if (byScope.size < MAX_SHARED_SCOPES) byScope.set(principal.scopeKey, access);
    return access;
  };
}
