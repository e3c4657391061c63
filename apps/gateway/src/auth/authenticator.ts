import { createJwtAuthenticator } from './jwt-authenticator.js';
import { ALL_FIELDS_SCOPE, authorizeField, createScopeInterner } from './scopes.js';
import type { AnonymousAuthOptions, AuthResult, AuthenticatorOptions, Authenticator, JwtAuthOptions } from './types.js';

export type { AnonymousAuthOptions, JwtAuthOptions, AuthenticatorOptions, Principal, AuthResult, FieldRoute, TenantBinding, Authenticator } from './types.js';

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
  const principal = createScopeInterner().principal([ALL_FIELDS_SCOPE], undefined);
  const result: AuthResult = Object.freeze({ ok: true, principal });
  return {
    mode: 'anonymous',
    authenticate: () => Promise.resolve(result),
    authorizeField,
    bindTenant: (_principal, _route, args) => ({ ok: true, args }),
  };
}

