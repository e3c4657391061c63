import type { StackRun } from './run-stack.js';
import { STACK_SHORT } from './servers.js';

export function fmtInt(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? 'n/a' : Math.round(n).toLocaleString('en-US');
}

export function fmtMs(ms: number): string {
  if (Number.isNaN(ms)) return 'n/a';
  if (!Number.isFinite(ms)) return '∞ (undelivered)';
  if (ms >= 10_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

export function fmtBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return 'n/a';
  const abs = Math.abs(bytes);
  if (abs >= 1_048_576) return `${(bytes / 1_048_576).toFixed(1)} MB`;
  if (abs >= 1_024) return `${(bytes / 1_024).toFixed(2)} KB`;
  return `${bytes.toFixed(0)} B`;
}

export function fmtMb(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a' : `${(bytes / 1_048_576).toFixed(1)}`;
}

function fmtRatio(r: number): string {
  if (!Number.isFinite(r) || Number.isNaN(r)) return 'n/a';
  return r >= 10 ? `${r.toFixed(0)}×` : `${r.toFixed(1)}×`;
}

/** A markdown table; first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const [header, ...body] = rows;
  if (!header) return '';
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
}

/** The main table of a scenario: one row per stack. */
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
    const perDelivery = (ms: number): string => (r.unique > 0 ? ((ms * 1_000) / r.unique).toFixed(1) : 'n/a');
    rows.push([
      STACK_SHORT[r.stack],
      `${fmtInt(r.subscribed)}${r.failed > 0 ? ` (${fmtInt(r.failed)} failed)` : ''}`,
      `${fmtInt(r.unique)} / ${fmtInt(r.expected)}`,
      fmtInt(r.lost) + (r.closedByServer > 0 ? ` (${fmtInt(r.closedByServer)} sockets closed)` : ''),
      fmtInt(r.duplicates),
      fmtInt(r.deliveriesPerSec),
      fmtMs(r.latencyMs.p50),
      fmtMs(r.latencyMs.p90),
      fmtMs(r.latencyMs.p99),
      fmtMs(r.latencyMs.max),
      fmtBytes(r.perSocket.heapBytes),
      fmtBytes(r.perSocket.rssBytes),
      fmtBytes(r.perSocket.rawRssBytes),
      `${fmtBytes(r.perSocketSecondHalf.heapBytes)} / ${fmtBytes(r.perSocketSecondHalf.rssBytes)}`,
      `${fmtMb(r.memory.idle?.heapUsed)} / ${fmtMb(r.memory.idle?.rss)}`,
      fmtMb(r.memory.peakRss),
      `${(r.serverCpuMs / 1_000).toFixed(1)} (${(r.serverCpu.userMs / 1_000).toFixed(1)}+${(r.serverCpu.systemMs / 1_000).toFixed(1)})`,
      perDelivery(r.serverCpuMs),
      `${perDelivery(r.clientCpu.userMs + r.clientCpu.systemMs)} (${perDelivery(r.clientCpu.userMs)}+${perDelivery(r.clientCpu.systemMs)})`,
      fmtBytes(r.meanFrameBytes),
      `${r.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  return table(rows);
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
  return table(rows);
}

function ratioOf(base: number | undefined, ours: number | undefined): string {
  if (base === undefined || ours === undefined) return 'n/a';
  if (ours <= 0) return 'ours ≤ 0 (noise)';
  return `${fmtRatio(base / ours)} smaller`;
}

/** Close codes, errors and anomalies worth a line under the table. */
export function notesOf(runs: readonly StackRun[]): string[] {
  const notes: string[] = [];
  for (const r of runs) {
    const name = STACK_SHORT[r.stack];
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

/** Where the memory is: process.memoryUsage() after forced GCs at each phase, MB, and per socket. */
export function memoryTable(runs: readonly StackRun[]): string {
  const rows: string[][] = [
    ['stack', 'phase', 'rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'],
  ];
  for (const r of runs) {
    const phases: [string, StackRun['memory']['idle']][] = [
      ['idle', r.memory.idle],
      ...(r.memory.halfway ? [[`${fmtInt(r.memory.halfwaySockets)} subscribed`, r.memory.halfway] as [string, StackRun['memory']['idle']]] : []),
      [`${fmtInt(r.subscribed)} subscribed`, r.memory.subscribed],
      ['after traffic', r.memory.afterTraffic],
    ];
    for (const [phase, m] of phases) {
      rows.push([
        STACK_SHORT[r.stack],
        phase,
        ...(m ? [m.rss, m.heapTotal, m.heapUsed, m.external, m.arrayBuffers].map((b) => fmtMb(b)) : ['busy', '', '', '', '']),
      ]);
    }
    const { idle, subscribed } = r.memory;
    if (idle && subscribed && r.subscribed > 0) {
      const per = (a: number, b: number): string => fmtBytes((a - b) / r.subscribed);
      const { halfway } = r.memory;
      const wave = r.subscribed - r.memory.halfwaySockets;
      if (halfway && wave > 0) {
        const slope = (a: number, b: number): string => fmtBytes((a - b) / wave);
        rows.push([
          STACK_SHORT[r.stack],
          '**per socket, N/2→N**',
          slope(subscribed.rss, halfway.rss),
          slope(subscribed.heapTotal, halfway.heapTotal),
          slope(subscribed.heapUsed, halfway.heapUsed),
          slope(subscribed.external, halfway.external),
          slope(subscribed.arrayBuffers, halfway.arrayBuffers),
        ]);
      }
      rows.push([
        STACK_SHORT[r.stack],
        '**per socket, idle→N**',
        per(subscribed.rss, idle.rss),
        per(subscribed.heapTotal, idle.heapTotal),
        per(subscribed.heapUsed, idle.heapUsed),
        per(subscribed.external, idle.external),
        per(subscribed.arrayBuffers, idle.arrayBuffers),
      ]);
    }
  }
  return table(rows);
}
