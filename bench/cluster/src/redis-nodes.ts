/**
 * The cluster's nodes as this bench measures them: who is primary of which slots, and per node its
 * CPU and the bytes it received, split by where they came from:
 *
 * - `clientInBytes`: from clients (publisher, subscribers, this bench's INFO) — INFO `total_net_input_bytes`
 *   minus `total_net_repl_input_bytes` (Redis 7.0's total includes the replication stream);
 * - `replInBytes`: a replica's replication stream from its primary — INFO `total_net_repl_input_bytes`;
 * - `busInBytes`: the cluster bus (node-to-node links on each node's bus port), which INFO does not
 *   count at all: the kernel's per-socket `bytes_received` (`ss -ti`, tcp_info) of the node's bus
 *   connections. Classic PUBLISH in cluster mode is broadcast there to every node.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { RedisCluster } from '@wirestream/testkit';
import { readSchedCpuMs } from '@wirestream/bench-kit';

const run = promisify(execFile);

export interface RedisNode {
  readonly port: number;
  readonly busPort: number;
  readonly pid: number;
  readonly id: string;
  readonly role: 'primary' | 'replica';
  /** The primary's port for a replica, its own for a primary: the shard it belongs to. */
  readonly shardPort: number;
  readonly slots: readonly (readonly [number, number])[];
  /** An ordinary connection for INFO / CLUSTER INFO / PUBSUB (opened once: a connection per reading would count as input). */
  readonly admin: Redis;
}

/** What one reading of a node says; subtract two readings for a window. */
export interface NodeCounters {
  readonly cpuMs: number;
  readonly clientInBytes: number;
  readonly replInBytes: number;
  readonly busInBytes: number;
  /** CLUSTER INFO `cluster_stats_messages_received` (every bus message type). */
  readonly busMessagesIn: number;
  /** CLUSTER INFO `cluster_stats_messages_publish_received` / `…_publishshard_received`. */
  readonly publishMessagesIn: number;
  readonly publishShardMessagesIn: number;
}

/** Reads `CLUSTER NODES` once (roles and slots are stable: this bench injects no fault) and opens an admin connection per node. */
export async function describeNodes(cluster: RedisCluster): Promise<RedisNode[]> {
  const seed = cluster.nodes.find((n) => n.pid !== undefined);
  if (!seed) throw new Error('describeNodes: the cluster has no live node');
  const probe = new Redis({ host: seed.host, port: seed.port, lazyConnect: true });
  await probe.connect();
  const text = String(await probe.call('CLUSTER', 'NODES'));
  probe.disconnect();
  const lines = text.trim().split('\n').map((l) => l.split(' '));
  const portOfId = new Map(lines.map((f) => [f[0] ?? '', Number(/:(\d+)@/.exec(f[1] ?? '')?.[1])]));
  const nodes: RedisNode[] = [];
  for (const fields of lines) {
    const [id = '', address = '', flags = '', primaryId = ''] = fields;
    const match = /:(\d+)@(\d+)/.exec(address);
    if (!match) throw new Error(`CLUSTER NODES: cannot read the address "${address}"`);
    const port = Number(match[1]);
    const pid = cluster.nodes.find((n) => n.port === port)?.pid;
    if (pid === undefined) throw new Error(`node ${port} has no pid: was it killed?`);
    const primary = flags.includes('master');
    const slots = fields.slice(8).filter((s) => !s.startsWith('[')).map((s) => {
      const [a, b = a] = s.split('-').map(Number);
      return [a ?? 0, b ?? 0] as const;
    });
    const admin = new Redis({ host: seed.host, port, lazyConnect: true, connectionName: 'bench-cluster-admin' });
    await admin.connect();
    nodes.push({
      port,
      busPort: Number(match[2]),
      pid,
      id,
      role: primary ? 'primary' : 'replica',
      shardPort: primary ? port : (portOfId.get(primaryId) ?? -1),
      slots,
      admin,
    });
  }
  return nodes.sort((a, b) => a.shardPort - b.shardPort || (a.role === 'primary' ? -1 : 1));
}

