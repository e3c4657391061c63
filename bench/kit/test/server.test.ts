import { describe, expect, it } from 'vitest';
import { getJson, startServerProcess } from '../src/server.js';

// A server that is ready only on its second /ready request, and serves /stats.
const script = `
let asked = 0;
require('node:http').createServer((req, res) => {
  if (req.url === '/ready') return res.writeHead(++asked > 1 ? 200 : 503).end();
  if (req.url === '/stats') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ port: Number(process.env.PORT) }));
  res.writeHead(404).end();
}).listen(Number(process.env.PORT), process.env.HOST);`;

describe('startServerProcess', () => {
  it('gives the process a free port, waits until it is ready, and says where it listens', async () => {
    const server = await startServerProcess('tiny server', ['-e', script], { env: (host, port) => ({ HOST: host, PORT: String(port) }), readyPath: '/ready', readyTimeoutMs: 10_000 });
    try {
      expect(server.httpBase).toBe(`http://127.0.0.1:${server.port}`);
      expect(server.wsUrl).toBe(`ws://127.0.0.1:${server.port}/graphql`);
      expect(await getJson<{ port: number }>(`${server.httpBase}/stats`, 2_000)).toEqual({ port: server.port });
      expect(await getJson(`${server.httpBase}/nothing`, 2_000)).toBeUndefined();
    } finally {
      await server.stop();
    }
    expect(server.exitInfo()).toBeDefined();
  });

  it('fails with the output of a process that exits before it is ready', async () => {
    await expect(startServerProcess('dying server', ['-e', 'console.log("no port for me"); process.exit(3)'], { env: () => ({}), readyPath: '/ready' })).rejects.toThrow(/dying server exited \(code 3\)[\s\S]*no port for me/);
  });
});
