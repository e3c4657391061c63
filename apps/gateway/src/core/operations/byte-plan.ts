/**
 * An operation's plan as bytes for the WebAssembly projector (assembly/envelope-projector.ts,
 * decision 0043): the same plan the JavaScript writer is generated from (projection-plan.ts), laid
 * out as u32 words and the UTF-8 of its keys, property names and type names. Offsets are from the
 * blob's start. Operations of one shape share one blob (their documents differ only in arguments).
 *
 *   ROOT    [9, field count, lead offset, lead length, fields…]
 *   OBJECT  [6 | nonNull << 8, field count, table mask, table offset, slot count, fields…]; table: u32 per
 *           entry, the index + 1 of the first field reading a property (fields reading one property share its slot)
 *   LIST    [7 | nonNull << 8, item node offset]
 *   leaf    [kind | nonNull << 8]                  (String, Int, Float, Boolean, ID)
 *   field   [key offset, key length, property offset, property length, value node offset, flags | slot << 8]
 *           flags 1: a constant (`__typename`), whose text is at the property's offset and length
 *
 * Enums and custom scalars (their own `serialize` decides) have no byte plan: such operations
 * render in JavaScript only.
 */
import { BOOLEAN, FLOAT, ID, INT, LIST, OBJECT, STRING, TYPENAME, type FieldPlan, type ValuePlan } from './projection-plan.js';

/** An operation's plan for the WebAssembly projector; shared by the operations of one shape. */
export interface BytePlan {
  readonly blob: Uint8Array;
}

const ROOT = 9;
const CONSTANT = 1;
const FIELD_WORDS = 6;
const LEAVES = new Set([STRING, INT, FLOAT, BOOLEAN, ID]);
/** Written before the data: the projector's output is the whole `next` payload up to its extensions. */
const LEAD = '{"data":';

/** The hash the module computes for a key's bytes (assembly/envelope-projector.ts, keyHash). */
export function keyHash(bytes: Uint8Array): number {
  const n = bytes.length;
  let h = Math.imul(n, 0x9e3779b1);
  if (n > 0) {
    h ^= Math.imul(bytes[0] as number, 0x85ebca6b);
    h ^= Math.imul(bytes[n - 1] as number, 0xc2b2ae35);
    h ^= Math.imul(bytes[n >> 1] as number, 0x27d4eb2f);
  }
  return (h ^ (h >>> 15)) >>> 0;
}

const encoder = new TextEncoder();

class BlobWriter {
  readonly words: number[] = [];
  readonly text: number[] = [];

  /** Reserves `n` words; returns the index of the first. */
  reserve(n: number): number {
    const at = this.words.length;
    for (let k = 0; k < n; k++) this.words.push(0);
    return at;
  }

  /** Text bytes, as [offset in the text area, length]; offsets are fixed up when the blob is built. */
  bytes(value: string): [number, number] {
    const encoded = encoder.encode(value);
    const at = this.text.length;
    for (const b of encoded) this.text.push(b);
    return [at, encoded.length];
  }
}

/** Word indexes that hold text offsets (made absolute once the word area's size is known). */
type TextRefs = number[];

/** The byte plan of a compiled root, or undefined when some value needs its scalar's own `serialize`. */
export function compileBytePlan(root: readonly FieldPlan[]): BytePlan | undefined {
  if (!root.every((field) => encodable(field.value))) return undefined;
  const w = new BlobWriter();
  const refs: TextRefs = [];
  const at = w.reserve(4 + root.length * FIELD_WORDS);
  w.words[at] = ROOT;
  w.words[at + 1] = root.length;
  const [leadOff, leadLen] = w.bytes(LEAD);
  w.words[at + 2] = leadOff;
  w.words[at + 3] = leadLen;
  refs.push(at + 2);
  writeFields(w, refs, root, at + 4);
  return { blob: build(w, refs) };
}

function encodable(plan: ValuePlan): boolean {
  if (plan.kind === OBJECT) return plan.fields.every((field) => encodable(field.value));
  if (plan.kind === LIST) return encodable(plan.item as ValuePlan);
  return plan.kind === TYPENAME || LEAVES.has(plan.kind);
}

function writeFields(w: BlobWriter, refs: TextRefs, fields: readonly FieldPlan[], from: number): void {
  fields.forEach((field, i) => {
    const at = from + i * FIELD_WORDS;
    const [keyOff, keyLen] = w.bytes(field.prefix);
    w.words[at] = keyOff;
    w.words[at + 1] = keyLen;
    refs.push(at);
    const [propOff, propLen] = w.bytes(field.value.kind === TYPENAME ? field.value.constant : field.prop);
    w.words[at + 2] = propOff;
    w.words[at + 3] = propLen;
    refs.push(at + 2);
    if (field.value.kind === TYPENAME) w.words[at + 5] = CONSTANT;
    else w.words[at + 4] = writeNode(w, refs, field.value) * 4;
  });
}

/** Writes a value's node; returns its word index. */
function writeNode(w: BlobWriter, refs: TextRefs, plan: ValuePlan): number {
  const head = plan.kind | (plan.nonNull ? 0x100 : 0);
  if (plan.kind === LIST) {
    const at = w.reserve(2);
    w.words[at] = head;
    w.words[at + 1] = writeNode(w, refs, plan.item as ValuePlan) * 4;
    return at;
  }
  if (plan.kind !== OBJECT) {
    const at = w.reserve(1);
    w.words[at] = head;
    return at;
  }
  const { fields } = plan;
  let size = 4;
  while (size < fields.length * 2) size *= 2; // load factor ≤ 0.5
  const at = w.reserve(5 + fields.length * FIELD_WORDS);
  const table = w.reserve(size);
  w.words[at] = head;
  w.words[at + 1] = fields.length;
  w.words[at + 2] = size - 1;
  w.words[at + 3] = table * 4;
  writeFields(w, refs, fields, at + 5);
  // One slot per property read (an aliased field may read one twice), found by the first field reading it.
  const slots = new Map<string, number>();
  fields.forEach((field, i) => {
    if (field.value.kind === TYPENAME) return;
    let slot = slots.get(field.prop);
    if (slot === undefined) {
      slot = slots.size;
      slots.set(field.prop, slot);
      let entry = keyHash(encoder.encode(field.prop)) & (size - 1);
      while ((w.words[table + entry] as number) !== 0) entry = (entry + 1) & (size - 1);
      w.words[table + entry] = i + 1;
    }
    const flags = at + 5 + i * FIELD_WORDS + 5;
    w.words[flags] = (w.words[flags] as number) | (slot << 8);
  });
  w.words[at + 4] = slots.size;
  return at;
}

function build(w: BlobWriter, refs: TextRefs): Uint8Array {
  const textAt = w.words.length * 4;
  for (const ref of refs) w.words[ref] = (w.words[ref] as number) + textAt;
  const blob = new Uint8Array(textAt + w.text.length);
  const view = new DataView(blob.buffer);
  w.words.forEach((word, i) => view.setUint32(i * 4, word, true));
  blob.set(w.text, textAt);
  return blob;
}