/** The primary that serves `slot`. */
export function ownerOfSlot(nodes: readonly RedisNode[], slot: number): RedisNode {
  const owner = nodes.find((n) => n.role === 'primary' && n.slots.some(([a, b]) => slot >= a && slot <= b));
  if (!owner) throw new Error(`no primary serves slot ${slot}`);
  return owner;
}

function infoField(info: string, name: string): number {
  const match = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
}

/** Every node's counters at once: CPU first (cheapest, least disturbed), then the kernel's bus bytes, then INFO. */
export async function readCounters(nodes: readonly RedisNode[]): Promise<Map<number, NodeCounters>> {
  const cpu = new Map(nodes.map((n) => [n.port, readSchedCpuMs(n.pid) ?? 0]));
  const bus = await readBusBytes(nodes);
  const replies = await Promise.all(
    nodes.map(async (n) => ({ stats: String(await n.admin.call('INFO', 'stats')), cluster: String(await n.admin.call('CLUSTER', 'INFO')) })),
  );
  const counters = new Map<number, NodeCounters>();
  nodes.forEach((n, i) => {
    const { stats, cluster } = replies[i] as { stats: string; cluster: string };
    counters.set(n.port, {
      cpuMs: cpu.get(n.port) ?? 0,
      clientInBytes: infoField(stats, 'total_net_input_bytes') - infoField(stats, 'total_net_repl_input_bytes'),
      replInBytes: infoField(stats, 'total_net_repl_input_bytes'),
      busInBytes: bus.get(n.pid) ?? 0,
      busMessagesIn: infoField(cluster, 'cluster_stats_messages_received'),
      publishMessagesIn: infoField(cluster, 'cluster_stats_messages_publish_received'),
      publishShardMessagesIn: infoField(cluster, 'cluster_stats_messages_publishshard_received'),
    });
  });
  return counters;
}

/** `after − before`, field by field. */
export function counterDelta(after: NodeCounters, before: NodeCounters): NodeCounters {
  return {
    cpuMs: after.cpuMs - before.cpuMs,
    clientInBytes: after.clientInBytes - before.clientInBytes,
    replInBytes: after.replInBytes - before.replInBytes,
    busInBytes: after.busInBytes - before.busInBytes,
    busMessagesIn: after.busMessagesIn - before.busMessagesIn,
    publishMessagesIn: after.publishMessagesIn - before.publishMessagesIn,
    publishShardMessagesIn: after.publishShardMessagesIn - before.publishShardMessagesIn,
  };
}

/**
 * Bytes each node received on its cluster bus links, by pid: every established TCP socket with a
 * bus port at either end (the inbound links on a node's own bus port, and the links it opened to
 * the others' bus ports), attributed to the process holding it (`ss -p`; our own processes, so no
 * privilege is needed). Bus links live as long as the nodes, so a window's difference is exact.
 */
async function readBusBytes(nodes: readonly RedisNode[]): Promise<Map<number, number>> {
  const ports = nodes.map((n) => n.busPort);
  const filter = ['(', ...ports.flatMap((p, i) => [...(i > 0 ? ['or'] : []), 'sport', '=', `:${p}`, 'or', 'dport', '=', `:${p}`]), ')'];
  const { stdout } = await run('ss', ['-tinpH', 'state', 'established', ...filter], { maxBuffer: 16 * 1024 * 1024 });
  const bytes = new Map<number, number>();
  let pid: number | undefined;
  for (const line of stdout.split('\n')) {
    if (line.length === 0) continue;
    if (!/^\s/.test(line)) {
      // A socket line: `0 0 127.0.0.1:17001 127.0.0.1:45678 users:(("redis-server",pid=123,fd=10))`.
      const match = /pid=(\d+)/.exec(line);
      pid = match ? Number(match[1]) : undefined;
      continue;
    }
    const received = /bytes_received:(\d+)/.exec(line);
    if (pid !== undefined && received) bytes.set(pid, (bytes.get(pid) ?? 0) + Number(received[1]));
  }
  return bytes;
}
