/**
 * Writes a connection could not take yet, kept by the writer instead of by uWS (decision 0028;
 * the WebSocket writer and, since decision 0030, the SSE writer).
 *
 * uWS (the v20.30 build this gateway runs on) keeps a socket's backpressure buffer at the largest
 * size it ever reached: its `BackPressure::clear()` empties the std::string without
 * `shrink_to_fit()` (upstream added that in uWebSockets v20.70, #1792, which needs a newer glibc).
 * WebSockets and HTTP responses (SSE) share that buffer type. After a burst every connection that
 * had backpressure keeps a buffer as big as its peak — the native memory that did not come back
 * (bench/results/memory-return*.md). So once a connection has more than a little buffered in uWS,
 * further writes wait here, as the group's shared payload bytes plus the connection's heads (no copy
 * of a payload per connection), and go out on uWS's drain (WebSocket) or writable event (SSE) as the
 * connection takes them. What waits here is JavaScript memory: the garbage collector gives it back
 * when the connection caught up.
 */

/** A write that waits: a frame of our own (control, error, complete, heartbeat…) or a group's frames for one connection. */
export type PendingWrite = string | PendingFrames;

/** `head + body + tail` for each body from `next` on. The bodies are shared by the group's connections. */
export interface PendingFrames {
  /** The connection's one head before every body (WebSocket: the subscription id), or one head per body (SSE: each event's `id:`). */
  readonly head: string | readonly string[];
  readonly bodies: readonly Buffer[];
  /** Bytes after each body: 1 for a WebSocket frame's `}`, 2 for the blank line that ends an SSE event. */
  readonly tail: number;
  next: number;
}

export interface PendingWrites {
  readonly items: PendingWrite[];
  /** Index of the first item not yet written (items before it are done; compacted now and then). */
  first: number;
  /** Bytes waiting (frame lengths), for the slow-consumer limit and the replay's room check. */
  bytes: number;
}

/** Where {@link writePending} hands the waiting writes, in order. */
export interface PendingSink {
  /** A frame of our own, as it was queued. */
  text(frame: string): void;
  /** One frame of a group's: the transport lays out `head + body + tail`. */
  frame(head: string, body: Buffer): void;
}

export function createPendingWrites(): PendingWrites {
  return { items: [], first: 0, bytes: 0 };
}

export function pendFrame(pending: PendingWrites, frame: string): void {
  pending.items.push(frame);
  pending.bytes += frame.length;
}

/** Queues `bodies` from `from` on; `head` is one string for all or (SSE) an array with a head at each index from `from` on. */
export function pendFrames(pending: PendingWrites, head: string | readonly string[], bodies: readonly Buffer[], from: number, tail = 1): void {
  if (from >= bodies.length) return;
  pending.items.push({ head, bodies, tail, next: from });
  for (let i = from; i < bodies.length; i++) pending.bytes += headAt(head, i).length + (bodies[i] as Buffer).length + tail;
}

const headAt = (head: string | readonly string[], i: number): string => (typeof head === 'string' ? head : (head[i] as string));

/**
 * Hands the waiting writes, the first on, to `sink` until about `budget` bytes went or none is left,
 * and takes them off the queue. At least one write goes; past that, the last may go past the budget
 * (WebSocket blocks) or, with `fit`, none does (SSE chunks, which must fit uWS's cork buffer).
 */
export function writePending(pending: PendingWrites, budget: number, sink: PendingSink, fit = false): void {
  const { items } = pending;
  let wrote = false;
  while (pending.first < items.length && budget > 0) {
    const item = items[pending.first] as PendingWrite;
    if (typeof item === 'string') {
      if (fit && wrote && item.length > budget) return;
      sink.text(item);
      pending.bytes -= item.length;
      budget -= item.length;
      items[pending.first++] = '';
      wrote = true;
      continue;
    }
    const head = headAt(item.head, item.next);
    const body = item.bodies[item.next] as Buffer;
    const size = head.length + body.length + item.tail;
    if (fit && wrote && size > budget) return;
    sink.frame(head, body);
    pending.bytes -= size;
    budget -= size;
    wrote = true;
    if (++item.next === item.bodies.length) items[pending.first++] = '';
  }
}

/** Drops the written items at the front once they are many (no array shift per frame). */
export function compactPending(pending: PendingWrites): void {
  if (pending.first > 64 && pending.first * 2 > pending.items.length) {
    pending.items.splice(0, pending.first);
    pending.first = 0;
  }
}
