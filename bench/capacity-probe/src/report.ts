// bench/results/capacity-probe.md: every measured figure next to the value the capacity table
// (docs/operations.md) holds at the time of the run, and how each was derived.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findRepoRoot } from '@wirestream/testkit';
import type { GatewayRun, LoadWindow } from './gateway-probe.js';
import type { IngestPhase, IngestProbeResult, IngestSample } from './ingest-probe.js';
import { fitLine, fmtInt, markdownTable, median, MiB } from '@wirestream/bench-kit';

export interface Planned {
  /** Gateway deliveries/s per core (measured CPU per delivery) and planned (with headroom), from scripts/capacity.mjs. */
  readonly perCore: number;
  readonly planned: number;
}

export interface ReportInput {
  readonly started: Date;
  readonly command: string;
  readonly machine: string;
  readonly ingest: IngestProbeResult | undefined;
  readonly gateway: readonly GatewayRun[];
  readonly planned: Planned;
  readonly loadRate: number;
  readonly loadS: number;
  readonly burst: number;
}

/** The capacity table as it stands: key → [value, source cell]. */
function currentTable(): Map<string, [string, string]> {
  const doc = readFileSync(join(findRepoRoot(), 'docs', 'operations.md'), 'utf8');
  const table = doc.slice(doc.indexOf('<!-- capacity:numbers -->'), doc.indexOf('<!-- /capacity:numbers -->'));
  const rows = new Map<string, [string, string]>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`([a-z_.]+)`$/.exec(cells[1] ?? '')?.[1];
    if (key !== undefined) rows.set(key, [`${cells[2] ?? ''} ${cells[3] ?? ''}`.trim(), cells[5] ?? '']);
  }
  const bytesOut = /^\| bytes\/s out \| ([^|]*)\|/m.exec(doc)?.[1]?.trim();
  rows.set('bytes/s out', [bytesOut ?? '?', '']);
  return rows;
}

/** The memory limit a base manifest gives an app (infra/k8s/base/<app>-deployment.yaml), as written. */
function manifestLimit(app: 'gateway' | 'ingest'): string {
  const yaml = readFileSync(join(findRepoRoot(), 'infra', 'k8s', 'base', `${app}-deployment.yaml`), 'utf8');
  return /limits:\s*\n\s*memory:\s*(\S+)/.exec(yaml)?.[1] ?? '?';
}

const mib = (bytes: number, digits = 1): string => (Number.isFinite(bytes) ? (bytes / MiB).toFixed(digits) : 'n/a');
const max = (xs: readonly number[]): number => Math.max(...xs.filter(Number.isFinite));
const native = (s: IngestSample): number => s.rss - s.heapTotal;

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return markdownTable([head, ...rows]);
}

export interface IngestFigures {
  readonly baseRss: number;
  readonly nativeReserve: number;
  readonly peakHwm: number;
  readonly pipelineComputed: number;
  readonly pipelineResidual: number;
}

/** INGEST_PARTITIONS_CONCURRENTLY × INGEST_PUBLISH_CHUNK (the defaults the probe ran with). */
const CHUNKS_IN_FLIGHT = 3 * 500;
/** Envelope bytes around a payload (topic, partition, offset, key, ts): measured ~110 B by bench/fanout. */
const ENVELOPE_OVERHEAD = 110;
const FETCH_BUFFER = 10 * MiB;
const MESSAGE_TERM = CHUNKS_IN_FLIGHT * 2048 * 2;

export function ingestFigures(r: IngestProbeResult): IngestFigures {
  const idle = r.phases[0] as IngestPhase;
  const tail = idle.samples.filter((s) => s.t >= idle.seconds - 10);
  const baseRss = median(tail.map((s) => s.rss));
  const all = r.phases.flatMap((p) => p.samples);
  const peakHwm = max(r.phases.map((p) => p.hwm));
  // Each event of a chunk is a PUBLISH and an XADD (event forms, the defaults), each carrying the envelope.
  const pipelineComputed = CHUNKS_IN_FLIGHT * (r.meanValueBytes + ENVELOPE_OVERHEAD) * 2;
  return { baseRss, nativeReserve: max(all.map(native)), peakHwm, pipelineComputed, pipelineResidual: peakHwm - baseRss - FETCH_BUFFER - MESSAGE_TERM };
}

