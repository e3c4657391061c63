import { fmtBytes, fmtInt, fmtMb, fmtMs, markdownTable, median } from '@wirestream/bench-kit';
import type { ProcessRun, StackRun } from './run-stack.js';
import { STACK_SHORT } from './servers.js';

// The kit's number formats, for the scenarios that import them with the tables.
export { fmtBytes, fmtInt, fmtMb, fmtMs };

/** The cells every run table shares: sockets subscribed (and failed), distinct deliveries of those expected, events lost (and sockets the server closed). */
const subscribedCell = (r: StackRun): string => `${fmtInt(r.subscribed)}${r.failed > 0 ? ` (${fmtInt(r.failed)} failed)` : ''}`;
const deliveredCell = (r: StackRun): string => `${fmtInt(r.unique)} / ${fmtInt(r.expected)}`;
const lostCell = (r: StackRun): string => fmtInt(r.lost) + (r.closedByServer > 0 ? ` (${fmtInt(r.closedByServer)} sockets closed)` : '');

/** Delivered, lost, duplicates, deliveries/s, then the latency quantiles asked (p90 only in the main table) and the max. */
function deliveryCells(r: StackRun, quantiles: readonly ('p50' | 'p90' | 'p99')[]): string[] {
  return [deliveredCell(r), lostCell(r), fmtInt(r.duplicates), fmtInt(r.deliveriesPerSec), ...quantiles.map((q) => fmtMs(r.latencyMs[q])), fmtMs(r.latencyMs.max)];
}

/** Server CPU seconds `total (user+system)`. */
const serverCpuCell = (r: StackRun): string => `${(r.serverCpuMs / 1_000).toFixed(1)} (${(r.serverCpu.userMs / 1_000).toFixed(1)}+${(r.serverCpu.systemMs / 1_000).toFixed(1)})`;

/** CPU ms as µs per distinct delivery of the run. */
const perDeliveryOf =
  (r: StackRun) =>
  (ms: number): string =>
    r.unique > 0 ? ((ms * 1_000) / r.unique).toFixed(1) : 'n/a';

/** A report section `## title` with its body (and its chart, by file name): logged as it is written, returned for the report file. */
export function section(log: (line: string) => void, title: string, body: string, chart?: { readonly alt: string; readonly file: string }): string {
  const markdown = `## ${title}\n\n${body}\n${chart ? `\n![${chart.alt}](${chart.file})\n` : ''}`;
  log(`\n${markdown}`);
  return markdown;
}

function fmtRatio(r: number): string {
  if (!Number.isFinite(r) || Number.isNaN(r)) return 'n/a';
  return r >= 10 ? `${r.toFixed(0)}×` : `${r.toFixed(1)}×`;
}

/** A stack's name, with its repetition when a run measured stacks several times. */
export function runLabel(r: StackRun, all: readonly StackRun[]): string {
  return all.some((o) => o.repeat > 1) ? `${STACK_SHORT[r.stack]} #${r.repeat}` : STACK_SHORT[r.stack];
}

