import { readFileSync } from 'node:fs';
import { decodeEnvelopeHead, lazyEnvelopeText, type Envelope } from '@wirestream/wire';
import type { FilterClause } from '@wirestream/schema';
import type { BytePlan } from './byte-plan.js';

/**
 * The projector's byte path (decision 0043): an event's `next` payload written by WebAssembly
 * (assembly/envelope-projector.ts) from the envelope's text, with no `JSON.parse` of the payload
 * and no object per value. One instance per hub (its own memory, as each hub's renderer is its own).
 *
 * `scanEnvelope` checks the whole text in the module and reads only the head in JavaScript; the
 * envelope it returns parses its payload when someone reads it (a `where`, a plugin, graphql-js).
 * `projectBytes` writes a group's payload by its operation's byte plan after the group's filter
 * clauses, or says NO_MATCH, or declines (undefined): the JavaScript projector then renders the
 * event as before. Either way the bytes are those the JavaScript path writes.
 */
export interface ByteProjector {
  readonly exports: ProjectorExports;
  bytes: Buffer;
  inputCap: number;
  outputAt: number;
  outputCap: number;
  /** The envelope whose text is in the input region now. */
  loaded: Envelope | undefined;
  /** Plans in the plan region, by their offset there; emptied when the region is full. */
  plans: WeakMap<BytePlan, number>;
  planTop: number;
  /** The memory as u32 words (the clause table is written through it). */
  words: Uint32Array;
}

interface ProjectorExports {
  readonly memory: WebAssembly.Memory;
  setRegions(
    levelsAt: number, opensAt: number, depth: number, membersAt: number, memberLimit: number, scratchAt: number, scratchBytes: number,
    inputAt: number, jumpsAt: number, outputAt: number, outputBytes: number,
  ): void;
  scan(length: number): number;
  getHeadEnd(): number;
  headIsAscii(): number;
  project(plan: number, clauses: number, clauseCount: number): number;
}

/** What `projectBytes` says when a filter clause does not hold. */
export const NO_MATCH = Symbol('no match');

const DECLINE = -1;
const MODULE_NO_MATCH = -2;
const OVERFLOW = -3;

const PAGE = 65_536;
/** Nesting the module checks before it hands an envelope to `decodeEnvelope`. */
const MAX_DEPTH = 255;
/** Top-level payload members recorded for the filter clauses (more: the clauses are left to JavaScript). */
const MEMBER_LIMIT = 1_024;
const SCRATCH_BYTES = 64 * 1024;
const PLAN_BYTES = 1024 * 1024;
const CLAUSE_BYTES = 4 * 1024;
/**
 * Envelopes longer than this (in UTF-16 units) are parsed in JavaScript: the memory never shrinks, and
 * an envelope of n units takes up to 3n bytes of input and 12n of jump table (1 MiB and 4 MiB at most).
 */
const MAX_TEXT = 256 * 1024;
const INITIAL_TEXT_BYTES = 64 * 1024;

let compiled: WebAssembly.Module | undefined;

function projectorModule(): WebAssembly.Module {
  // From src/core/operations or dist/core/operations alike: the module is built into dist.
  compiled ??= new WebAssembly.Module(readFileSync(new URL('../../../dist/envelope-projector.wasm', import.meta.url)));
  return compiled;
}

// Laid out from the second page on (the first is left to the module's own data).
const LEVELS_AT = PAGE;
const OPENS_AT = LEVELS_AT + 256;
const MEMBERS_AT = OPENS_AT + 256 * 4;
const SCRATCH_AT = MEMBERS_AT + MEMBER_LIMIT * 12;
const CLAUSES_AT = SCRATCH_AT + SCRATCH_BYTES;
const PLANS_AT = CLAUSES_AT + CLAUSE_BYTES;
const INPUT_AT = PLANS_AT + PLAN_BYTES;

export function createByteProjector(): ByteProjector {
  const instance = new WebAssembly.Instance(projectorModule(), { env: { abort: abortFromModule } });
  const exports = instance.exports as unknown as ProjectorExports;
  const projector: ByteProjector = {
    exports,
    bytes: Buffer.alloc(0),
    inputCap: 0,
    outputAt: 0,
    outputCap: 0,
    loaded: undefined,
    plans: new WeakMap(),
    planTop: PLANS_AT,
    words: new Uint32Array(0),
  };
  layOut(projector, INITIAL_TEXT_BYTES, INITIAL_TEXT_BYTES);
  return projector;
}

function abortFromModule(): never {
  throw new Error('envelope-projector.wasm aborted (a bug in apps/gateway/assembly)');
}

/** Room for `inputBytes` of text and `outputBytes` of output (64 bytes of slack past each: the module reads 16 at a time). */
function layOut(p: ByteProjector, inputBytes: number, outputBytes: number): void {
  const inputCap = Math.max(p.inputCap, inputBytes);
  const outputCap = Math.max(p.outputCap, outputBytes);
  // The jump table: a u32 per input byte (where each container ends, written by the scan).
  const jumpsAt = INPUT_AT + inputCap + 64;
  const outputAt = jumpsAt + inputCap * 4;
  const needed = outputAt + outputCap + 64;
  const { memory } = p.exports;
  if (needed > memory.buffer.byteLength) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
  p.bytes = Buffer.from(memory.buffer);
  p.words = new Uint32Array(memory.buffer);
  p.inputCap = inputCap;
  p.outputAt = outputAt;
  p.outputCap = outputCap;
  p.exports.setRegions(LEVELS_AT, OPENS_AT, MAX_DEPTH, MEMBERS_AT, MEMBER_LIMIT, SCRATCH_AT, SCRATCH_BYTES, INPUT_AT, jumpsAt, outputAt, outputCap);
  p.loaded = undefined; // the output moved, and a grown input is written again
}

