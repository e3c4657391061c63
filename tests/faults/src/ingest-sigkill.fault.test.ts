// Fault 1: the ingest is SIGKILLed mid-stream and restarted. Whatever it published but had not
// committed is published again by the restarted one; the gateway drops those positions.
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isEnvelopeBatchPart, parseEnvelopeBatchPart } from '@wirestream/wire';
import { sharedKafkaFromEnv, waitFor } from '@wirestream/testkit';
import { createFaultHarness, describeCounts } from './harness.js';

describe('fault 1: ingest SIGKILLed mid-stream', () => {
  it('clients miss nothing and see nothing twice', async () => {
    const startedAt = Date.now();
    const harness = await createFaultHarness({ brokers: sharedKafkaFromEnv()?.brokers ?? [] });
    onTestFinished(() => harness.close());
    const ingest = await harness.startIngest();
    const gateway = await harness.startGateway();
    const clients = await harness.connectClients(gateway, 3);

    // Killed the moment Redis relays its 700th envelope: its commit, a few ms behind the publish,
    // is then often not acknowledged yet, so the restarted ingest has published work to redo.
    const watcher = new Redis(harness.redis.url);
    onTestFinished(() => watcher.disconnect());
    let seen = 0;
    // Envelopes, not messages: ingest's batch form carries a chunk's events of one key shard per message.
    watcher.on('pmessage', (_pattern: string, _channel: string, text: string) => {
      const before = seen;
      seen += isEnvelopeBatchPart(text) ? parseEnvelopeBatchPart(text).envelopes.length : 1;
      if (before < 700 && seen >= 700) ingest.child.kill('SIGKILL');
    });
    await watcher.psubscribe(`ws:${harness.listingTopic}:*`);

    const stream = harness.startStream({ events: 2_000 });
    await waitFor(() => ingest.child.signalCode === 'SIGKILL', { timeoutMs: 60_000, message: 'the ingest to be SIGKILLed' });
    // The dead member keeps its partitions until its session expires (kafkajs default 30 s).
    const restarted = await harness.startIngest({ waitForJoin: false });

    const counts = await harness.settle(clients, stream, 90_000);
    console.info(describeCounts('ingest SIGKILL', counts, startedAt, await harness.gatewayStats(gateway)));
    for (const count of counts) expect(count, count.client).toMatchObject({ produced: 2_000, missing: 0, duplicates: 0 });
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    // The restart redid uncommitted work: at least one re-publish the gateway had to drop.
    expect(restarted.lines.some((l) => l['msg'] === 'joined consumer group')).toBe(true);
  });
});
