// Fault 5: the Kafka broker restarts mid-stream (same port, same data). The producer's sends fail
// meanwhile and are retried; ingest's fetches and commits fail and are retried or redone.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startKafka, type KafkaBroker } from '@wirestream/testkit';
import { createFaultHarness, describeCounts } from './harness.js';

// Its own broker: restarting the shared one would break every other test using it.
let broker: KafkaBroker;
beforeAll(async () => {
  broker = await startKafka();
});
afterAll(async () => {
  await broker?.stop();
});

describe('fault 5: Kafka broker restarted mid-stream', () => {
  it('clients miss nothing and see nothing twice', async () => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: broker.brokers });
    onTestFinished(() => harness.close());
    await harness.startIngest();
    const gateway = await harness.startGateway();
    const clients = await harness.connectClients(gateway, 3);

    const stream = harness.startStream({ events: 2_000 });
    await stream.waitForProduced(600);
    const pid = broker.pid;
    await broker.restart();
    expect(broker.pid).not.toBe(pid);

    const counts = await harness.settle(clients, stream, 90_000);
    console.info(describeCounts('kafka restart', counts, startedAt, await harness.gatewayStats(gateway)) + `\n[faults] kafka restart: sends refused for ${stream.failedSendMs()} ms`);
    for (const count of counts) expect(count, count.client).toMatchObject({ produced: 2_000, missing: 0, duplicates: 0 });
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
  });
});
