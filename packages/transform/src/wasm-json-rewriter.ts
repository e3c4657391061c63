import { readFileSync } from 'node:fs';
import { rawKeyOutput, SLAB_BYTES, writeUtf8, type RawKeyConverter } from './key-bytes.js';
import type { KeyStyle } from './key-style.js';
import type { JsonBytesRewriter } from './rewriter-types.js';

/**
 * The JSON key rewriter's fast path in WebAssembly (assembly/json-rewriter.ts, decision 0032): the
 * same output byte for byte as the JavaScript rewriter, which stays the reference and does whatever
 * the module hands back (every error, possible key collisions, inputs too large for its buffers).
 *
 * Why: the rewriter is ~40 % of ingest's CPU per event, and a JavaScript loop over a Uint8Array
 * costs 3–4× what the same loop costs in WebAssembly here; string values are copied eight bytes at a
 * time there. The input is copied in and the output out (two memcpy), never parsed into objects.
 */

/** The module's exports (assembly/json-rewriter.ts). */
interface RewriterExports {
  readonly memory: WebAssembly.Memory;
  configure(
    mode: number, maxDepth: number,
    slotsAt: number, slotCount: number, entriesAt: number, maxEntries: number, arenaAt: number, arenaBytes: number,
    keysAt: number, keyLimit: number, levelsAt: number, missesAt: number, missLimit: number, captureAt: number,
  ): void;
  setBuffers(inputAt: number, outputAt: number, outputBytes: number): void;
  rewrite(length: number, captureLength: number): number;
  insertKey(start: number, end: number, outAt: number, outLength: number): number;
  getCaptureStart(): number;
  getCaptureEnd(): number;
  getMissCount(): number;
  getEntryCount(): number;
}

const FALLBACK = -1;
const MISS = -2;

const PAGE = 65536;
const ENTRY_BYTES = 32;
const KEY_BYTES = 12;
const LEVEL_BYTES = 8;
/** Keys open at once (all enclosing objects' keys); past it, JavaScript rewrites the input. */
const KEY_LIMIT = 8192;
/** Misses listed per call; past it the input is rewritten by JavaScript this once. */
const MISS_LIMIT = 512;
/** The longest routing field name and converted key the module is handed. */
const CAPTURE_BYTES = 1024;
const STAGE_BYTES = 4096;
/** Average raw plus converted bytes of a memoized key before the memo is emptied early. */
const ARENA_BYTES_PER_ENTRY = 96;
/** The input region to start with; it grows to the largest input seen, up to {@link MAX_INPUT_BYTES}. */
const INITIAL_INPUT_BYTES = 64 * 1024;
/** Inputs larger than this are rewritten by JavaScript (the module's memory never shrinks). */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024;

let compiled: WebAssembly.Module | undefined;

/** Compiled once per process, from the build's dist/ (the same path from src/ under vitest). */
function rewriterModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(readFileSync(new URL('../dist/json-rewriter.wasm', import.meta.url)));
  return compiled;
}

const MODES: Readonly<Record<KeyStyle, number>> = { snake: 0, lodash: 1, none: 2 };

/** One instance (its own memory and memo) of the module: what {@link createWasmJsonBytesRewriter} drives. */
interface Core {
  readonly exports: RewriterExports;
  bytes: Buffer;
  inputAt: number;
  inputCap: number;
  outputAt: number;
  readonly captureAt: number;
  readonly stageAt: number;
  readonly missesAt: number;
}

function createCore(maxDepth: number, maxCacheEntries: number, keyStyle: KeyStyle): Core {
  const instance = new WebAssembly.Instance(rewriterModule(), { env: { abort: abortFromModule } });
  const exports = instance.exports as unknown as RewriterExports;
  let slotCount = 16;
  while (slotCount < maxCacheEntries * 2) slotCount *= 2; // load factor ≤ 0.5
  // Laid out from the second page on (the first is left to the module's own data).
  let at = PAGE;
  const take = (bytes: number): number => {
    const start = at;
    at += (bytes + 7) & ~7;
    return start;
  };
  const slotsAt = take(slotCount * 4);
  const entriesAt = take(maxCacheEntries * ENTRY_BYTES);
  const arenaBytes = Math.max(maxCacheEntries * ARENA_BYTES_PER_ENTRY, 2 * STAGE_BYTES);
  const arenaAt = take(arenaBytes);
  const keysAt = take(KEY_LIMIT * KEY_BYTES);
  const levelsAt = take((maxDepth + 2) * LEVEL_BYTES);
  const missesAt = take(MISS_LIMIT * 8);
  const captureAt = take(CAPTURE_BYTES);
  const stageAt = take(STAGE_BYTES);
  const core: Core = { exports, bytes: Buffer.alloc(0), inputAt: at, inputCap: 0, outputAt: 0, captureAt, stageAt, missesAt };
  ensureInput(core, INITIAL_INPUT_BYTES);
  exports.configure(
    MODES[keyStyle], maxDepth, slotsAt, slotCount, entriesAt, maxCacheEntries, arenaAt, arenaBytes,
    keysAt, KEY_LIMIT, levelsAt, missesAt, MISS_LIMIT, captureAt,
  );
  return core;
}

function abortFromModule(): never {
  throw new Error('json-rewriter.wasm aborted (a bug in packages/transform/assembly)');
}