function ingestSection(r: IngestProbeResult): string[] {
  const rows = r.phases.map((p) => [
    p.name,
    `${p.seconds.toFixed(0)} s`,
    fmtInt(p.eventsConsumed),
    fmtInt(p.eventsConsumed / p.seconds),
    mib(median(p.samples.map((s) => s.rss))),
    mib(max(p.samples.map((s) => s.rss))),
    mib(max(p.samples.map((s) => s.heapTotal))),
    mib(max(p.samples.map((s) => s.heapUsed))),
    mib(median(p.samples.map(native))),
    mib(max(p.samples.map(native))),
    mib(max(p.samples.map((s) => s.external))),
    mib(p.hwm),
  ]);
  return [
    '## Ingest (apps/ingest/dist/main.js, defaults: chunk 500, 3 partitions concurrently, event forms, history on)',
    '',
    `Private Kafka broker and redis-server (packages/testkit), topics ${'`listing-events`'} and ${'`bid-events`'} with ${r.partitions} partitions each. ` +
      'Phases in order on one process (the backlog phase on a fresh process with the same group, resuming from the committed offsets): ' +
      'RSS is /proc/<pid>/status VmRSS every 500 ms (250 ms in the backlog), heapTotal / heapUsed / external are the app\'s own `/metrics` gauges ' +
      '(`wirestream_nodejs_heap_size_total_bytes`, `…_used_bytes`, `wirestream_nodejs_external_memory_bytes`, read at the same moment), native = RSS − heapTotal, ' +
      `peak = VmHWM at the end of the phase. Backlog events: the demo generator (seed 42, 5,000 listings), mean value ${fmtInt(r.meanValueBytes)} B.`,
    '',
    table(['phase', 'length', 'events consumed', 'events/s', 'RSS median MiB', 'RSS max MiB', 'heapTotal max MiB', 'heapUsed max MiB', 'native median MiB', 'native max MiB', 'external max MiB', 'VmHWM MiB'], rows),
    '',
  ];
}

export interface GatewayFigures {
  readonly baseRss: number;
  readonly workingSet: number;
  readonly heapTotalGrowth: number;
  readonly burstWorkingSet: number;
  readonly peakRssAtMax: number;
  readonly frame: number;
  readonly drainAtMax: number;
  readonly drainMeasuredAtMax: boolean;
  readonly exitAtMax: number;
  readonly fit: { intercept: number; slope: number };
}

const MAX_SOCKETS = 19_000;

export function gatewayFigures(runs: readonly GatewayRun[]): GatewayFigures {
  const atMax = runs.find((r) => r.subscribed >= MAX_SOCKETS);
  // Drained = both: the client saw its last socket closed, and the process exited (drain() resolved).
  const drained = (r: GatewayRun): number => Math.max(r.lastCloseMs, r.exitMs);
  // One socket count gives no slope: a flat line through its drain time, as the table has always shown it.
  const fitted = fitLine(runs.map((r) => [r.subscribed, drained(r)] as const));
  const line = Number.isNaN(fitted.slope) ? { intercept: median(runs.map(drained)), slope: 0 } : fitted;
  const frames = runs.reduce((s, r) => s + r.field.frames, 0);
  return {
    baseRss: median(runs.map((r) => r.idleRss)),
    workingSet: max(runs.map((r) => r.field.peak.heapUsed - r.subscribedGc.heapUsed)),
    heapTotalGrowth: max(runs.map((r) => r.field.peak.heapTotal - r.subscribedGc.heapTotal)),
    burstWorkingSet: max(runs.map((r) => (r.burst ? r.burst.peak.heapUsed - r.subscribedGc.heapUsed : NaN))),
    peakRssAtMax: atMax ? max([atMax.field.hwm, atMax.burst?.hwm ?? NaN]) : NaN,
    frame: runs.reduce((s, r) => s + r.field.frameBytes, 0) / frames,
    drainAtMax: atMax ? drained(atMax) : line.intercept + line.slope * MAX_SOCKETS,
    drainMeasuredAtMax: atMax !== undefined,
    exitAtMax: atMax?.exitMs ?? NaN,
    fit: line,
  };
}

