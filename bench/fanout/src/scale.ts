/**
 * The scale scenario (opt-in): one gateway process at the descriptor ceiling, then several
 * processes on their own ports holding ≥ 50,000 sockets together; a few events to check that
 * every socket still gets every event, and per-process memory after forced GCs.
 */
import os from 'node:os';
import { parseMix, type MixEntry } from '@wirestream/loadgen';
import { describePlan } from './compare-stacks.js';
import { fmtBytes, fmtInt, fmtMs, mark, memoryDetails, notesOf, section, scaleMemoryTable, scaleTable, type ScaleRow } from './report.js';
import { runStack, type ProcessRun } from './run-stack.js';
import { drainTimeoutMs, withWorkers, type OptionValues, type Scenario, type ScenarioEnv, type ScenarioOutput } from './scenario.js';
import { STACK_SHORT } from './servers.js';
import { timelineChart } from '@wirestream/bench-kit';

interface ScaleOptions {
  /** Sockets of the one-process setup (0 skips it). */
  readonly single: number;
  readonly multi: { readonly processes: number; readonly perProcess: number } | undefined;
  readonly events: number;
  readonly rate: number;
  readonly mix: readonly MixEntry[];
  /** --scale-source-addresses, when given. */
  readonly sourceAddresses: number | undefined;
}

function scaleMultiOf(spec: string): ScaleOptions['multi'] {
  if (spec === '0' || spec === 'none') return undefined;
  const match = /^(\d+)x(\d+)$/.exec(spec);
  if (!match) throw new RangeError(`--scale-multi must look like 3x17000 (processes x sockets per process) or 0, got "${spec}"`);
  const processes = Number(match[1]);
  const perProcess = Number(match[2]);
  if (processes < 1 || perProcess < 1) throw new RangeError(`--scale-multi needs at least 1 process and 1 socket, got "${spec}"`);
  // Each process holds its sockets plus ~30 descriptors of its own under the 20,000 open-file cap.
  if (perProcess > 19_500) throw new RangeError(`--scale-multi: ${perProcess} sockets per process is over the ~19,900 open files one process can hold`);
  return { processes, perProcess };
}

function scaleOptionsOf(options: OptionValues): ScaleOptions {
  const single = options.number('scale-single');
  if (single > 19_900) throw new RangeError(`--scale-single ${single} is over the ~19,900 sockets one process can hold (open files capped at 20,000)`);
  const addresses = options.given('scale-source-addresses') ? Number(options.string('scale-source-addresses')) : undefined;
  if (addresses !== undefined && (!Number.isInteger(addresses) || addresses < 1 || addresses > 250)) {
    throw new RangeError(`--scale-source-addresses must be 1..250, got ${options.string('scale-source-addresses')}`);
  }
  return {
    single,
    multi: scaleMultiOf(options.required('scale-multi')),
    events: options.number('scale-events'),
    rate: options.number('scale-rate'),
    mix: parseMix(options.required('scale-mix')),
    sourceAddresses: addresses,
  };
}

/**
 * 127.0.0.1 … 127.0.0.A. bind(port 0) searches the ephemeral range for a port free on that address:
 * it slows down badly as an address fills up (51,000 sockets over 6 addresses connected in 62 s, over
 * 16 in 14 s, bench/results/fanout-scale.md), so keep each address at a few thousand sockets.
 */
function sourceAddressesOf(o: ScaleOptions, sockets: number): string[] {
  const count = o.sourceAddresses ?? Math.max(4, Math.ceil(sockets / 3_500));
  return Array.from({ length: count }, (_, i) => `127.0.0.${i + 1}`);
}

