import { describe, expect, it } from 'vitest';
import { createOriginCheck } from './origin.js';

describe('createOriginCheck', () => {
  const allowed = createOriginCheck(['https://app.example.com', 'http://localhost:5173', 'https://*.partners.example.com']);

  it('allows exact origins, case-insensitively and with default ports written or not', () => {
    expect(allowed('https://app.example.com')).toBe(true);
    expect(allowed('HTTPS://App.Example.com')).toBe(true);
    expect(allowed('https://app.example.com:443')).toBe(true);
    expect(allowed('http://localhost:5173')).toBe(true);
  });

  it('refuses other schemes, ports, hosts and look-alikes', () => {
    for (const origin of [
      'http://app.example.com', // downgraded scheme
      'https://app.example.com:8443',
      'http://localhost:5174',
      'https://app.example.com.evil.io',
      'https://evilapp.example.com',
      'https://example.com',
      'null', // sandboxed iframe, file: page
      'https://app.example.com/path',
      'not an origin',
    ]) {
      expect(allowed(origin), origin).toBe(false);
    }
  });

  it('matches subdomain wildcards at any depth, but not the bare domain or a suffix trick', () => {
    expect(allowed('https://acme.partners.example.com')).toBe(true);
    expect(allowed('https://eu.acme.partners.example.com')).toBe(true);
    expect(allowed('https://partners.example.com')).toBe(false);
    expect(allowed('https://evilpartners.example.com')).toBe(false);
    expect(allowed('https://acme.partners.example.com.evil.io')).toBe(false);
    expect(allowed('http://acme.partners.example.com')).toBe(false);
    expect(allowed('https://acme.partners.example.com:8443')).toBe(false);
  });

  it('allows requests without Origin (non-browser clients; uWS reports a missing header as "")', () => {
    expect(allowed(undefined)).toBe(true);
    expect(allowed('')).toBe(true);
    expect(createOriginCheck([])('')).toBe(true);
    expect(createOriginCheck([])('https://app.example.com')).toBe(false);
  });

  it('honours ports in entries, and "*" for any origin', () => {
    const check = createOriginCheck(['https://*.example.com:8443', 'http://10.0.0.5:80/']);
    expect(check('https://a.example.com:8443')).toBe(true);
    expect(check('https://a.example.com')).toBe(false);
    expect(check('http://10.0.0.5')).toBe(true);
    expect(createOriginCheck(['*'])('https://anything.test')).toBe(true);
    expect(createOriginCheck(['*'])('null')).toBe(true);
  });

  it('fails fast on entries that are not origins, saying how to write them', () => {
    expect(() => createOriginCheck(['*.example.com'])).toThrow(
      'origin allowlist entry "*.example.com" is not an origin: write scheme://host[:port] with no path, e.g. "https://app.example.com" or "https://*.example.com"',
    );
    expect(() => createOriginCheck(['https://app.example.com/login'])).toThrow(/is not an origin/);
    expect(() => createOriginCheck(['ftp://files.example.com'])).toThrow(/is not an origin/);
    expect(() => createOriginCheck(['https://*.com'])).toThrow(/a wildcard needs a domain of two or more labels/);
  });
});