const windowCells = (r: GatewayRun, w: LoadWindow | undefined): string[] =>
  w === undefined
    ? ['', '', '']
    : [
        `${mib(w.peak.rss)} / ${mib(w.peak.heapTotal)} / ${mib(w.peak.heapUsed)} (VmHWM ${mib(w.hwm)})`,
        mib(w.peak.heapUsed - r.subscribedGc.heapUsed),
        `${fmtInt(w.frames)} frames in ${w.seconds.toFixed(1)} s, ${fmtInt(w.frameBytes / w.frames)} B mean`,
      ];

function gatewaySection(runs: readonly GatewayRun[], input: ReportInput): string[] {
  const rows = runs.map((r) => [
    fmtInt(r.sockets),
    `${fmtInt(r.subscribed)} (${fmtInt(r.failed)} failed) in ${r.connectS.toFixed(1)} s`,
    mib(r.idleRss),
    `${mib(r.idle.heapTotal)} / ${mib(r.idle.heapUsed)}`,
    `${mib(r.idleGc.rss)} / ${mib(r.idleGc.heapUsed)}`,
    `${mib(r.subscribedGc.rss)} / ${mib(r.subscribedGc.heapTotal)} / ${mib(r.subscribedGc.heapUsed)}`,
    ...windowCells(r, r.field),
    ...windowCells(r, r.burst),
    `${fmtInt(r.lastCloseMs)} ms (${fmtInt(r.closedByServer)} closed)`,
    `${fmtInt(r.exitMs)} ms, code ${String(r.exitCode)}`,
  ]);
  return [
    '## Gateway (apps/gateway/dist/main.js, NODE_ENV=production, --expose-gc for /debug/memory?gc=1)',
    '',
    `One fresh gateway process per row on a private redis-server. Idle: after the settle time with no socket, VmRSS and \`/debug/memory\` (process.memoryUsage(), without and with two forced GCs). ` +
      `Then one @wirestream/loadgen (worker processes, 127.0.0.1-4) opens N sockets, each subscribed (85 % shared, 5 % compact, 10 % filtered over 50 listings: the fan-out bench's field mix); ` +
      `memory after two forced GCs; then the field load (${input.loadRate} demo listing events/s for ${input.loadS} s, published straight into Redis as ingest would)` +
      (input.burst > 0 ? ` and then a burst (${input.burst} events back-to-back)` : '') +
      `, each until deliveries stopped for 3 s, while \`/debug/memory\` (no GC) is read every 200 ms: "peak" is the highest reading of each figure, "heap growth" = peak heapUsed − subscribed heapUsed (after GC). Frames and bytes are what loadgen's workers received in the window. ` +
      'Then SIGTERM: "last close" is when loadgen (progress every 10 ms) counted every subscribed socket closed by the server; "exit" is the process\'s exit event, both from the kill() call.',
    '',
    table(
      [
        'N', 'subscribed', 'idle VmRSS MiB', 'idle heapTotal / heapUsed MiB', 'idle after GC: RSS / heapUsed MiB', 'subscribed (GC): RSS / heapTotal / heapUsed MiB',
        'field peak: RSS / heapTotal / heapUsed MiB', 'field heap growth MiB', 'field received', 'burst peak: RSS / heapTotal / heapUsed MiB', 'burst heap growth MiB', 'burst received',
        'SIGTERM → last close', 'SIGTERM → exit',
      ],
      rows,
    ),
    '',
  ];
}

