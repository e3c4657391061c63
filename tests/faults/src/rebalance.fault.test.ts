// Fault 2: two ingest replicas share the group; a third joins mid-stream and one leaves
// (SIGTERM), so partitions move twice while events flow.
import { describe, expect, it, onTestFinished } from 'vitest';
import { sharedKafkaFromEnv } from '@wirestream/testkit';
import { createFaultHarness, describeCounts } from './harness.js';

describe('fault 2: ingest replicas added and removed mid-stream (rebalance)', () => {
  it('clients miss nothing and see nothing twice', async () => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: sharedKafkaFromEnv()?.brokers ?? [] });
    onTestFinished(() => harness.close());
    const first = await harness.startIngest();
    await harness.startIngest();
    const gateway = await harness.startGateway();
    const clients = await harness.connectClients(gateway, 3);

    const stream = harness.startStream({ events: 2_000 });
    await stream.waitForProduced(600);
    const added = await harness.startIngest();
    await stream.waitForProduced(1_300);
    expect(await first.stop('SIGTERM')).toBe(0);

    const counts = await harness.settle(clients, stream, 90_000);
    console.info(describeCounts('rebalance', counts, startedAt, await harness.gatewayStats(gateway)));
    for (const count of counts) expect(count, count.client).toMatchObject({ produced: 2_000, missing: 0, duplicates: 0 });
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    expect(first.lines.some((l) => l['msg'] === 'ingest stopped')).toBe(true);
    expect(added.lines.some((l) => l['msg'] === 'joined consumer group')).toBe(true);
  });
});
