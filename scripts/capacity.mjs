// Capacity model: gateway pods, ingest pods and Redis shards for a number of sockets and
// deliveries/s, computed from the figures the benchmarks measured (bench/results; read by
// scripts/capacity-figures.mjs, never typed in) with the arithmetic of scripts/capacity-model.mjs.
//
//   node scripts/capacity.mjs                  print the tables (the default scenarios below)
//   node scripts/capacity.mjs --markdown       write bench/results/capacity.md and the generated blocks of
//                                              docs/operations.md ("Scaling out")
//   node scripts/capacity.mjs --check          exit 1 when either no longer matches the current results
//   node scripts/capacity.mjs --json           figures and results as JSON
//
// Inputs (assumptions, not measurements; the written files state them):
//   --headroom 0.3                 fraction of each pod's sockets and core, and of each Redis core, kept free
//   --scenario SOCKETS[:DELIVERIES_PER_S]   repeatable; default 1000000:500000 and 10000000
//   --deliveries-per-socket R      deliveries/s per socket of a scenario without its own figure; default:
//                                  the rate of the first scenario that states one (500,000 ÷ 1,000,000)
//   --shape unicast|broadcast|F:S  repeatable; F sockets per event, S sockets per distinct operation;
//                                  default unicast and broadcast, which bound every workload
//   --results DIR, --docs FILE     where the results are read and the runbook is (default bench/results,
//                                  docs/operations.md); for tests
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FigureError, createSources, readFigures } from './capacity-figures.mjs';
import { broadcast, minimumPods, minimumShards, plan, unicast, unitCapacities } from './capacity-model.mjs';

const root = new URL('..', import.meta.url).pathname;
const defaults = { headroom: '0.3', scenario: ['1000000:500000', '10000000'], shape: ['unicast', 'broadcast'] };
/** The generated blocks of the runbook, between `<!-- capacity:NAME -->` markers. */
const docBlocks = { 'scale-out': renderDocsBlock, 'redis-signals': renderRedisSignals };
const usage = 'usage: node scripts/capacity.mjs [--markdown | --check | --json] [--headroom 0.3] [--scenario SOCKETS[:DELIVERIES_PER_S]]… [--deliveries-per-socket R] [--shape unicast|broadcast|F:S]… [--results DIR] [--docs FILE]';

/** A bad flag: the message names it, what was expected and what arrived. */
class UsageError extends Error {
  name = 'UsageError';
}

try {
  main();
} catch (err) {
  if (!(err instanceof FigureError || err instanceof UsageError)) throw err;
  console.error(`capacity: ${err.message}`);
  if (err instanceof UsageError) console.error(usage);
  process.exit(err instanceof UsageError ? 2 : 1);
}

function main() {
  const options = readOptions(process.argv.slice(2));
  const sources = createSources(root, options.resultsDir);
  const figures = readFigures(sources);
  const units = unitCapacities(figures, options.headroom);
  const plans = options.scenarios.flatMap((scenario) => options.shapes.map((shape) => plan(figures, units, scenario, shape)));
  const report = { options, figures, units, plans };

  if (options.mode === 'json') {
    console.log(JSON.stringify({ headroom: options.headroom, figures, units, plans }, null, 2));
    return;
  }
  if (options.mode === 'print') {
    console.log([renderInputs(report), renderUnits(report), renderPlans(report), renderGaps(report)].join('\n\n'));
    return;
  }
  const capacityPath = join(options.resultsDir, 'capacity.md');
  const capacityMd = renderCapacityFile(report, sources.resultPath('capacity.md'));
  const docs = readFileSync(options.docsPath, 'utf8');
  let nextDocs = docs;
  for (const [name, render] of Object.entries(docBlocks)) {
    const markers = new RegExp(`(<!-- capacity:${name} -->\\n)[\\s\\S]*?(<!-- /capacity:${name} -->)`);
    if (!markers.test(nextDocs)) throw new FigureError(`${relative(root, options.docsPath)} has no <!-- capacity:${name} --> … <!-- /capacity:${name} --> block`);
    nextDocs = nextDocs.replace(markers, (_m, open, close) => `${open}${render(report)}${close}`);
  }

  if (options.mode === 'check') {
    const stale = [];
    if (readOr(capacityPath) !== capacityMd) stale.push(sources.resultPath('capacity.md'));
    if (nextDocs !== docs) stale.push(`${relative(root, options.docsPath)} (its capacity:* blocks)`);
    if (stale.length > 0) {
      console.error(`capacity: ${stale.join(' and ')} no longer match${stale.length === 1 ? 'es' : ''} the figures in bench/results: run node scripts/capacity.mjs --markdown`);
      process.exit(1);
    }
    console.log("capacity.md and the runbook's capacity tables match the figures in bench/results");
    return;
  }
  writeFileSync(capacityPath, capacityMd);
  writeFileSync(options.docsPath, nextDocs);
  console.log(`wrote ${sources.resultPath('capacity.md')} and the capacity:* blocks of ${relative(root, options.docsPath)}`);
}

