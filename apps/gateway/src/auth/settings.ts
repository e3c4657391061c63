import { gatewayConfigSpec as spec } from '../config.js';

// The environment variable that feeds each authenticator option (config.ts, wired in main.ts): a
// refusal at start names what an operator sets, then the option for callers of createAuthenticator.
const VARIABLE_OF = {
  hs256Secret: spec.jwtHs256Secret.name,
  publicKeysPem: spec.jwtPublicKeysFile.name,
  jwksFile: spec.jwtJwksFile.name,
  jwksUrl: spec.jwtJwksUrl.name,
  allowAnonymous: spec.jwtAllowAnonymous.name,
  anonymousScopes: spec.jwtAnonymousScopes.name,
  scopesClaim: spec.jwtScopesClaim.name,
  tenantClaim: spec.jwtTenantClaim.name,
  tenantArgs: spec.jwtTenantArgs.name,
  filterRules: spec.jwtFilterRules.name,
  clockToleranceSec: spec.jwtClockToleranceSec.name,
  maxTokenBytes: spec.jwtMaxTokenBytes.name,
} as const;

/** An authenticator option that a gateway setting feeds. */
export type AuthOptionWithSetting = keyof typeof VARIABLE_OF;

/** `GATEWAY_JWT_HS256_SECRET (hs256Secret)`: the setting, then the option it feeds. */
export function settingName(option: AuthOptionWithSetting): string {
  return `${VARIABLE_OF[option]} (${option})`;
}
