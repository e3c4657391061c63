import uWS from 'uWebSockets.js';
import type { CompressOptions } from 'uWebSockets.js';

/**
 * permessage-deflate (RFC 7692) as uWS offers it; a client negotiates it in its upgrade as usual
 * (browsers always offer it), a client that does not offer it gets plain frames.
 * - `off`: no compression (no CPU, no memory).
 * - `shared`: uWS's one compressor for the whole process, reset for every frame
 *   (`server_no_context_takeover`): no memory per socket; each frame is compressed alone, which
 *   still takes a 2.6 KB demo payload to ~0.85 KB (keys, URLs and ids repeat within a payload).
 * uWS compresses each frame for each socket: the CPU grows with sockets, not with operations.
 *
 * uWS's dedicated compressors (`DEDICATED_COMPRESSOR_*`, a sliding window per socket) are not
 * offered: in the build we pin (uWebSockets.js 20.30) they do not carry the window across messages
 * — twenty identical 576-byte messages cost 281 bytes each with any dedicated size, 267 with the
 * shared one (`node bench/fanout/dist/micro.js uws-compressors`) — so they cost more CPU (and memory per
 * socket) for no saving.
 * For repeated objects, delta mode (GATEWAY_DELTA) is what removes the repetition.
 * Frames from clients (a few small subscribe messages) use the shared decompressor.
 */
export const COMPRESSION_MODES = ['off', 'shared'] as const;

export type CompressionMode = (typeof COMPRESSION_MODES)[number];

/** The `compression` option of `app.ws` for a mode. */
export function uwsCompression(mode: CompressionMode): CompressOptions {
  return mode === 'off' ? uWS.DISABLED : uWS.SHARED_COMPRESSOR | uWS.SHARED_DECOMPRESSOR;
}
