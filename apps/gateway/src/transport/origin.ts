/**
 * Checks the `Origin` header of a WebSocket upgrade against an allowlist.
 *
 * Why: browsers send cookies and other ambient credentials with a WebSocket upgrade from any
 * page, and WebSockets are not covered by CORS, so without this check any web page could open a
 * socket on a visitor's behalf (cross-site WebSocket hijacking). Browsers always send `Origin`
 * and pages cannot forge it.
 *
 * Entries (scheme and host are case-insensitive; default ports may be written or left out):
 * - an exact origin: `https://app.example.com`, `http://localhost:5173`;
 * - a subdomain wildcard: `https://*.example.com` matches `https://a.example.com` and
 *   `https://a.b.example.com`, not `https://example.com` (list it too if wanted);
 * - `*`: any origin (development only).
 * An entry without a scheme is refused at creation: `*.example.com` would otherwise silently
 * admit plain-http pages, which anyone on the network path can impersonate.
 *
 * A missing or empty `Origin` (non-browser clients: servers, CLIs, mobile apps) is allowed: the
 * header is a browser protection, and such clients authenticate with their token. An empty
 * allowlist therefore admits non-browser clients only. `Origin: null` (sandboxed frames,
 * `file:` pages) matches nothing but `*`.
 *
 * @returns a function taking the header value (uWS gives `''` when absent) and returning whether
 * the upgrade may proceed.
 */
export function createOriginCheck(allowlist: readonly string[]): (origin: string | undefined) => boolean {
  const exact = new Set<string>();
  const wildcards: RegExp[] = [];
  let any = false;
  for (const entry of allowlist) {
    // A trailing slash is the most common way to write an origin wrongly; it means nothing here.
    const trimmed = entry.trim().toLowerCase().replace(/\/$/, '');
    if (trimmed === '*') {
      any = true;
      continue;
    }
    const match = ENTRY.exec(trimmed);
    if (!match) {
      throw new TypeError(
        `origin allowlist entry ${JSON.stringify(entry)} is not an origin: write scheme://host[:port] with no path, e.g. "https://app.example.com" or "https://*.example.com"`,
      );
    }
    const scheme = match[1] ?? '';
    const wildcard = match[2] !== undefined;
    const host = match[3] ?? '';
    // `*.com` would admit every .com site; a wildcard must sit under a registered domain.
    if (wildcard && (host.startsWith('[') || !host.includes('.'))) {
      throw new TypeError(
        `origin allowlist entry ${JSON.stringify(entry)}: a wildcard needs a domain of two or more labels after "*." (e.g. "https://*.example.com")`,
      );
    }
    const port = normalizePort(scheme, match[4]);
    if (wildcard) {
      // One or more DNS labels before the suffix; nothing else can sit in a host.
      wildcards.push(new RegExp(`^${scheme}://${LABELS}\\.${escapeRegExp(host)}${port === '' ? '' : `:${port}`}$`));
    } else {
      exact.add(`${scheme}://${host}${port === '' ? '' : `:${port}`}`);
    }
  }

  return function isAllowedOrigin(origin: string | undefined): boolean {
    if (origin === undefined || origin === '') return true;
    if (any) return true;
    const normalized = normalizeOrigin(origin);
    if (normalized === undefined) return false;
    if (exact.has(normalized)) return true;
    for (const pattern of wildcards) if (pattern.test(normalized)) return true;
    return false;
  };
}

/** scheme, optional `*.`, host (DNS name, IPv4 or [IPv6]), optional port; no path, query or credentials. */
const ENTRY = /^(https?):\/\/(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;
/** What a browser sends: the same shape without the wildcard. */
const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;
const LABELS = '[a-z0-9-]+(?:\\.[a-z0-9-]+)*';

/** Lower-cased, default port removed; undefined when it is not an origin at all (`null`, a URL with a path…). */
function normalizeOrigin(origin: string): string | undefined {
  const lower = origin.toLowerCase();
  const match = ORIGIN.exec(lower);
  if (!match) return undefined;
  const scheme = match[1] ?? '';
  const port = normalizePort(scheme, match[3]);
  // Only rebuild when a default port has to go: the common case returns the lower-cased text.
  return match[3] !== undefined && port === '' ? `${scheme}://${match[2] ?? ''}` : lower;
}

function normalizePort(scheme: string, port: string | undefined): string {
  if (port === undefined) return '';
  if ((scheme === 'https' && port === '443') || (scheme === 'http' && port === '80')) return '';
  return port;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
