// TLS options per look-up source (decision 0042), against a real node:https service that asks for a
// client certificate, with certificates made by openssl in this test (infra/tls/make-certs.sh, as the
// secured Kafka and Redis tests make theirs): a private CA, mTLS, servername, and refusals.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRepoRoot } from '@wirestream/testkit';
import { createLookupLoaders, readLookupTls, type LookupSettings, type LookupTlsSettings } from '../src/index.js';
import { schemaFor } from './support/gateway.js';
import { startProfileService, type ProfileService } from './support/profile-service.js';
import { withProfileLookup } from './support/subgraph.js';

let dir: string;
let service: ProfileService;
const pem = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lookup-tls-'));
  execFileSync(join(findRepoRoot(), 'infra', 'tls', 'make-certs.sh'), ['--out', dir, '--client-cn', 'gateway-lookups'], { stdio: 'ignore' });
  // The service trusts only the CA for client certificates and refuses a client without one.
  service = await startProfileService({ cert: readFileSync(pem('server.pem')), key: readFileSync(pem('server.key')), ca: readFileSync(pem('ca.pem')), requestCert: true, rejectUnauthorized: true });
});
afterAll(async () => {
  await service?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The loader of source "listings" (an HTTP/JSON source at `base`) built from GATEWAY_LOOKUP_TLS_* values. */
function loaderWith(tls: LookupTlsSettings, base = service.base) {
  const settings: LookupSettings = {
    sources: new Map(),
    httpSources: new Map([['listings', `${base}/profiles?ids={keys}#items`]]),
    tls: readLookupTls(tls),
    timeoutMs: 2_000,
    cacheTtlMs: 60_000,
    cacheMaxEntries: 100,
    maxBatchSize: 10,
    maxConcurrentRequests: 2,
  };
  const loader = createLookupLoaders(schemaFor('lookup-tls', withProfileLookup), settings).get('listings');
  if (loader === undefined) throw new Error('no loader for listings');
  return loader;
}

const rep = (id: string) => ({ __typename: 'ListingProfile', id });

describe('TLS options per look-up source', () => {
  it('looks up over mTLS with a private CA; the service sees the client certificate', async () => {
    const loader = loaderWith({ caFiles: [`listings=${pem('ca.pem')}`], certFiles: [`listings=${pem('client.pem')}`], keyFiles: [`listings=${pem('client.key')}`] });
    expect(await loader.load(rep('lst-1'))).toEqual({ id: 'lst-1', title: 'title of lst-1', views: 5 });
    expect(service.requests.at(-1)?.clientCn).toBe('gateway-lookups');
  });

  it('checks the servername instead of the URL host: a matching one passes, another is refused', async () => {
    const files = { caFiles: [`listings=${pem('ca.pem')}`], certFiles: [`listings=${pem('client.pem')}`], keyFiles: [`listings=${pem('client.key')}`] };
    expect(await loaderWith({ ...files, servernames: ['listings=localhost'] }).load(rep('lst-2'))).toMatchObject({ id: 'lst-2' });
    await expect(loaderWith({ ...files, servernames: ['listings=sellers.example'] }).load(rep('lst-3'))).rejects.toThrow(/^look-up source "listings" is unreachable: .*sellers\.example/);
  });

  it('refuses a server whose certificate the CA did not sign, and is refused without a client certificate', async () => {
    const asked = service.requests.length;
    const untrusted = loaderWith({ caFiles: [`listings=${pem('untrusted-ca.pem')}`], certFiles: [`listings=${pem('client.pem')}`], keyFiles: [`listings=${pem('client.key')}`] });
    await expect(untrusted.load(rep('lst-4'))).rejects.toThrow(/^look-up source "listings" is unreachable: .*certificate/);
    // Node's roots do not know the private CA either.
    await expect(loaderWith({ certFiles: [`listings=${pem('client.pem')}`], keyFiles: [`listings=${pem('client.key')}`] }).load(rep('lst-5'))).rejects.toThrow(/is unreachable: .*certificate/);
    // Trusting the server but without a client certificate: the service ends the handshake.
    await expect(loaderWith({ caFiles: [`listings=${pem('ca.pem')}`] }).load(rep('lst-6'))).rejects.toThrow(/^look-up source "listings" is unreachable/);
    // A client certificate from another CA: refused too.
    await expect(loaderWith({ caFiles: [`listings=${pem('ca.pem')}`], certFiles: [`listings=${pem('untrusted-client.pem')}`], keyFiles: [`listings=${pem('untrusted-client.key')}`] }).load(rep('lst-7'))).rejects.toThrow(/is unreachable/);
    expect(service.requests.length).toBe(asked);
  });

  it('stops the start with a one-line error naming the setting', () => {
    const oneLine = (run: () => unknown): string => {
      try {
        run();
      } catch (err) {
        const message = (err as Error).message;
        expect(message).not.toContain('\n');
        return message;
      }
      throw new Error('expected a refusal');
    };
    expect(oneLine(() => readLookupTls({ caFiles: [`listings=${join(dir, 'missing.pem')}`] }))).toBe(`GATEWAY_LOOKUP_TLS_CA_FILES: source "listings": cannot read ${join(dir, 'missing.pem')}: ENOENT`);
    expect(oneLine(() => readLookupTls({ caFiles: [`listings=${pem('server.key')}`] }))).toBe(`GATEWAY_LOOKUP_TLS_CA_FILES: source "listings": ${pem('server.key')} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    expect(oneLine(() => readLookupTls({ certFiles: [`listings=${pem('client.pem')}`] }))).toBe('GATEWAY_LOOKUP_TLS_KEY_FILES: source "listings" has GATEWAY_LOOKUP_TLS_CERT_FILES but no key: mTLS needs both');
    expect(oneLine(() => readLookupTls({ certFiles: [`listings=${pem('client.pem')}`], keyFiles: [`listings=${pem('untrusted-client.key')}`] }))).toMatch(/^GATEWAY_LOOKUP_TLS_CERT_FILES\/GATEWAY_LOOKUP_TLS_KEY_FILES: source "listings": .*key values mismatch/);
    expect(oneLine(() => readLookupTls({ servernames: ['listings'] }))).toBe('GATEWAY_LOOKUP_TLS_SERVERNAMES: expected <source>=<value>, got "listings"');
    expect(oneLine(() => loaderWith({ caFiles: [`listings=${pem('ca.pem')}`] }, 'http://127.0.0.1:1'))).toBe('GATEWAY_LOOKUP_TLS_*: source "listings" has TLS options but its URL is not https (http://…)');
    expect(oneLine(() => createLookupLoaders(schemaFor('lookup-tls', withProfileLookup), { sources: new Map([['listings', 'https://x/graphql']]), tls: readLookupTls({ servernames: ['sellers=x.example'] }), timeoutMs: 1_000, cacheTtlMs: 1, cacheMaxEntries: 1, maxBatchSize: 1, maxConcurrentRequests: 1 }))).toBe(
      'GATEWAY_LOOKUP_TLS_*: no @lookup of the schema uses source "sellers" (sources: listings)',
    );
  });
});
