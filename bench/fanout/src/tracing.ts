#!/usr/bin/env node
/**
 * The tracing cost bench, fan-out half (issue #19, decision 0020): server CPU per delivery of our
 * gateway with tracing off, on with no traced events (what ingest at 0 % sampling publishes), on
 * with 1 % and with 100 % of envelopes carrying a sampled traceparent, in one run, interleaved, on
 * the same demo events, sockets and load client. Spans go to an OTLP/HTTP receiver in this process
 * (the real exporter, protobuf).
 *
 *   flock /tmp/wirestream-bench.lock node bench/fanout/dist/tracing.js --repeat 3 --out /tmp/fanout-tracing.md
 *   node bench/fanout/dist/tracing.js --sockets 500 --events 100 --no-write     smoke run
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { parseMix } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { startOtlpReceiver, startRedis, type OtlpReceiver, type RedisServer } from '@wirestream/testkit';
import { loadAverageText, markdownTable, median, positiveInt } from '@wirestream/bench-kit';
import { prepareEvents } from './publisher.js';
import { fmtInt, fmtMs, serverUsPerDelivery } from './report.js';
import { benchContext, runStack, type RunSpec, type StackRun } from './run-stack.js';

const HELP = `tracing bench (fan-out): server CPU per delivery, tracing off vs on at 0 %, 1 %, 100 % of events traced
  --sockets N      default 4000 (one shared operation, the field's mix otherwise with --mix)
  --mix SPEC       default shared:85,compact:5,filtered:10
  --events E       default 2000       --rate EV/S  default 200
  --repeat K       interleaved rounds, the order rotated each round (default 4); rows show the median and range
  --out FILE       write the markdown table there; --no-write prints only`;

const { values } = parseArgs({
  options: {
    help: { type: 'boolean', default: false },
    sockets: { type: 'string', default: '4000' },
    mix: { type: 'string', default: 'shared:85,compact:5,filtered:10' },
    events: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '200' },
    repeat: { type: 'string', default: '4' },
    out: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

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

const sockets = positiveInt('sockets', values.sockets);
const events = positiveInt('events', values.events);
const rate = positiveInt('rate', values.rate);
const repeat = positiveInt('repeat', values.repeat);
const log = (line: string): void => console.log(line);


function resultTable(runs: readonly { config: Config; run: StackRun }[], receiverBytes: ReadonlyMap<string, number>): string {
  const rows = CONFIGS.map((config) => {
    const mine = runs.filter((r) => r.config === config).map((r) => r.run);
    return { config, mine, cpu: median(mine.map(serverUsPerDelivery)) };
  }).filter((r) => r.mine.length > 0);
  const off = rows[0]?.cpu;
  return markdownTable([
    ['config', 'delivered (all runs)', `server CPU µs per delivery (median of ${repeat} [range])`, 'vs off', 'latency p50 / p99 (median run)', 'OTLP bytes exported (all runs)'],
    ...rows.map(({ config, mine, cpu }) => {
      const mid = mine.reduce((best, r) => (Math.abs(serverUsPerDelivery(r) - cpu) < Math.abs(serverUsPerDelivery(best) - cpu) ? r : best));
      const unique = mine.reduce((n, r) => n + r.unique, 0);
      const expected = mine.reduce((n, r) => n + r.expected, 0);
      return [
        config.name,
        `${fmtInt(unique)}/${fmtInt(expected)}`,
        `${cpu.toFixed(3)} [${Math.min(...mine.map(serverUsPerDelivery)).toFixed(3)}–${Math.max(...mine.map(serverUsPerDelivery)).toFixed(3)}]`,
        off === undefined ? '' : `${(((cpu - off) / off) * 100).toFixed(1)} %`,
        `${fmtMs(mid.latencyMs.p50)} / ${fmtMs(mid.latencyMs.p99)}`,
        fmtInt(receiverBytes.get(config.name) ?? 0),
      ];
    }),
  ]);
}

async function main(): Promise<void> {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareEvents(events, route, 'ws', 50);
  const started = new Date();
  const loadAtStart = loadAverageText();
  let redisServer: RedisServer | undefined;
  let redis: Redis | undefined;
  let receiver: OtlpReceiver | undefined;
  const runs: { config: Config; run: StackRun }[] = [];
  const receiverBytes = new Map<string, number>();
  try {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    receiver = await startOtlpReceiver({ keepBodies: false });
    const ctx = benchContext(redisServer, redis, corpus, route, { log, nodeEnv: 'production' });
    const filterKeys = Array.from({ length: 50 }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
    for (let rep = 1; rep <= repeat; rep++) {
      // Rotated: round r starts with config r (mod 4), so a position effect in a round (a fixed order
      // measured off < 0 % < 1 % < 100 % in every round, in that order) does not favour one config.
      const order = CONFIGS.map((_, i) => CONFIGS[(i + rep - 1) % CONFIGS.length] as Config);
      for (const config of order) {
        const spec: RunSpec = { sockets, plan: { mix: parseMix(values.mix), filterKeys }, events, ratePerSecond: rate, drainTimeoutMs: 30_000, stallTimeoutMs: 10_000, idleMs: 500, tracedShare: config.tracedShare };
        const gatewayEnv: Record<string, string> = config.on ? { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', OTEL_BSP_SCHEDULE_DELAY: '1000' } : {};
        const bytesBefore = receiver.bytes();
        const run = await runStack('ours', spec, { ...ctx, gatewayEnv });
        receiverBytes.set(config.name, (receiverBytes.get(config.name) ?? 0) + receiver.bytes() - bytesBefore);
        runs.push({ config, run });
        log(`[${rep}/${repeat}] ${config.name}: ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${serverUsPerDelivery(run).toFixed(3)} µs server CPU/delivery`);
      }
    }
  } finally {
    redis?.disconnect();
    await redisServer?.stop();
    await receiver?.stop();
  }
  const text = [
    `Command: \`flock /tmp/wirestream-bench.lock node bench/fanout/dist/tracing.js ${process.argv.slice(2).join(' ')}\` — ${started.toISOString()}, ` +
      `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load average at start ${loadAtStart}, at end ${loadAverageText()}.`,
    '',
    `${fmtInt(sockets)} sockets (${values.mix}), ${fmtInt(events)} demo listing events at ${rate}/s per run, published into a private redis-server with ` +
      'the envelope head ingest writes (a sampled `tp` on the traced share, each event its own trace); spans exported by the real SDK (OTLP/HTTP protobuf) to a receiver in the bench process.',
    '',
    resultTable(runs, receiverBytes),
    '',
  ].join('\n');
  log(`\n${text}`);
  if (values['no-write'] || values.out === undefined) return;
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, text);
  log(`wrote ${values.out}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
