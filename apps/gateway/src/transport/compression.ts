import uWS from 'uWebSockets.js';
import type { CompressOptions } from 'uWebSockets.js';

/**
 * permessage-deflate (RFC 7692) as uWS offers it; a client negotiates it in its upgrade as usual
 * (browsers always offer it), a client that does not offer it gets plain frames.
 * - `off`: no compression (no CPU, no memory).
 * - `shared`: one compressor for the whole process, reset for every frame: no memory per socket,
 *   but each frame is compressed alone (what is inside one payload repeats: keys, URLs).
 * - `dedicated-<N>kb`: a compressor per socket with a sliding window (context takeover) that uses
 *   about N KB per socket: a frame can refer back to the previous ones, which is where repeated
 *   objects compress best, but the window must hold a previous payload to help (2 KB payloads need
 *   `dedicated-32kb`: a 4 KB window) and the memory is paid by every socket that negotiates it.
 * Either way uWS compresses each frame for each socket: the CPU grows with sockets, not with groups.
 * Frames from clients (a few small subscribe messages) use the shared decompressor in every mode.
 */
export const COMPRESSION_MODES = [
  'off',
  'shared',
  'dedicated-3kb',
  'dedicated-4kb',
  'dedicated-8kb',
  'dedicated-16kb',
  'dedicated-32kb',
  'dedicated-64kb',
  'dedicated-128kb',
  'dedicated-256kb',
] as const;

export type CompressionMode = (typeof COMPRESSION_MODES)[number];

const COMPRESSORS: Readonly<Record<CompressionMode, CompressOptions>> = {
  off: uWS.DISABLED,
  shared: uWS.SHARED_COMPRESSOR,
  'dedicated-3kb': uWS.DEDICATED_COMPRESSOR_3KB,
  'dedicated-4kb': uWS.DEDICATED_COMPRESSOR_4KB,
  'dedicated-8kb': uWS.DEDICATED_COMPRESSOR_8KB,
  'dedicated-16kb': uWS.DEDICATED_COMPRESSOR_16KB,
  'dedicated-32kb': uWS.DEDICATED_COMPRESSOR_32KB,
  'dedicated-64kb': uWS.DEDICATED_COMPRESSOR_64KB,
  'dedicated-128kb': uWS.DEDICATED_COMPRESSOR_128KB,
  'dedicated-256kb': uWS.DEDICATED_COMPRESSOR_256KB,
};

/** The `compression` option of `app.ws` for a mode. */
export function uwsCompression(mode: CompressionMode): CompressOptions {
  return mode === 'off' ? uWS.DISABLED : COMPRESSORS[mode] | uWS.SHARED_DECOMPRESSOR;
}
