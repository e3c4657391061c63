// The capacity table's TODO(bench) rows (docs/operations.md, `<!-- capacity:numbers -->`) measured
// against real servers in one run, each printed next to the value the table holds now.
//
//   flock /tmp/wirestream-bench.lock node bench/capacity-probe/dist/main.js
//        [--sockets 2000,10000,19000] [--settle-s 30] [--sustained-rate 5000] [--backlog 150000] [--burst 200] [--out bench/results/capacity-probe.md]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { MAX_SOCKETS_PER_WORKER } from '@wirestream/loadgen';
import { findRepoRoot, startKafka, startRedis, type KafkaBroker, type RedisServer } from '@wirestream/testkit';
import { probeGateway } from './gateway-probe.js';
import { probeIngest } from './ingest-probe.js';
import { commandLine, loadAverageText, machineText, parseCli, positiveInt } from '@wirestream/bench-kit';
import { renderReport, type Planned } from './report.js';

const root = findRepoRoot();
const { values } = parseCli({
  options: {
    sockets: { type: 'string', default: `2000,10000,${MAX_SOCKETS_PER_WORKER}` },
    'settle-s': { type: 'string', default: '30' },
    'default-rate-s': { type: 'string', default: '30' },
    'sustained-rate': { type: 'string', default: '5000' },
    'sustained-s': { type: 'string', default: '60' },
    backlog: { type: 'string', default: '150000' },
    'load-rate': { type: 'string', default: '20' },
    'load-s': { type: 'string', default: '10' },
    burst: { type: 'string', default: '200' },
    out: { type: 'string', default: join(root, 'bench', 'results', 'capacity-probe.md') },
    'skip-ingest': { type: 'boolean', default: false },
  },
});

const positive = (name: string): number => positiveInt(name, String(values[name as keyof typeof values]));

const socketCounts = String(values.sockets).split(',').map((s) => Number(s.trim()));
if (!Number.isInteger(Number(values.burst)) || Number(values.burst) < 0) throw new RangeError(`--burst must be an integer ≥ 0 (events back-to-back after the field load), got ${String(values.burst)}`);
for (const n of socketCounts) {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SOCKETS_PER_WORKER) throw new RangeError(`--sockets: each count must be an integer in 1..${MAX_SOCKETS_PER_WORKER} (the gateway is one process), got ${n}`);
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const started = new Date();
const loadAtStart = loadAverageText();

/** Deliveries/s per core (measured and planned) from the capacity model, for bytes/s out. */
function plannedDeliveries(): Planned {
  const json = JSON.parse(execFileSync(process.execPath, [join(root, 'scripts', 'capacity.mjs'), '--json'], { encoding: 'utf8' })) as {
    units: { gateway: { deliveriesPerCore: number; plannedDeliveries: number } };
  };
  return { perCore: json.units.gateway.deliveriesPerCore, planned: json.units.gateway.plannedDeliveries };
}

let broker: KafkaBroker | undefined;
let redisServer: RedisServer | undefined;
let redis: Redis | undefined;
try {
  log('starting a private Kafka broker and redis-server…');
  [broker, redisServer] = await Promise.all([values['skip-ingest'] ? Promise.resolve(undefined) : startKafka(), startRedis()]);
  const ingest =
    broker === undefined
      ? undefined
      : await probeIngest({
          broker,
          redis: redisServer,
          settleS: positive('settle-s'),
          defaultRateS: positive('default-rate-s'),
          sustainedRate: positive('sustained-rate'),
          sustainedS: positive('sustained-s'),
          backlogEvents: positive('backlog'),
          log,
        });
  await broker?.stop();
  broker = undefined;
  await redisServer.stop();
  // A fresh Redis for the gateway: the ingest phases left history streams behind.
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  const gateway = await probeGateway({ redisUrl: redisServer.url, redis, socketCounts, idleSettleS: positive('settle-s'), rate: positive('load-rate'), loadS: positive('load-s'), burst: Number(values.burst), log });
  const markdown = renderReport({
    started,
    command: commandLine(),
    machine: `${machineText()}; load average ${loadAtStart} at start, ${loadAverageText()} at end (shared with other helpers' test runs)`,
    ingest,
    gateway,
    planned: plannedDeliveries(),
    loadRate: positive('load-rate'),
    loadS: positive('load-s'),
    burst: Number(values.burst),
  });
  process.stdout.write(`${markdown}\n`);
  writeFileSync(String(values.out), markdown);
  log(`wrote ${String(values.out)}`);
} finally {
  redis?.disconnect();
  await redisServer?.stop().catch(() => undefined);
  await broker?.stop().catch(() => undefined);
}
