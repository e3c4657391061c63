import { describe, expect, it } from 'vitest';
import { createPositionTracker } from './position-tracker.js';

const EPOCH = 'e-1';
// null: no epoch (a gateway without history).
const event = (partition: number, offset: string, epoch: string | null = EPOCH) => ({
  data: { listingUpdated: { event_id: `${partition}:${offset}` } },
  extensions: { position: { topic: 't', partition, offset, ...(epoch === null ? {} : { epoch }) } },
});
const start = (positions: Record<string, string>, epoch: string | null = EPOCH) => ({
  extensions: { start: { ...(epoch === null ? {} : { epoch }), positions } },
});

describe('createPositionTracker', () => {
  it('asks for a start until it has one, then resumes from the start overlaid with the last offset per partition', () => {
    const tracker = createPositionTracker();
    expect(tracker.requestExtensions()).toEqual({ start: true });
    expect(tracker.reconnecting()).toBeUndefined(); // never live: nothing to report
    expect(tracker.accept(start({ '0': '41', '1': '17', '2': '99' }))).toEqual({ kind: 'start', start: { epoch: EPOCH, positions: { '0': '41', '1': '17', '2': '99' } } });
    // A client that received nothing resumes with its start as it is.
    expect(tracker.requestExtensions()).toEqual({ resume: { epoch: EPOCH, positions: { '0': '41', '1': '17', '2': '99' } } });
    expect(tracker.accept(event(0, '42'))).toEqual({ kind: 'event' });
    expect(tracker.accept(event(0, '1041'))).toEqual({ kind: 'event' });
    expect(tracker.accept(event(3, '5'))).toEqual({ kind: 'event' }); // a partition the start did not list
    // Partitions 1 and 2 (never seen) resume from the start, not from the oldest retained event.
    expect(tracker.resumeState()).toEqual({ epoch: EPOCH, positions: { '0': '1041', '1': '17', '2': '99', '3': '5' } });
    expect(tracker.reconnecting()).toBeUndefined();
  });

  it('drops an event at or below the last offset of its partition (compared as int64 decimal strings)', () => {
    const tracker = createPositionTracker();
    tracker.accept(start({ '0': '9' }));
    expect(tracker.accept(event(0, '9')).kind).toBe('duplicate'); // at the start: published before it became live
    expect(tracker.accept(event(0, '10')).kind).toBe('event');
    expect(tracker.accept(event(0, '10'))).toEqual({ kind: 'duplicate', position: { topic: 't', partition: 0, offset: '10', epoch: EPOCH } });
    expect(tracker.accept(event(0, '9')).kind).toBe('duplicate');
    expect(tracker.accept(event(0, '100')).kind).toBe('event'); // longer is larger, not "1" < "9"
    expect(tracker.accept(event(1, '0')).kind).toBe('event'); // other partitions are independent
    expect(tracker.accept(event(0, '9223372036854775806')).kind).toBe('event');
    expect(tracker.accept(event(0, '9223372036854775806')).kind).toBe('duplicate');
    expect(tracker.resumeState()?.positions).toEqual({ '0': '9223372036854775806', '1': '0' });
  });

  it('keeps the positions after a recovered resume, and forgets them when the epoch changed', () => {
    const tracker = createPositionTracker();
    tracker.accept(start({ '0': '5', '1': '7' }));
    tracker.accept(event(0, '6'));
    expect(tracker.accept({ extensions: { recovery: { recovered: true, epoch: EPOCH } } })).toEqual({ kind: 'recovery', recovery: { recovered: true, epoch: EPOCH } });
    expect(tracker.resumeState()).toEqual({ epoch: EPOCH, positions: { '0': '6', '1': '7' } });
    expect(tracker.accept(event(0, '6')).kind).toBe('duplicate'); // the replay never goes back

    const lost = { recovered: false, epoch: 'e-2', reason: 'epoch changed: the history your positions belong to was lost' };
    expect(tracker.accept({ extensions: { recovery: lost } })).toEqual({ kind: 'recovery', recovery: lost });
    // The new epoch's history is replayed from its beginning: no old position may filter it.
    expect(tracker.resumeState()).toEqual({ epoch: 'e-2', positions: {} });
    expect(tracker.accept(event(0, '3', 'e-2')).kind).toBe('event');
    expect(tracker.resumeState()).toEqual({ epoch: 'e-2', positions: { '0': '3' } });
  });

  it('keeps the positions after a recovery that lost events to retention (same epoch)', () => {
    const tracker = createPositionTracker({ epoch: EPOCH, positions: { '0': '5' } });
    expect(tracker.requestExtensions()).toEqual({ resume: { epoch: EPOCH, positions: { '0': '5' } } });
    const trimmed = { recovered: false, epoch: EPOCH, reason: 'history no longer covers the gap (retention)', partitions: [0] };
    expect(tracker.accept({ extensions: { recovery: trimmed } })).toEqual({ kind: 'recovery', recovery: trimmed });
    expect(tracker.resumeState()).toEqual({ epoch: EPOCH, positions: { '0': '5' } });
  });

  it('reports an epoch that changed under a live subscription, once, and starts over with the new positions', () => {
    const tracker = createPositionTracker();
    tracker.accept(start({ '0': '50' }));
    tracker.accept(event(0, '51'));
    const verdict = tracker.accept(event(0, '20', 'e-2'));
    expect(verdict).toMatchObject({ kind: 'event', recovery: { recovered: false, epoch: 'e-2' } });
    expect(verdict.kind === 'event' && verdict.recovery?.reason).toMatch(/^epoch changed while connected/);
    expect(tracker.accept(event(0, '21', 'e-2'))).toEqual({ kind: 'event' });
    expect(tracker.resumeState()).toEqual({ epoch: 'e-2', positions: { '0': '21' } });
  });

  it('cannot resume without an epoch (a gateway without history): asks for a start again and says events were lost', () => {
    const tracker = createPositionTracker();
    tracker.accept(start({}, null));
    tracker.accept(event(0, '1', null));
    expect(tracker.resumeState()).toBeUndefined();
    expect(tracker.requestExtensions()).toEqual({ start: true });
    expect(tracker.reconnecting()).toMatchObject({ recovered: false, reason: expect.stringMatching(/^cannot resume: the gateway sent no epoch/) as string });
  });

  it('hands on results without positions (GraphQL errors) and ignores extensions it does not know', () => {
    const tracker = createPositionTracker();
    expect(tracker.accept({ errors: [{ message: 'boom' }] })).toEqual({ kind: 'event' });
    expect(tracker.accept({ data: { x: 1 } })).toEqual({ kind: 'event' });
    expect(tracker.accept({ data: { x: 1 }, extensions: { other: true } })).toEqual({ kind: 'event' });
    // A start with data is the application's: not a signal.
    expect(tracker.accept({ data: { x: 1 }, extensions: { start: 'anything' } })).toEqual({ kind: 'event' });
  });

  it.each([
    [null, /a next payload must be an object/],
    [{ extensions: 'x' }, /extensions of a next payload must be an object/],
    [{ extensions: { start: { epoch: EPOCH, positions: [] } } }, /extensions\.start\.positions must be an object/],
    [{ extensions: { start: { epoch: 7, positions: {} } } }, /extensions\.start\.epoch must be a non-empty string/],
    [{ extensions: { start: { epoch: EPOCH, positions: { '-1': '3' } } } }, /"-1" is not a partition number/],
    [{ extensions: { start: { epoch: EPOCH, positions: { '0': 3 } } } }, /extensions\.start\.positions\["0"\] must be an offset as a decimal string, got 3/],
    [{ extensions: { recovery: { recovered: 'yes' } } }, /extensions\.recovery\.recovered must be a boolean, got "yes"/],
    [{ extensions: { recovery: { recovered: false, partitions: ['0'] } } }, /extensions\.recovery\.partitions must be an array of partition numbers/],
    [{ data: {}, extensions: { position: { topic: 't', partition: 0, offset: 12 } } }, /extensions\.position\.offset must be an offset as a decimal string, got 12/],
    [{ data: {}, extensions: { position: { topic: 't', partition: 0, offset: '012' } } }, /extensions\.position\.offset/],
    [{ data: {}, extensions: { position: { topic: 't', partition: 1.5, offset: '1' } } }, /extensions\.position\.partition must be a partition number, got 1\.5/],
    [{ data: {}, extensions: { position: 'p' } }, /extensions\.position must be an object/],
  ])('names what is malformed: %j', (payload, message) => {
    const verdict = createPositionTracker().accept(payload);
    expect(verdict.kind).toBe('malformed');
    expect(verdict.kind === 'malformed' && verdict.message).toMatch(message);
  });

  it('does not resume from a snapshot\'s entries: until its end frame it asks again, then resumes from the seam', () => {
    const tracker = createPositionTracker();
    const entry = (partition: number, offset: string) => ({ ...event(partition, offset), extensions: { ...event(partition, offset).extensions, snapshot: true } });
    expect(tracker.accept(entry(0, '7'))).toEqual({ kind: 'event' });
    expect(tracker.accept(entry(0, '3'))).toEqual({ kind: 'event' }); // entries are no resume point: not a duplicate either
    expect(tracker.requestExtensions()).toEqual({ start: true }); // cut here: the snapshot is asked for again
    const seam = { keys: 2, truncated: false, epoch: EPOCH, positions: { '0': '9' } };
    expect(tracker.accept({ extensions: { snapshot: seam, start: { epoch: EPOCH, positions: { '0': '9' } } } })).toEqual({
      kind: 'snapshot',
      snapshot: seam,
      start: { epoch: EPOCH, positions: { '0': '9' } },
    });
    expect(tracker.requestExtensions()).toEqual({ resume: { epoch: EPOCH, positions: { '0': '9' } } });
    expect(tracker.accept(event(0, '9')).kind).toBe('duplicate'); // at the seam: in the snapshot already
    expect(tracker.accept(event(0, '10')).kind).toBe('event');
  });

  it('reads a data-less deleted frame as a deletion that moves its partition, and checks the end frame\'s shape', () => {
    const tracker = createPositionTracker();
    tracker.accept(start({ '0': '9' }));
    const deleted = (offset: string) => ({ extensions: { deleted: { key: 'lst-1' }, position: { topic: 't', partition: 0, offset, epoch: EPOCH } } });
    expect(tracker.accept(deleted('10'))).toEqual({ kind: 'deleted', key: 'lst-1', position: { topic: 't', partition: 0, offset: '10', epoch: EPOCH } });
    expect(tracker.accept(deleted('10')).kind).toBe('duplicate');
    expect(tracker.accept({ extensions: { deleted: { key: 3 }, position: { topic: 't', partition: 0, offset: '11' } } })).toEqual({
      kind: 'malformed',
      message: 'extensions.deleted must be an object { key: string | null }, got {"key":3}',
    });
    expect(tracker.accept({ extensions: { snapshot: { keys: 1, truncated: 'no', positions: {} } } })).toEqual({
      kind: 'malformed',
      message: 'extensions.snapshot.truncated must be a boolean, got "no"',
    });
    expect(tracker.accept({ extensions: { snapshot: { keys: 1, truncated: true, positions: { '0': 12 } } } })).toEqual({
      kind: 'malformed',
      message: 'extensions.snapshot.positions["0"] must be an offset as a decimal string, got 12',
    });
  });

  it('a replay from a time: the recovery signal (with oldest), then the start where the replay begins, then events; resumes from those', () => {
    const tracker = createPositionTracker();
    const recovery = { recovered: false, epoch: EPOCH, reason: 'history does not reach back', partitions: [1], oldest: '2026-12-04T09:00:15.000Z' };
    expect(tracker.accept({ extensions: { recovery } })).toEqual({ kind: 'recovery', recovery });
    expect(tracker.accept(start({ '0': '116' }))).toMatchObject({ kind: 'start' });
    expect(tracker.accept(event(0, '117')).kind).toBe('event');
    expect(tracker.requestExtensions()).toEqual({ resume: { epoch: EPOCH, positions: { '0': '117' } } });
    expect(tracker.accept({ extensions: { recovery: { recovered: false, epoch: EPOCH, oldest: 15 } } })).toEqual({
      kind: 'malformed',
      message: 'extensions.recovery.oldest must be a time string, got 15',
    });
  });
});