/** Room for an input of `length` bytes and its output (twice the input, plus slack). */
function ensureInput(core: Core, length: number): void {
  if (length <= core.inputCap) return;
  let inputCap = Math.max(core.inputCap, INITIAL_INPUT_BYTES);
  while (inputCap < length) inputCap *= 2;
  const outputBytes = inputCap * 2 + 64;
  // 64 bytes past the last region: the module reads up to 15 bytes past the end of what it scans.
  const needed = core.inputAt + inputCap + outputBytes + 64;
  const { memory } = core.exports;
  if (needed > memory.buffer.byteLength) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
  core.inputCap = inputCap;
  core.outputAt = core.inputAt + inputCap;
  core.bytes = Buffer.from(memory.buffer);
  core.exports.setBuffers(core.inputAt, core.outputAt, outputBytes);
}

/**
 * Memoizes the keys the last call listed as misses (converting each as the JavaScript rewriter
 * would). Returns false when one could not be memoized (too long): the caller then gives up on the
 * module for this input.
 */
function insertMisses(core: Core, convert: RawKeyConverter): boolean {
  const { exports, bytes, inputAt, missesAt, stageAt } = core;
  const count = exports.getMissCount();
  if (count > MISS_LIMIT) return false;
  const offsets = new Uint32Array(bytes.buffer, bytes.byteOffset + missesAt, count * 2);
  for (let n = 0; n < count; n++) {
    const start = offsets[n * 2] as number;
    const end = offsets[n * 2 + 1] as number;
    const output = rawKeyOutput(bytes, inputAt + start, inputAt + end, convert);
    if (output.length > STAGE_BYTES) return false;
    bytes.set(output, stageAt);
    if (exports.insertKey(start, end, stageAt, output.length) === 0) return false;
  }
  return true;
}

/**
 * A rewriter that runs `fallback`'s algorithm in WebAssembly and calls `fallback` itself for what the
 * module hands back. Results live in slabs exactly as `fallback`'s do (see {@link JsonBytesRewriter}).
 */
export function createWasmJsonBytesRewriter(
  maxDepth: number, maxCacheEntries: number, keyStyle: KeyStyle, convert: RawKeyConverter, fallback: JsonBytesRewriter,
): JsonBytesRewriter {
  const core = createCore(maxDepth, maxCacheEntries, keyStyle);
  const { exports } = core;
  let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  let slabUsed = 0;
  let captureStart = -1;
  let captureEnd = -1;
  let lastCapture: Uint8Array | undefined;
  /** Which rewriter gave the last result (its capture offsets are read from it). */
  let lastFromFallback = false;
  let fallbacks = 0;

  function runModule(src: Uint8Array, capture: Uint8Array | undefined): number {
    if (capture !== lastCapture && capture !== undefined) core.bytes.set(capture, core.captureAt);
    lastCapture = capture;
    core.bytes.set(src, core.inputAt);
    const captureLength = capture === undefined ? -1 : capture.length;
    let result = exports.rewrite(src.length, captureLength);
    // A second round only when the memo was emptied while the first round's misses went in.
    for (let round = 0; round < 2 && result === MISS && insertMisses(core, convert); round++) result = exports.rewrite(src.length, captureLength);
    if (result === FALLBACK && exports.getMissCount() > 0) insertMisses(core, convert); // the next input of its kind hits
    return result;
  }

  function rewrite(src: Uint8Array, prefix: string, suffix: string, capture?: Uint8Array): Buffer {
    const length = src.length;
    if (length > MAX_INPUT_BYTES || (capture !== undefined && capture.length > CAPTURE_BYTES)) return viaFallback(src, prefix, suffix, capture);
    ensureInput(core, length);
    const produced = runModule(src, capture);
    if (produced < 0) return viaFallback(src, prefix, suffix, capture);
    const room = prefix.length * 3 + produced + suffix.length * 3;
    if (slabUsed + room > slab.length) {
      slab = Buffer.allocUnsafeSlow(Math.max(room, SLAB_BYTES));
      slabUsed = 0;
    }
    const base = slabUsed;
    let o = prefix.length === 0 ? base : base + writeUtf8(slab, prefix, base);
    const payloadAt = o - base;
    o += core.bytes.copy(slab, o, core.outputAt, core.outputAt + produced);
    if (suffix.length > 0) o += writeUtf8(slab, suffix, o);
    slabUsed = o;
    lastFromFallback = false;
    captureStart = exports.getCaptureStart();
    if (captureStart >= 0) {
      captureStart += payloadAt;
      captureEnd = exports.getCaptureEnd() + payloadAt;
    } else {
      captureEnd = -1;
    }
    return slab.subarray(base, o);
  }

  function viaFallback(src: Uint8Array, prefix: string, suffix: string, capture?: Uint8Array): Buffer {
    lastFromFallback = true;
    fallbacks++;
    return fallback.rewrite(src, prefix, suffix, capture);
  }

  return {
    rewrite,
    get captureStart() {
      return lastFromFallback ? fallback.captureStart : captureStart;
    },
    get captureEnd() {
      return lastFromFallback ? fallback.captureEnd : captureEnd;
    },
    get cacheSize() {
      return exports.getEntryCount() + fallback.cacheSize;
    },
    get fallbacks() {
      return fallbacks;
    },
  };
}
