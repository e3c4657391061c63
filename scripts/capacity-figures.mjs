// The measured figures the capacity model (scripts/capacity.mjs) runs on, read from the files the
// benchmarks wrote: bench/results/*.md (tables as printed by the benches), bench/results/cluster.json
// when the Redis Cluster bench has written it, plus settings (the gateway's memory limit and the
// production HPAs' bounds in infra/k8s, the history length default in docs/configuration.md's table).
// No figure is typed in
// here: each one is located by its file, section, row and column, and a figure that cannot be found
// stops the script with an error that names all four, so a reworded table fails loudly instead of
// feeding the model a stale number.
//
// bench/results/cluster.json is the contract with the Redis Cluster bench (read when the file exists):
//   {
//     "redisShard": {
//       "cpuUsPerPublishedEvent": <µs>,     Redis CPU on a shard's primary per event written: XADD + SPUBLISH,
//                                           feeding its replica included
//       "cpuUsPerSubscriberMessage": <µs>   … per message written to one SSUBSCRIBEd gateway connection
//     },
//     "ingest": { "cpuUsPerEvent": <µs> }   optional: ingest CPU per event in cluster mode (WAIT, a pipeline per node)
//   }
// Other keys are ignored, so the bench may write its raw runs next to these.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * @typedef {{ value: number, unit: string, what: string, source: string }} Figure
 *   `source`: where it came from, `file › section › row › column: "cell as written"`.
 * @typedef {{ heading: string, line: number, header: string[], rows: string[][] }} Table
 */

/** Thrown when a file, table, row or cell is missing or unreadable; the message says which. */
export class FigureError extends Error {
  name = 'FigureError';
}

/** Quantity suffixes the benches print, in the unit the model uses (bytes, µs, fractions). Their KB/MB are 1,024-based (bench/fanout/src/report.ts). */
const units = {
  B: { unit: 'bytes', factor: 1 },
  KB: { unit: 'bytes', factor: 1_024 },
  MB: { unit: 'bytes', factor: 1_048_576 },
  'µs': { unit: 'µs', factor: 1 },
  ms: { unit: 'µs', factor: 1_000 },
  '%': { unit: 'fraction', factor: 0.01 },
};

/**
 * A number as the benches print it: `19,000`, `5.45`, `2.30 KB`, `11`, `4.4 %`. Returns the value in
 * the model's unit (KB → bytes, ms → µs, % → fraction) and fails, naming the place, on anything else
 * (`∞ (undelivered)`, `busy`, an empty cell).
 * @param {string} cell
 * @param {string} where
 */
export function parseQuantity(cell, where) {
  const match = /^(-?\d[\d,]*(?:\.\d+)?)\s*(B|KB|MB|µs|ms|%)?$/.exec(cell.trim());
  if (!match) throw new FigureError(`${where}: expected a number (optionally with B, KB, MB, µs, ms or %), found "${cell}"`);
  const value = Number(match[1].replaceAll(',', ''));
  const suffix = match[2];
  return suffix === undefined ? { value, unit: '' } : { value: value * units[suffix].factor, unit: units[suffix].unit };
}

/**
 * The results directory's files, read once each.
 * @param {string} root  repository root
 * @param {string} resultsDir  bench/results or a copy of it (tests)
 */
export function createSources(root, resultsDir) {
  /** @type {Map<string, string>} */
  const texts = new Map();
  const display = (/** @type {string} */ path) => relative(root, path) || path;
  return {
    /** @param {string} name  file name inside the results directory */
    result: (name) => read(join(resultsDir, name)),
    /** @param {string} path  relative to the repository root */
    repo: (path) => read(join(root, path)),
    /** @param {string} name */
    hasResult: (name) => existsSync(join(resultsDir, name)),
    /** @param {string} name */
    resultPath: (name) => display(join(resultsDir, name)),
  };

  /** @param {string} path */
  function read(path) {
    let text = texts.get(path);
    if (text === undefined) {
      if (!existsSync(path)) throw new FigureError(`${display(path)} does not exist (run its benchmark, or pass --results <dir>)`);
      text = readFileSync(path, 'utf8');
      texts.set(path, text);
    }
    return { name: display(path), text };
  }
}

