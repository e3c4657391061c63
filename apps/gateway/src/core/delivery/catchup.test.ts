// A subscriber's hold while it catches up (catchup.ts): live payloads wait; on release, those at
// or below what the client has are dropped and the rest sent in order; later live payloads are
// checked per partition until each moved past, then the subscriber is plainly live.
import { describe, expect, it } from 'vitest';
import { createCatchup, dropCovered, holdForCatchup, releaseCatchup, type CatchingUp } from './catchup.js';
import type { ConnectionWriter } from '../connection-writer.js';

interface Conn {
  readonly sent: string[];
}

const writer: ConnectionWriter<Conn> = {
  send: (c, frame) => void c.sent.push(frame),
  sendFrames: (c, _head, payloads) => void c.sent.push(...payloads),
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

function holding(): CatchingUp<Conn> & { conn: Conn } {
  return { conn: { sent: [] }, head: '', catchup: createCatchup(), catchupBase: undefined };
}

const at = (partitions: number[], offsets: string[]) => ({ epoch: 'e', partitions, offsets });

describe('catch-up hold', () => {
  it('holds live payloads until released, then sends only those past what the client has', () => {
    const s = holding();
    holdForCatchup(writer, s, s.catchup!, ['a', 'b', 'c'], at([0, 0, 1], ['1', '2', '1']));
    expect(s.conn.sent).toEqual([]);
    releaseCatchup(writer, s, new Map([[0, '1']]), 'e');
    expect(s.conn.sent).toEqual(['b', 'c']);
    expect(s.catchup).toBeUndefined(); // every covered partition moved on: plainly live
  });

  it('keeps checking a partition that has not moved past its covered offset', () => {
    const s = holding();
    releaseCatchup(writer, s, new Map([[0, '5']]), 'e');
    expect(s.catchup).toBeDefined();
    holdForCatchup(writer, s, s.catchup!, ['old', 'new'], at([0, 0], ['5', '6']));
    expect(s.conn.sent).toEqual(['new']);
    expect(s.catchup).toBeUndefined();
  });

  it('forgets held payloads a replay already sent', () => {
    const s = holding();
    holdForCatchup(writer, s, s.catchup!, ['a', 'b'], at([0, 0], ['3', '4']));
    dropCovered(s, new Map([[0, '3']]));
    expect(s.catchup?.held.map((h) => h.payload)).toEqual(['b']);
  });

  it('after the replay, sends a flush it passes whole as deltas from the last payload it sent (a delta subscriber)', () => {
    const s: CatchingUp<Conn> & { conn: Conn } = { ...holding(), delta: true };
    const bases: string[] = [];
    const deltasFrom = (base: string) => (bases.push(base), ['d1', 'd2']);
    releaseCatchup(writer, s, new Map([[0, '2']]), 'e', 'replayed-2');
    holdForCatchup(writer, s, s.catchup!, ['p3', 'p4'], at([0, 0], ['3', '4']), [], deltasFrom);
    expect(s.conn.sent).toEqual(['d1', 'd2']);
    expect(bases).toEqual(['replayed-2']);
    expect(s.catchupBase).toBe('p4'); // what the client reconstructs last, whatever travelled
  });

  it('sends in full a flush of which it skips a payload, and keeps no base for a subscriber not in delta mode', () => {
    const s: CatchingUp<Conn> & { conn: Conn } = { ...holding(), delta: true };
    const deltasFrom = () => ['never'];
    releaseCatchup(writer, s, new Map([[0, '3']]), 'e', 'replayed-3');
    holdForCatchup(writer, s, s.catchup!, ['p3', 'p4'], at([0, 0], ['3', '4']), [], deltasFrom);
    expect(s.conn.sent).toEqual(['p4']);
    expect(s.catchupBase).toBe('p4');
    const plain = holding();
    releaseCatchup(writer, plain, new Map([[0, '2']]), 'e', 'replayed-2');
    holdForCatchup(writer, plain, plain.catchup!, ['p3'], at([0], ['3']), [], deltasFrom);
    expect(plain.conn.sent).toEqual(['p3']);
    expect(plain.catchupBase).toBeUndefined();
  });
});