export function renderReport(input: ReportInput): string {
  const current = currentTable();
  const was = (key: string): string => current.get(key)?.[0] ?? '?';
  const out: string[] = [
    '# Capacity probe: the capacity table\'s TODO(bench) rows, measured',
    '',
    `- date: ${input.started.toISOString()}`,
    `- machine: ${input.machine}`,
    `- command: \`flock /tmp/wirestream-bench.lock ${input.command}\``,
    '- memory figures are what this probe is for: CPU-bound figures (events/s, drain times) are from a shared 2-core machine and are upper bounds of what a pod with a core of its own needs.',
    '',
  ];
  const g = gatewayFigures(input.gateway);
  const summary: string[][] = [];
  if (input.ingest) {
    const i = ingestFigures(input.ingest);
    summary.push(
      ['`ingest.base_rss`', was('ingest.base_rss'), `${mib(i.baseRss)} MiB`, 'median VmRSS over the last 10 s of the idle phase (joined its group, no traffic)'],
      ['`ingest.native_reserve`', was('ingest.native_reserve'), `${mib(i.nativeReserve)} MiB`, 'largest RSS − V8 heapTotal over every sample of every phase'],
      [
        '`ingest.redis_pipeline`',
        was('ingest.redis_pipeline'),
        `${mib(i.pipelineComputed)} MiB computed; ${mib(i.pipelineResidual)} MiB residual`,
        `computed: ${fmtInt(CHUNKS_IN_FLIGHT)} events in flight (3 partitions × chunk 500) × (mean value ${fmtInt(input.ingest.meanValueBytes)} B + ${ENVELOPE_OVERHEAD} B envelope) × 2 commands (PUBLISH + XADD); ` +
          `residual: peak VmHWM ${mib(i.peakHwm)} MiB − idle RSS − fetch_buffer 10 MiB − message term ${mib(MESSAGE_TERM)} MiB (what the table's other terms leave for it)`,
      ],
      ['ingest peak RSS', `(limit ${manifestLimit('ingest')})`, `${mib(i.peakHwm)} MiB`, 'largest VmHWM of the phases'],
    );
  }
  summary.push(
    ['`gateway.base_rss`', was('gateway.base_rss'), `${mib(g.baseRss)} MiB`, `median idle VmRSS of the ${input.gateway.length} fresh gateway processes (Redis connected, no socket)`],
    [
      '`gateway.working_set`',
      was('gateway.working_set'),
      `field load: ${mib(g.workingSet)} MiB heapUsed (${mib(g.heapTotalGrowth)} MiB heapTotal); burst: ${mib(g.burstWorkingSet)} MiB heapUsed`,
      'largest peak heapUsed minus the subscribed heapUsed after GC, over the rows (heapTotal likewise)',
    ],
    ['gateway peak RSS at max_sockets', `(limit ${manifestLimit('gateway')})`, `${mib(g.peakRssAtMax)} MiB`, 'VmHWM after the field load and the burst at 19,000 sockets (native: uWS send buffers)'],
    [
      '`gateway.drain`',
      was('gateway.drain'),
      `${(g.drainAtMax / 1000).toFixed(2)} s${g.drainMeasuredAtMax ? ' measured' : ' extrapolated'} at ${fmtInt(MAX_SOCKETS)} (exit ${(g.exitAtMax / 1000).toFixed(2)} s)`,
      `SIGTERM → the later of last socket closed (as loadgen saw it) and process exit; least-squares line through the rows: ${g.fit.intercept.toFixed(0)} ms + ${(g.fit.slope * 1000).toFixed(1)} µs × N`,
    ],
    ['mean frame', '~2.4 KB (bytes/s row)', `${fmtInt(g.frame)} B`, 'bytes ÷ `next` frames received in the load windows of all rows'],
    [
      'bytes/s out',
      was('bytes/s out'),
      `${((g.frame * input.planned.planned) / 1e6).toFixed(0)} MB/s planned (${((g.frame * input.planned.perCore) / 1e6).toFixed(0)} MB/s at a full core)`,
      `mean frame × ${fmtInt(input.planned.planned)} planned deliveries/s (${fmtInt(input.planned.perCore)} per core) from scripts/capacity.mjs (\`gatewayUsPerDelivery\`), before TCP/IP and WebSocket headers (2–4 B per frame)`,
    ],
  );
  out.push('## Figures (table value at the time of the run → measured)', '', table(['key', 'table now', 'measured', 'how'], summary), '');
  if (input.ingest) out.push(...ingestSection(input.ingest));
  out.push(...gatewaySection(input.gateway, input));
  return out.join('\n');
}