/**
 * Every pipe table of a markdown document with the heading it sits under.
 * @param {string} text
 * @returns {Table[]}
 */
export function markdownTables(text) {
  const lines = text.split('\n');
  /** @type {Table[]} */
  const tables = [];
  let heading = '(before the first heading)';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const title = /^#{1,6}\s+(.*)$/.exec(line);
    if (title) heading = title[1].trim();
    // A table: a header row, then a separator row of dashes (`| --- | ---: |`).
    if (!line.startsWith('|') || !/^\|(\s*:?-+:?\s*\|)+$/.test(lines[i + 1]?.trim() ?? '')) continue;
    const header = cells(line);
    const rows = [];
    let j = i + 2;
    for (; j < lines.length && lines[j].trim().startsWith('|'); j++) rows.push(cells(lines[j].trim()));
    tables.push({ heading, line: i + 1, header, rows });
    i = j - 1;
  }
  return tables;
}

/** @param {string} line */
function cells(line) {
  return line.replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

/**
 * The first table under a heading starting with `heading` that has all `columns`.
 * @param {{ name: string, text: string }} file
 * @param {string} heading
 * @param {string[]} columns
 */
export function findTable(file, heading, columns) {
  const tables = markdownTables(file.text);
  const table = tables.find((t) => t.heading.startsWith(heading) && columns.every((c) => t.header.includes(c)));
  if (table) return table;
  const under = tables.filter((t) => t.heading.startsWith(heading));
  const found =
    under.length === 0
      ? `no table under a heading starting "${heading}" (headings with tables: ${[...new Set(tables.map((t) => `"${t.heading}"`))].join(', ') || 'none'})`
      : `the tables under it have the columns ${under.map((t) => `[${t.header.join(', ')}]`).join(' and ')}`;
  throw new FigureError(`${file.name}: expected a table under "${heading}…" with the columns ${columns.map((c) => `"${c}"`).join(', ')}; ${found}`);
}

/**
 * Reads one cell of a row as a figure.
 * @param {{ name: string }} file
 * @param {Table} table
 * @param {string[]} row
 * @param {string} column
 * @param {string} rowLabel  how the error and the source name the row
 */
export function cellOf(file, table, row, column, rowLabel) {
  const index = table.header.indexOf(column);
  const raw = (row[index] ?? '').replace(/^\*\*(.*)\*\*$/, '$1'); // a summary table's headline figure is bold
  const where = `${file.name} › ${section(table)} › ${rowLabel} › ${column}`;
  return { ...parseQuantity(raw, where), source: `${where}: "${raw}"` };
}

/** A table's heading up to its first `: `: enough to find it, short enough to cite. @param {Table} table */
export function section(table) {
  return table.heading.split(': ')[0].trim();
}

/**
 * Rows matching `predicate`; fails naming the table and what was looked for when there is none.
 * @param {{ name: string }} file
 * @param {Table} table
 * @param {(cell: (column: string) => string) => boolean} predicate
 * @param {string} wanted  e.g. `stack "ours"`
 */
export function rowsWhere(file, table, predicate, wanted) {
  const rows = table.rows.filter((row) => predicate((column) => row[table.header.indexOf(column)] ?? ''));
  if (rows.length === 0) {
    throw new FigureError(`${file.name}: the table under "${section(table)}" (line ${table.line}) has no row with ${wanted} (first cells: ${table.rows.map((r) => `"${r[0]}"`).join(', ')})`);
  }
  return rows;
}

/**
 * A number inside a JSON file at a dotted path (`redisShard.cpuUsPerPublishedEvent`).
 * @param {{ name: string, text: string }} file
 * @param {string} path
 * @param {string} unit
 * @param {string} what
 * @returns {Figure}
 */
export function jsonFigure(file, path, unit, what) {
  const value = jsonValue(file, path);
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new FigureError(`${file.name}: expected a positive number at "${path}" (${what}, in ${unit}), found ${JSON.stringify(value)}`);
  }
  return { value, unit, what, source: `${file.name}: ${path} = ${value}` };
}

