import { describe, expect, it } from 'vitest';
import { clientAddress } from './client-address.js';

describe('clientAddress', () => {
  it('uses the socket peer when no proxy is trusted or the header is absent', () => {
    expect(clientAddress('10.0.0.9', '203.0.113.7', 0)).toBe('10.0.0.9');
    expect(clientAddress('10.0.0.9', '', 1)).toBe('10.0.0.9');
  });

  it('takes the entry our proxy appended, not what the client claims', () => {
    // The client sent "1.1.1.1" itself; the ingress appended the real peer 203.0.113.7.
    expect(clientAddress('10.0.0.9', '1.1.1.1, 203.0.113.7', 1)).toBe('203.0.113.7');
    // Two trusted proxies (CDN, then ingress): the client is second from the right.
    expect(clientAddress('10.0.0.9', '1.1.1.1, 203.0.113.7, 198.51.100.2', 2)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.9', '2001:db8::1', 1)).toBe('2001:db8::1');
  });

  it('falls back to the peer for a garbage or oversized entry', () => {
    expect(clientAddress('10.0.0.9', 'not an address!', 1)).toBe('10.0.0.9');
    expect(clientAddress('10.0.0.9', 'x'.repeat(65), 1)).toBe('10.0.0.9');
    expect(clientAddress('10.0.0.9', ' , ', 1)).toBe('10.0.0.9');
  });
});
