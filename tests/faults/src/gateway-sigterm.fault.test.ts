// Fault 4: one of two gateways gets SIGTERM mid-stream. It drains (1001 to every socket); its
// clients reconnect to the other gateway and resume from their last positions through history.
import { describe, expect, it, onTestFinished } from 'vitest';
import { sharedKafkaFromEnv, waitFor } from '@wirestream/testkit';
import { createFaultHarness, describeCounts, type Gateway } from './harness.js';
import { connectResumingClient } from './resuming-client.js';

const QUERY = 'subscription { listingUpdated { event_id } }';

async function channelsConfirmed(gateway: Gateway, subscriptions: number): Promise<void> {
  await waitFor(
    async () => {
      const stats = (await (await fetch(`${gateway.httpBase}/stats`)).json()) as Record<string, number>;
      return stats['subscriptions'] === subscriptions && stats['confirmedChannels'] === 16;
    },
    { timeoutMs: 30_000, message: `${subscriptions} subscriptions live on ${gateway.wsUrl}` },
  );
}

describe('fault 4: SIGTERM one of two gateways mid-stream', () => {
  it('its clients resume on the other gateway: nothing missing, nothing twice', async () => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: sharedKafkaFromEnv()?.brokers ?? [] });
    onTestFinished(() => harness.close());
    await harness.startIngest();
    const [a, b] = await Promise.all([harness.startGateway(), harness.startGateway()]);
    if (!a || !b) throw new Error('two gateways expected');
    const urls = [a.wsUrl, b.wsUrl];
    // Two clients start on A (the one that will go), two on B.
    const clients = [0, 0, 1, 1].map((first, i) => connectResumingClient(`client ${i + 1} (starts on ${first === 0 ? 'A' : 'B'})`, urls, QUERY, { firstUrl: first }));
    onTestFinished(() => Promise.all(clients.map((c) => Promise.resolve(c.client.dispose()))).then(() => undefined));
    await Promise.all([channelsConfirmed(a, 2), channelsConfirmed(b, 2)]);

    const stream = harness.startStream({ events: 2_000 });
    await stream.waitForProduced(600);
    const exitCode = await a.app.stop('SIGTERM');

    const counts = await harness.settle(clients, stream, 60_000);
    console.info(describeCounts('gateway SIGTERM', counts, startedAt, await harness.gatewayStats(b)));
    console.info(`[faults] gateway SIGTERM recoveries: ${JSON.stringify(clients.map((c) => c.recoveries))}`);
    expect(exitCode).toBe(0);
    expect(a.app.lines.some((l) => l['msg'] === 'gateway drained')).toBe(true);
    for (const count of counts) expect(count, count.client).toMatchObject({ produced: 2_000, missing: 0, duplicates: 0 });
    // The clients of A moved to B and were told their resume was complete.
    for (const moved of clients.slice(0, 2)) {
      expect(moved.connectedTo.slice(-1)).toEqual([b.wsUrl]);
      expect(moved.recoveries).toEqual([{ recovered: true, epoch: expect.any(String) as string }]);
    }
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
  });
});
