/**
 * bench/results/cluster.md (the tables, how to read them, what cluster.json holds) and
 * bench/results/cluster.json (the figures other tools read, then every raw run).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FanInRun } from './fanin-run.js';
import type { ScaleRun } from './gateway-run.js';
import type { QuietWait, Spread } from '@wirestream/bench-kit';
import type { BytesPerEvent, FanInSummary, GatewayCostFit, RedisShardFigures, ScaleSummary, ShardNodeSummary } from './summary.js';

export interface ResultsInput {
  readonly command: string;
  readonly machine: string;
  readonly gateway: string;
  readonly quiet: QuietWait | undefined;
  readonly maxLoad: number;
  readonly loadAtStart: readonly number[];
  readonly loadAtEnd: readonly number[];
  readonly runMinutes: number;
  readonly settings: Readonly<Record<string, unknown>> & { readonly faninSubscribers: number; readonly rounds: number };
  readonly partitionsByShard: Readonly<Record<string, readonly number[]>>;
  readonly scale: readonly ScaleSummary[];
  readonly shards: readonly ShardNodeSummary[];
  readonly fanIn: FanInSummary;
  readonly figures: RedisShardFigures;
  readonly gatewayCost: GatewayCostFit;
  readonly tables: { readonly scale: string; readonly gatewayCost: string; readonly shards: string; readonly fanIn: string; readonly fanInCpu: string; readonly figures: readonly string[] };
  readonly raw: { readonly scale: readonly ScaleRun[]; readonly fanIn: readonly FanInRun[] };
}

const FIELDS = `\`cluster.json\` (next to this file) holds the figures of this run for other tools (scripts/capacity.mjs reads the first block), then every raw run:

| field | unit | what |
| --- | --- | --- |
| \`redisShard.cpuUsPerPublishedEvent\` | µs | Redis CPU on a shard's primary per event written to it: XADD + SPUBLISH with no subscriber, feeding its replica included; all primaries' CPU net of idle ÷ events, median over rounds; from the burst windows (ingest-sized chunks back-to-back: the cost at throughput) |
| \`redisShard.cpuUsPerSubscriberMessage\` | µs | primary CPU per message written to one SSUBSCRIBEd connection: (burst SPUBLISH with K subscriber sets − without) ÷ K, paired per round, median |
| \`redisShard.burst\`, \`.paced\` | µs | both figures with their spreads (\`usPerPublishedEvent\`, \`usPerSubscriberMessage\`: \`{ median, min, max, n }\`), from the burst windows and from the paced ones (one-event pipelines at the fan-in rate: the low-rate cost, several times higher) |
| \`redisShard.scaleFit\` | µs | the same two fitted on the gateway runs (paced, primaries' net CPU per event against N gateways): a cross-check of \`paced\` |
| \`deliveriesPerGatewayCpuSecond["N"]\` | deliveries / CPU-s | with N gateways: deliveries counted at the clients ÷ CPU-seconds of all N gateways (user + system, all threads) over first publish → last delivery; \`median\`, \`min\`, \`max\` over rounds, \`relativeToOneGateway\` (median ÷ the 1-gateway median) |
| \`gatewayCost\` | µs | \`usPerEventPerGateway\` + \`usPerDelivery\` × deliveries: a gateway's CPU per event it receives, fitted over every gateway process of the run (the first term is paid by every gateway for every event of the topic its sockets' channels cover) |
| \`redisCpuPerShard[]\` | ms per 1k events | per shard (\`shardPort\` = its primary's port; \`partitions\` whose hash tag it serves; \`eventShare\`): for its \`primary\` and \`replica\`, \`idleCpuMsPerSecond\` and per gateway count \`byGateways["N"]\`: \`cpuMsPer1kPublishedEvents\` (net of idle, per 1,000 events published to the topic) and \`cpuMsPer1kShardEvents\` (per 1,000 of the events that landed on that shard, numerically µs per event) |
| \`fanIn.bytesPerEvent.cluster\` / \`.nodes[]\` | bytes | per published event, net of the idle window: \`classic\` and \`sharded\` each with \`bus\` (cluster bus, kernel tcp_info bytes_received on bus links), \`clients\` (INFO total_net_input_bytes), \`replication\` (INFO total_net_repl_input_bytes), \`total\`; \`avoided\` = classic total − sharded total |
| \`summaries\` | | every table's figures with their spreads (\`{ median, min, max, n }\`) |
| \`runs.scale[]\`, \`runs.fanIn[]\` | | each measured window as taken (CPU ms, counters, deliveries), for re-analysis |`;

function median(s: Spread): number {
  return s.median;
}

function bytesJson(b: BytesPerEvent): Record<string, number> {
  return { bus: median(b.bus), clients: median(b.clients), replication: median(b.replication), total: median(b.total) };
}

function json(input: ResultsInput, date: string): unknown {
  const { scale, shards, fanIn, figures } = input;
  const shardPorts = [...new Set(shards.map((s) => s.shardPort))];
  const nodeJson = (n: ShardNodeSummary | undefined): unknown =>
    n && {
      port: n.port,
      idleCpuMsPerSecond: median(n.idleCpuMsPerSecond),
      byGateways: Object.fromEntries(n.byGateways.map((b) => [String(b.gateways), { cpuMsPer1kPublishedEvents: median(b.cpuMsPer1kPublishedEvents), cpuMsPer1kShardEvents: median(b.cpuMsPer1kShardEvents) }])),
    };
  return {
    bench: '@wirestream/bench-cluster',
    date,
    command: input.command,
    machine: input.machine,
    gateway: input.gateway,
    load: { maxLoad: input.maxLoad, reachedQuiet: input.quiet?.reached ?? null, waitedMinutes: (input.quiet?.waitedMs ?? 0) / 60_000, polls: input.quiet?.polls ?? [], atStart: input.loadAtStart, atEnd: input.loadAtEnd },
    settings: input.settings,
    redisShard: {
      cpuUsPerPublishedEvent: figures.cpuUsPerPublishedEvent,
      cpuUsPerSubscriberMessage: figures.cpuUsPerSubscriberMessage,
      burst: figures.burst,
      paced: figures.paced,
      scaleFit: figures.scaleFit,
    },
    gatewayCost: input.gatewayCost,
    deliveriesPerGatewayCpuSecond: Object.fromEntries(scale.map((s) => [String(s.gateways), { ...s.deliveriesPerGatewayCpuSecond, relativeToOneGateway: s.relativeToOneGateway }])),
    redisCpuPerShard: shardPorts.map((port) => {
      const primary = shards.find((s) => s.shardPort === port && s.role === 'primary');
      return {
        shardPort: port,
        partitions: input.partitionsByShard[String(port)] ?? [],
        eventShare: primary?.eventShare ?? 0,
        primary: nodeJson(primary),
        replica: nodeJson(shards.find((s) => s.shardPort === port && s.role === 'replica')),
      };
    }),
    fanIn: {
      bytesPerEvent: {
        cluster: { classic: bytesJson(fanIn.cluster.modes.classic), sharded: bytesJson(fanIn.cluster.modes.sharded), avoided: median(fanIn.cluster.avoidedBytesPerEvent) },
        nodes: fanIn.nodes.map((n) => ({ port: n.port, role: n.role, shardPort: n.shardPort, classic: bytesJson(n.modes.classic), sharded: bytesJson(n.modes.sharded), avoided: median(n.avoidedBytesPerEvent) })),
      },
      allReceived: fanIn.allReceived,
    },
    summaries: { scale, shards, fanIn },
    runs: input.raw,
  };
}

function loadLine(input: ResultsInput): string {
  const q = input.quiet;
  const wait =
    q === undefined
      ? 'no wait for a quiet machine (--no-wait)'
      : q.reached
        ? `waited ${(q.waitedMs / 60_000).toFixed(1)} min for the 1-minute load to go below ${input.maxLoad} (polls: ${q.polls.map((l) => l.toFixed(1)).join(', ')})`
        : `**the machine never got quiet**: the 1-minute load stayed ≥ ${input.maxLoad} for ${(q.waitedMs / 60_000).toFixed(1)} min (polls: ${q.polls.map((l) => l.toFixed(1)).join(', ')}), so this ran on a busy machine anyway`;
  return `${wait}; load average ${input.loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start, ${input.loadAtEnd.map((l) => l.toFixed(2)).join(' ')} at end`;
}

function markdown(input: ResultsInput, date: string): string {
  const s = input.settings;
  const k = s.faninSubscribers;
  return `# Redis Cluster benchmark (issue #17): gateways over a cluster, sharded vs classic fan-in

- date: ${date}
- ${input.machine}; machine shared with other work: compare within this run (ratios against its own baselines), not absolute numbers across runs
- load: ${loadLine(input)}
- command: \`${input.command}\` (measured run ${input.runMinutes.toFixed(1)} min)
- gateway: \`${input.gateway}\` (apps/gateway/dist as built), NODE_ENV=${String(s['nodeEnv'])}
- cluster: testkit's startRedisCluster, 3 primaries + 3 replicas (redis-server, no persistence, cluster-node-timeout 1 s), started in ${(Number(s['clusterStartupMs']) / 1_000).toFixed(1)} s
- settings: ${JSON.stringify(s)}
- partitions per shard (hash tag \`{<topic>:<p>}\`): ${Object.entries(input.partitionsByShard).map(([port, ps]) => `${port}: ${ps.join(', ')}`).join(' · ')}

${FIELDS}

## Scale-out: 1, 2, 3 gateways, deliveries per gateway CPU-second

${input.tables.scale}

- ${input.tables.gatewayCost}

How to read: each setup starts N gateway processes (\`apps/gateway/dist/main.js\`, REDIS_MODE=cluster, GATEWAY_AUTH_MODE=anonymous, GATEWAY_DEBUG_ENDPOINTS=true), connects the same ${String(s['sockets'])} sockets split over them (@wirestream/loadgen, socket i on gateway i mod N, mix \`${String(s['mix'])}\` over ${String(s['listings'])} listing ids), waits until every gateway reports its subscriptions confirmed and Redis counts every gateway on every wire channel it needs (\`PUBSUB SHARDNUMSUB\`), publishes a warm-up (${String(s['warmupEvents'])} events, not measured: every setup starts fresh processes, whose JIT warm-up would otherwise count N times), measures each process's idle CPU for 3 s, then publishes the same ${String(s['rate'])} events/s for ${String(s['seconds'])} s through the cluster layout (what fell due every 10 ms, one pipeline per partition's slot: XADDs to its history stream, then SPUBLISHes; at this rate mostly one event per pipeline). "deliveries per gateway CPU-second" is distinct deliveries counted at the clients ÷ the CPU-seconds (user + system, all threads, /proc schedstat) of all N gateways over first publish → last delivery; "vs 1 gateway" is its median over the 1-gateway median of this run. "gateway CPU µs per event in" is each gateway's CPU ÷ the events it received (its \`/stats\` eventsIn); "executions" are its \`/stats\` executions (one per distinct operation an event matches). Redis CPU is net of each node's idle rate measured just before. Cells are median (min–max) over ${String(s.rounds)} interleaved round${s.rounds === 1 ? '' : 's'} (order rotated each round); "others' CPU" is what the rest of the machine used meanwhile, % of one core.

## Redis CPU per shard

${input.tables.shards}

Net of idle (the cluster's own cron and bus pings, measured per node just before each traffic window), per 1,000 events published to the topic; in parentheses per 1,000 of the events that landed on that shard (= µs per event). Each gateway holds one connection per primary and SSUBSCRIBEs each partition's channels there, so every event a primary takes is written to N gateway connections.

## Fan-in: bytes each node received per published event, sharded vs classic

${input.tables.fanIn}

How to read: the same stream (${String(s['faninRate'])} events/s for ${String(s['faninSeconds'])} s, XADD + publish per event as ingest writes, sent to the partition's primary) once with SPUBLISH on the tagged channels and once with classic PUBLISH on the same channel names, each with ${k} subscriber sets (sharded: each set one connection per primary, SSUBSCRIBE per slot; classic: each set one connection, on different primaries, SUBSCRIBE every channel). Bytes each node received: "bus" is the cluster bus (kernel tcp_info bytes_received of every bus link the node holds, via \`ss -ti\`; INFO does not count the bus), "clients" INFO total_net_input_bytes, "replication" INFO total_net_repl_input_bytes. Net of an idle window of the same length in the same round; median (min–max) over rounds. "bus publish msgs / event" is CLUSTER INFO cluster_stats_messages_publish(shard)_received per event. Classic PUBLISH is the baseline.

## Redis CPU in the fan-in windows

${input.tables.fanInCpu}

ms per 1,000 events, net of idle (scaled to each window's length). Paced windows: ${String(s['faninRate'])} events/s, due events sent every 10 ms (mostly one event per pipeline, as ingest sends at such rates). Burst windows: ${String(s['burstEvents'])} events back-to-back in slices of ≤ ${String(s['chunkEvents'])} events per partition per pipeline, each slice answered before the next (ingest's batches at throughput).

${input.tables.figures.map((l) => `- ${l}`).join('\n')}
`;
}

/** Writes both files; returns their paths. */
export function writeResults(outDir: string, input: ResultsInput): string[] {
  const date = new Date().toISOString();
  const md = join(outDir, 'cluster.md');
  const js = join(outDir, 'cluster.json');
  writeFileSync(md, markdown(input, date));
  writeFileSync(js, `${JSON.stringify(json(input, date), null, 2)}\n`);
  return [md, js];
}
