import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One export request as the receiver got it. */
export interface OtlpRequest {
  /** `/v1/traces` for spans. */
  readonly path: string;
  /** `application/json` (OTLP/JSON) or `application/x-protobuf`. */
  readonly contentType: string;
  readonly body: Buffer;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  readonly url: string;
  /** Every request so far, in arrival order (with `keepBodies: false`, bodies are empty). */
  readonly requests: readonly OtlpRequest[];
  /** Bytes received so far. */
  readonly bytes: () => number;
  readonly stop: () => Promise<void>;
}

export interface OtlpReceiverOptions {
  /** Keep request bodies (tests decode them); benches that only sink spans turn it off. @default true */
  readonly keepBodies?: boolean;
}

/**
 * A minimal OTLP/HTTP receiver on a free port: answers every POST with 200 (an empty
 * ExportTraceServiceResponse, valid in both encodings) and keeps what was sent, so a test reads the
 * real exporter's requests and a bench has somewhere cheap to export to.
 */
export async function startOtlpReceiver({ keepBodies = true }: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  let bytes = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (keepBodies) chunks.push(c);
    });
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const contentType = req.headers['content-type'] ?? '';
      requests.push({ path: req.url ?? '', contentType, body: Buffer.concat(chunks) });
      if (contentType.startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    bytes: () => bytes,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
