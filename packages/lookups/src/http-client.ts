/**
 * The HTTP client of one look-up source, on node:http/node:https (no second HTTP stack to ship):
 * keep-alive sockets (as many as the source's concurrency bound), the source's TLS options on its
 * `https.Agent` (a CA bundle, a client certificate and key for mTLS, the servername checked against
 * the server's certificate), a timeout per request, the answer parsed as JSON. Every way a request
 * can fail is a {@link LookupError} that names the source (shared by every source kind).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import { LookupError } from './types.js';

/** A source's TLS options, PEM text (the gateway reads its files at start). */
export interface SourceTls {
  /** Trusted CA certificates instead of Node's bundled roots (a private CA). @default Node's roots */
  readonly ca?: string | undefined;
  /** Client certificate chain, sent when the server asks (mTLS); needs `key`. */
  readonly cert?: string | undefined;
  /** The client certificate's private key; needs `cert`. */
  readonly key?: string | undefined;
  /** The name sent (SNI) and checked against the server's certificate instead of the URL's host. */
  readonly servername?: string | undefined;
}

export interface HttpClientOptions {
  readonly source: string;
  /** The source's URL (or template): its scheme decides http or https, and TLS options need https. */
  readonly url: string;
  readonly timeoutMs: number;
  /** Sockets kept per host (the source's concurrency bound). */
  readonly maxSockets: number;
  readonly tls?: SourceTls | undefined;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface HttpClient {
  request(url: string, init: HttpRequest): Promise<{ readonly status: number; readonly body: unknown }>;
}

/** Bytes of one answer at most: a look-up answer is entities, not a download. */
const MAX_ANSWER_BYTES = 64 * 1_024 * 1_024;

/** Checks the options now (a PEM that does not parse, a key that does not match its certificate: thrown, naming the source). */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const { source, timeoutMs, maxSockets, tls } = options;
  const https = options.url.startsWith('https:');
  if (tls !== undefined && !https) throw new TypeError(`look-up source "${source}": TLS options need an https URL, got ${options.url.split(':')[0]}:`);
  if (tls !== undefined && (tls.cert === undefined) !== (tls.key === undefined)) {
    throw new TypeError(`look-up source "${source}": a client certificate needs its key and a key its certificate (mTLS): give both`);
  }
  if (tls !== undefined) {
    try {
      createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key });
    } catch (err) {
      throw new TypeError(`look-up source "${source}": its TLS options do not load: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const agent = https
    ? new HttpsAgent({ keepAlive: true, maxSockets, ...(tls?.ca === undefined ? {} : { ca: tls.ca }), ...(tls?.cert === undefined ? {} : { cert: tls.cert, key: tls.key }), ...(tls?.servername === undefined ? {} : { servername: tls.servername }) })
    : new HttpAgent({ keepAlive: true, maxSockets });
  const send = https ? httpsRequest : httpRequest;

  return {
    async request(url, init) {
      const signal = AbortSignal.timeout(timeoutMs);
      let response: IncomingMessage;
      let text: string;
      try {
        response = await new Promise<IncomingMessage>((resolve, reject) => {
          const req = send(url, { method: init.method, headers: init.headers, agent, signal, ...(tls?.servername === undefined ? {} : { servername: tls.servername }) }, resolve);
          req.on('error', reject);
          req.end(init.body);
        });
        text = await readText(response, signal);
      } catch (err) {
        const timedOut = signal.aborted;
        throw new LookupError(timedOut ? `look-up source "${source}" did not answer within ${timeoutMs} ms` : `look-up source "${source}" is unreachable: ${causeOf(err)}`);
      }
      const status = response.statusCode ?? 0;
      try {
        return { status, body: JSON.parse(text) as unknown };
      } catch {
        throw new LookupError(`look-up source "${source}" answered HTTP ${status} without JSON`);
      }
    },
  };
}

async function readText(response: IncomingMessage, signal: AbortSignal): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const chunk of response) {
    text += chunk as string;
    if (text.length > MAX_ANSWER_BYTES) throw new Error(`an answer over ${MAX_ANSWER_BYTES} bytes`);
    if (signal.aborted) throw new Error('timed out');
  }
  return text;
}

function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