/** The main table of a scenario: one row per stack (and repetition). */
export function stackTable(runs: readonly StackRun[]): string {
  const rows: string[][] = [
    [
      'stack',
      'subscribed',
      'delivered / expected',
      'lost',
      'dup',
      'deliveries/s',
      'p50',
      'p90',
      'p99',
      'max',
      'heap/socket (GC)',
      'RSS/socket (GC)',
      'raw RSS/socket',
      'heap / RSS per socket, N/2→N',
      'idle heap / RSS MB',
      'peak RSS MB',
      'server CPU s (user+sys)',
      'server µs/delivery',
      'client µs/delivery (user+sys)',
      'frame',
      'others\' CPU',
    ],
  ];
  for (const r of runs) {
    const perDelivery = perDeliveryOf(r);
    rows.push([
      runLabel(r, runs),
      subscribedCell(r),
      ...deliveryCells(r, ['p50', 'p90', 'p99']),
      fmtBytes(r.perSocket.heapBytes),
      fmtBytes(r.perSocket.rssBytes),
      fmtBytes(r.perSocket.rawRssBytes),
      `${fmtBytes(r.perSocketSecondHalf.heapBytes)} / ${fmtBytes(r.perSocketSecondHalf.rssBytes)}`,
      `${fmtMb(r.memory.idle?.heapUsed)} / ${fmtMb(r.memory.idle?.rss)}`,
      fmtMb(r.memory.peakRss),
      serverCpuCell(r),
      perDelivery(r.serverCpuMs),
      `${perDelivery(r.clientCpu.userMs + r.clientCpu.systemMs)} (${perDelivery(r.clientCpu.userMs)}+${perDelivery(r.clientCpu.systemMs)})`,
      fmtBytes(r.meanFrameBytes),
      `${r.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  return markdownTable(rows);
}

/** Ours against each baseline in the same run: how many times better. */
export function ratioTable(runs: readonly StackRun[]): string {
  const ours = runs.find((r) => r.stack === 'ours');
  if (!ours) return '';
  const rows: string[][] = [
    ['ours vs', 'deliveries/s', 'p99 latency', 'heap/socket', 'RSS/socket (GC)', 'RSS/socket, N/2→N', 'server CPU per delivery'],
  ];
  for (const base of runs) {
    if (base.stack === 'ours') continue;
    const cpuPerDelivery = (r: StackRun): number => (r.unique > 0 ? r.serverCpuMs / r.unique : Number.NaN);
    rows.push([
      STACK_SHORT[base.stack],
      fmtRatio(ours.deliveriesPerSec / base.deliveriesPerSec),
      ours.latencyMs.p99 > 0 && Number.isFinite(base.latencyMs.p99)
        ? `${fmtRatio(base.latencyMs.p99 / ours.latencyMs.p99)} lower`
        : Number.isFinite(base.latencyMs.p99)
          ? 'n/a'
          : 'baseline p99 = undelivered',
      ratioOf(base.perSocket.heapBytes, ours.perSocket.heapBytes),
      ratioOf(base.perSocket.rssBytes, ours.perSocket.rssBytes),
      ratioOf(base.perSocketSecondHalf.rssBytes, ours.perSocketSecondHalf.rssBytes),
      `${fmtRatio(cpuPerDelivery(base) / cpuPerDelivery(ours))} less`,
    ]);
  }
  return markdownTable(rows);
}

function ratioOf(base: number | undefined, ours: number | undefined): string {
  if (base === undefined || ours === undefined) return 'n/a';
  if (ours <= 0) return 'ours ≤ 0 (noise)';
  return `${fmtRatio(base / ours)} smaller`;
}

/** A target's verdict. */
export const mark = (ok: boolean): string => (ok ? '**met**' : '**not met**');

/** The memory table folded away under the section: `what` says which readings it holds. */
export function memoryDetails(what: string, runs: readonly StackRun[], labelOf: (r: StackRun) => string): string[] {
  return [`<details><summary>${what} (process.memoryUsage() after two forced GCs, MB)</summary>`, '', memoryTable(runs, labelOf), '', '</details>'];
}

/** {@link notesOf} as list lines, for runs that each sit in a row of the caller's own (labelled by it). */
export function rowNotes<T extends { readonly run: StackRun }>(rows: readonly T[], labelOf: (row: T | undefined) => string): string[] {
  return notesOf(
    rows.map((row) => row.run),
    (r) => labelOf(rows.find((row) => row.run === r)),
  ).map((n) => `- ${n}`);
}

/** Close codes, errors and anomalies worth a line under the table. */
export function notesOf(runs: readonly StackRun[], labelOf: (r: StackRun) => string = (r) => runLabel(r, runs)): string[] {
  const notes: string[] = [];
  for (const r of runs) {
    const name = labelOf(r);
    const codes = Object.entries(r.closeCodes);
    if (codes.length > 0) notes.push(`${name}: server closed sockets: ${codes.map(([c, n]) => `${n}× ${c}`).join(', ')}`);
    if (r.anomalies > 0) notes.push(`${name}: ${r.anomalies} frames without a parsable position/timestamp or protocol errors`);
    if (r.errorSamples.length > 0) notes.push(`${name}: ${r.errorSamples.slice(0, 3).join(' | ')}`);
    if (r.serverExit !== undefined) notes.push(`${name}: server process exited during the run (${r.serverExit})`);
    if (r.othersCpuPct > 25) {
      notes.push(`${name}: other processes on the machine used ${r.othersCpuPct.toFixed(0)} % of a core during its traffic window: a noisy measurement`);
    }
    if (r.memory.afterTraffic === undefined) notes.push(`${name}: /debug/memory did not answer within 5 s after traffic (still busy)`);
  }
  return notes;
}

/** Where the memory is: process.memoryUsage() after forced GCs at each phase, MB, and per socket (one block per server process). */
export function memoryTable(runs: readonly StackRun[], labelOf: (r: StackRun) => string = (r) => STACK_SHORT[r.stack]): string {
  const rows: string[][] = [
    ['stack', 'phase', 'rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'],
  ];
  for (const r of runs) {
    r.processes.forEach((p, i) => {
      const label = r.processes.length > 1 ? `${labelOf(r)}, process ${i + 1}` : labelOf(r);
      rows.push(...processMemoryRows(label, p));
    });
  }
  return markdownTable(rows);
}

/** The memory table's columns, in order. */
const MEMORY_FIELDS = ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'] as const;

function processMemoryRows(label: string, p: ProcessRun): string[][] {
  const rows: string[][] = [];
  type Usage = ProcessRun['memory']['idle'];
  const phases: [string, Usage][] = [
    ['idle', p.memory.idle],
    ...(p.memory.halfway ? [[`${fmtInt(p.memory.halfwaySockets)} subscribed`, p.memory.halfway] as [string, Usage]] : []),
    [`${fmtInt(p.subscribed)} subscribed`, p.memory.subscribed],
    ['after traffic', p.memory.afterTraffic],
  ];
  for (const [phase, m] of phases) {
    rows.push([label, phase, ...(m ? MEMORY_FIELDS.map((f) => fmtMb(m[f])) : ['busy', '', '', '', ''])]);
  }
  const { idle, subscribed, halfway } = p.memory;
  if (idle && subscribed && p.subscribed > 0) {
    // Bytes per socket between two phases, each column: over the second half of the sockets, and over all of them.
    const perSocket = (to: NonNullable<Usage>, from: NonNullable<Usage>, sockets: number): string[] => MEMORY_FIELDS.map((f) => fmtBytes((to[f] - from[f]) / sockets));
    const wave = p.subscribed - p.memory.halfwaySockets;
    if (halfway && wave > 0) rows.push([label, '**per socket, N/2→N**', ...perSocket(subscribed, halfway, wave)]);
    rows.push([label, '**per socket, idle→N**', ...perSocket(subscribed, idle, p.subscribed)]);
  }
  return rows;
}

/** A scale setup: one run, named by its shape (e.g. "3 × 17,000"). */
export interface ScaleRow {
  readonly setup: string;
  readonly run: StackRun;
}

/** Scale runs: deliveries and what the whole setup cost (servers, load workers, the machine). */
export function scaleTable(rows: readonly ScaleRow[]): string {
  const out: string[][] = [
    [
      'setup',
      'processes',
      'sockets subscribed (per process)',
      'connect s',
      'delivered / expected',
      'lost',
      'dup',
      'deliveries/s',
      'p50',
      'p99',
      'max',
      'server CPU s (user+sys, all)',
      'server µs/delivery',
      'client µs/delivery',
      'server peak RSS MB (per process)',
      'workers × peak RSS MB (largest / all)',
      'source addresses',
      'machine MemAvailable min GB',
      "others' CPU",
    ],
  ];
  for (const { setup, run: r } of rows) {
    const perDelivery = perDeliveryOf(r);
    out.push([
      setup,
      String(r.processes.length),
      subscribedCell(r) +
        (r.processes.length > 1 ? ` (${r.processes.map((p) => fmtInt(p.subscribed)).join(' + ')})` : ''),
      r.connectSeconds.toFixed(1),
      ...deliveryCells(r, ['p50', 'p99']),
      serverCpuCell(r),
      perDelivery(r.serverCpuMs),
      perDelivery(r.clientCpu.userMs + r.clientCpu.systemMs),
      r.processes.map((p) => fmtMb(p.memory.peakRss)).join(' / '),
      `${r.workers} × ${fmtMb(r.clientPeakRssBytes)} / ${fmtMb(r.clientPeakRssTotalBytes)}`,
      String(r.sourceAddresses),
      r.machineMinAvailableMb === undefined ? 'n/a' : (r.machineMinAvailableMb / 1_024).toFixed(1),
      `${r.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  return markdownTable(out);
}

/** Scale runs: memory per server process after forced GCs (the issue-4 memory figures, per process). */
export function scaleMemoryTable(rows: readonly ScaleRow[]): string {
  const out: string[][] = [
    [
      'setup',
      'process',
      'sockets',
      'idle heap / RSS MB',
      'subscribed heap / RSS MB (GC)',
      'heap/socket (GC)',
      'RSS/socket (GC)',
      'raw RSS/socket',
      'heap / RSS per socket, N/2→N',
      'after traffic RSS MB (GC)',
      'peak RSS MB',
    ],
  ];
  for (const { setup, run } of rows) {
    run.processes.forEach((p, i) => {
      out.push([
        setup,
        String(i + 1),
        fmtInt(p.subscribed),
        `${fmtMb(p.memory.idle?.heapUsed)} / ${fmtMb(p.memory.idle?.rss)}`,
        `${fmtMb(p.memory.subscribed?.heapUsed)} / ${fmtMb(p.memory.subscribed?.rss)}`,
        fmtBytes(p.perSocket.heapBytes),
        fmtBytes(p.perSocket.rssBytes),
        fmtBytes(p.perSocket.rawRssBytes),
        `${fmtBytes(p.perSocketSecondHalf.heapBytes)} / ${fmtBytes(p.perSocketSecondHalf.rssBytes)}`,
        p.memory.afterTraffic ? fmtMb(p.memory.afterTraffic.rss) : 'busy',
        fmtMb(p.memory.peakRss),
      ]);
    });
  }
  return markdownTable(out);
}

/** Server CPU µs per distinct delivery of a run (NaN when nothing arrived). */
export const serverUsPerDelivery = (r: StackRun): number => (r.unique > 0 ? (r.serverCpuMs * 1_000) / r.unique : Number.NaN);

/** Repeated stacks: median and range of each stack's rate and server cost. */
export function repeatSummaryTable(runs: readonly StackRun[]): string {
  const rows: string[][] = [
    ['stack', 'runs', 'deliveries/s median', 'deliveries/s min – max', 'server µs/delivery median', 'server µs/delivery min – max', 'p50 median', "others' CPU median"],
  ];
  for (const stack of [...new Set(runs.map((r) => r.stack))]) {
    const of = runs.filter((r) => r.stack === stack);
    const rates = of.map((r) => r.deliveriesPerSec);
    const costs = of.map(serverUsPerDelivery);
    rows.push([
      STACK_SHORT[stack],
      String(of.length),
      fmtInt(median(rates)),
      `${fmtInt(Math.min(...rates))} – ${fmtInt(Math.max(...rates))}`,
      median(costs).toFixed(2),
      `${Math.min(...costs).toFixed(2)} – ${Math.max(...costs).toFixed(2)}`,
      fmtMs(median(of.map((r) => r.latencyMs.p50))),
      `${median(of.map((r) => r.othersCpuPct)).toFixed(0)} %`,
    ]);
  }
  return markdownTable(rows);
}

/** A signed share: `+1.5 %`. */
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** Per repetition both ran in: the change's rate and CPU per delivery relative to the base's (0 = the same). */
function pairedChanges(change: readonly StackRun[], base: readonly StackRun[]): { rate: number; cost: number }[] {
  return change.flatMap((a) => {
    const b = base.find((o) => o.repeat === a.repeat);
    return b ? [{ rate: a.deliveriesPerSec / b.deliveriesPerSec - 1, cost: serverUsPerDelivery(a) / serverUsPerDelivery(b) - 1 }] : [];
  });
}

/**
 * Issue 7: metrics on (ours) vs off (ours-no-metrics), from interleaved repetitions. Each
 * repetition ran both back to back, so the pair ratios carry the noise of the machine; the
 * verdict says when the difference is smaller than that spread.
 */
export function metricsOverheadLines(runs: readonly StackRun[]): string[] {
  const on = runs.filter((r) => r.stack === 'ours');
  const off = runs.filter((r) => r.stack === 'ours-no-metrics');
  if (on.length === 0 || off.length === 0) return [];
  const pairs = pairedChanges(on, off);
  const rateOn = median(on.map((r) => r.deliveriesPerSec));
  const rateOff = median(off.map((r) => r.deliveriesPerSec));
  const costOn = median(on.map(serverUsPerDelivery));
  const costOff = median(off.map(serverUsPerDelivery));
  const spread = (xs: readonly number[]): number => (xs.length > 1 ? (Math.max(...xs) - Math.min(...xs)) / 2 / median(xs) : Number.NaN);
  const rateSpread = Math.max(spread(on.map((r) => r.deliveriesPerSec)), spread(off.map((r) => r.deliveriesPerSec)));
  const costSpread = Math.max(spread(on.map(serverUsPerDelivery)), spread(off.map(serverUsPerDelivery)));
  const rateDiff = rateOn / rateOff - 1;
  const costDiff = costOn / costOff - 1;
  // The paired estimate (each repetition ran on and off back to back) is less exposed to the
  // machine's slow drifts than the ratio of medians; both are printed.
  const pairedRate = pairs.length > 0 ? median(pairs.map((p) => p.rate)) : rateDiff;
  const pairedCost = pairs.length > 0 ? median(pairs.map((p) => p.cost)) : costDiff;
  const cost = Math.max(-pairedRate, pairedCost);
  const noise = Math.max(rateSpread, costSpread);
  const verdict =
    cost >= 0.03
      ? cost > noise
        ? '**not met**'
        : '**not resolved**: above 3 % but within the spread of repetitions of the same stack'
      : noise >= 0.03
        ? '**not resolved**: below 3 %, but repetitions of the same stack scatter more than the 3 % to resolve'
        : '**met**';
  const lines = [
    `deliveries/s, median of ${on.length} / ${off.length} runs: metrics on ${fmtInt(rateOn)}, off ${fmtInt(rateOff)}: on/off ${pct(rateDiff)} ` +
      `(spread of one stack's runs ±${(rateSpread * 100).toFixed(1)} %; pairwise, same repetition: ${pairs.map((p) => pct(p.rate)).join(', ')}, median ${pct(pairedRate)})`,
    `server CPU µs/delivery, median: on ${costOn.toFixed(2)}, off ${costOff.toFixed(2)}: on/off ${pct(costDiff)} ` +
      `(spread ±${(costSpread * 100).toFixed(1)} %; pairwise: ${pairs.map((p) => pct(p.cost)).join(', ')}, median ${pct(pairedCost)})`,
    `issue 7 target, metrics cost < 3 % of fan-out throughput: ${cost <= 0 ? 'no measurable cost' : `cost ${pct(cost).replace('+', '')}`} ` +
      `(the worse of the paired rate loss and CPU-per-delivery gain), noise ±${(noise * 100).toFixed(1)} %: ${verdict}`,
  ];
  return lines;
}

/**
 * A hot-path change against its base (`ours` vs `ours-base`, interleaved repetitions): paired per
 * repetition, so slow drifts of the machine cancel; per-socket memory as medians.
 */
export function baseComparisonLines(runs: readonly StackRun[]): string[] {
  const change = runs.filter((r) => r.stack === 'ours');
  const base = runs.filter((r) => r.stack === 'ours-base');
  if (change.length === 0 || base.length === 0) return [];
  const pairs = pairedChanges(change, base);
  const med = (of: readonly StackRun[], f: (r: StackRun) => number | undefined): number => median(of.map((r) => f(r) ?? Number.NaN));
  return [
    `server CPU µs/delivery, median: change ${med(change, serverUsPerDelivery).toFixed(2)}, base ${med(base, serverUsPerDelivery).toFixed(2)}; ` +
      `paired by repetition: ${pairs.map((p) => pct(p.cost)).join(', ')}, median ${pct(median(pairs.map((p) => p.cost)))}`,
    `deliveries/s, median: change ${fmtInt(med(change, (r) => r.deliveriesPerSec))}, base ${fmtInt(med(base, (r) => r.deliveriesPerSec))}; ` +
      `paired: ${pairs.map((p) => pct(p.rate)).join(', ')}, median ${pct(median(pairs.map((p) => p.rate)))}`,
    `per subscribed socket after GC, median: V8 heap change ${fmtBytes(med(change, (r) => r.perSocket.heapBytes))}, base ${fmtBytes(med(base, (r) => r.perSocket.heapBytes))}; ` +
      `RSS change ${fmtBytes(med(change, (r) => r.perSocket.rssBytes))}, base ${fmtBytes(med(base, (r) => r.perSocket.rssBytes))}`,
  ];
}

/**
 * Issue 18's "saturation close to the transport": each gateway stack of the run (`ours`,
 * `ours-prod`) against `bare-corked`, as the ratio of medians and paired per repetition (each
 * repetition ran the stacks back to back, so slow drifts of the machine hit both alike).
 */
export function transportRatioLines(runs: readonly StackRun[]): string[] {
  const bare = runs.filter((r) => r.stack === 'bare-corked');
  if (bare.length === 0) return [];
  const bareRate = median(bare.map((r) => r.deliveriesPerSec));
  const lines: string[] = [];
  for (const stack of ['ours', 'ours-prod'] as const) {
    const ours = runs.filter((r) => r.stack === stack);
    if (ours.length === 0) continue;
    const ratio = median(ours.map((r) => r.deliveriesPerSec)) / bareRate;
    const pairs = ours.flatMap((a) => {
      const b = bare.find((o) => o.repeat === a.repeat);
      return b && b.deliveriesPerSec > 0 ? [a.deliveriesPerSec / b.deliveriesPerSec] : [];
    });
    const all = ours.every((r) => r.unique === r.expected && r.duplicates === 0);
    lines.push(
      `${STACK_SHORT[stack]}: ${fmtInt(median(ours.map((r) => r.deliveriesPerSec)))} deliveries/s (median of ${ours.length}) vs bare uWS corked ` +
        `${fmtInt(bareRate)} (median of ${bare.length}): **${(ratio * 100).toFixed(1)} %** ${ratio >= 0.95 ? '**met**' : '**not met**'} (≥ 95 %); ` +
        `paired per repetition ${pairs.map((p) => `${(p * 100).toFixed(1)} %`).join(', ')}; ` +
        `server CPU µs/delivery median ${median(ours.map(serverUsPerDelivery)).toFixed(2)} vs ${median(bare.map(serverUsPerDelivery)).toFixed(2)} ` +
        `(deliveries per CPU-second ${((median(bare.map(serverUsPerDelivery)) / median(ours.map(serverUsPerDelivery))) * 100).toFixed(0)} % of bare's: ` +
        'what the rate would be with the core to itself, less exposed to how much CPU a busy machine left each process); ' +
        `all N × E delivered within the drain deadline in every run: ${all ? 'yes' : 'no (undelivered at the deadline, not dropped: see "lost")'}`,
    );
  }
  return lines;
}
