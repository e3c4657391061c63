import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accepts } from '../src/internal/accepts.js';
import { isAlive } from '../src/internal/processes.js';
import { findRepoRoot, keySlot, startRedisCluster, type ClusterNode, type RedisCluster, uniqueName, waitFor } from '../src/index.js';

// One cluster for the file: starting one is ~2.5-4.5 s on this loaded 2-core machine. The tests run in order
// and the later ones build on the earlier: migrateSlot, then killPrimary, then restartNode, then stop.

/** A key of the form `{<prefix>:<n>}` whose slot the given primary serves (found by trying tags). */
function keyOn(node: ClusterNode, prefix: string): string {
  // Bounded: a node without slots would make this spin forever (a synchronous loop no test timeout
  // can stop, which hung the whole test command once). 1,000,000 tags find any one slot.
  for (let i = 0; i < 1_000_000; i += 1) {
    const key = `{${prefix}:${i}}`;
    const slot = keySlot(key);
    if (node.slots.some(([start, end]) => slot >= start && slot <= end)) return key;
  }
  throw new Error(`no hash tag maps to a slot of ${node.host}:${node.port} (slots ${JSON.stringify(node.slots)})`);
}

/** Live primaries that serve slots (a primary may have none: one restarted from its nodes.conf, or one the test emptied). */
function primaries(cluster: RedisCluster): ClusterNode[] {
  return cluster.nodes.filter((n) => n.role === 'primary' && n.pid !== undefined && n.slots.length > 0);
}

function untilReady(client: Cluster): Promise<unknown> {
  return client.status === 'ready' ? Promise.resolve() : once(client, 'ready');
}

/** A sharded subscriber as a Redis Cluster broker would start one, recording what it sees. */
function createShardedSubscriber(cluster: RedisCluster): { client: Cluster; received: string[]; nodeErrors: string[] } {
  const received: string[] = [];
  const nodeErrors: string[] = [];
  // shardedSubscribers: one subscriber connection per primary, SSUBSCRIBE routed by slot
  // (without it ioredis sends SSUBSCRIBE over its single subscriber connection to any node).
  const client = new Cluster([...cluster.startupNodes], { shardedSubscribers: true });
  client.on('smessage', (channel: string, message: string) => received.push(`${channel} ${message}`));
  client.on('nodeError', (error: Error) => {
    nodeErrors.push(error.message);
    // Redis pushes `sunsubscribe` when the channel's slot leaves the node; ioredis 5.9.2 takes it
    // for an unexpected reply and does not follow the slot until its slots cache is refreshed.
    if (error.message.includes('sunsubscribe')) client.refreshSlotsCache();
  });
  // The sharded subscriber group emits 'error' with a plain emit while a node is down: without a
  // listener that is an uncaught exception.
  client.on('error', () => {});
  return { client, received, nodeErrors };
}

/** Publishes until the subscriber has the message (a fresh subscription or a failover may drop the first ones). */
async function publishUntilReceived(publisher: Cluster, received: readonly string[], channel: string, what: string): Promise<void> {
  const message = uniqueName('m');
  await waitFor(
    async () => {
      await publisher.spublish(channel, message).catch(() => 0);
      return received.includes(`${channel} ${message}`);
    },
    { timeoutMs: 20_000, intervalMs: 100, message: what },
  );
}