/** @param {string} path */
function readOr(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Flags → options; every problem reported at once.
 * @param {string[]} argv
 */
function readOptions(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        markdown: { type: 'boolean' },
        check: { type: 'boolean' },
        json: { type: 'boolean' },
        headroom: { type: 'string' },
        scenario: { type: 'string', multiple: true },
        'deliveries-per-socket': { type: 'string' },
        shape: { type: 'string', multiple: true },
        results: { type: 'string' },
        docs: { type: 'string' },
      },
      strict: true,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  const problems = [];
  const modes = ['markdown', 'check', 'json'].filter((m) => v[m]);
  if (modes.length > 1) problems.push(`--${modes.join(' and --')}: choose one`);
  const workloadFlags = ['headroom', 'scenario', 'deliveries-per-socket', 'shape'].filter((k) => v[k] !== undefined);
  if ((v.markdown || v.check) && workloadFlags.length > 0) {
    problems.push(`--${v.markdown ? 'markdown' : 'check'} renders the committed files, which use the default inputs: drop --${workloadFlags.join(', --')} (print other workloads without it, or with --json)`);
  }

  const headroom = Number(v.headroom ?? defaults.headroom);
  if (!(headroom >= 0 && headroom < 1)) problems.push(`--headroom: expected a fraction 0 ≤ h < 1 (0.3 keeps 30 % free), got "${v.headroom}"`);

  const scenarioTexts = v.scenario ?? defaults.scenario;
  const stated = scenarioTexts.map((text) => /^(\d+)(?::(\d+(?:\.\d+)?))?$/.exec(text.replaceAll('_', '').replaceAll(',', '')));
  scenarioTexts.forEach((text, i) => {
    if (!stated[i] || Number(stated[i][1]) <= 0) problems.push(`--scenario: expected SOCKETS or SOCKETS:DELIVERIES_PER_S (e.g. 1000000:500000), got "${text}"`);
  });
  const firstStated = stated.find((m) => m?.[2] !== undefined);
  const perSocket = v['deliveries-per-socket'] !== undefined ? Number(v['deliveries-per-socket']) : firstStated ? Number(firstStated[2]) / Number(firstStated[1]) : undefined;
  if (v['deliveries-per-socket'] !== undefined && !(perSocket > 0)) problems.push(`--deliveries-per-socket: expected a positive number, got "${v['deliveries-per-socket']}"`);
  if (stated.some((m) => m && m[2] === undefined) && perSocket === undefined) {
    problems.push('--scenario: a scenario without deliveries/s needs --deliveries-per-socket or another scenario that states its deliveries/s');
  }

  const shapes = (v.shape ?? defaults.shape).map((text) => {
    if (text === 'unicast') return unicast;
    if (text === 'broadcast') return broadcast;
    const m = /^(\d+):(\d+)$/.exec(text);
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1 || Number(m[2]) > Number(m[1])) {
      problems.push(`--shape: expected unicast, broadcast or F:S with 1 ≤ S ≤ F (F sockets per event, S sockets per distinct operation), got "${text}"`);
      return unicast;
    }
    return { name: `${m[1]} per event, ${m[2]} per operation`, socketsPerEvent: Number(m[1]), socketsPerOperation: Number(m[2]) };
  });
  if (problems.length > 0) throw new UsageError(problems.join('\n  '));

  const scenarios = stated.map((m) => {
    const sockets = Number(/** @type {RegExpExecArray} */ (m)[1]);
    const rate = m?.[2] !== undefined ? Number(m[2]) : sockets * /** @type {number} */ (perSocket);
    return { sockets, deliveriesPerS: rate, deliveriesStated: m?.[2] !== undefined };
  });
  return {
    mode: v.markdown ? 'markdown' : v.check ? 'check' : v.json ? 'json' : 'print',
    headroom,
    scenarios,
    perSocket,
    shapes,
    resultsDir: resolve(v.results ?? join(root, 'bench/results')),
    docsPath: resolve(v.docs ?? join(root, 'docs/operations.md')),
  };
}