/**
 * The value at a dotted path of a JSON file (undefined when absent); fails naming the file when it is not JSON.
 * @param {{ name: string, text: string }} file
 * @param {string} path
 * @returns {unknown}
 */
function jsonValue(file, path) {
  let value;
  try {
    value = JSON.parse(file.text);
  } catch (err) {
    throw new FigureError(`${file.name} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  for (const key of path.split('.')) value = value !== null && typeof value === 'object' ? value[key] : undefined;
  return value;
}

/**
 * The model's inputs, each traced to its file. Where the Redis Cluster bench has written
 * bench/results/cluster.json, its per-shard Redis CPU replaces the single-Redis figure (and its
 * ingest CPU per event, when it has one, replaces ingest.md's).
 * @param {ReturnType<typeof createSources>} sources
 */
export function readFigures(sources) {
  const cluster = sources.hasResult('cluster.json') ? sources.result('cluster.json') : undefined;
  const ingest = ingestFigures(sources);
  return {
    ...gatewayFigures(sources),
    ingestUsPerEvent: cluster && jsonValue(cluster, 'ingest.cpuUsPerEvent') !== undefined
      ? jsonFigure(cluster, 'ingest.cpuUsPerEvent', 'µs', 'ingest CPU per event in cluster mode (one process)')
      : ingest.cpuUsPerEvent,
    ingestUsPerEventFastestRound: ingest.cpuUsPerEventFastestRound,
    redisUsPerEvent: cluster
      ? jsonFigure(cluster, 'redisShard.cpuUsPerPublishedEvent', 'µs', 'Redis CPU per published event on one shard (XADD + SPUBLISH)')
      : ingest.redisUsPerEvent,
    /** Undefined until the cluster bench measures it: single-Redis runs had no subscriber. */
    redisUsPerSubscriberMessage: cluster
      ? jsonFigure(cluster, 'redisShard.cpuUsPerSubscriberMessage', 'µs', 'Redis CPU per message written to one subscribed gateway connection')
      : undefined,
    envelopeBytes: envelopeFigure(sources),
    historyLength: historyLengthFigure(sources),
    ...replicaBoundsFigures(sources),
  };
}

/** @param {ReturnType<typeof createSources>} sources */
function gatewayFigures(sources) {
  // CPU per delivery: the latest measurement of the current gateway with the production settings (a
  // JWT per socket, metrics, history), 3 interleaved repetitions on a quiet machine, one operation
  // (every event to every socket): per-event costs are spread over 10,000 sockets, so this is the
  // cost of a delivery itself.
  const saturation = sources.result('fanout-production.md');
  const saturationTable = findTable(saturation, 'Saturation:', ['stack', 'server µs/delivery median']);
  const production = 'ours, JWT + metrics + history';
  const [saturationRow] = rowsWhere(saturation, saturationTable, (c) => c('stack') === production, `stack "${production}"`);
  const perDelivery = cellOf(saturation, saturationTable, saturationRow, 'server µs/delivery median', production);

  // CPU per distinct-operation execution: the projector's sweep (generated writers, decision 0010)
  // at a fixed 2,000 sockets, 1 → 1,000 operations each receiving every event: the CPU each extra
  // operation adds per event. (1 → 100 is inside one short run's noise: projector-sweep-bare.md.)
  const projector = sources.result('projector-codegen.md');
  const sweep = findTable(projector, 'Distinct operations sweep', ['stack', 'µs per extra op (1 → 1,000)']);
  const [sweepRow] = rowsWhere(projector, sweep, (c) => c('stack') === 'ours', 'stack "ours" (the change)');
  const perExecution = cellOf(projector, sweep, sweepRow, 'µs per extra op (1 → 1,000)', 'ours');

  // CPU per delivered event when every event goes to one socket with its own operation (issue 37):
  // measured, not derived. The unicast scenario's 10,000 sockets each following its own key, the
  // change's median over the run's complete repetitions: event in, route, render, write.
  const unicastFile = sources.result('unicast.md');
  const unicastTable = findTable(unicastFile, 'Unicast:', ['stack', 'keys = sockets', 'CPU µs / event median']);
  const [unicastRow] = rowsWhere(unicastFile, unicastTable, (c) => c('stack') === 'ours' && c('keys = sockets') === '10,000', 'stack "ours" at 10,000 keys');
  const perUnicastEvent = cellOf(unicastFile, unicastTable, unicastRow, 'CPU µs / event median', 'ours, 10,000 keys');

  // Sockets at the ceiling: the scale scenario's processes (each its own sockets). Their memory ran
  // before the writer's queue (decision 0028): the probe's rows below are the current code's.
  const scale = sources.result('fanout-scale.md');
  const setups = findTable(scale, 'Scale:', ['setup', 'sockets subscribed (per process)', 'delivered / expected', 'lost', 'dup', 'server µs/delivery']);
  const perProcess = findTable(scale, 'Scale:', ['setup', 'process', 'sockets']);
  const processes = perProcess.rows.map((row) => {
    const label = `${row[0]}, process ${row[perProcess.header.indexOf('process')]}`;
    return { row, label, sockets: cellOf(scale, perProcess, row, 'sockets', label) };
  });
  if (processes.length === 0) throw new FigureError(`${scale.name} › ${section(perProcess)}: the per-process table has no rows`);
  // Every socket held must also have received every event, or it was not really held.
  for (const p of processes) {
    const setup = p.row[0];
    const [main] = rowsWhere(scale, setups, (c) => c('setup') === setup, `setup "${setup}"`);
    const lost = cellOf(scale, setups, main, 'lost', setup).value;
    const dup = cellOf(scale, setups, main, 'dup', setup).value;
    if (lost !== 0 || dup !== 0) throw new FigureError(`${scale.name} › ${section(setups)} › ${setup}: ${lost} lost, ${dup} duplicates: not a run to size from`);
  }
  const largest = processes.reduce((a, b) => (b.sockets.value > a.sockets.value ? b : a));
  const [ceilingRow] = rowsWhere(scale, setups, (c) => c('setup') === largest.row[0], `setup "${largest.row[0]}"`);

  return {
    gatewayUsPerDelivery: { value: perDelivery.value, unit: 'µs', what: 'gateway CPU per delivery (one operation, 10,000 sockets, JWT + metrics + history)', source: perDelivery.source },
    gatewayUsPerDeliveryAtCeiling: {
      ...pick(cellOf(scale, setups, ceilingRow, 'server µs/delivery', largest.row[0])),
      unit: 'µs',
      what: `gateway CPU per delivery at ${largest.sockets.value.toLocaleString('en-US')} sockets, field mix (for comparison only: busy machine, older gateway)`,
    },
    gatewayUsPerExecution: {
      value: perExecution.value,
      unit: 'µs',
      what: 'gateway CPU per extra distinct operation per event (the projector, 2,000 sockets, 1 → 1,000 operations)',
      source: perExecution.source,
    },
    gatewayUsPerUnicastEvent: {
      value: perUnicastEvent.value,
      unit: 'µs',
      what: 'gateway CPU per delivered event, unicast (10,000 sockets each following its own key: one execution and one delivery per event)',
      source: perUnicastEvent.source,
    },
    gatewayMaxSockets: { ...pick(largest.sockets), unit: 'sockets', what: 'subscribed sockets one gateway process held, every event delivered (the most measured)' },
    ...probeMemoryFigures(sources),
    gatewayMemoryLimitBytes: memoryLimitFigure(sources),
  };
}

/**
 * Idle RSS and memory per socket at the peak, from the capacity probe's gateway rows with the
 * writer's queue (decision 0028: uWS's per-socket buffers stay small): the row with the most
 * sockets, its idle VmRSS and the higher VmHWM of the field load and the burst after it.
 * @param {ReturnType<typeof createSources>} sources
 */
function probeMemoryFigures(sources) {
  const file = sources.result('capacity-probe-pending.md');
  const peakColumns = ['field peak: RSS / heapTotal / heapUsed MiB', 'burst peak: RSS / heapTotal / heapUsed MiB'];
  const table = findTable(file, 'Gateway', ['N', 'idle VmRSS MiB', ...peakColumns]);
  const rows = table.rows.map((row) => {
    const label = `N = ${row[0]}`;
    const sockets = cellOf(file, table, row, 'N', label).value;
    const idleCell = row[table.header.indexOf('idle VmRSS MiB')] ?? '';
    const idleMib = parseQuantity(idleCell, `${file.name} › ${section(table)} › ${label} › idle VmRSS MiB`).value;
    const peaks = peakColumns.map((column) => {
      const cell = row[table.header.indexOf(column)] ?? '';
      const hwm = /\(VmHWM (\d+(?:\.\d+)?)\)/.exec(cell);
      if (!hwm) throw new FigureError(`${file.name} › ${section(table)} › ${label} › ${column}: expected "(VmHWM <MiB>)" in "${cell}"`);
      return { column, mib: Number(hwm[1]) };
    });
    const peak = peaks.reduce((a, b) => (b.mib > a.mib ? b : a));
    return { label, sockets, idleMib, idleCell, peak };
  });
  if (rows.length === 0) throw new FigureError(`${file.name} › ${section(table)}: the gateway table has no rows`);
  const largest = rows.reduce((a, b) => (b.sockets > a.sockets ? b : a));
  const where = `${file.name} › Gateway › ${largest.label}`;
  return {
    gatewayIdleRssBytes: { value: largest.idleMib * 1_048_576, unit: 'bytes', what: 'RSS of an idle gateway process (the probe\'s process with the most sockets, before they connect)', source: `${where} › idle VmRSS MiB: "${largest.idleCell}"` },
    gatewayPeakBytesPerSocket: {
      value: ((largest.peak.mib - largest.idleMib) * 1_048_576) / largest.sockets,
      unit: 'bytes',
      what: 'memory per socket at the peak of the field load and a 200-event burst, (peak VmHWM − idle RSS) ÷ sockets, frames waiting in the writer (decision 0028)',
      source: `${where} › ${largest.peak.column}: "VmHWM ${largest.peak.mib}", idle "${largest.idleCell}", sockets ${largest.sockets}`,
    },
  };
}

/** @param {{ value: number, unit: string, source: string }} f */
function pick(f) {
  return { value: f.value, unit: f.unit, source: f.source };
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** @param {ReturnType<typeof createSources>} sources */
function ingestFigures(sources) {
  // CPU per event: the latest measurement of ingest as it runs (byte path, history on, batch forms,
  // 16 key shards): the median of ingest-cpu.md's per-run medians, and its fastest round (the
  // machine was busy in every round: how much that inflated the median).
  const cpuFile = sources.result('ingest-cpu.md');
  const medianColumn = 'ingest CPU µs/event, median of 5';
  const inputs = findTable(cpuFile, 'Capacity model input', ['build', 'run', medianColumn, 'fastest round']);
  if (inputs.rows.length === 0) throw new FigureError(`${cpuFile.name} › ${section(inputs)}: the table has no rows`);
  const runs = inputs.rows.map((row) => {
    const label = `${row[0]}, run ${row[1]}`;
    return { median: cellOf(cpuFile, inputs, row, medianColumn, label).value, fastest: cellOf(cpuFile, inputs, row, 'fastest round', label).value };
  });
  const inputsWhere = `${cpuFile.name} › ${section(inputs)}`;
  const medians = runs.map((r) => r.median);
  // Redis CPU per event (single Redis, no subscriber) from the history-writes run, which reports
  // the Redis process's CPU next to the events/s; replaced by cluster.json's per-shard figure.
  const file = sources.result('ingest.md');
  const table = findTable(file, 'History writes', ['code', 'variant', 'events/s (median)', 'CPU µs/event', 'redis CPU %']);
  const rows = rowsWhere(file, table, (c) => c('variant') === 'app defaults', 'variant "app defaults"');
  const row = rows[rows.length - 1];
  const label = `${row[table.header.indexOf('code')]}, app defaults (the table's last)`;
  const eventsPerS = cellOf(file, table, row, 'events/s (median)', label);
  const redisCpu = cellOf(file, table, row, 'redis CPU %', label);
  const redisCore = redisCpu.unit === 'fraction' ? redisCpu.value : redisCpu.value / 100;
  return {
    cpuUsPerEvent: {
      value: median(medians),
      unit: 'µs',
      what: `ingest CPU per event (one process as it runs: byte path, history on, batch forms, 16 key shards), median of ${runs.length} runs' medians`,
      source: `${inputsWhere} › ${medianColumn}: ${medians.join(', ')}`,
    },
    cpuUsPerEventFastestRound: {
      value: Math.min(...runs.map((r) => r.fastest)),
      unit: 'µs',
      what: 'the fastest round of those runs (for comparison only: every round ran on a busy machine)',
      source: `${inputsWhere} › fastest round: ${runs.map((r) => r.fastest).join(', ')}`,
    },
    redisUsPerEvent: {
      value: (redisCore / eventsPerS.value) * 1e6,
      unit: 'µs',
      what: 'Redis CPU per published event, single Redis, no subscriber (batch XADD + PUBLISH per key shard per chunk): redis CPU ÷ events/s, medians',
      source: `${redisCpu.source} ÷ events/s (median): "${row[table.header.indexOf('events/s (median)')]}"`,
    },
  };
}

/** @param {ReturnType<typeof createSources>} sources */
function envelopeFigure(sources) {
  const file = sources.result('fanout.md');
  const match = /mean envelope (\d+(?:\.\d+)?) KB/.exec(file.text);
  if (!match) throw new FigureError(`${file.name}: expected "mean envelope <n> KB" in its header (the events line)`);
  return { value: Number(match[1]) * 1_024, unit: 'bytes', what: 'mean Redis envelope (demo listing events)', source: `${file.name} › header: "${match[0]}"` };
}

/** @param {ReturnType<typeof createSources>} sources */
function historyLengthFigure(sources) {
  const file = sources.repo('docs/configuration.md');
  const match = /^\| `INGEST_HISTORY_LENGTH` \| `(\d+)` \|/m.exec(file.text);
  if (!match) throw new FigureError(`${file.name}: expected the row | \`INGEST_HISTORY_LENGTH\` | \`<default>\` | in the ingest configuration table`);
  return { value: Number(match[1]), unit: 'entries', what: 'history entries kept per partition (setting, default)', source: `${file.name} › config:ingest › INGEST_HISTORY_LENGTH: ${match[1]}` };
}

/** @param {ReturnType<typeof createSources>} sources */
function memoryLimitFigure(sources) {
  const file = sources.repo('infra/k8s/base/gateway-deployment.yaml');
  const match = /\n(\s+)limits:\s*\n\1\s+memory:\s*(\d+)(Mi|Gi)\s*\n/.exec(file.text);
  if (!match) throw new FigureError(`${file.name}: expected resources.limits.memory as <n>Mi or <n>Gi on the gateway container`);
  const mib = Number(match[2]) * (match[3] === 'Gi' ? 1_024 : 1);
  return { value: mib * 1_048_576, unit: 'bytes', what: 'gateway pod memory limit (setting)', source: `${file.name} › resources.limits.memory: ${match[2]}${match[3]}` };
}

/** The production overlay's HPA bounds: the plan says when they must rise. @param {ReturnType<typeof createSources>} sources */
function replicaBoundsFigures(sources) {
  const file = sources.repo('infra/k8s/overlays/production/hpa.yaml');
  /** @param {string} app */
  const max = (app) => {
    const doc = file.text.split(/^---$/m).find((d) => new RegExp(`^\\s+name: wirestream-${app}\\s*$`, 'm').test(d));
    const match = doc && /^\s+maxReplicas:\s*(\d+)\s*$/m.exec(doc);
    if (!match) throw new FigureError(`${file.name}: expected a HorizontalPodAutoscaler named wirestream-${app} with spec.maxReplicas`);
    return { value: Number(match[1]), unit: 'pods', what: `production HPA maxReplicas of wirestream-${app} (setting)`, source: `${file.name} › wirestream-${app} › maxReplicas: ${match[1]}` };
  };
  return { gatewayMaxReplicas: max('gateway'), ingestMaxReplicas: max('ingest') };
}