describe('startRedisCluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let subscriber: ReturnType<typeof createShardedSubscriber>;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    console.info(`startRedisCluster: ok on every node after ${cluster.startupMs} ms`);
    client = new Cluster([...cluster.startupNodes]);
    client.on('error', () => {}); // reported through the commands that fail
    subscriber = createShardedSubscriber(cluster);
    // Until 'ready', ioredis may still replace the startup nodes' connections (a CLUSTER command,
    // which it sends before 'ready', then fails with "Connection is closed").
    await Promise.all([untilReady(client), untilReady(subscriber.client)]);
  });
  afterAll(async () => {
    client.disconnect();
    subscriber.client.disconnect();
    await cluster.stop();
  });

  it('comes up ok with 3 primaries and 3 replicas on free ports, each in its own folder', async () => {
    const { nodes, startupNodes } = cluster;
    expect(nodes).toHaveLength(6);
    expect(startupNodes).toHaveLength(6);
    const byRole = (role: string) => nodes.filter((n) => n.role === role);
    expect(byRole('primary')).toHaveLength(3);
    expect(byRole('replica')).toHaveLength(3);
    for (const node of nodes) {
      expect(node.port).not.toBe(6379); // the machine's shared Redis
      expect(node.host).toBe('127.0.0.1');
      expect(node.id).toMatch(/^[0-9a-f]{40}$/);
      expect(isAlive(node.pid ?? -1)).toBe(true);
      expect(existsSync(`${cluster.dir}/node-${node.port}/nodes.conf`)).toBe(true);
    }
    expect(cluster.dir.startsWith(`${findRepoRoot()}/.wirestream/testkit/redis-cluster-`)).toBe(true);
    // Every primary has one replica, and the primaries' ranges cover all 16384 slots.
    for (const primary of byRole('primary')) {
      expect(byRole('replica').filter((r) => r.primaryId === primary.id)).toHaveLength(1);
    }
    const covered = byRole('primary').flatMap((p) => p.slots).reduce((sum, [start, end]) => sum + end - start + 1, 0);
    expect(covered).toBe(16_384);
    const info = await client.cluster('INFO');
    expect(info).toMatch(/cluster_state:ok/);
    const node = new Redis(nodes[0]?.port ?? 0, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    await node.connect();
    expect(await node.config('GET', 'save')).toEqual(['save', '']);
    expect(await node.config('GET', 'cluster-node-timeout')).toEqual(['cluster-node-timeout', '1000']);
    node.disconnect();
  });

  it('slotOf agrees with CLUSTER KEYSLOT, hash tags included', async () => {
    const keys = ['', 'a', 'auction:42', '{auction:42}:bids', 'x{42}y', '{}', '{}{a}', 'a{}b{c}', '{a', 'a}{b}', 'émoji-🙂', uniqueName('k')];
    for (const key of keys) {
      expect(cluster.slotOf(key), `slot of '${key}'`).toBe(await client.cluster('KEYSLOT', key));
    }
    expect(cluster.slotOf('x{42}y')).toBe(cluster.slotOf('42'));
  });

  it('an ioredis Cluster SETs and GETs keys on every primary; ownerOf names the owner', async () => {
    for (const primary of primaries(cluster)) {
      const key = keyOn(primary, uniqueName('setget'));
      expect((await cluster.ownerOf(key)).port).toBe(primary.port);
      await client.set(key, primary.id);
      expect(await client.get(key)).toBe(primary.id);
    }
  });

  it('routes SSUBSCRIBE/SPUBLISH of sharded channels to each slot owner (shardedSubscribers: true)', async () => {
    const channels = primaries(cluster).map((p) => keyOn(p, uniqueName('ch')));
    for (const channel of channels) await subscriber.client.ssubscribe(channel);
    for (const channel of channels) {
      await publishUntilReceived(client, subscriber.received, channel, `a message on ${channel}`);
      // SPUBLISH counts the subscribers on the slot owner only: the one connection of ours.
      expect(await client.spublish(channel, 'count')).toBe(1);
    }
  });

  it('migrateSlot moves a slot with its keys; the client follows MOVED; the subscriber gets a sunsubscribe and follows', async () => {
    const [from, to] = primaries(cluster);
    if (from === undefined || to === undefined) throw new Error('expected 3 primaries');
    const tag = keyOn(from, uniqueName('mig'));
    const slot = cluster.slotOf(tag);
    const keys = Array.from({ length: 250 }, (_, i) => `${tag}:${i}`); // 3 MIGRATE batches
    for (const key of keys) await client.set(key, key);
    const channel = `${tag}:channel`;
    await subscriber.client.ssubscribe(channel);
    await publishUntilReceived(client, subscriber.received, channel, `a message on ${channel} before the move`);

    const migration = await cluster.migrateSlot(slot, to.port);
    console.info(`migrateSlot: ${migration.keysMoved} keys of slot ${slot} in ${migration.migrationMs} ms`);
    expect(migration).toMatchObject({ slot, keysMoved: 250, from: { port: from.port }, to: { port: to.port } });
    expect((await cluster.ownerOf(slot)).port).toBe(to.port);
    const owner = new Redis(to.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    await owner.connect();
    expect(await owner.cluster('COUNTKEYSINSLOT', slot)).toBe(250);
    owner.disconnect();
    // The client still maps the slot to `from`: it gets MOVED, refreshes and reads from `to`.
    expect(await client.mget(...keys.slice(0, 3))).toEqual(keys.slice(0, 3));
    expect(await client.get(keys[249] ?? '')).toBe(keys[249]);

    await waitFor(() => subscriber.nodeErrors.some((m) => m.includes(`sunsubscribe,${channel}`)), {
      timeoutMs: 10_000,
      message: `the sunsubscribe push for ${channel} from the old owner`,
    });
    await publishUntilReceived(client, subscriber.received, channel, `a message on ${channel} after the move`);
    expect(await client.spublish(channel, 'count')).toBe(1);
  });

  it('killPrimary SIGKILLs a primary, its replica takes over, writes and the sharded subscription resume', async () => {
    const key = uniqueName('failover');
    const channel = `{${key}}:channel`;
    await subscriber.client.ssubscribe(channel);
    await publishUntilReceived(client, subscriber.received, channel, `a message on ${channel} before the kill`);
    const before = await cluster.ownerOf(key);
    const replica = cluster.nodes.find((n) => n.primaryId === before.id);

    const failover = await cluster.killPrimary({ key });
    console.info(`killPrimary: ${failover.killed.port} -> ${failover.promoted.port} in ${failover.failoverMs} ms`);
    expect(failover.killed.port).toBe(before.port);
    expect(failover.promoted.port).toBe(replica?.port);
    expect(failover.promoted.role).toBe('primary');
    expect(isAlive(failover.killed.pid ?? -1)).toBe(false);
    expect((await cluster.ownerOf(key)).port).toBe(failover.promoted.port);
    expect(cluster.nodes.find((n) => n.port === before.port)?.pid).toBeUndefined();

    // The client learns the new owner on its own (its commands fail meanwhile): within a deadline.
    await waitFor(async () => (await client.set(key, 'after')) === 'OK', { timeoutMs: 20_000, intervalMs: 100, message: 'a write to the promoted primary' });
    expect(await client.get(key)).toBe('after');
    await publishUntilReceived(client, subscriber.received, channel, `a message on ${channel} after the failover`);

    await expect(cluster.killPrimary(failover.promoted.port)).rejects.toThrow(/has no live replica/);
    await expect(cluster.killPrimary(failover.killed.port)).rejects.toThrow(/is not a live primary/);
  });

  it('restartNode brings a killed node back as a replica of the node that took over', async () => {
    const dead = cluster.nodes.find((n) => n.pid === undefined);
    if (dead === undefined) throw new Error('expected the node killed by the previous test');
    const back = await cluster.restartNode(dead.port);
    const newPrimary = cluster.nodes.find((n) => n.id === back.primaryId);
    expect(back).toMatchObject({ port: dead.port, id: dead.id, role: 'replica' });
    expect(newPrimary?.role).toBe('primary');
    expect(isAlive(back.pid ?? -1)).toBe(true);
  });

  it('stop() kills every node and removes its folders; a second stop() is a no-op', async () => {
    const { nodes } = cluster;
    await cluster.stop();
    for (const node of nodes) {
      expect(isAlive(node.pid ?? -1)).toBe(false);
      expect(await accepts(node.port)).toBe(false);
    }
    expect(existsSync(cluster.dir)).toBe(false);
    await cluster.stop();
  });

  it('fails fast on options it cannot honour and explains a missing binary', async () => {
    await expect(startRedisCluster({ primaries: 2 })).rejects.toThrow(/primaries must be an integer >= 3/);
    await expect(cluster.migrateSlot(16_384, 1)).rejects.toThrow(/slot must be an integer 0\.\.16383, got 16384/);
    await expect(cluster.ownerOf(-1)).rejects.toThrow(/slot must be an integer 0\.\.16383, got -1/);
    await expect(startRedisCluster({ redisServerPath: '/nonexistent/redis-server' })).rejects.toThrow(
      /could not run \/nonexistent\/redis-server .*apt-get install -y redis-server/,
    );
  });
});