// --- rendering ---------------------------------------------------------------------------------

/** @param {number} n */
function int(n) {
  return Math.round(n).toLocaleString('en-US');
}

/** A rate or count: integers from 100 up, else two significant digits. @param {number} n */
function num(n) {
  if (n >= 100) return int(n);
  if (n > 0 && n < 0.01) return '< 0.01';
  return Number(n.toPrecision(2)).toLocaleString('en-US', { maximumFractionDigits: 3 });
}

/** Three significant digits, for thresholds: `185,000`. @param {number} n */
function approx(n) {
  return Number(n.toPrecision(3)).toLocaleString('en-US');
}

/** @param {number} bytes */
function size(bytes) {
  if (bytes >= 1_073_741_824) return `${(bytes / 1_073_741_824).toFixed(1)} GiB`;
  if (bytes >= 1_048_576) return `${(bytes / 1_048_576).toFixed(0)} MiB`;
  if (bytes >= 1_024) return `${(bytes / 1_024).toFixed(2)} KiB`;
  return `${bytes.toFixed(0)} B`;
}

/** @param {number} bytesPerS */
function rate(bytesPerS) {
  return `${size(bytesPerS)}/s`;
}

/** @param {{ value: number, unit: string }} f */
function figureValue(f) {
  if (f.unit === 'bytes') return size(f.value);
  if (f.unit === 'µs') return `${f.value.toFixed(2)} µs`;
  return `${int(f.value)}${f.unit && f.unit !== 'entries' ? ` ${f.unit}` : ''}`;
}

/**
 * A markdown table with padded columns: valid markdown, and readable as text in a terminal.
 * @param {string[]} header
 * @param {string[][]} rows
 */
function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length), 3));
  const line = (/** @type {string[]} */ cells) => `| ${cells.map((c, i) => (c ?? '').padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** @typedef {{ options: ReturnType<typeof readOptions>, figures: ReturnType<typeof readFigures>, units: ReturnType<typeof unitCapacities>, plans: ReturnType<typeof plan>[] }} Report */

/** @param {Report} r */
function renderInputs({ figures }) {
  const rows = Object.entries(figures)
    .filter(([, f]) => f !== undefined)
    .map(([key, f]) => [`\`${key}\``, figureValue(f), f.what, f.source]);
  if (figures.redisUsPerSubscriberMessage === undefined) {
    rows.push(['`redisUsPerSubscriberMessage`', 'not measured', 'Redis CPU per message written to one subscribed gateway connection', 'bench/results/cluster.json (not written yet)']);
  }
  return table(['figure', 'value', 'what', 'source'], rows);
}

/** @param {Report} r */
function renderUnits({ figures, units, options }) {
  const pct = `${Math.round(options.headroom * 100)} %`;
  const g = units.gateway;
  const redisSource = figures.redisUsPerSubscriberMessage ? 'cluster.json' : 'single Redis, no subscriber';
  return table(
    ['unit', 'measured capacity', `planned (headroom ${pct})`, 'from'],
    [
      ['gateway pod: sockets', `${int(Math.min(figures.gatewayMaxSockets.value, g.memorySockets))} (memory allows ${int(g.memorySockets)})`, int(g.plannedSockets), `bound by the ${g.socketBound}; memory: (limit − idle RSS) ÷ peak bytes per socket`],
      ['gateway pod: deliveries/s per core, shared operations', int(g.deliveriesPerCore), int(g.plannedDeliveries), '`gatewayUsPerDelivery`'],
      ['gateway pod: deliveries/s per core, unicast', int(g.unicastDeliveriesPerCore), int(g.plannedUnicastDeliveries), '`gatewayUsPerUnicastEvent` (measured: bench/results/unicast.md)'],
      ['gateway pod: events/s in, each to all its planned sockets', '', num(g.plannedBroadcastEvents), 'planned sockets × `gatewayUsPerDelivery` + one execution'],
      ['gateway pod: events/s in, unicast', '', int(g.plannedUnicastDeliveries), 'one delivery and one execution per event'],
      ['ingest pod: events/s per core', int(units.ingest.eventsPerCore), int(units.ingest.plannedEvents), `\`ingestUsPerEvent\` (${figures.ingestUsPerEvent.value.toFixed(1)} µs CPU per event)`],
      ['Redis shard: published events/s per core', int(units.redis.eventsPerCore), int(units.redis.plannedEvents), `\`redisUsPerEvent\` (${redisSource})`],
      [
        'Redis shard: messages/s to subscribed gateways',
        units.redis.plannedSubscriberMessages ? int(units.redis.plannedSubscriberMessages / units.usable) : 'not measured',
        units.redis.plannedSubscriberMessages ? int(units.redis.plannedSubscriberMessages) : 'not measured',
        '`redisUsPerSubscriberMessage` (bench/results/cluster.json)',
      ],
    ],
  );
}

