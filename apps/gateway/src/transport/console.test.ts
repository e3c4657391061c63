// The console's static files on a real uWS server: content types, cache headers, gzip, 304, 404,
// and no way out of the loaded files (raw request paths: fetch would normalize `..` away).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import uWS from 'uWebSockets.js';
import { loadConsoleSite, registerConsoleRoutes } from './console.js';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let dir: string;
let port: number;
let listenSocket: uWS.us_listen_socket;
const script = `console.log(${JSON.stringify('x'.repeat(4_000))});`;

function get(path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wirestream-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, 'assets', 'index-AbCd1234.js'), script);
  writeFileSync(join(dir, 'assets', 'index-AbCd1234.css'), 'body{}');
  writeFileSync(join(dir, '.secret'), 'dot files are not served');
  writeFileSync(join(tmpdir(), 'wirestream-console-outside.txt'), 'outside');
  symlinkSync(join(tmpdir(), 'wirestream-console-outside.txt'), join(dir, 'linked.txt'));

  const app = uWS.App();
  registerConsoleRoutes(app, loadConsoleSite(dir), { graphqlPath: '/graphql', metricsPath: null, sdl: 'type Query { ok: Boolean }' });
  app.any('/*', (res) => void res.writeStatus('404 Not Found').end('gateway 404'));
  port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('listen failed'));
      listenSocket = socket;
      resolve(uWS.us_socket_local_port(socket));
    }),
  );
});

afterAll(() => {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
  rmSync(dir, { recursive: true, force: true });
  rmSync(join(tmpdir(), 'wirestream-console-outside.txt'), { force: true });
});

describe('console routes', () => {
  it('serves index.html at /console/ with no-cache, an ETag and a content security policy; /console redirects there', async () => {
    const index = await get('/console/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toContain("default-src 'self'");
    expect(index.body.toString()).toContain('<title>console</title>');
    expect((await get('/console/index.html')).body.toString()).toBe(index.body.toString());

    const again = await get('/console/', { 'if-none-match': String(index.headers['etag']) });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);

    const redirect = await get('/console');
    expect(redirect.status).toBe(308);
    expect(redirect.headers['location']).toBe('/console/');
  });

  it('serves hashed assets as immutable, gzipped for clients that accept it', async () => {
    const plain = await get('/console/assets/index-AbCd1234.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(script);

    const gzipped = await get('/console/assets/index-AbCd1234.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['vary']).toBe('accept-encoding');
    expect(gzipped.body.length).toBeLessThan(script.length / 10);
    expect(gunzipSync(gzipped.body).toString()).toBe(script);

    expect((await get('/console/assets/index-AbCd1234.css')).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('generates config.json and schema.graphql for the console, revalidated on every load', async () => {
    const config = await get('/console/config.json');
    expect(config.headers['content-type']).toBe('application/json');
    expect(config.headers['cache-control']).toBe('no-cache');
    expect(JSON.parse(config.body.toString())).toEqual({ graphqlPath: '/graphql', statsPath: '/stats', metricsPath: null });
    expect((await get('/console/schema.graphql')).body.toString()).toBe('type Query { ok: Boolean }');
  });

  it('answers 404 for unknown files, dot files, symbolic links and every way out of the directory', async () => {
    for (const path of [
      '/console/nope.js',
      '/console/.secret',
      '/console/linked.txt',
      '/console/../package.json',
      '/console/assets/../../index.html',
      '/console/%2e%2e/%2e%2e/etc/passwd',
      '/console/..%2f..%2fetc%2fpasswd',
      '/console//etc/passwd',
      '/console/assets/',
    ]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body.toString()).not.toContain('outside');
    }
  });
});

describe('loadConsoleSite', () => {
  it('says what to do when the console is not built', () => {
    expect(() => loadConsoleSite(join(dir, 'missing'))).toThrow(/cannot be read .*turbo run build --filter=@wirestream\/console.*GATEWAY_CONSOLE_DIR/);
    expect(() => loadConsoleSite(join(dir, 'assets'))).toThrow(/has no index\.html/);
  });

  it('refuses a directory far larger than a console', () => {
    expect(() => loadConsoleSite(dir, { maxBytes: 100 })).toThrow(/more than 100 bytes/);
  });

  it('reads only regular files, once', () => {
    const site = loadConsoleSite(dir);
    expect([...site.files.keys()].sort()).toEqual(['assets/index-AbCd1234.css', 'assets/index-AbCd1234.js', 'index.html']);
    expect(site.bytes).toBe(script.length + 'body{}'.length + '<!doctype html><title>console</title>'.length);
  });
});
