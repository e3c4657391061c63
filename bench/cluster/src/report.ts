/** Markdown tables of the summaries (printed, and written to bench/results/cluster.md). */
import { fmtInt, markdownTable, type Spread } from '@wirestream/bench-kit';
import type { FanInNodeSummary, FanInSummary, GatewayCostFit, RedisShardFigures, ScaleSummary, ShardNodeSummary } from './summary.js';

function fmtNum(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/** `median (min–max)` over rounds, or the value alone for one round. */
function fmtSpread(s: Spread, digits = 1, format: (n: number) => string = (n) => fmtNum(n, digits)): string {
  if (s.n === 0) return 'n/a';
  return s.n === 1 || s.min === s.max ? format(s.median) : `${format(s.median)} (${format(s.min)}–${format(s.max)})`;
}

function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return Number.isNaN(ms) ? 'n/a' : '∞';
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(1);
}

export function scaleTable(rows: readonly ScaleSummary[]): string {
  return markdownTable([
    [
      'gateways',
      'sockets / gateway',
      'delivered / expected (all rounds)',
      'lost',
      'dup',
      'deliveries/s',
      'gateway CPU s / gateway',
      '**deliveries per gateway CPU-second**',
      'vs 1 gateway',
      'gateway CPU µs per event in',
      'executions / event / gateway',
      'Redis primaries CPU ms / 1k events',
      'Redis replicas CPU ms / 1k events',
      'p50 ms',
      'p99 ms',
      "others' CPU %",
      'load 1m',
    ],
    ...rows.map((r) => [
      String(r.gateways),
      fmtInt(r.socketsPerGateway),
      `${fmtInt(r.delivered)} / ${fmtInt(r.expected)}`,
      fmtInt(r.lost),
      fmtInt(r.duplicates),
      fmtSpread(r.deliveriesPerSecond, 0, fmtInt),
      fmtSpread(r.gatewayCpuSecondsPerGateway, 2),
      `**${fmtSpread(r.deliveriesPerGatewayCpuSecond, 0, fmtInt)}**`,
      `${fmtNum(r.relativeToOneGateway, 2)}×`,
      fmtSpread(r.gatewayCpuUsPerEventIn, 0),
      fmtSpread(r.executionsPerEventPerGateway, 2),
      fmtSpread(r.redisPrimaryCpuMsPer1kEvents, 1),
      fmtSpread(r.redisReplicaCpuMsPer1kEvents, 1),
      fmtSpread(r.p50Ms, 1, fmtMs),
      fmtSpread(r.p99Ms, 1, fmtMs),
      fmtSpread(r.othersCpuPct, 0),
      fmtSpread(r.loadAverage1m, 1),
    ]),
  ]);
}

export function shardTable(nodes: readonly ShardNodeSummary[], partitionsOf: (shardPort: number) => readonly number[]): string {
  const counts = nodes[0]?.byGateways.map((b) => b.gateways) ?? [];
  return markdownTable([
    [
      'node',
      'role',
      'shard (primary)',
      'partitions',
      'events on shard',
      'idle CPU ms/s',
      ...counts.map((n) => `${n} gateway${n > 1 ? 's' : ''}: ms / 1k published (ms / 1k of its own)`),
    ],
    ...nodes.map((n) => [
      String(n.port),
      n.role,
      String(n.shardPort),
      partitionsOf(n.shardPort).join(', ') || 'none',
      `${fmtNum(n.eventShare * 100, 0)} %`,
      fmtSpread(n.idleCpuMsPerSecond, 2),
      ...n.byGateways.map((b) => `${fmtSpread(b.cpuMsPer1kPublishedEvents, 1)} (${fmtNum(b.cpuMsPer1kShardEvents.median, 1)})`),
    ]),
  ]);
}

function nodeLabel(n: FanInNodeSummary): string {
  return n.port === 0 ? '**cluster (all 6 nodes)**' : `${n.port} ${n.role}`;
}

