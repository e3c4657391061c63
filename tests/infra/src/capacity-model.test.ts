// scripts/capacity.mjs run as a user runs it, on the repository's bench/results and on copies of it
// with figures removed, reworded or added (bench/results/cluster.json from the Redis Cluster bench).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoPath, repoRoot } from './repo.js';

interface Figure {
  value: number;
  unit: string;
  source: string;
}
interface Plan {
  scenario: { sockets: number; deliveriesPerS: number };
  shape: { name: string; socketsPerEvent: number; socketsPerOperation: number };
  eventsPerS: number;
  gateway: { pods: number; plannedSockets: number; gatewaysPerEvent: number };
  ingest: { pods: number; partitions: number };
  redis: { shards: number; complete: boolean; cores: number; subscriberMessagesPerS: number };
}
interface Output {
  headroom: number;
  figures: Record<string, Figure | undefined>;
  plans: Plan[];
}

function capacity(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [repoPath('scripts/capacity.mjs'), ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json(...args: string[]): Output {
  const result = capacity('--json', ...args);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Output;
}

describe('scripts/capacity.mjs on bench/results', () => {
  const output = json();

  it('reads every figure from a file that exists and names the place it came from', () => {
    for (const [key, figure] of Object.entries(output.figures)) {
      if (figure === undefined) continue;
      const file = /^([^ ]+?)(?: ›|:)/.exec(figure.source)?.[1];
      expect(file, `${key}: ${figure.source}`).toBeDefined();
      expect(existsSync(join(repoRoot, file!)), `${key}: ${file}`).toBe(true);
      expect(Number.isFinite(figure.value) && figure.value > 0, key).toBe(true);
    }
    // No cluster bench yet: the Redis subscriber cost is missing and the shard counts are lower bounds.
    if (!existsSync(repoPath('bench/results/cluster.json'))) {
      expect(output.figures.redisUsPerSubscriberMessage).toBeUndefined();
      expect(output.plans.every((p) => !p.redis.complete)).toBe(true);
    }
  });

  it('plans 1M sockets at 500,000 deliveries/s and 10M at the same rate per socket, each as unicast and broadcast', () => {
    expect(output.plans.map((p) => [p.scenario.sockets, p.scenario.deliveriesPerS, p.shape.name])).toEqual([
      [1_000_000, 500_000, 'unicast'],
      [1_000_000, 500_000, 'broadcast'],
      [10_000_000, 5_000_000, 'unicast'],
      [10_000_000, 5_000_000, 'broadcast'],
    ]);
    const usable = 1 - output.headroom;
    expect(usable).toBe(0.7);
    for (const p of output.plans) {
      const f = output.figures;
      expect(p.eventsPerS).toBeCloseTo(p.scenario.deliveriesPerS / p.shape.socketsPerEvent);
      // Every pod holds at most its planned sockets; ingest and Redis have the CPU for the events.
      expect(p.gateway.pods * p.gateway.plannedSockets).toBeGreaterThanOrEqual(p.scenario.sockets);
      expect(p.ingest.pods).toBe(Math.max(3, Math.ceil((p.eventsPerS * f.ingestUsPerEvent!.value) / (1e6 * usable))));
      expect(p.ingest.partitions).toBe(p.ingest.pods);
      // Each event written once, and delivered once per gateway that receives it (when that cost is measured).
      const redisUs = p.eventsPerS * f.redisUsPerEvent!.value + p.eventsPerS * p.gateway.gatewaysPerEvent * (f.redisUsPerSubscriberMessage?.value ?? 0);
      expect(p.redis.shards).toBe(Math.max(3, Math.ceil(redisUs / (1e6 * usable))));
    }
  });
});

describe('scripts/capacity.mjs on a copy of bench/results', () => {
  let dir: string;
  let results: string;
  let docs: string;

  beforeEach(() => {
    mkdirSync(repoPath('.wirestream'), { recursive: true });
    dir = mkdtempSync(join(repoPath('.wirestream'), 'capacity-'));
    results = join(dir, 'results');
    cpSync(repoPath('bench/results'), results, { recursive: true, filter: (src) => !src.endsWith('.svg') && !src.endsWith('cluster.json') });
    docs = join(dir, 'operations.md');
    writeFileSync(docs, '# Runbook\n\n<!-- capacity:scale-out -->\nold\n<!-- /capacity:scale-out -->\n\n<!-- capacity:redis-signals -->\n<!-- /capacity:redis-signals -->\n');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function edit(name: string, change: (text: string) => string): void {
    const path = join(results, name);
    const before = readFileSync(path, 'utf8');
    const after = change(before);
    expect(after, `the edit of ${name} changed nothing`).not.toBe(before);
    writeFileSync(path, after);
  }

  it('fails naming the file, the table and the row when a figure is gone', () => {
    edit('fanout-production.md', (t) => t.replace(/^\| ours, JWT \+ metrics \+ history \| 3 \|.*\n/m, ''));
    const result = capacity('--results', results);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/fanout-production\.md: the table under "Saturation" \(line \d+\) has no row with stack "ours, JWT \+ metrics \+ history"/);
  });

  it('fails naming the columns it expected when a table is reworded', () => {
    edit('ingest.md', (t) => t.replace('| code | variant | events/s (median) | best | CPU µs/event |', '| code | variant | events/s (median) | best | CPU us per event |'));
    const result = capacity('--results', results);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('ingest.md: expected a table under "History writes…" with the columns "code", "variant", "events/s (median)", "CPU µs/event", "redis CPU %"');
  });

  it('fails naming the cell when a figure is not a number', () => {
    edit('projector-codegen.md', (t) => t.replace(/^(\| ours \| 3\.58 \| (?:[^|]+\| ){3})20\.0 \|/m, '$1n/a |'));
    const result = capacity('--results', results);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('projector-codegen.md › Distinct operations sweep › ours › µs per extra op (1 → 1,000): expected a number');
  });

  it("takes the Redis Cluster bench's per-shard Redis CPU from cluster.json, and the shard counts stop being lower bounds", () => {
    const cluster = { redisShard: { cpuUsPerPublishedEvent: 6, cpuUsPerSubscriberMessage: 1.5 } };
    writeFileSync(join(results, 'cluster.json'), JSON.stringify(cluster));
    const out = json('--results', results);
    expect(out.figures.redisUsPerEvent).toMatchObject({ value: 6, source: expect.stringContaining('cluster.json: redisShard.cpuUsPerPublishedEvent = 6') as string });
    expect(out.figures.redisUsPerSubscriberMessage?.value).toBe(1.5);
    for (const p of out.plans) {
      expect(p.redis.complete).toBe(true);
      expect(p.redis.cores).toBeCloseTo((p.eventsPerS * 6 + p.redis.subscriberMessagesPerS * 1.5) / 1e6);
      expect(p.redis.shards).toBe(Math.max(3, Math.ceil(p.redis.cores / 0.7)));
    }
    const printed = capacity('--results', results);
    expect(printed.stdout).not.toContain('lower bound');
  });

  it('fails naming the key when cluster.json lacks a figure', () => {
    writeFileSync(join(results, 'cluster.json'), JSON.stringify({ redisShard: { cpuUsPerPublishedEvent: 6 } }));
    const result = capacity('--results', results);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('cluster.json: expected a positive number at "redisShard.cpuUsPerSubscriberMessage"');
  });

  it('--check fails until --markdown wrote capacity.md and the runbook block, and again once a figure changes', () => {
    const check = () => capacity('--check', '--results', results, '--docs', docs);
    expect(check().status).toBe(1);
    expect(capacity('--markdown', '--results', results, '--docs', docs).status).toBe(0);
    expect(check()).toMatchObject({ status: 0 });
    expect(readFileSync(docs, 'utf8')).toContain('**gateway pods**');
    expect(readFileSync(join(results, 'capacity.md'), 'utf8')).toContain('## Measured figures (inputs)');

    edit('ingest-cpu.md', (t) => t.replace('| `2160100`, checkout | 1 | 17.6 |', '| `2160100`, checkout | 1 | 31.2 |'));
    const stale = check();
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/capacity\.md and .*operations\.md \(its capacity:\* blocks\) no longer match the figures in bench\/results: run node scripts\/capacity\.mjs --markdown/);
  });

  it('reports every bad flag at once, with what it expected and what it got', () => {
    const result = capacity('--headroom', '1.5', '--shape', '10:20', '--scenario', 'many');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--headroom: expected a fraction 0 ≤ h < 1 (0.3 keeps 30 % free), got "1.5"');
    expect(result.stderr).toContain('--shape: expected unicast, broadcast or F:S with 1 ≤ S ≤ F');
    expect(result.stderr).toContain('--scenario: expected SOCKETS or SOCKETS:DELIVERIES_PER_S');
    expect(capacity('--markdown', '--headroom', '0.4').stderr).toContain('--markdown renders the committed files, which use the default inputs');
  });
});
