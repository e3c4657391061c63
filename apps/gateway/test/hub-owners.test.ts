// The rules of the hub's parts, each on its own (the whole hub on the in-process bus is hub.test.ts):
// the epoch's one loader (epoch.ts) and the inbound queue (inbound.ts) — bounded (pause past the
// bound), held during a back-fill (queued messages dropped, later ones kept and released in order),
// and a held queue that overflows is dropped and reported once to the back-fill.
import { describe, expect, it } from 'vitest';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { createMemoryBus, type HistoryReader } from '../src/index.js';
import { createEpoch, currentEpoch, knownEpoch, reloadEpoch } from '../src/core/delivery/epoch.js';
import { createInbound, holdInbound, inboundStats, onBrokerMessage, queuedMessages, releaseInbound, takeDropped, type Inbound } from '../src/core/delivery/inbound.js';
import { createScheduler } from '../src/core/delivery/scheduler.js';
import { createHubStats } from '../src/core/delivery/stats.js';

/** The bus's history, counting the epoch loads that reach it. */
function countingHistory(history: HistoryReader): { history: HistoryReader; loads: () => number } {
  let loads = 0;
  return {
    history: { ...history, loadEpoch: () => (loads++, history.loadEpoch()) },
    loads: () => loads,
  };
}

describe('the epoch (one loader)', () => {
  it('loads once for every caller that asks while it is unknown, then answers from memory', async () => {
    const bus = createMemoryBus();
    const { history, loads } = countingHistory(bus.history);
    const epoch = createEpoch(history, createLogger({ name: 'gateway', destination: createMemorySink() }));
    expect(currentEpoch(epoch)).toBeUndefined();
    const answers = await Promise.all([knownEpoch(epoch), knownEpoch(epoch), knownEpoch(epoch)]);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toBe(await bus.history.loadEpoch());
    expect(loads()).toBe(1);
    await knownEpoch(epoch);
    expect(loads()).toBe(1);
  });

  it('reloads on every reconnect and says so when the history was lost', async () => {
    const bus = createMemoryBus();
    const sink = createMemorySink();
    const epoch = createEpoch(bus.history, createLogger({ name: 'gateway', destination: sink }));
    const first = await knownEpoch(epoch);
    bus.flushAll(); // a Redis restarted empty: a new epoch
    await reloadEpoch(epoch);
    expect(currentEpoch(epoch)).not.toBe(first);
    expect(sink.lines.some((line) => line['msg'] === 'history epoch changed: Redis lost its history')).toBe(true);
  });

  it('is undefined without history, and never loads', async () => {
    const epoch = createEpoch(undefined, createLogger({ name: 'gateway', destination: createMemorySink() }));
    expect(await knownEpoch(epoch)).toBeUndefined();
    await reloadEpoch(epoch);
    expect(currentEpoch(epoch)).toBeUndefined();
  });
});

function inboundOf(maxInboundBytes: number): Inbound {
  const bus = createMemoryBus();
  const logger = createLogger({ name: 'gateway', destination: createMemorySink() });
  const scheduler = createScheduler(); // its slice does nothing here: the queue is looked at directly
  return createInbound({ broker: bus.broker, logger, metrics: undefined, stats: createHubStats(), flow: { sliceMs: 5, flushDelayMs: 5, maxInboundBytes }, scheduler });
}

describe('the inbound queue', () => {
  it('queues in arrival order and asks for one slice however many messages come', () => {
    const inbound = inboundOf(1_000);
    onBrokerMessage(inbound, 'a', 'one');
    onBrokerMessage(inbound, 'b', 'two');
    expect(inbound.queue.texts).toEqual(['one', 'two']);
    expect(inbound.queue.channels).toEqual(['a', 'b']);
    expect(inbound.scheduler.scheduled).toBe(true);
    expect(inboundStats(inbound)).toEqual({ messages: 2, chars: 6, paused: false });
  });

  it('pauses the broker past its bound, once', () => {
    const inbound = inboundOf(10);
    onBrokerMessage(inbound, 'a', '123456');
    expect(inbound.paused).toBe(false);
    onBrokerMessage(inbound, 'a', '123456');
    onBrokerMessage(inbound, 'a', '123456');
    expect(inbound.paused).toBe(true);
    expect(inbound.stats.pauses).toBe(1);
  });

  it('holds during a back-fill: what was queued is dropped, what comes later waits and is released', () => {
    const inbound = inboundOf(1_000);
    onBrokerMessage(inbound, 'a', 'before');
    holdInbound(inbound);
    expect(queuedMessages(inbound)).toBe(0);
    inbound.scheduler.scheduled = false;
    onBrokerMessage(inbound, 'a', 'during');
    expect(inbound.scheduler.scheduled).toBe(false); // held: no slice
    releaseInbound(inbound);
    expect(inbound.held).toBe(false);
    expect(inbound.queue.texts.slice(inbound.queue.head)).toEqual(['during']);
    expect(inbound.scheduler.scheduled).toBe(true);
  });

  it('drops a held queue that passes the bound (never pauses while held) and tells the back-fill once', () => {
    const inbound = inboundOf(10);
    holdInbound(inbound);
    onBrokerMessage(inbound, 'a', '123456');
    onBrokerMessage(inbound, 'a', '123456');
    expect(inbound.paused).toBe(false);
    expect(queuedMessages(inbound)).toBe(0);
    expect(takeDropped(inbound)).toBe(true);
    expect(takeDropped(inbound)).toBe(false);
  });
});
