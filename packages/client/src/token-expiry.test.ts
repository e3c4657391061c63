import { describe, expect, it } from 'vitest';
import { renewalDelayMs, tokenExpiresAtMs } from './token-expiry.js';

const base64url = (text: string): string => btoa(String.fromCharCode(...new TextEncoder().encode(text))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const jwt = (claims: unknown): string => `${base64url('{"alg":"HS256"}')}.${base64url(JSON.stringify(claims))}.c2ln`;

describe('tokenExpiresAtMs', () => {
  it('reads exp (seconds) as ms, UTF-8 claims included', () => {
    expect(tokenExpiresAtMs(jwt({ exp: 1_900_000_000, sub: 'Zoë ✓', pad: '>>>???' }))).toBe(1_900_000_000_000);
  });
  it('is undefined for an opaque token, a JWT without a numeric exp, or a payload that is not JSON', () => {
    expect(tokenExpiresAtMs('opaque-token')).toBeUndefined();
    expect(tokenExpiresAtMs(jwt({ sub: 'x' }))).toBeUndefined();
    expect(tokenExpiresAtMs(jwt({ exp: '1900000000' }))).toBeUndefined();
    expect(tokenExpiresAtMs(`a.${base64url('not json')}.c`)).toBeUndefined();
    expect(tokenExpiresAtMs('a.%%%.c')).toBeUndefined();
  });
});

describe('renewalDelayMs', () => {
  it('renews `before` ms before expiry, or at half the time left when that is shorter', () => {
    expect(renewalDelayMs(100_000, 0, 30_000)).toBe(70_000);
    expect(renewalDelayMs(4_000, 0, 30_000)).toBe(2_000);
    expect(renewalDelayMs(1_000, 2_000, 30_000)).toBe(0);
  });
});
