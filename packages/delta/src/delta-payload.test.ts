import { describe, expect, it } from 'vitest';
import { DELTA_PAYLOAD_PREFIX, DeltaError, createDeltaReader, encodeDeltaPayload, payloadBytes } from './index.js';

const payload = (price: number, title: string, offset: number): string =>
  JSON.stringify({ data: { listingUpdated: { listing_id: 'lst-1', title, description: 'x'.repeat(300), price } }, extensions: { position: { topic: 't', partition: 0, offset: String(offset) } } });

/** What a gateway sends to a delta subscriber for a sequence of full payloads. */
function wire(fulls: readonly string[]): string[] {
  return fulls.map((text, i) => (i === 0 ? text : (encodeDeltaPayload(payloadBytes(fulls[i - 1] as string), payloadBytes(text), text.length) ?? text)));
}

describe('delta payloads', () => {
  const fulls = [payload(100, 'Café — “Signed” 🎸', 1), payload(105, 'Café — “Signed” 🎸', 2), payload(110, 'Caf€ — signed 🎹', 3), payload(110, 'Caf€ — signed 🎹', 4)];

  it('reconstructs every payload byte for byte from raw text, non-ASCII literals included', () => {
    const sent = wire(fulls);
    expect(sent.slice(1).every((s) => s.startsWith(DELTA_PAYLOAD_PREFIX))).toBe(true);
    expect(sent[1]?.length).toBeLessThan((fulls[1] as string).length / 4);
    const reader = createDeltaReader();
    expect(sent.map((s) => reader.readText(s))).toEqual(fulls);
  });

  it('reconstructs from parsed payloads (graphql-ws clients) and passes recovery signals without using them as a base', () => {
    const sent = wire(fulls).map((s) => JSON.parse(s) as unknown);
    const recovery = { extensions: { recovery: { recovered: true } } };
    const reader = createDeltaReader();
    const out = [reader.read(sent[0]), reader.read(recovery), ...sent.slice(1).map((s) => reader.read(s))];
    expect(out).toEqual([JSON.parse(fulls[0] as string), recovery, ...fulls.slice(1).map((f) => JSON.parse(f) as unknown)]);
  });

  it('sends the full payload when a delta would not be smaller', () => {
    const a = JSON.stringify({ data: { n: 1 } });
    const b = JSON.stringify({ data: { m: 'completely different' } });
    expect(encodeDeltaPayload(payloadBytes(a), payloadBytes(b), b.length)).toBeUndefined();
  });

  it('refuses a delta against the wrong base, or before any full payload, with a retriable error', () => {
    const sent = wire(fulls);
    expect(() => createDeltaReader().readText(sent[1] as string)).toThrow(DeltaError);
    const reader = createDeltaReader();
    reader.readText(fulls[2] as string);
    expect(() => reader.readText(sent[1] as string)).toThrow(/resubscribe/);
  });
});