export const scaleScenario: Scenario = {
  name: 'scale',
  description: 'opt-in, a few minutes: one gateway process at the descriptor ceiling, then P processes holding ≥ 50,000 sockets together',
  report: 'fanout-scale',
  options: {
    'scale-single': { arg: 'N', default: '19000', quick: '2000', help: 'one gateway process with N sockets (the descriptor ceiling; 0 skips)' },
    'scale-multi': { arg: 'PxN', default: '3x17000', quick: '3x1000', help: 'P gateway processes, N sockets each, one load client over all (0 skips)' },
    'scale-events': { arg: 'E', default: '20', help: 'events' },
    'scale-rate': { arg: 'EV/S', default: '20', help: 'events per second' },
    'scale-mix': { arg: 'SPEC', default: 'shared:85,compact:5,filtered:10', help: 'operations: kind:percent, …' },
    'scale-source-addresses': {
      arg: 'A',
      help: '127.0.0.1 … 127.0.0.A for scale runs (default: max(4, sockets / 3,500): binding a source port slows down as an address fills up)',
    },
  },
  prepare(options) {
    const o = scaleOptionsOf(options);
    return { events: o.events, run: (env) => runScale(env, o) };
  },
};

async function runScale(env: ScenarioEnv, o: ScaleOptions): Promise<ScenarioOutput> {
  const { ctx, common } = env;
  const setups: { setup: string; processes: number; sockets: number }[] = [];
  if (o.single > 0) setups.push({ setup: `1 × ${fmtInt(o.single)}`, processes: 1, sockets: o.single });
  if (o.multi) {
    const { processes, perProcess } = o.multi;
    setups.push({ setup: `${processes} × ${fmtInt(perProcess)}`, processes, sockets: processes * perProcess });
  }
  const plan = { mix: o.mix, filterKeys: common.filterKeys };
  const title = `Scale: ${setups.map((s) => `${s.setup} sockets`).join(', then ')}; ${fmtInt(o.events)} events at ${o.rate}/s (${describePlan(plan)})`;
  ctx.log(`\n## ${title}\n`);
  const rows: ScaleRow[] = [];
  for (const { setup, processes, sockets } of setups) {
    ctx.log(`  ours, ${setup} …`);
    const run = await runStack(
      'ours',
      withWorkers(common, {
        sockets,
        processes,
        sourceAddresses: sourceAddressesOf(o, sockets),
        plan,
        events: o.events,
        ratePerSecond: o.rate,
        // Up to a million deliveries on two shared cores: give the drain time, it is not the measurement.
        drainTimeoutMs: drainTimeoutMs(common, 60_000),
        stallTimeoutMs: 10_000,
        idleMs: common.idleMs,
      }),
      ctx,
    );
    rows.push({ setup, run });
    ctx.log(
      `    ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(run.duplicates)} duplicates, p99 ${fmtMs(run.latencyMs.p99)}; ` +
        `RSS/socket ${run.processes.map((p) => fmtBytes(p.perSocket.rssBytes)).join(' / ')}`,
    );
  }
  const body = scaleBody(rows, o);
  const svgName = env.svgName('scale');
  const svg = timelineChart(
    title,
    `one column per gateway process · deliveries/s and client CPU are totals over the setup · ${os.cpus().length} cores · node ${process.version}`,
    rows.flatMap(({ setup, run }) =>
      run.processes.map((p, i) => ({
        title: run.processes.length > 1 ? `${setup}: process ${i + 1}` : setup,
        subtitle: [
          `${fmtInt(p.subscribed)} sockets · RSS ${fmtBytes(p.perSocket.rssBytes)}/socket, heap ${fmtBytes(p.perSocket.heapBytes)}/socket (GC)`,
          `all: ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered · p99 ${fmtMs(run.latencyMs.p99)}`,
        ],
        samples: p.samples,
        phases: p.phases,
      })),
    ),
  );
  return { markdown: section(ctx.log, title, body, { alt: 'scale', file: svgName }), svgs: [[svgName, svg]] };
}

