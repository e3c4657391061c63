// The frame scratch: a group's first socket laid out from the text, the payloads encoded once when a
// second socket of the same write comes; text written without measuring it first still grows the
// buffer when multi-byte characters would not fit.
import { describe, expect, it } from 'vitest';
import { createFrameScratch } from './payload-bytes.js';

describe('the frame scratch', () => {
  it('says which socket is the first of a group write, and encodes the payloads only for a second', () => {
    const scratch = createFrameScratch();
    const write = ['{"data":1}'];
    expect(scratch.firstUse(write)).toBe(true);
    expect(scratch.firstUse(write)).toBe(false);
    expect(scratch.bytesOf(write).map((b) => b.toString())).toEqual(['{"data":1}']);
    expect(scratch.firstUse(write)).toBe(false);
    expect(scratch.firstUse(['{"data":1}'])).toBe(true);
  });

  it('lays out multi-byte text exactly, growing past its 64 KiB when the worst case does not fit', () => {
    const scratch = createFrameScratch();
    const ascii = 'a'.repeat(65_536 - 5);
    const wide = 'é€😀'.repeat(3);
    scratch.reset();
    scratch.text(ascii, true);
    scratch.text(wide, false);
    scratch.byte(0x7d);
    expect(scratch.frame().equals(Buffer.from(ascii + wide + '}'))).toBe(true);
    scratch.reset();
    scratch.text(wide, false);
    expect(scratch.frame().toString()).toBe(wide);
  });
});
