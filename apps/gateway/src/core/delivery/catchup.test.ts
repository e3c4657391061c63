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
  return { conn: { sent: [] }, head: '', catchup: createCatchup() };
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
});