function scaleBody(rows: readonly ScaleRow[], o: ScaleOptions): string {
  const labelOf = (r: ScaleRow['run']): string => rows.find((row) => row.run === r)?.setup ?? STACK_SHORT[r.stack];
  return [
    ...scaleTargetLines(rows, o).map((t) => `- ${t}`),
    '',
    'How to read: each setup starts its gateway processes (each its own port and `node --expose-gc` process, GATEWAY_AUTH_MODE=anonymous, ' +
      'GATEWAY_MAX_CONNECTIONS_PER_ADDRESS=1000000, GATEWAY_DEBUG_ENDPOINTS=true) and one load client whose worker processes (≤ 19,000 sockets ' +
      'each) assign socket i to process i mod P and bind source addresses 127.0.0.1 … 127.0.0.A round-robin. Sockets connect in two waves ' +
      '(N/2, then N) with forced-GC memory readings of every process before, between and after; then the events are published at the given rate. ' +
      'Per-socket figures are per process (its own sockets); deliveries, latency and CPU are totals over all processes. ' +
      '"server peak RSS" and the workers\' RSS are sampled every 250 ms (workers report their own RSS); "MemAvailable min" is the whole machine\'s ' +
      '(24 GiB shared with other tenants), the lowest it went during the setup.',
    '',
    scaleTable(rows),
    '',
    scaleMemoryTable(rows),
    '',
    ...notesOf(
      rows.map((r) => r.run),
      labelOf,
    ).map((n) => `- ${n}`),
    '',
    ...memoryDetails(
      'memory by phase, per process',
      rows.map((r) => r.run),
      labelOf,
    ),
  ].join('\n');
}

/** The targets at scale: sockets held, memory per socket at the ceiling, every event delivered. */
function scaleTargetLines(rows: readonly ScaleRow[], o: ScaleOptions): string[] {
  const lines: string[] = [];
  for (const { setup, run } of rows) {
    const wanted = run.spec.sockets;
    if (run.processes.length === 1) {
      const p = run.processes[0] as ProcessRun;
      const rss = p.perSocket.rssBytes ?? Number.NaN;
      const slope = p.perSocketSecondHalf.rssBytes ?? Number.NaN;
      lines.push(
        `${setup}: one process holds ${fmtInt(run.subscribed)}/${fmtInt(wanted)} subscribed sockets ${mark(run.subscribed >= wanted && run.failed === 0)}; ` +
          `after GC: V8 heap ${fmtBytes(p.perSocket.heapBytes)}/socket ${mark((p.perSocket.heapBytes ?? Number.NaN) <= 2_048)}, ` +
          `RSS idle→N ${fmtBytes(rss)}/socket ${mark(rss <= 2_048)}, RSS N/2→N ${fmtBytes(slope)}/socket ${mark(slope <= 2_048)} (≤ 2 KB)`,
      );
    } else {
      lines.push(
        `${setup}: ${run.processes.length} processes hold ${fmtInt(run.subscribed)} sockets together (${run.processes.map((p) => fmtInt(p.subscribed)).join(' + ')}), ` +
          `≥ 50,000 ${mark(run.subscribed >= 50_000 && run.failed === 0)}; RSS/socket after GC per process ` +
          `${run.processes.map((p) => fmtBytes(p.perSocket.rssBytes)).join(' / ')} (N/2→N ${run.processes.map((p) => fmtBytes(p.perSocketSecondHalf.rssBytes)).join(' / ')})`,
      );
    }
    const all = run.unique === run.expected && run.duplicates === 0 && run.lost === 0;
    lines.push(
      `${setup}: every event to every socket ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.duplicates)} duplicates ${mark(all)}; ` +
        `p99 ${fmtMs(run.latencyMs.p99)} (${fmtInt(o.events)} events at ${o.rate}/s = ${fmtInt(run.expected / Math.max(1, o.events / Math.max(o.rate, 1e-9)))} deliveries/s offered; ` +
        `the field's 50 ms target is for 4,000 sockets)`,
    );
  }
  return lines;
}
