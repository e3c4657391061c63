// A minimal event-stream reader for the SSE tests: what a client (or EventSource) parses, with the
// raw text kept too (comments included), so the tests see exactly what went over the wire.

export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

export interface SseResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly events: SseEvent[];
  /** Everything received, comments included. */
  raw(): string;
  /** Resolves when the server ended the response. */
  readonly ended: Promise<void>;
  /** Parsed `data` of the `next` events. */
  nexts(): Record<string, unknown>[];
  /** The last `id:` seen (what EventSource would send as Last-Event-ID). */
  lastEventId(): string | undefined;
  abort(): void;
}

export interface SseOpenOptions {
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly headers?: Record<string, string>;
}

/** Opens a stream; resolves once the response head arrived (the body keeps streaming into `events`). */
export async function openSse(url: string, options: SseOpenOptions = {}): Promise<SseResponse> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(url, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  let raw = '';
  let buffer = '';
  let lastId: string | undefined;
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        buffer += text;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = parseBlock(block);
          if (event) {
            if (event.id !== undefined) lastId = event.id;
            events.push(event);
          }
        }
      }
    } catch {
      // aborted by the test
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    events,
    raw: () => raw,
    ended,
    nexts: () => events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data) as Record<string, unknown>),
    lastEventId: () => lastId,
    abort: () => controller.abort(),
  };
}

/** One event block; undefined for a block of comments only. */
function parseBlock(block: string): SseEvent | undefined {
  let event = '';
  let id: string | undefined;
  const data: string[] = [];
  let fields = 0;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    fields++;
    if (name === 'event') event = value;
    else if (name === 'id') id = value;
    else if (name === 'data') data.push(value);
  }
  return fields === 0 ? undefined : { event: event || 'message', id, data: data.join('\n') };
}

/** The `extensions.position` of a next event's data. */
export function positionOf(data: Record<string, unknown>): { partition: number; offset: string; epoch: string } | undefined {
  return (data['extensions'] as { position?: { partition: number; offset: string; epoch: string } } | undefined)?.position;
}