/** `1M sockets`, `10M sockets`, `250,000 sockets`. @param {{ sockets: number }} s */
function scenarioLabel(s) {
  return `${s.sockets >= 1e6 && s.sockets % 1e5 === 0 ? `${s.sockets / 1e6}M` : int(s.sockets)} sockets`;
}

/** @param {ReturnType<typeof plan>} p */
function column(p) {
  return `${scenarioLabel(p.scenario)}, ${p.shape.name}`;
}

/**
 * The plans over a bound: `1M sockets need 76, 10M sockets need 752`, naming the shapes when
 * not every shape of a scenario is over it (`1M sockets, unicast, need 37`).
 * @param {Report['plans']} plans
 * @param {(p: ReturnType<typeof plan>) => number} count
 * @param {number} bound
 */
function needs(plans, count, bound) {
  const bySockets = new Map();
  for (const p of plans) bySockets.set(p.scenario.sockets, [...(bySockets.get(p.scenario.sockets) ?? []), p]);
  return [...bySockets.values()]
    .flatMap((group) => {
      const over = group.filter((p) => count(p) > bound);
      if (over.length === 0) return [];
      const label = scenarioLabel(group[0].scenario);
      if (over.length === group.length && new Set(over.map(count)).size === 1) return [`${label} need ${int(count(over[0]))}`];
      return over.map((p) => `${label}, ${p.shape.name}, need ${int(count(p))}`);
    })
    .join('; ');
}

/** @param {Report} r */
function renderPlans({ plans }) {
  const rows = [
    ['sockets', (p) => int(p.scenario.sockets)],
    ['deliveries/s', (p) => int(p.scenario.deliveriesPerS)],
    ['sockets per event / per distinct operation', (p) => `${int(p.shape.socketsPerEvent)} / ${int(p.shape.socketsPerOperation)}`],
    ['events/s (Kafka → ingest → Redis)', (p) => num(p.eventsPerS)],
    ['**gateway pods**', (p) => `**${int(p.gateway.pods)}** (${p.gateway.bound})`],
    ['gateway: sockets per pod', (p) => int(p.gateway.socketsPerPod)],
    ['gateway: deliveries/s per pod', (p) => int(p.gateway.deliveriesPerPod)],
    ['gateway: CPU µs per delivery', (p) => p.gateway.usPerDelivery.toFixed(2)],
    ['gateway: gateways receiving each event', (p) => num(p.gateway.gatewaysPerEvent)],
    ['**ingest pods**', (p) => `**${int(p.ingest.pods)}**${p.ingest.need < p.ingest.pods ? ` (needs ${int(p.ingest.need)}; minimum ${minimumPods})` : ''}`],
    ['Kafka partitions, widest topic, at least', (p) => int(p.ingest.partitions)],
    ['**Redis primaries (shards)**', (p) => `**${p.redis.complete ? '' : '≥ '}${int(p.redis.shards)}**${p.redis.need < p.redis.shards ? ` (needs ${int(p.redis.need)}; minimum ${minimumShards})` : ''}`],
    ['Redis replicas (one per primary)', (p) => int(p.redis.shards)],
    ['Redis CPU, cores, all shards', (p) => (p.redis.cores < 0.01 ? '< 0.01' : `${p.redis.complete ? '' : '≥ '}${num(p.redis.cores)}`)],
    ['Redis: published events/s', (p) => num(p.redis.publishesPerS)],
    ['Redis: messages/s to gateways', (p) => num(p.redis.subscriberMessagesPerS)],
    ['Redis: in / out per shard', (p) => `${rate(p.redis.inBytesPerS / p.redis.shards)} / ${rate(p.redis.outBytesPerS / p.redis.shards)}`],
    ['Redis: history per shard (payload)', (p) => size(p.redis.historyBytesPerShard)],
  ];
  return table(['', ...plans.map(column)], rows.map(([label, cell]) => [label, ...plans.map(cell)]));
}

