import { describe, expect, it } from 'vitest';
import { loadConfig } from '@wirestream/config';
import { gatewayConfigSpec } from './config.js';
import { GATEWAY_DEFAULTS } from './defaults.js';

const base = { GATEWAY_AUTH_MODE: 'anonymous' };

describe('gateway settings of the client protocols', () => {
  it('defaults: ids up to 128 characters, the legacy protocol served with a ka every 10 s', () => {
    const config = loadConfig(gatewayConfigSpec, base);
    expect(config.maxSubscriptionIdLength).toBe(128);
    expect(config.legacyProtocol).toBe(true);
    expect(config.legacyKeepAliveMs).toBe(10_000);
    expect(GATEWAY_DEFAULTS.maxSubscriptionIdLength).toBe(128);
  });

  it('reads them and names each out-of-range one', () => {
    const config = loadConfig(gatewayConfigSpec, { ...base, GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH: '64', GATEWAY_LEGACY_PROTOCOL: 'false', GATEWAY_LEGACY_KEEPALIVE_MS: '5000' });
    expect(config).toMatchObject({ maxSubscriptionIdLength: 64, legacyProtocol: false, legacyKeepAliveMs: 5_000 });
    expect(() => loadConfig(gatewayConfigSpec, { ...base, GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH: '0', GATEWAY_LEGACY_KEEPALIVE_MS: '10' })).toThrow(
      /GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH[\s\S]*GATEWAY_LEGACY_KEEPALIVE_MS|GATEWAY_LEGACY_KEEPALIVE_MS[\s\S]*GATEWAY_MAX_SUBSCRIPTION_ID_LENGTH/,
    );
  });
});

describe('gateway settings of the look-up sources', () => {
  it('reads both HTTP/JSON forms, headers and TLS files per source, and names a malformed one', () => {
    const config = loadConfig(gatewayConfigSpec, {
      ...base,
      GATEWAY_LOOKUP_HTTP_SOURCES: 'a=http://h/p?ids={keys}#items, b=POST https://h/batch#data.items {"ids":{keys}}',
      GATEWAY_LOOKUP_HEADERS: 'a:Authorization=Bearer x,b:X-Partner={claims.partner_id}',
      GATEWAY_LOOKUP_TLS_CA_FILES: 'b=/etc/ca.pem',
      GATEWAY_LOOKUP_TLS_SERVERNAMES: 'b=svc.internal',
    });
    expect(config.lookupHttpSources).toEqual(['a=http://h/p?ids={keys}#items', 'b=POST https://h/batch#data.items {"ids":{keys}}']);
    expect(config.lookupHeaders).toEqual(['a:Authorization=Bearer x', 'b:X-Partner={claims.partner_id}']);
    expect(config.lookupTlsCaFiles).toEqual(['b=/etc/ca.pem']);
    expect(() => loadConfig(gatewayConfigSpec, { ...base, GATEWAY_LOOKUP_HTTP_SOURCES: 'a=PUT http://h/x' })).toThrow(/GATEWAY_LOOKUP_HTTP_SOURCES/);
    expect(() => loadConfig(gatewayConfigSpec, { ...base, GATEWAY_LOOKUP_TLS_SERVERNAMES: 'b' })).toThrow(/GATEWAY_LOOKUP_TLS_SERVERNAMES/);
  });
});

describe('the V8 heap growth setting (decision 0044)', () => {
  it('defaults to 300 %, takes 0 (V8 decides) and names an out-of-range value', () => {
    expect(loadConfig(gatewayConfigSpec, base).heapGrowingPercent).toBe(300);
    expect(loadConfig(gatewayConfigSpec, { ...base, GATEWAY_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadConfig(gatewayConfigSpec, { ...base, GATEWAY_HEAP_GROWING_PERCENT: '-5' })).toThrow(/GATEWAY_HEAP_GROWING_PERCENT/);
    expect(() => loadConfig(gatewayConfigSpec, { ...base, GATEWAY_HEAP_GROWING_PERCENT: '2000' })).toThrow(/GATEWAY_HEAP_GROWING_PERCENT/);
  });
});
