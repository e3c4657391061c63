import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';

/** One file of the console, prepared once at start: every request is a map lookup and a write. */
interface ConsoleFile {
  readonly body: Buffer;
  /** Gzipped body for clients that accept it; undefined when gzip does not pay (images, tiny files). */
  readonly gzipped: Buffer | undefined;
  readonly contentType: string;
  readonly cacheControl: string;
  /** Strong validator from the content, so a `no-cache` index.html revalidates with a 304. */
  readonly etag: string;
}

/** The built console (apps/console/dist), read into memory by {@link loadConsoleSite}. */
export interface ConsoleSite {
  readonly dir: string;
  /** By path relative to `dir`, `/`-separated: `index.html`, `assets/index-C7DkjDGq.js`. */
  readonly files: ReadonlyMap<string, ConsoleFile>;
  /** Sum of the uncompressed file sizes. */
  readonly bytes: number;
}

export interface ConsoleSiteOptions {
  /** Refuse a directory holding more than this: the console is a few hundred KB, not a file server. @default 16_777_216 (16 MiB) */
  readonly maxBytes?: number;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.graphql': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg)/;
/** Vite writes only content-hashed names under assets/: a changed file is a new URL, so cache forever. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Everything else (index.html, config.json, schema.graphql) is revalidated on every load. */
const REVALIDATE = 'no-cache';
/**
 * Only this origin's scripts, styles and sockets; GraphiQL and CodeMirror set inline styles.
 * 'self' covers ws:/wss: to the same host in current browsers.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

function prepare(path: string, body: Buffer): ConsoleFile {
  const contentType = CONTENT_TYPES[extname(path)] ?? 'application/octet-stream';
  const gzipped = COMPRESSIBLE.test(contentType) && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined;
  return {
    body,
    gzipped: gzipped && gzipped.length < body.length ? gzipped : undefined,
    contentType,
    cacheControl: path.startsWith('assets/') ? IMMUTABLE : REVALIDATE,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
}

/**
 * Reads the built console into memory once, at start. Only regular files are taken (symbolic
 * links and dot files are skipped), so nothing outside `dir` can ever be served.
 * @throws when `dir` has no index.html (not built?) or holds more than `maxBytes`
 */
export function loadConsoleSite(dir: string, options: ConsoleSiteOptions = {}): ConsoleSite {
  const {
    maxBytes = 16_777_216, // 16 MiB
  } = options;
  const files = new Map<string, ConsoleFile>();
  let bytes = 0;
  const walk = (relative: string): void => {
    let entries;
    try {
      entries = readdirSync(join(dir, relative), { withFileTypes: true });
    } catch (err) {
      throw new Error(
        `the console directory ${dir} cannot be read (${(err as Error).message}): build it with \`turbo run build --filter=@wirestream/console\` or set GATEWAY_CONSOLE_DIR`,
      );
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && lstatSync(join(dir, path)).isFile()) {
        const body = readFileSync(join(dir, path));
        bytes += body.length;
        if (bytes > maxBytes) throw new Error(`the console directory ${dir} holds more than ${maxBytes} bytes: is GATEWAY_CONSOLE_DIR the built console (apps/console/dist)?`);
        files.set(path, prepare(path, body));
      }
    }
  };
  walk('');
  if (!files.has('index.html')) {
    throw new Error(`the console directory ${dir} has no index.html: build it with \`turbo run build --filter=@wirestream/console\` or set GATEWAY_CONSOLE_DIR`);
  }
  return { dir, files, bytes };
}

export interface ConsoleRoutesOptions {
  /** Where the console lives. @default '/console' */
  readonly basePath?: string;
  /** The gateway's WebSocket path, told to the console in `config.json`. */
  readonly graphqlPath: string;
  /** `GET /stats` of the same server. @default '/stats' */
  readonly statsPath?: string;
  /** `GET /metrics`, or null when metrics are off (the console then shows no latency or memory). */
  readonly metricsPath: string | null;
  /**
   * The schema's SDL, served as `schema.graphql`: the console builds GraphiQL's docs and
   * completion from it, so introspection can stay off.
   */
  readonly sdl: string;
}

/**
 * Serves the console under `basePath`: `GET /console` redirects to `/console/`, `/console/` is
 * index.html, `/console/<path>` a loaded file or the generated `config.json` / `schema.graphql`;
 * anything else is a 404. Lookups are exact keys of files read at start: no path is resolved
 * against the file system per request, so `..` and encoded variants cannot reach other files.
 */
export function registerConsoleRoutes(app: TemplatedApp, site: ConsoleSite, options: ConsoleRoutesOptions): void {
  const { basePath = '/console', graphqlPath, statsPath = '/stats', metricsPath, sdl } = options;
  const files = new Map(site.files);
  files.set('config.json', prepare('config.json', Buffer.from(JSON.stringify({ graphqlPath, statsPath, metricsPath }))));
  files.set('schema.graphql', prepare('schema.graphql', Buffer.from(sdl)));

  app.get(basePath, (res) => {
    res.cork(() => {
      res.writeStatus('308 Permanent Redirect').writeHeader('location', `${basePath}/`).end();
    });
  });
  app.get(`${basePath}/*`, (res, req) => {
    // uWS request objects are stack-allocated: read everything before the handler returns.
    const relative = req.getUrl().slice(basePath.length + 1) || 'index.html';
    const file = files.get(relative);
    if (!file) {
      notFound(res, relative);
      return;
    }
    const ifNoneMatch = req.getHeader('if-none-match');
    const gzip = file.gzipped !== undefined && /\bgzip\b/.test(req.getHeader('accept-encoding'));
    res.cork(() => {
      if (ifNoneMatch === file.etag) {
        res.writeStatus('304 Not Modified').writeHeader('etag', file.etag).writeHeader('cache-control', file.cacheControl).endWithoutBody();
        return;
      }
      res
        .writeStatus('200 OK')
        .writeHeader('content-type', file.contentType)
        .writeHeader('cache-control', file.cacheControl)
        .writeHeader('etag', file.etag)
        .writeHeader('vary', 'accept-encoding')
        .writeHeader('x-content-type-options', 'nosniff');
      if (file.contentType.startsWith('text/html')) res.writeHeader('content-security-policy', CONTENT_SECURITY_POLICY).writeHeader('referrer-policy', 'no-referrer');
      if (gzip) res.writeHeader('content-encoding', 'gzip').end(file.gzipped);
      else res.end(file.body);
    });
  });
}

function notFound(res: HttpResponse, relative: string): void {
  res.cork(() => {
    res.writeStatus('404 Not Found').writeHeader('content-type', 'text/plain').writeHeader('cache-control', 'no-store').end(`not found in the console: ${relative}`);
  });
}
