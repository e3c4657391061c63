// The stack's failure paths, against a real broker and redis-server (no built app needed): a start
// that fails leaves nothing behind, and a stop step that never ends cannot hang an afterAll.
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accepts } from '../src/internal/accepts.js';
import { freePort, startKafka, startStack, uniqueName, type KafkaBroker } from '../src/index.js';

let broker: KafkaBroker | undefined;
let brokers: string[] = [];
beforeAll(async () => {
  broker = await startKafka();
  brokers = broker.brokers;
});
afterAll(() => broker?.stop());

describe('startStack', () => {
  it('creates the topics and connects a producer; stop() frees Redis and the directory, and a second stop() is a no-op', async () => {
    const topic = uniqueName('stack');
    const stack = await startStack({ name: 'stack-test', brokers, topics: [{ topic, numPartitions: 2 }], files: { 'plugin.mjs': 'export {};' } });
    const [metadata] = (await stack.admin.fetchTopicMetadata({ topics: [topic] })).topics;
    expect(metadata?.partitions).toHaveLength(2);
    const sent = await stack.send(topic, [{ key: 'k', value: 'v' }]);
    expect(sent[0]?.errorCode).toBe(0);
    expect(existsSync(stack.path('plugin.mjs'))).toBe(true);
    expect(() => stack.gateway).toThrow('no gateway started with it');
    await stack.stop();
    await stack.stop();
    expect(await accepts(stack.redis.port)).toBe(false);
    expect(existsSync(stack.dir)).toBe(false);
  });

  it('a start that fails stops what it had started (Redis, clients, directory) and rejects with its error', async () => {
    const port = await freePort();
    const name = uniqueName('stack-fail');
    await expect(startStack({ name, brokers, redis: { port }, topics: [{ topic: 'not a topic!', numPartitions: 1 }] })).rejects.toThrow('Topic creation errors');
    expect(await accepts(port)).toBe(false);
    expect(readdirSync(tmpdir()).filter((entry) => entry.startsWith(`wirestream-${name}-`))).toEqual([]);
  });

  it('an onStop step that never ends is cut at stopStepTimeoutMs and named; the rest still stops', async () => {
    const stack = await startStack({ name: 'stack-stuck', brokers, stopStepTimeoutMs: 500 });
    const ran: string[] = [];
    stack.onStop(() => ran.push('first registered, runs last'));
    stack.onStop(() => new Promise(() => {})); // a client whose close never resolves
    const started = Date.now();
    await expect(stack.stop()).rejects.toThrow('stack stop: 1 step(s) failed: an onStop step did not finish within 500 ms');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ran).toEqual(['first registered, runs last']);
    expect(await accepts(stack.redis.port)).toBe(false);
    expect(existsSync(stack.dir)).toBe(false);
  });
});
