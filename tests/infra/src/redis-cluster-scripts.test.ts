// The shell scripts of infra/k8s/components/redis-cluster, run for real: six redis-server nodes on
// free ports of this machine, started by start-node.sh as the StatefulSet's pods start them, and
// create-cluster.sh as the Job runs it. Addresses 127.0.0.x stand in for pod IPs, so a full restart
// on new addresses (every pod rescheduled) can be played too.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort as testkitFreePort } from '@wirestream/testkit';
import { repoPath } from './repo.js';

const component = repoPath('infra/k8s/components/redis-cluster');
const nodeCount = 6;

interface Node {
  readonly port: number;
  readonly busPort: number;
  readonly dir: string;
  process: ChildProcess | undefined;
  output: string;
}

/** Ports handed to this file's nodes: testkit's freePort checks a port is free now, not that it was not handed out already. */
const handedOut = new Set<number>();
async function freePort(): Promise<number> {
  for (;;) {
    const port = await testkitFreePort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

function redisCli(host: string, port: number, ...args: string[]): string {
  const result = spawnSync('redis-cli', ['-h', host, '-p', String(port), ...args], { encoding: 'utf8', timeout: 5_000 });
  return result.stdout.replaceAll('\r', '').trim();
}

function clusterInfo(host: string, node: Node): Map<string, string> {
  return new Map(
    redisCli(host, node.port, 'cluster', 'info')
      .split('\n')
      .map((l) => l.split(':') as [string, string]),
  );
}

/** Polls `condition` until it holds or the deadline passes (then fails with `what`). */
async function waitFor(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('components/redis-cluster scripts (real redis-server nodes)', () => {
  let root: string;
  let nodes: Node[];

  beforeEach(async () => {
    mkdirSync(repoPath('.wirestream'), { recursive: true });
    root = mkdtempSync(join(repoPath('.wirestream'), 'redis-cluster-scripts-'));
    nodes = [];
    for (let i = 0; i < nodeCount; i++) {
      const dir = join(root, `node-${i}`);
      mkdirSync(dir);
      // The pods' redis.conf with /data pointing into this node's directory.
      writeFileSync(join(dir, 'redis.conf'), readFileSync(join(component, 'redis.conf'), 'utf8').replaceAll('/data', dir));
      nodes.push({ port: await freePort(), busPort: await freePort(), dir, process: undefined, output: '' });
    }
  });

  afterEach(async () => {
    await Promise.all(nodes.map((node) => stop(node)));
    rmSync(root, { recursive: true, force: true });
  });

  /** start-node.sh as the pod runs it, on `ip` (its "pod IP"), meeting its peers there when it rejoins. */
  function start(node: Node, ip: string): void {
    const peers = nodes.map((n) => `${ip}:${n.port}@${n.busPort}`).join(' ');
    const child = spawn('sh', [join(component, 'start-node.sh'), '--port', String(node.port), '--cluster-port', String(node.busPort), '--bind', ip, '--maxmemory', '64mb'], {
      env: { ...process.env, POD_IP: ip, PEERS: peers, REDIS_CONF: join(node.dir, 'redis.conf'), DATA_DIR: node.dir, REDIS_PORT: String(node.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a hung node is killed with everything it started.
      detached: true,
    });
    node.output = '';
    child.stdout.on('data', (d: Buffer) => (node.output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (node.output += d.toString()));
    node.process = child;
  }

  /** SIGTERM to the script, as the kubelet sends it: it must pass it on and exit with redis-server. */
  async function stop(node: Node): Promise<number | null> {
    const child = node.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 10_000))]);
    if (code === 'hung') {
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`start-node.sh on port ${node.port} did not exit within 10 s of SIGTERM:\n${node.output}`);
    }
    node.process = undefined;
    return code;
  }

  async function startAll(ip: string): Promise<void> {
    for (const node of nodes) start(node, ip);
    for (const node of nodes) await waitFor(`${ip}:${node.port} to answer PING (${node.output})`, () => redisCli(ip, node.port, 'ping') === 'PONG');
  }

  function createCluster(ip: string): { status: number | null; output: string } {
    const result = spawnSync('sh', [join(component, 'create-cluster.sh')], {
      env: { ...process.env, NODES: nodes.map((n) => `${ip}:${n.port}`).join(' '), WAIT_SECONDS: '20' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  }

  /** probe-ready.sh's exit code on a node (it asks 127.0.0.1, as in the pod). */
  function ready(node: Node): number | null {
    return spawnSync('sh', [join(component, 'probe-ready.sh')], { env: { ...process.env, REDIS_PORT: String(node.port) }, timeout: 10_000 }).status;
  }

  /** `ip:port role` of every node as `node` sees them, and whether all are connected. */
  function topology(ip: string, node: Node) {
    const lines = redisCli(ip, node.port, 'cluster', 'nodes').split('\n').filter(Boolean);
    return lines.map((l) => {
      const [id, address, flags, , , , , link] = l.split(' ');
      return { id: id!, address: address!.split('@')[0]!, role: flags!.includes('master') ? 'primary' : 'replica', connected: link === 'connected' };
    });
  }

  it('create-cluster.sh makes 3 primaries with one replica each, and a second run finds the cluster and changes nothing', async () => {
    await startAll('127.0.0.1');
    expect(ready(nodes[0]!), 'a lone node is ready (the Job must reach it)').toBe(0);
    const first = createCluster('127.0.0.1');
    expect(first.status, first.output).toBe(0);
    expect(first.output).toContain('cluster created');
    for (const node of nodes) expect(clusterInfo('127.0.0.1', node).get('cluster_state'), `node ${node.port}`).toBe('ok');
    const before = topology('127.0.0.1', nodes[0]!);
    expect(before.filter((n) => n.role === 'primary')).toHaveLength(3);
    expect(before.filter((n) => n.role === 'replica')).toHaveLength(3);
    for (const node of nodes) expect(ready(node), `node ${node.port} ready in an ok cluster`).toBe(0);

    const second = createCluster('127.0.0.1');
    expect(second.status, second.output).toBe(0);
    expect(second.output).toContain('the cluster exists, nothing to create');
    const ids = (t: ReturnType<typeof topology>) => t.map((n) => `${n.id} ${n.role}`).sort();
    expect(ids(topology('127.0.0.1', nodes[0]!))).toEqual(ids(before));
    expect(clusterInfo('127.0.0.1', nodes[0]!).get('cluster_current_epoch')).toBe(String(nodeCount));
  }, 60_000);

  it('create-cluster.sh stops, and says how to reset, when nodes met but no node serves a slot (a create that stopped half-way)', async () => {
    await startAll('127.0.0.1');
    expect(redisCli('127.0.0.1', nodes[0]!.port, 'cluster', 'meet', '127.0.0.1', String(nodes[1]!.port), String(nodes[1]!.busPort))).toBe('OK');
    await waitFor('node 0 to know node 1', () => clusterInfo('127.0.0.1', nodes[0]!).get('cluster_known_nodes') === '2');
    const result = createCluster('127.0.0.1');
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/stopped half-way.*cluster reset hard/);
    expect(ready(nodes[0]!), 'a node in a cluster that is not ok is not ready').toBe(1);
    expect(clusterInfo('127.0.0.1', nodes[2]!).get('cluster_slots_assigned')).toBe('0');
  }, 60_000);

  it('after every node restarted on a new address, start-node.sh brings the cluster back with the same nodes and its data', async () => {
    await startAll('127.0.0.1');
    expect(createCluster('127.0.0.1').status).toBe(0);
    expect(redisCli('127.0.0.1', nodes[0]!.port, '-c', 'set', 'wirestream:probe', 'kept')).toBe('OK');
    const ids = topology('127.0.0.1', nodes[0]!).map((n) => n.id).sort();

    // SIGTERM passes through the script: redis-server flushes the AOF and exits 0.
    expect(await Promise.all(nodes.map((node) => stop(node)))).toEqual(nodes.map(() => 0));
    // Every "pod" comes back on an address none of the others has on record.
    await startAll('127.0.0.2');
    await waitFor('every node to see all six at their new addresses, connected, and the cluster ok', () =>
      nodes.every((node) => {
        const t = topology('127.0.0.2', node);
        return t.length === nodeCount && t.every((n) => n.connected && n.address.startsWith('127.0.0.2:')) && clusterInfo('127.0.0.2', node).get('cluster_state') === 'ok';
      }),
    );
    expect(topology('127.0.0.2', nodes[0]!).map((n) => n.id).sort()).toEqual(ids);
    expect(redisCli('127.0.0.2', nodes[1]!.port, '-c', 'get', 'wirestream:probe')).toBe('kept');
    // And the Job, run again, finds it.
    expect(createCluster('127.0.0.2').output).toContain('the cluster exists, nothing to create');
  }, 90_000);
});
