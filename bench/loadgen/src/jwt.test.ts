import { describe, expect, it } from 'vitest';
import { createLoadgen } from './loadgen.js';
import { signHs256 } from './jwt.js';
import { parseMix } from './operations.js';

describe('signHs256', () => {
  it('writes the RFC 7519 compact form: the well-known jwt.io example token, byte for byte', () => {
    const token = signHs256({ sub: '1234567890', name: 'John Doe', iat: 1516239022 }, 'your-256-bit-secret');
    expect(token).toBe(
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    );
  });

  it('loadgen refuses a short secret and jwt over SSE before forking a worker', () => {
    const base = { url: 'ws://127.0.0.1:4000/graphql', sockets: 2, plan: { mix: parseMix('shared:100'), filterKeys: [] }, maxEvents: 1, clockOffsetUs: 0 };
    expect(() => createLoadgen({ ...base, jwt: { hs256Secret: 'short', claims: {} } })).toThrow(/at least 32 bytes/);
    expect(() => createLoadgen({ ...base, protocol: 'sse', jwt: { hs256Secret: 'x'.repeat(32), claims: {} } })).toThrow(/SSE/);
  });
});