export function fanInTable(summary: FanInSummary): string {
  const rows = [...summary.nodes, summary.cluster];
  const b = (s: Spread): string => fmtSpread(s, 0, fmtInt);
  return markdownTable([
    [
      'node',
      'shard (primary)',
      'classic: bus / clients / replication',
      '**classic total B/event**',
      'sharded: bus / clients / replication',
      '**sharded total B/event**',
      'avoided B/event (classic − sharded)',
      'sharded ÷ classic',
      'bus publish msgs / event (classic, sharded)',
      'idle bus B/s',
    ],
    ...rows.map((n) => [
      nodeLabel(n),
      n.port === 0 ? '' : String(n.shardPort),
      `${b(n.modes.classic.bus)} / ${b(n.modes.classic.clients)} / ${b(n.modes.classic.replication)}`,
      `**${b(n.modes.classic.total)}**`,
      `${b(n.modes.sharded.bus)} / ${b(n.modes.sharded.clients)} / ${b(n.modes.sharded.replication)}`,
      `**${b(n.modes.sharded.total)}**`,
      b(n.avoidedBytesPerEvent),
      n.modes.classic.total.median > 0 ? `${fmtNum((n.modes.sharded.total.median / n.modes.classic.total.median) * 100, 0)} %` : 'n/a',
      `${fmtNum(n.modes.classic.busPublishMessages.median, 2)}, ${fmtNum(n.modes.sharded.busPublishMessages.median, 2)}`,
      b(n.idle.busBytesPerSecond),
    ]),
  ]);
}

export function fanInCpuTable(summary: FanInSummary, subscribers: number, chunkEvents: number): string {
  const rows = [...summary.nodes, summary.cluster];
  return markdownTable([
    [
      'node',
      'idle CPU ms/s',
      'paced SPUBLISH, no subscriber',
      `paced SPUBLISH, ${subscribers} subscriber sets`,
      `paced classic PUBLISH, ${subscribers} subscribers`,
      `burst (chunks of ≤ ${chunkEvents}) SPUBLISH, no subscriber`,
      `burst SPUBLISH, ${subscribers} subscriber sets`,
    ],
    ...rows.map((n) => [
      nodeLabel(n),
      fmtSpread(n.idle.cpuMsPerSecond, 2),
      fmtSpread(n.modes.unsubscribed.cpuMsPer1kEvents, 1),
      fmtSpread(n.modes.sharded.cpuMsPer1kEvents, 1),
      fmtSpread(n.modes.classic.cpuMsPer1kEvents, 1),
      fmtSpread(n.modes['burst-unsubscribed'].cpuMsPer1kEvents, 1),
      fmtSpread(n.modes['burst-sharded'].cpuMsPer1kEvents, 1),
    ]),
  ]);
}

export function shardFigureLines(f: RedisShardFigures, subscribers: number): string[] {
  const us = (s: Spread): string => `${fmtSpread(s, 2)} µs`;
  return [
    `\`redisShard.cpuUsPerPublishedEvent\` = **${fmtNum(f.cpuUsPerPublishedEvent, 2)} µs** (${us(f.burst.usPerPublishedEvent)} over rounds): a shard's primary per event written (XADD + SPUBLISH, its replica fed), burst windows, net of idle`,
    `\`redisShard.cpuUsPerSubscriberMessage\` = **${fmtNum(f.cpuUsPerSubscriberMessage, 2)} µs** (${us(f.burst.usPerSubscriberMessage)}): per message written to one SSUBSCRIBEd connection, (burst SPUBLISH with ${subscribers} subscriber sets − without) ÷ ${subscribers}, paired per round`,
    `the same at the paced rate (one-event pipelines, the low-rate cost): ${us(f.paced.usPerPublishedEvent)} per published event, ${us(f.paced.usPerSubscriberMessage)} per subscriber message`,
    `cross-check from the gateway runs (primaries' net CPU per event against N gateways, least squares over ${f.scaleFit.points} runs): ${fmtNum(f.scaleFit.interceptUsPerEvent, 2)} µs per event + ${fmtNum(f.scaleFit.usPerSubscriberMessage, 2)} µs per gateway connection`,
  ];
}

export function gatewayCostLine(f: GatewayCostFit): string {
  return (
    `gateway CPU per event it receives ≈ **${fmtNum(f.usPerEventPerGateway, 0)} µs + ${fmtNum(f.usPerDelivery, 1)} µs × its deliveries of that event** ` +
    `(least squares over ${f.points} gateway processes: CPU µs per event in against deliveries per event in); every gateway pays the first term for every event of the topic`
  );
}
