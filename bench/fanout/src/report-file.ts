/**
 * The head of a fan-out report file: when, where and what was measured, the command that
 * reproduces it, and how to read the sections below.
 */
import { commandLine, gatewayVersion, loadAverageText, machineText } from '@wirestream/bench-kit';
import type { EventCorpus } from './publisher.js';
import { fmtBytes } from './report.js';

export interface ReportFacts {
  /** The report's base name (`fanout`, `filters`, …). */
  readonly reportBase: string;
  readonly quick: boolean;
  readonly loadAtStart: string;
  readonly minutes: string;
  readonly corpus: EventCorpus;
  readonly listings: number;
  readonly nodeEnv: string;
  readonly gatewayEnv: string | undefined;
  readonly baseGateway: string | undefined;
  readonly baseNode: string | undefined;
}

const HOW_TO_READ =
  'How to read: each stack is its own process on its own port, run one after the other with the same load client ' +
  '(@wirestream/loadgen, raw graphql-transport-ws over TCP, worker processes, source addresses 127.0.0.1-4 unless a section says otherwise). ' +
  '"delivered" counts distinct positions per socket (`extensions.position`); "lost" is expected minus delivered when the ' +
  'drain deadline (or 10 s without deliveries while the server sat idle) ended the wait: undelivered, not necessarily dropped; latency is producer timestamp (µs clock shared by all processes, carried ' +
  'in `occurred_at`) to client receipt, with undelivered events counted as infinitely late. Per-socket memory is ' +
  '(subscribed − idle) / sockets from `/debug/memory?gc=1` (two forced GCs), and as the slope of the second connect wave ' +
  '(N/2 → N, which leaves out one-off growth such as V8 sizing its young generation during the first burst); ' +
  '"raw RSS" is /proc VmRSS without forcing GC. ' +
  '"server CPU" is the server process\'s user+system time from first publish to the end of the drain; "client CPU" is all ' +
  'load workers over the same window in % of one core (2 cores in total are shared by server, client and Redis); ' +
  '"others\' CPU" is what the rest of the machine (other tenants, kernel threads) used in that window, in % of one core: ' +
  'a row with a high value was measured on a busy machine.';

export function reportHeader(f: ReportFacts): string {
  return [
    `# Fan-out benchmark${f.reportBase === 'fanout' ? '' : `: ${f.reportBase}`}${f.quick ? ' (quick)' : ''}`,
    '',
    `- date: ${new Date().toISOString()}`,
    `- ${machineText({ platform: true })}`,
    `- machine: shared and noisy (load average ${f.loadAtStart} at start, ${loadAverageText()} at end; ` +
      'other tenants\' benchmarks may run at the same time): compare ratios within one run, not absolute numbers across runs',
    `- command: \`${commandLine()}\` (wall time ${f.minutes} min)`,
    `- gateway measured: \`${gatewayVersion()}\` (apps/gateway/dist as found; build it first)`,
    ...(f.baseGateway === undefined ? [] : [`- base gateway (ours-base): \`${gatewayVersion(f.baseGateway)}\` in ${f.baseGateway}, run by ${f.baseNode ?? process.execPath}`]),
    `- servers: each stack its own \`node --expose-gc\` process (default heap limit), NODE_ENV=${f.nodeEnv}` + (f.gatewayEnv ? `, gateway env ${f.gatewayEnv}` : ''),
    `- events: @wirestream/demo-events listing events (seed 42, ${f.listings} listings), snake_cased by @wirestream/transform, ` +
      `mean envelope ${fmtBytes(f.corpus.meanEnvelopeBytes)}, published straight into a private redis-server`,
    '',
    HOW_TO_READ,
    '',
  ].join('\n');
}