/** @param {Report} r */
function renderGaps({ figures, options, plans }) {
  const lines = [];
  if (figures.redisUsPerSubscriberMessage === undefined) {
    lines.push(
      '- **Redis shards are a lower bound (≥)**: they count the CPU of publishing (XADD + PUBLISH, measured on one Redis with no subscriber, `redisUsPerEvent`), not of writing each message to the subscribed gateways, which no bench has measured yet. `bench/results/cluster.json` from the Redis Cluster bench supplies `redisShard.cpuUsPerPublishedEvent` and `redisShard.cpuUsPerSubscriberMessage` (Redis CPU µs on one shard\'s primary); this script reads them when the file exists, and the "≥" goes.',
    );
  }
  const ceiling = figures.gatewayUsPerDeliveryAtCeiling.value;
  const worst = plans.find((p) => p.shape.name === 'broadcast') ?? plans[0];
  if (worst) {
    const cpuPods = Math.ceil((worst.scenario.deliveriesPerS * (ceiling + figures.gatewayUsPerExecution.value / Math.max(1, worst.gateway.socketsPerPod))) / (1e6 * (1 - options.headroom)));
    lines.push(
      `- **Gateway CPU per delivery** is the quiet, current-code figure (${figures.gatewayUsPerDelivery.value.toFixed(2)} µs). The run at the socket ceiling measured ${ceiling.toFixed(2)} µs on a busy machine with an older gateway; with it, ${column(worst)} would need ${int(cpuPods)} pods for CPU (the table: ${int(worst.gateway.pods)}, ${worst.gateway.bound}).`,
    );
  }
  const inflation = figures.ingestUsPerEvent.value / figures.ingestUsPerEventFastestRound.value;
  lines.push(
    `- **Ingest CPU per event** (${figures.ingestUsPerEvent.value.toFixed(1)} µs) is the median of the latest runs of ingest as it runs (history on), on a machine that was busy in every round; the fastest round measured ${figures.ingestUsPerEventFastestRound.value.toFixed(1)} µs, so the ingest pods above may be up to ${inflation.toFixed(1)}× what a quieter machine would need. Re-measure on a quiet machine before buying for it.`,
    `- **Events/s** follow from the shape: unicast (every event to one socket) is the most events, executions and Redis traffic for a delivery rate, broadcast the least; a real workload lies between. Print yours with \`node scripts/capacity.mjs --shape F:S\` (F sockets per event, S sockets per distinct operation).`,
    ...replicaBoundLines(figures, plans),
    `- Pods and shards are at least ${minimumPods} (the HPAs' minReplicas) and ${minimumShards} (Redis Cluster's minimum). Kafka partitions count the widest topic only. History is the payload only (\`INGEST_HISTORY_LENGTH\` × partitions × envelope): stream overhead, pub/sub output buffers and replication buffers come on top.`,
  );
  return lines.join('\n');
}

/**
 * Where the plan exceeds the production overlay's HPA bounds.
 * @param {Report['figures']} figures
 * @param {Report['plans']} plans
 */
function replicaBoundLines(figures, plans) {
  const gateway = needs(plans, (p) => p.gateway.pods, figures.gatewayMaxReplicas.value);
  const ingest = needs(plans, (p) => p.ingest.pods, figures.ingestMaxReplicas.value);
  const lines = [];
  if (gateway) {
    lines.push(`- **The production HPA allows ${int(figures.gatewayMaxReplicas.value)} gateways** (${int(figures.gatewayMaxReplicas.value * plannedSocketsOf(plans))} sockets at the planned count per pod; \`infra/k8s/overlays/production/hpa.yaml\`): ${gateway}. Raise \`maxReplicas\` with the socket count you plan for.`);
  }
  if (ingest) {
    lines.push(`- **The production HPA allows ${int(figures.ingestMaxReplicas.value)} ingest pods**: ${ingest}; raise \`maxReplicas\` and create the topics with at least that many partitions.`);
  }
  return lines;
}

/** @param {Report['plans']} plans */
function plannedSocketsOf(plans) {
  return plans[0] ? plans[0].gateway.plannedSockets : 0;
}

