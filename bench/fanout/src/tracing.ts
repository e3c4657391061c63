/**
 * The tracing cost scenario, fan-out half (decision 0020): server CPU per delivery of our gateway
 * with tracing off, on with no traced events (what ingest at 0 % sampling publishes), on with 1 %
 * and with 100 % of envelopes carrying a sampled traceparent, in one run, interleaved, on the same
 * demo events, sockets and load client. Spans go to an OTLP/HTTP receiver in this process (the real
 * exporter, protobuf).
 */
import { parseMix } from '@wirestream/loadgen';
import { startOtlpReceiver } from '@wirestream/testkit';
import { markdownTable, median } from '@wirestream/bench-kit';
import { fmtInt, fmtMs, section, serverUsPerDelivery } from './report.js';
import { inRounds } from './rounds.js';
import { runStack, type RunContext, type StackRun } from './run-stack.js';
import { drainTimeoutMs, textSection, withWorkers, type CommonOptions, type Scenario } from './scenario.js';

interface Config {
  readonly name: string;
  readonly on: boolean;
  readonly tracedShare: number;
}
const CONFIGS: readonly Config[] = [
  { name: 'off (default)', on: false, tracedShare: 0 },
  { name: 'on, 0 % traced', on: true, tracedShare: 0 },
  { name: 'on, 1 % traced', on: true, tracedShare: 0.01 },
  { name: 'on, 100 % traced', on: true, tracedShare: 1 },
];

interface TracingOptions {
  readonly sockets: number;
  readonly mix: string;
  readonly events: number;
  readonly rate: number;
  readonly repeat: number;
  readonly common: CommonOptions;
}

function resultTable(runs: readonly { config: Config; run: StackRun }[], receiverBytes: ReadonlyMap<Config, number>, repeat: number): string {
  const rows = CONFIGS.map((config) => {
    const mine = runs.filter((r) => r.config === config).map((r) => r.run);
    return { config, mine, cpu: median(mine.map(serverUsPerDelivery)) };
  }).filter((r) => r.mine.length > 0);
  const off = rows[0]?.cpu;
  return markdownTable([
    ['config', 'delivered (all runs)', `server CPU µs per delivery (median of ${repeat} [range])`, 'vs off', 'latency p50 / p99 (median run)', 'OTLP bytes exported (all runs)'],
    ...rows.map(({ config, mine, cpu }) => {
      const mid = mine.reduce((best, r) => (Math.abs(serverUsPerDelivery(r) - cpu) < Math.abs(serverUsPerDelivery(best) - cpu) ? r : best));
      return [
        config.name,
        `${fmtInt(mine.reduce((n, r) => n + r.unique, 0))}/${fmtInt(mine.reduce((n, r) => n + r.expected, 0))}`,
        `${cpu.toFixed(3)} [${Math.min(...mine.map(serverUsPerDelivery)).toFixed(3)}–${Math.max(...mine.map(serverUsPerDelivery)).toFixed(3)}]`,
        off === undefined ? '' : `${(((cpu - off) / off) * 100).toFixed(1)} %`,
        `${fmtMs(mid.latencyMs.p50)} / ${fmtMs(mid.latencyMs.p99)}`,
        fmtInt(receiverBytes.get(config) ?? 0),
      ];
    }),
  ]);
}

async function tracingSection(ctx: RunContext, o: TracingOptions): Promise<string> {
  const receiver = await startOtlpReceiver({ keepBodies: false });
  const receiverBytes = new Map<Config, number>();
  let runs: { config: Config; run: StackRun }[];
  try {
    // Rotated: round r starts with config r (mod 4), so a position effect in a round (a fixed order
    // measured off < 0 % < 1 % < 100 % in every round, in that order) does not favour one config.
    runs = await inRounds(
      o.repeat,
      CONFIGS,
      async (config, rep) => {
        const spec = withWorkers(o.common, {
          sockets: o.sockets,
          plan: { mix: parseMix(o.mix), filterKeys: o.common.filterKeys },
          events: o.events,
          ratePerSecond: o.rate,
          drainTimeoutMs: drainTimeoutMs(o.common, 30_000),
          stallTimeoutMs: 10_000,
          idleMs: 500,
          tracedShare: config.tracedShare,
        });
        const tracingEnv: Record<string, string> = config.on
          ? { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', OTEL_BSP_SCHEDULE_DELAY: '1000' }
          : {};
        const bytesBefore = receiver.bytes();
        const run = await runStack('ours', spec, { ...ctx, gatewayEnv: { ...ctx.gatewayEnv, ...tracingEnv } });
        receiverBytes.set(config, (receiverBytes.get(config) ?? 0) + receiver.bytes() - bytesBefore);
        ctx.log(`[${rep}/${o.repeat}] ${config.name}: ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${serverUsPerDelivery(run).toFixed(3)} µs server CPU/delivery`);
        return { config, run };
      },
      { rotate: true },
    );
  } finally {
    await receiver.stop();
  }
  const title = `Tracing cost: ${fmtInt(o.sockets)} sockets (${o.mix}), ${fmtInt(o.events)} events at ${o.rate}/s per run`;
  const body = [
    'Published with the envelope head ingest writes (a sampled `tp` on the traced share, each event its own trace); ' +
      'spans exported by the real SDK (OTLP/HTTP protobuf) to a receiver in the bench process.',
    '',
    resultTable(runs, receiverBytes, o.repeat),
  ].join('\n');
  return section(ctx.log, title, body);
}

export const tracingScenario: Scenario = {
  name: 'tracing',
  description:
    'opt-in: server CPU per delivery of our gateway, tracing off vs on with 0 %, 1 %, 100 % of events traced, ' +
    'rounds rotated',
  report: 'tracing-fanout',
  options: {
    'tracing-sockets': { arg: 'N', default: '4000', quick: '500', help: 'sockets' },
    'tracing-mix': { arg: 'SPEC', default: 'shared:85,compact:5,filtered:10', help: 'operation mix of the sockets' },
    'tracing-events': { arg: 'E', default: '2000', quick: '100', help: 'events per run' },
    'tracing-rate': { arg: 'EV/S', default: '200', help: 'events per second' },
    'tracing-repeat': { arg: 'K', default: '4', quick: '1', help: 'rounds of the four configs, the order rotated each round (in place of --repeat)' },
  },
  prepare(options, common) {
    const events = options.positiveInt('tracing-events');
    parseMix(options.required('tracing-mix'));
    const o: TracingOptions = {
      sockets: options.positiveInt('tracing-sockets'),
      mix: options.required('tracing-mix'),
      events,
      rate: options.positiveInt('tracing-rate'),
      repeat: options.positiveInt('tracing-repeat'),
      common,
    };
    return textSection(events, (env) => tracingSection(env.ctx, o));
  },
};
