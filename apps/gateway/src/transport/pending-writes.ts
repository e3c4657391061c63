/**
 * Frames a socket could not take yet, kept by the writer instead of by uWS (decision 0028).
 *
 * uWS (the v20.30 build this gateway runs on) keeps a socket's backpressure buffer at the largest
 * size it ever reached: its `BackPressure::clear()` empties the std::string without
 * `shrink_to_fit()` (upstream added that in uWebSockets v20.70, #1792, which needs a newer glibc).
 * After a burst every socket that had backpressure keeps a buffer as big as its peak — the native
 * memory that did not come back (bench/results/memory-return*.md). So once a socket has more than
 * a little buffered in uWS, further frames wait here, as the group's shared payload bytes plus the
 * socket's head (no copy per socket), and go out on uWS's `drain` as the socket takes them. What
 * waits here is JavaScript memory: the garbage collector gives it back when the socket caught up.
 */

/** A write that waits: a frame of our own (control, error, complete…) or a group's frames for one socket. */
export type PendingWrite = string | PendingFrames;

/** `head + body + '}'` for each body from `next` on. The bodies are shared by the group's sockets. */
export interface PendingFrames {
  readonly head: string;
  readonly bodies: readonly Buffer[];
  next: number;
}

export interface PendingWrites {
  readonly items: PendingWrite[];
  /** Index of the first item not yet written (items before it are done; compacted now and then). */
  first: number;
  /** Bytes waiting (frame lengths), for the slow-consumer limit and the replay's room check. */
  bytes: number;
}

export function createPendingWrites(): PendingWrites {
  return { items: [], first: 0, bytes: 0 };
}

export function pendFrame(pending: PendingWrites, frame: string): void {
  pending.items.push(frame);
  pending.bytes += frame.length;
}

export function pendFrames(pending: PendingWrites, head: string, bodies: readonly Buffer[], from: number): void {
  if (from >= bodies.length) return;
  pending.items.push({ head, bodies, next: from });
  for (let i = from; i < bodies.length; i++) pending.bytes += head.length + (bodies[i] as Buffer).length + 1;
}

/** Drops the written items at the front once they are many (no array shift per frame). */
export function compactPending(pending: PendingWrites): void {
  if (pending.first > 64 && pending.first * 2 > pending.items.length) {
    pending.items.splice(0, pending.first);
    pending.first = 0;
  }
}
