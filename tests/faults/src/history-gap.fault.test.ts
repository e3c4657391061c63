// Fault 7: a client away longer than history reaches. It must be told so explicitly
// (`recovered: false`), get what history still holds after its position, then live events:
// never a silent gap, never a duplicate of what it already had.
import { describe, expect, it, onTestFinished } from 'vitest';
import { sharedKafkaFromEnv, waitFor } from '@wirestream/testkit';
import { countDelivery, createFaultHarness, PARTITIONS } from './harness.js';
import { connectResumingClient } from './resuming-client.js';

const QUERY = 'subscription { listingUpdated { event_id } }';

describe('fault 7: history too short for the gap', () => {
  it('the client receives the explicit not-recovered signal, and no duplicate', async () => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: sharedKafkaFromEnv()?.brokers ?? [] });
    onTestFinished(() => harness.close());
    // ~100 offsets per partition (MINID ~ trims whole chunk entries, so a little more may stay).
    await harness.startIngest({ env: { INGEST_HISTORY_LENGTH: '100' } });
    const gateway = await harness.startGateway();
    const [watcher] = await harness.connectClients(gateway, 1); // sees everything, for the totals
    if (!watcher) throw new Error('watcher expected');

    const first = connectResumingClient('leaver', [gateway.wsUrl], QUERY);
    await waitFor(async () => ((await harness.gatewayStats(gateway))['subscriptions'] as number) === 2, { message: 'leaver subscribed' });
    const stream = harness.startStream({ events: 1_500, perSecond: 300 });
    await waitFor(() => first.positions.length >= 150, { timeoutMs: 60_000, message: 'the leaver to receive 150 events' });
    const state = first.resumeState();
    await first.client.dispose(); // gone while ~1,300 more events (≫ 100 per partition) pass
    if (!state) throw new Error('the leaver had no resume state');
    const had = new Set(first.positions);
    await stream.done;
    await waitFor(() => countDelivery(watcher, stream.acked).missing === 0, { timeoutMs: 60_000, message: 'the watcher to have every event' });

    // Come back with the old positions, as a reconnecting app does.
    const returning = connectResumingClient('returner', [gateway.wsUrl], QUERY, { resume: { epoch: state.epoch, positions: { ...state.positions } } });
    onTestFinished(() => returning.client.dispose());
    await waitFor(() => returning.recoveries.length === 1 && returning.positions.length > 0, { timeoutMs: 30_000, message: 'the recovery signal and the retained events' });
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // anything else in flight arrives

    const recovery = returning.recoveries[0];
    expect(recovery).toMatchObject({ recovered: false, reason: expect.stringContaining('history no longer covers the gap') as string });
    expect(recovery?.partitions?.length).toBeGreaterThan(0);
    expect(recovery?.partitions?.every((p) => p >= 0 && p < PARTITIONS)).toBe(true);
    // What it got is what history still held after its positions: nothing it already had, nothing twice.
    const again = returning.positions.filter((p) => had.has(p));
    const distinct = new Set(returning.positions);
    console.info(
      `[faults] history gap: leaver had ${had.size}, produced ${stream.acked.size}, returner got ${returning.positions.length} from history, ` +
        `re-sent ${again.length}, duplicates ${returning.positions.length - distinct.size}, recovery ${JSON.stringify(recovery)} (${((Date.now() - startedAt) / 1_000).toFixed(1)} s)`,
    );
    expect(again).toEqual([]);
    expect(distinct.size).toBe(returning.positions.length);
    expect(returning.positions.length).toBeLessThan(stream.acked.size - had.size); // the gap was real
    expect(returning.errors).toEqual([]);
  });
});
