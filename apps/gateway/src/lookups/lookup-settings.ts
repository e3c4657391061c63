/**
 * The look-up settings that are more than a URL, read once at start with one-line errors naming
 * the setting (decision 0042): GATEWAY_LOOKUP_HEADERS compiled per source, and the GATEWAY_LOOKUP_TLS_*
 * files read and loaded per source (a PEM that does not parse, a key that does not match its
 * certificate stop the start here, not at the first look-up).
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { createRequestHeaders, type RequestHeaders, type SourceTls } from '@wirestream/lookups';

export const HEADERS_SETTING = 'GATEWAY_LOOKUP_HEADERS';
export const TLS_CA_SETTING = 'GATEWAY_LOOKUP_TLS_CA_FILES';
export const TLS_CERT_SETTING = 'GATEWAY_LOOKUP_TLS_CERT_FILES';
export const TLS_KEY_SETTING = 'GATEWAY_LOOKUP_TLS_KEY_FILES';
export const TLS_SERVERNAME_SETTING = 'GATEWAY_LOOKUP_TLS_SERVERNAMES';
/** For errors about a source's TLS options as a whole. */
export const TLS_SETTINGS = 'GATEWAY_LOOKUP_TLS_*';

/**
 * GATEWAY_LOOKUP_HEADERS entries, `<source>:<Header-Name>=<value>`, as headers per source, each
 * compiled (createRequestHeaders: a bad name or value throws naming the setting).
 */
export function parseLookupHeaders(entries: readonly string[]): Map<string, RequestHeaders> {
  const bySource = new Map<string, Record<string, string>>();
  for (const entry of entries) {
    const match = /^([A-Za-z0-9_-]+):([^=\s]+)=(.*)$/s.exec(entry);
    if (match === null) throw new Error(`${HEADERS_SETTING}: expected <source>:<Header-Name>=<value>, got "${entry.split('=')[0]}=…"`);
    const [, source, name, value] = match as unknown as [string, string, string, string];
    bySource.set(source, { ...bySource.get(source), [name]: value.trim() });
  }
  const compiled = new Map<string, RequestHeaders>();
  for (const [source, headers] of bySource) {
    try {
      compiled.set(source, createRequestHeaders(source, headers));
    } catch (err) {
      throw new Error(`${HEADERS_SETTING}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return compiled;
}

/** The GATEWAY_LOOKUP_TLS_* settings, each `name=value` entries (a file path, or a servername). */
export interface LookupTlsSettings {
  readonly caFiles?: readonly string[] | undefined;
  readonly certFiles?: readonly string[] | undefined;
  readonly keyFiles?: readonly string[] | undefined;
  readonly servernames?: readonly string[] | undefined;
}

/** Reads and loads every source's TLS files: the options per source, or a one-line error naming the setting. */
export function readLookupTls(settings: LookupTlsSettings): Map<string, SourceTls> {
  const ca = byName(TLS_CA_SETTING, settings.caFiles);
  const cert = byName(TLS_CERT_SETTING, settings.certFiles);
  const key = byName(TLS_KEY_SETTING, settings.keyFiles);
  const servername = byName(TLS_SERVERNAME_SETTING, settings.servernames);
  const sources = new Set([...ca.keys(), ...cert.keys(), ...key.keys(), ...servername.keys()]);
  const tls = new Map<string, SourceTls>();
  for (const source of sources) {
    const caPath = ca.get(source);
    const certPath = cert.get(source);
    const keyPath = key.get(source);
    if ((certPath === undefined) !== (keyPath === undefined)) {
      const [has, lacks] = certPath === undefined ? [TLS_KEY_SETTING, TLS_CERT_SETTING] : [TLS_CERT_SETTING, TLS_KEY_SETTING];
      throw new Error(`${lacks}: source "${source}" has ${has} but no ${lacks === TLS_CERT_SETTING ? 'certificate' : 'key'}: mTLS needs both`);
    }
    const options: { ca?: string; cert?: string; key?: string; servername?: string } = {};
    if (caPath !== undefined) {
      options.ca = readPem(TLS_CA_SETTING, source, caPath, CERTIFICATE);
      load(TLS_CA_SETTING, source, { ca: options.ca });
    }
    if (certPath !== undefined && keyPath !== undefined) {
      options.cert = readPem(TLS_CERT_SETTING, source, certPath, CERTIFICATE);
      options.key = readPem(TLS_KEY_SETTING, source, keyPath, PRIVATE_KEY);
      load(`${TLS_CERT_SETTING}/${TLS_KEY_SETTING}`, source, { cert: options.cert, key: options.key });
    }
    const name = servername.get(source);
    if (name !== undefined) options.servername = name;
    tls.set(source, Object.freeze(options));
  }
  return tls;
}

function byName(setting: string, entries: readonly string[] | undefined): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of entries ?? []) {
    const eq = entry.indexOf('=');
    const name = entry.slice(0, eq);
    if (eq < 1 || eq === entry.length - 1 || !/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`${setting}: expected <source>=<value>, got "${entry}"`);
    if (map.has(name)) throw new Error(`${setting}: source "${name}" is named twice`);
    map.set(name, entry.slice(eq + 1));
  }
  return map;
}

/** PEM block labels: Node ignores a CA file without certificates, so it is checked here. */
const CERTIFICATE = { label: /-----BEGIN CERTIFICATE-----/, what: 'PEM certificate (-----BEGIN CERTIFICATE-----)' };
const PRIVATE_KEY = { label: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, what: 'unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)' };

function readPem(setting: string, source: string, path: string, expected: { readonly label: RegExp; readonly what: string }): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${setting}: source "${source}": cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!expected.label.test(text)) throw new Error(`${setting}: source "${source}": ${path} holds no ${expected.what}`);
  return text;
}

/** Node loads the PEM now: a file that is not one, or a key that does not match its certificate, is refused here. */
function load(setting: string, source: string, pems: { ca?: string; cert?: string; key?: string }): void {
  try {
    createSecureContext(pems);
  } catch (err) {
    throw new Error(`${setting}: source "${source}": ${err instanceof Error ? err.message : String(err)}`);
  }
}
