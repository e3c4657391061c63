/**
 * The wire form of delta mode (docs/architecture.md, "Delta payloads"), in one place for the
 * gateway that writes it and every client that reads it.
 *
 * A subscription that asked for `extensions: { delta: "fossil" }` receives `next` payloads of two
 * kinds:
 * - a full payload (`{"data":…,"extensions":{"position":…}}`, exactly what everyone else gets);
 * - a delta payload `{"extensions":{"delta":"<fossil delta>"}}`: the fossil delta from the previous
 *   full-or-reconstructed payload of the same subscription to this one, over their UTF-8 bytes.
 *   The delta's bytes travel as a JSON string of one character per byte (U+0000–U+00FF, "latin1"):
 *   fossil deltas are ASCII except for the literal bytes they insert, and those may split a UTF-8
 *   sequence, which a UTF-8 string could not carry.
 * A data-less `next` with `extensions.recovery` (the resume signal) is neither: it is no base.
 */
import { applyDelta, createDelta } from 'fossil-delta';

/** The only delta format: what a client sends as `extensions.delta` of its subscribe. */
export const DELTA_FOSSIL = 'fossil';

/** Every delta payload starts with these characters (and no full payload does). */
export const DELTA_PAYLOAD_PREFIX = '{"extensions":{"delta":';
const RECOVERY_PREFIX = '{"extensions":{"recovery":';

/** A delta payload that cannot be applied: the client's base is not the server's. Resubscribe (resume) to recover. */
export class DeltaError extends Error {
  override readonly name = 'DeltaError';
  readonly retriable = true;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 bytes of a payload: what deltas are computed over. */
export function payloadBytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * The delta payload from `base` to `target` (UTF-8 bytes of two full payloads), or undefined when
 * it would not be smaller than the full payload (then the full payload is sent).
 * @param targetLength `target`'s length as a string, the size the delta payload must beat.
 */
export function encodeDeltaPayload(base: Uint8Array, target: Uint8Array, targetLength: number): string | undefined {
  const delta = createDelta(base, target);
  // A delta payload is at least its bytes plus the wrapper: don't build one that cannot win.
  if (delta.length + DELTA_PAYLOAD_PREFIX.length + 4 >= targetLength) return undefined;
  const payload = `${DELTA_PAYLOAD_PREFIX}${JSON.stringify(bytesToLatin1(delta))}}}`;
  return payload.length < targetLength ? payload : undefined;
}

/** Applies a delta (the string of `extensions.delta`) to a base; throws {@link DeltaError} when they do not fit. */
export function applyDeltaText(base: Uint8Array, delta: string): Uint8Array {
  try {
    return applyDelta(base, latin1ToBytes(delta));
  } catch (err) {
    throw new DeltaError(`delta payload does not apply to this subscription's previous payload (${(err as Error).message}): resubscribe to get a full payload`);
  }
}

/**
 * One subscription's reader of delta-mode payloads: hands back every payload in full, byte for
 * byte what a subscription without delta mode receives. Keep one per subscription (per graphql-ws
 * `id`), and drop it with the subscription: a new subscribe (or a resume) starts with a full payload.
 */
export interface DeltaReader {
  /**
   * For clients that see the frame text (e.g. a raw WebSocket): the payload's exact text in,
   * the full payload's text out.
   */
  readText(payloadText: string): string;
  /**
   * For clients that see parsed payloads (graphql-ws `createClient`): a `next` payload in, the full
   * payload out. A full payload's base is its `JSON.stringify`, which is the text the gateway sent
   * (it serializes with `JSON.stringify`, and parse → stringify reproduces such text exactly).
   */
  read<T>(payload: T): T;
}

export function createDeltaReader(): DeltaReader {
  let base: Uint8Array | undefined;
  const applyTo = (delta: string): string => {
    if (base === undefined) throw new DeltaError('delta payload before any full payload: resubscribe to get a full payload');
    const target = applyDeltaText(base, delta);
    base = target;
    return decoder.decode(target);
  };
  return {
    readText(text) {
      if (text.startsWith(DELTA_PAYLOAD_PREFIX)) {
        const delta = (JSON.parse(text) as { extensions: { delta: unknown } }).extensions.delta;
        if (typeof delta !== 'string') throw new DeltaError('extensions.delta of a delta payload must be a string');
        return applyTo(delta);
      }
      if (!text.startsWith(RECOVERY_PREFIX)) base = payloadBytes(text);
      return text;
    },
    read(payload) {
      const p = payload as { data?: unknown; errors?: unknown; extensions?: { delta?: unknown; recovery?: unknown } } | null;
      const extensions = p?.extensions;
      if (p === null || typeof p !== 'object' || 'data' in p || 'errors' in p || extensions === undefined) {
        base = payloadBytes(JSON.stringify(payload));
        return payload;
      }
      if (typeof extensions.delta === 'string') return JSON.parse(applyTo(extensions.delta)) as typeof payload;
      if (extensions.recovery === undefined) base = payloadBytes(JSON.stringify(payload));
      return payload;
    },
  };
}

/** One character per byte. Chunked: `String.fromCharCode(...big)` would overflow the call stack. */
function bytesToLatin1(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8_192) out += String.fromCharCode(...bytes.subarray(i, i + 8_192));
  return out;
}

function latin1ToBytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff) throw new DeltaError('extensions.delta holds a character above U+00FF: not a delta of this gateway');
    bytes[i] = c;
  }
  return bytes;
}