type Utf8Write = (this: Buffer, text: string, offset: number, length: number) => number;
/** Node's own UTF-8 writer behind Buffer#write, without its argument handling (as packages/transform's key-bytes.ts). */
const utf8Write = (Buffer.prototype as unknown as { readonly utf8Write: Utf8Write }).utf8Write;
type Utf8Slice = (this: Buffer, start: number, end: number) => string;
/** Node's own UTF-8 decoder behind Buffer#toString. */
const utf8Slice = (Buffer.prototype as unknown as { readonly utf8Slice: Utf8Slice }).utf8Slice;
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Copies the text into the input region and checks it there; the text's byte length, or -1 when the module declined it. */
function load(p: ByteProjector, text: string): number {
  if (text.length * 3 > p.inputCap) layOut(p, 1 << Math.ceil(Math.log2(text.length * 3)), p.outputCap);
  const length = utf8Write.call(p.bytes, text, INPUT_AT, p.inputCap);
  return p.exports.scan(length) === 1 ? length : -1;
}

/**
 * The envelope of `text` with its payload left as text, or undefined when the module declined it
 * (not JSON, another layout, a lone surrogate, a non-ASCII head…): `decodeEnvelope` reads those.
 * Throws what decodeEnvelope throws for a head that breaks the contract.
 */
export function scanEnvelope(p: ByteProjector, text: string): Envelope | undefined {
  if (text.length > MAX_TEXT || !isWellFormed(text)) return undefined;
  p.loaded = undefined;
  if (load(p, text) < 0 || p.exports.headIsAscii() === 0) return undefined;
  const envelope = decodeEnvelopeHead(text, text.slice(0, p.exports.getHeadEnd()));
  if (envelope !== undefined) p.loaded = envelope;
  return envelope;
}

/**
 * A group's `next` payload (`{"data":…` and then `tail`: the event's extensions and the closing
 * brace) written from the envelope's text by `plan`, once `clauses` (the group's filter) hold;
 * NO_MATCH when one does not; undefined when the module declines (JavaScript renders it).
 */
export function projectBytes(p: ByteProjector, envelope: Envelope, plan: BytePlan, clauses: readonly FilterClause[], tail: string): string | typeof NO_MATCH | undefined {
  if (p.loaded !== envelope) {
    const text = lazyEnvelopeText(envelope);
    if (text === undefined || load(p, text) < 0) return undefined;
    p.loaded = envelope;
  }
  const planAt = placePlan(p, plan);
  let count = 0;
  if (clauses.length > 0) {
    count = placeClauses(p, clauses);
    if (count < 0) return undefined;
  }
  for (;;) {
    const written = p.exports.project(planAt, CLAUSES_AT, count);
    if (written === MODULE_NO_MATCH) return NO_MATCH;
    if (written === DECLINE) return undefined;
    if (written === OVERFLOW) {
      layOut(p, p.inputCap, p.outputCap * 2);
      const text = lazyEnvelopeText(envelope) as string;
      if (load(p, text) < 0) return undefined;
      p.loaded = envelope;
      continue;
    }
    // The tail is ASCII but for what a header or key may carry; it is written whole or not at all.
    if (written + tail.length * 3 > p.outputCap) {
      layOut(p, p.inputCap, (written + tail.length * 3) * 2);
      p.loaded = undefined;
      return projectBytes(p, envelope, plan, clauses, tail);
    }
    const end = written + utf8Write.call(p.bytes, tail, p.outputAt + written, p.outputCap - written);
    return utf8Slice.call(p.bytes, p.outputAt, p.outputAt + end);
  }
}

/** The plan's offset in the plan region, copying it there first (the region is emptied when full). */
function placePlan(p: ByteProjector, plan: BytePlan): number {
  const known = p.plans.get(plan);
  if (known !== undefined) return known;
  const size = (plan.blob.length + 7) & ~7;
  if (size > PLAN_BYTES) throw new Error(`a byte plan of ${plan.blob.length} bytes does not fit the plan region`);
  if (p.planTop + size > PLANS_AT + PLAN_BYTES) {
    p.plans = new WeakMap();
    p.planTop = PLANS_AT;
  }
  const at = p.planTop;
  p.bytes.set(plan.blob, at);
  p.plans.set(plan, at);
  p.planTop += size;
  return at;
}

/**
 * Writes the clauses where the module reads them: per clause four u32 at the clause region (name
 * offset, name length, expected offset, expected length; absolute), then the names' and values'
 * UTF-8. Their count, or -1 when the module cannot compare them: too long for the region, or a
 * string not well formed (its UTF-8 would not be itself). Written per event (a few dozen bytes):
 * a copy kept per operation would cost memory per distinct operation (issue 37).
 */
function placeClauses(p: ByteProjector, clauses: readonly FilterClause[]): number {
  const table = CLAUSES_AT >> 2;
  let at = CLAUSES_AT + clauses.length * 16;
  for (let k = 0; k < clauses.length; k++) {
    const [field, expected] = clauses[k] as FilterClause;
    if ((field.length + expected.length) * 3 > CLAUSES_AT + CLAUSE_BYTES - at || !isWellFormed(field) || !isWellFormed(expected)) return -1;
    const fieldBytes = utf8Write.call(p.bytes, field, at, field.length * 3);
    p.words[table + k * 4] = at;
    p.words[table + k * 4 + 1] = fieldBytes;
    at += fieldBytes;
    const expectedBytes = utf8Write.call(p.bytes, expected, at, expected.length * 3);
    p.words[table + k * 4 + 2] = at;
    p.words[table + k * 4 + 3] = expectedBytes;
    at += expectedBytes;
  }
  return clauses.length;
}
