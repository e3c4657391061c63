// A real HTTP/JSON service for look-up tests (node:http, or node:https with the given TLS options):
// it answers the profiles of the ids asked — by GET `?ids=a,b` or by POST of `{"ids":[…]}` — and
// records every request it got (method, URL, headers, body), so tests count and inspect them there.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The client certificate's subject CN, when the server asked for one (mTLS). */
  readonly clientCn: string | undefined;
}

export interface ProfileService {
  /** `http(s)://127.0.0.1:<port>` */
  readonly base: string;
  readonly requests: RecordedRequest[];
  stop(): Promise<void>;
}

/** Each profile's title says which `x-partner` header asked for it, so a test sees whose answer it got. */
function profile(id: string, partner: string | string[] | undefined): Record<string, unknown> {
  return { id, title: `title of ${id}${partner === undefined ? '' : ` for ${String(partner)}`}`, views: id.length };
}

export async function startProfileService(tls?: ServerOptions): Promise<ProfileService> {
  const requests: RecordedRequest[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const socket = req.socket as { getPeerCertificate?: () => { subject?: { CN?: string } } };
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, clientCn: socket.getPeerCertificate?.().subject?.CN });
      const partner = req.headers['x-partner'];
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') {
        const ids = (JSON.parse(body) as { ids: string[] }).ids;
        res.end(JSON.stringify({ data: { profiles: ids.map((id) => profile(id, partner)) } }));
        return;
      }
      const ids = new URL(req.url ?? '/', 'http://x').searchParams.get('ids')?.split(',') ?? [];
      res.end(JSON.stringify({ items: ids.map((id) => profile(id, partner)) }));
    });
  };
  const server = tls === undefined ? createHttpServer(handle) : createHttpsServer(tls, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
