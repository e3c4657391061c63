import type { BoundFilter } from './filter-rules.js';
import type { FieldRoute, Principal } from './types.js';

/** Scope sets kept shared between principals with equal scopes: thousands of sockets, a few distinct sets. */
const MAX_INTERNED_SCOPE_SETS = 1_000;
/** Grants every field: what anonymous mode gives. */
export const ALL_FIELDS_SCOPE = 'subscribe:*';

/** The scope rule of {@link Authenticator.authorizeField}, the same in every mode. */
export function authorizeField(principal: Principal, route: FieldRoute): string | undefined {
  const { scopes } = principal;
  const fieldScope = `subscribe:${route.fieldName}`;
  if (scopes.has(ALL_FIELDS_SCOPE) || scopes.has(fieldScope) || scopes.has(`topic:${route.topic}`)) return undefined;
  return `Missing scope "${fieldScope}" to subscribe to ${route.fieldName} (or "topic:${route.topic}", or "subscribe:*"): ask for a token that grants it.`;
}

/**
 * Builds principals whose scope sets and keys are shared when equal: a gateway holds thousands of
 * sockets with a handful of distinct scope sets, and per-connection state is the memory floor.
 */
export function createScopeInterner() {
  const interned = new Map<string, ReadonlySet<string>>();
  return {
    principal(scopeList: readonly string[], tenant: string | undefined, expiresAtMs?: number, bound?: readonly BoundFilter[]): Principal {
      const sorted = [...new Set(scopeList)].sort();
      // Bound values by rule (null for a missing claim), as text, sorted: 7 and "7" filter alike (where-bound.ts
      // coerces both to the field's type), so principals that differ only so share; the AccessScope of the first serves both.
      const values = bound === undefined || bound.length === 0 ? undefined : bound.map(({ values: v }) => (v === undefined ? null : [...new Set(v.map(String))].sort()));
      const scopeKey = JSON.stringify(values !== undefined ? [sorted, tenant ?? null, values] : tenant === undefined ? [sorted] : [sorted, tenant]);
      let scopes = interned.get(scopeKey);
      if (!scopes) {
        scopes = new Set(sorted);
        if (interned.size < MAX_INTERNED_SCOPE_SETS) interned.set(scopeKey, scopes);
      }
      const principal: Principal = {
        scopes,
        scopeKey,
        ...(tenant === undefined ? {} : { tenant }),
        ...(bound === undefined || bound.length === 0 ? {} : { bound }),
        ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
      };
      return Object.freeze(principal);
    },
  };
}