/** @param {Report} r */
function inputsLine({ options }) {
  const scenarios = options.scenarios
    .map((s) => `${int(s.sockets)} sockets at ${int(s.deliveriesPerS)} deliveries/s${s.deliveriesStated ? '' : ` (${options.perSocket} per socket, the first scenario's rate: \`--deliveries-per-socket\`)`}`)
    .join('; ');
  return `Inputs (assumptions, flags of the script): headroom ${Math.round(options.headroom * 100)} % (\`--headroom ${options.headroom}\`); ${scenarios} (\`--scenario\`); shapes ${options.shapes.map((s) => s.name).join(' and ')} (\`--shape\`).`;
}

/**
 * @param {Report} r
 * @param {string} name
 */
function renderCapacityFile(r, name) {
  return `# Capacity model: pods and Redis shards for 1M and 10M sockets

Generated by \`node scripts/capacity.mjs --markdown\` from the figures measured in bench/results (and a few
settings, each named below); do not edit: \`node scripts/capacity.mjs --check\` fails when ${name} no longer matches what
the script computes from the current results. The runbook (docs/operations.md, "Scaling out") carries the
same tables and says how to read them.

${inputsLine(r)}

## Measured figures (inputs)

Each figure is read from the file, section, row and column named in "source" (the script fails, naming
them, when one is missing).

${renderInputs(r)}

## Per unit

${renderUnits(r)}

## Scenarios

${renderPlans(r)}

## What is estimated, and what is missing

${renderGaps(r)}
`;
}

/** @param {Report} r */
function renderDocsBlock(r) {
  return `<!-- generated by node scripts/capacity.mjs --markdown from bench/results: do not edit here -->

${inputsLine(r)}

${renderUnits(r)}

${renderPlans(r)}

${renderGaps(r)}

Inputs, each with the file and figure it came from: [bench/results/capacity.md](../bench/results/capacity.md).
`;
}

/**
 * The runbook's signals for moving from one Redis to a Redis Cluster, with the measured figures.
 * @param {Report} r
 */
function renderRedisSignals({ figures, units, options }) {
  const usable = 1 - options.headroom;
  const redis = figures.redisUsPerEvent;
  const envelope = size(figures.envelopeBytes.value);
  const subscriber = figures.redisUsPerSubscriberMessage
    ? `${figures.redisUsPerSubscriberMessage.value.toFixed(2)} µs per message to a subscribed gateway (${figures.redisUsPerSubscriberMessage.source})`
    : 'writing to subscribed gateways comes on top (not measured yet: bench/results/cluster.json)';
  return `<!-- generated by node scripts/capacity.mjs --markdown from bench/results: do not edit here -->

${table(
  ['signal', 'where to see it', 'threshold', 'what the benches measured'],
  [
    [
      'Redis CPU',
      'the Redis process (container CPU, or the rate of `INFO cpu` `used_cpu_user` + `used_cpu_sys`)',
      `sustained above ${usable.toFixed(2)} of one core (1 − headroom)`,
      `${redis.value.toFixed(2)} µs per published event, XADD + PUBLISH (${redis.source}): ${int(units.redis.eventsPerCore)} events/s per core, ${int(units.redis.plannedEvents)} planned; ${subscriber}`,
    ],
    [
      'commands/s',
      '`INFO stats` `instantaneous_ops_per_sec`',
      `about ${approx(2 * units.redis.plannedEvents)} (2 × the planned published events/s)`,
      'each event is two commands (XADD + PUBLISH), plus one SADD per chunk (`INGEST_PUBLISH_CHUNK`)',
    ],
    [
      'pub/sub output buffers',
      '`CLIENT LIST TYPE pubsub` (`omem` per subscriber connection); `wirestream_gateway_redis_reconnects_total`',
      '`omem` growing, or gateways reconnecting (GatewayRedisFlapping): Redis drops a subscriber past 32 MB, or 8 MB for 60 s (`client-output-buffer-limit pubsub`); the gateway re-subscribes and back-fills',
      `every event goes to every subscribed gateway: events/s × gateways per event × ${envelope} (${figures.envelopeBytes.source}); the table's "out per shard"`,
    ],
    [
      'history memory',
      '`INFO memory` `used_memory`; `MEMORY USAGE wsh:<topic>:<partition>`',
      'history plus buffers near the memory given to Redis',
      `${int(figures.historyLength.value)} entries (\`INGEST_HISTORY_LENGTH\`) × partitions × ${envelope} of payload; the table's "history per shard"`,
    ],
    [
      'ingest waiting on Redis',
      '`wirestream_ingest_redis_publish_seconds` p99 (IngestRedisSlow), `wirestream_ingest_paused`',
      'rising while Redis CPU is high',
      '',
    ],
  ],
)}
`;
}
