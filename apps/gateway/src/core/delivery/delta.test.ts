import { describe, expect, it } from 'vitest';
import { DELTA_PAYLOAD_PREFIX, createDeltaReader } from '@wirestream/delta';
import { computeGroupDeltas, framesFromBase, parseDeltaRequest } from './delta.js';
import type { Group } from './groups.js';

const payload = (n: number): string =>
  JSON.stringify({ data: { listingUpdated: { listing_id: 'lst-1', title: 'Signed Vinyl Collection', description: 'x'.repeat(400), price: 100 + n } }, extensions: { position: { offset: String(n) } } });

/** Only the fields computeGroupDeltas reads. */
const group = (): Group<unknown> => ({ deltaBase: undefined }) as unknown as Group<unknown>;

describe('parseDeltaRequest', () => {
  it('accepts "fossil", ignores absence and refuses anything else with the accepted value', () => {
    expect(parseDeltaRequest({ delta: 'fossil' })).toBe(true);
    expect(parseDeltaRequest(undefined)).toBe(false);
    expect(parseDeltaRequest({ resume: {} })).toBe(false);
    expect(parseDeltaRequest({ delta: null })).toBe(false);
    expect(parseDeltaRequest({ delta: 'vcdiff' })).toBe('extensions.delta must be "fossil" (the only delta format), got "vcdiff"');
    expect(parseDeltaRequest({ delta: 1 })).toMatch(/got 1$/);
  });
});

describe('computeGroupDeltas', () => {
  it('without a base: no delta list for base holders, the first payload full, the rest deltas; the group keeps the last as base', () => {
    const g = group();
    const payloads = [payload(1), payload(2), payload(3)];
    const d = computeGroupDeltas(g, payloads);
    expect(d.withBase).toBeUndefined();
    expect(d.fromFull[0]).toBe(payloads[0]);
    expect(d.fromFull.slice(1).every((p) => p.startsWith(DELTA_PAYLOAD_PREFIX))).toBe(true);
    expect(d.deltasFromFull).toBe(2);
    const reader = createDeltaReader();
    expect(d.fromFull.map((p) => reader.readText(p))).toEqual(payloads);
    expect(new TextDecoder().decode(g.deltaBase)).toBe(payloads[2]);
  });

  it('with a base: every payload a delta from the one before, continuing a reader that saw the previous flush', () => {
    const g = group();
    const reader = createDeltaReader();
    const first = computeGroupDeltas(g, [payload(1)]);
    reader.readText(first.fromFull[0] as string);
    const next = [payload(2), payload(3)];
    const d = computeGroupDeltas(g, next);
    expect(d.withBase?.every((p) => p.startsWith(DELTA_PAYLOAD_PREFIX))).toBe(true);
    expect(d.deltasWithBase).toBe(2);
    expect(d.withBase?.map((p) => reader.readText(p))).toEqual(next);
  });

  it('keeps the text of its base beside the bytes: what withBase starts from', () => {
    const g = group();
    expect(computeGroupDeltas(g, [payload(1)]).baseText).toBeUndefined();
    expect(computeGroupDeltas(g, [payload(2), payload(3)]).baseText).toBe(payload(1));
    expect(g.deltaBaseText).toBe(payload(3));
  });
});

describe('framesFromBase (a subscriber out of a catch-up, its last payload known)', () => {
  /** A reader whose base is `text`, as a client that was last sent it in full. */
  const readerAt = (text: string) => {
    const reader = createDeltaReader();
    reader.readText(text);
    return reader;
  };

  it("the group's own deltas when its last payload is the group's base, even a replayed copy of it", () => {
    const g = group();
    computeGroupDeltas(g, [payload(1), payload(2)]);
    const next = [payload(3), payload(4)];
    const d = computeGroupDeltas(g, next);
    const replayedCopy = JSON.stringify(JSON.parse(payload(2)));
    expect(framesFromBase(d, replayedCopy, next)).toBe(d.withBase);
  });

  it('a first delta of its own from another base, then the shared ones: it reconstructs every payload', () => {
    const g = group();
    computeGroupDeltas(g, [payload(1)]);
    const next = [payload(3), payload(4)];
    const d = computeGroupDeltas(g, next);
    const frames = framesFromBase(d, payload(2), next);
    expect(frames?.every((p) => p.startsWith(DELTA_PAYLOAD_PREFIX))).toBe(true);
    expect(frames?.slice(1)).toEqual(d.fromFull.slice(1));
    const reader = readerAt(payload(2));
    expect(frames?.map((p) => reader.readText(p))).toEqual(next);
  });

  it('a delta of its own when the group has no base yet; undefined when no delta is smaller', () => {
    const d = computeGroupDeltas(group(), [payload(5)]);
    const frames = framesFromBase(d, payload(4), [payload(5)]);
    expect(readerAt(payload(4)).readText(frames?.[0] as string)).toBe(payload(5));
    const unrelated = JSON.stringify({ data: { other: 1 } });
    expect(framesFromBase(d, unrelated, [payload(5)])).toBeUndefined();
  });
});
