// Fault 3: Redis is stopped for 10 s mid-stream and started again (empty, same port). Ingest
// pauses and redoes what Redis did not acknowledge; the gateway must re-subscribe and back-fill
// from history what was published before it was listening again.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sharedKafkaFromEnv } from '@wirestream/testkit';
import { createFaultHarness, describeCounts } from './harness.js';

describe('fault 3: Redis down for 10 s mid-stream', () => {
  it('clients miss nothing and see nothing twice', async () => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: sharedKafkaFromEnv()?.brokers ?? [] });
    onTestFinished(() => harness.close());
    const ingest = await harness.startIngest();
    const gateway = await harness.startGateway();
    const clients = await harness.connectClients(gateway, 3);

    const stream = harness.startStream({ events: 2_000 });
    await stream.waitForProduced(600);
    await harness.redis.stop();
    await sleep(10_000);
    await harness.redis.start();

    const counts = await harness.settle(clients, stream, 60_000);
    console.info(describeCounts('redis outage', counts, startedAt, await harness.gatewayStats(gateway)));
    expect(ingest.lines.some((l) => l['msg'] === 'consumption paused')).toBe(true);
    expect(ingest.lines.some((l) => l['msg'] === 'consumption resumed')).toBe(true);
    for (const count of counts) expect(count, count.client).toMatchObject({ produced: 2_000, missing: 0, duplicates: 0 });
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
  });
});
