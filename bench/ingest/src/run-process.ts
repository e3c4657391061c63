import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Admin } from 'kafkajs';
import { MiB, readCpuMs, readMachineTicks, readRssAndPeak, startNodeProcess, type MachineTicks } from '@wirestream/bench-kit';
import { freePort, uniqueName } from '@wirestream/testkit';
import type { BenchEnvironment } from './environment.js';

/** One process to measure: the built ingest app with some settings, or a minimal loop. */
export interface Variant {
  /** Short label printed in the tables. */
  readonly name: string;
  /** Node script to run (absolute path). */
  readonly script: string;
  /** The node binary that runs it (this process's unless given: a base on its own runtime). */
  readonly node?: string;
  /** Run apps/ingest rebuilt with these `bench/ingest/patches/*.diff` (see patched-app.ts) instead of `script`. */
  readonly patches?: readonly string[];
  /** Extra environment (INGEST_PUBLISH_CHUNK, BENCH_KAFKAJS_CONSUMER, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra node flags, e.g. `--max-semi-space-size=64`. */
  readonly nodeArgs?: readonly string[];
  /** Modules loaded with `node --import` before the script (the kafkajs options / profiling hooks). */
  readonly imports?: readonly string[];
  /**
   * What marks an event done: its Redis PUBLISH (one per event), or its committed offset (the app:
   * its batch form publishes one message per key shard per chunk; and the consume-only loops).
   */
  readonly progress: 'publishes' | 'commits';
  /** The app's /metrics: read at the end for the events it published (`wirestream_ingest_published_total`). */
  readonly metrics?: boolean;
  /** Read the same events in this Confluent wire format (formats-e2e.ts: its own topics, SDL and SCHEMA_DIR) instead of JSON. */
  readonly encoding?: 'AVRO' | 'PROTOBUF';
}

export interface RunResult {
  readonly variant: string;
  readonly ok: boolean;
  readonly error?: string;
  readonly events: number;
  /** First progress (minus one sample) → last event done. */
  readonly wallMs: number;
  readonly eventsPerS: number;
  /** Rate between 10 % and 90 % done: excludes ramp-up and the tail. */
  readonly steadyEventsPerS: number;
  /** Process start → first event done (node start, connect, group join, first fetch). */
  readonly startupMs: number;
  /** Last event published → every offset committed. */
  readonly commitLagMs: number;
  readonly cpuS: number;
  /** CPU of the measured process over the window, in % of one core. */
  readonly cpuPct: number;
  readonly cpuUsPerEvent: number;
  readonly peakRssMiB: number;
  readonly brokerCpuPct: number;
  readonly redisCpuPct: number;
  /** Whole machine over the window, % of all cores: busy (all processes) and stolen by the hypervisor. */
  readonly machineBusyPct: number;
  readonly machineStealPct: number;
  /** Redis PUBLISH calls counted (equal to events for one message per event: no duplicates). */
  readonly publishes: number;
  /** Events the app says it published (its metric; must equal events: no duplicates), NaN for the loops. */
  readonly eventsPublished: number;
  /** Every command Redis executed in the run (INFO commandstats, the bench's own INFO/CONFIG/FLUSHALL left out), per event. */
  readonly redisCommandsPerEvent: number;
  /** redis-server CPU (utime + stime, as INFO cpu's used_cpu_user + used_cpu_sys) over the window, ms per 10,000 events. */
  readonly redisCpuMsPer10k: number;
  readonly committed: number;
}

export interface RunContext {
  readonly env: BenchEnvironment;
  /** A plain connection for INFO / CONFIG RESETSTAT (not the one under test). */
  readonly monitor: Redis;
  readonly admin: Admin;
  /** Events in the topics (sum of high watermarks). */
  readonly total: number;
  readonly timeoutMs: number;
  /** Write a V8 CPU profile of the process into this folder. */
  readonly cpuProfileDir?: string;
  /** The topics whose commits count (default: the environment's); SCHEMA_PATH in the variant's env must name them. */
  readonly topics?: readonly string[];
}

const SAMPLE_INTERVAL_MS = 25;

/** CPU seconds (user + system, all threads) a process has used so far; NaN once it is gone. */
const cpuSecondsOf = (pid: number | undefined): number => (pid === undefined ? Number.NaN : (readCpuMs(pid) ?? Number.NaN) / 1_000);

/** Runs one process over the preloaded topics with a fresh consumer group and measures it. */
export async function runOnce(ctx: RunContext, variant: Variant): Promise<RunResult> {
  const { env, monitor, admin, total, timeoutMs, cpuProfileDir } = ctx;
  const groupId = uniqueName('bench-ingest');
  await monitor.config('RESETSTAT');
  // Every run re-reads the same offsets: without this, history XADDs after the first run would
  // all be refused as already stored and the write cost of history would not be measured.
  await monitor.flushall();

  const metricsPort = variant.metrics === true ? await freePort() : 0;
  const nodeArgs: string[] = [...(variant.nodeArgs ?? [])];
  if (cpuProfileDir !== undefined) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`);
  for (const module of variant.imports ?? []) nodeArgs.push('--import', module);
  const child = startNodeProcess(variant.name, [...nodeArgs, variant.script], {
    node: variant.node,
    inheritEnv: false,
    // SIGTERM makes the app commit and leave its group: give it time before SIGKILL.
    graceMs: 20_000,
    tailChars: 4_000,
    env: {
      KAFKA_BROKERS: env.broker.brokers.join(','),
      REDIS_URL: env.redis.url,
      SCHEMA_PATH: env.schemaPath,
      KAFKA_GROUP_ID: groupId,
      LOG_LEVEL: 'warn',
      // The app's health/metrics server: a free port, so runs never fight over the default 9464.
      INGEST_HTTP_PORT: String(metricsPort),
      ...variant.env,
    },
  });
  const pid = child.pid;
  const brokerPid = env.broker.pid;
  const redisPid = env.redis.pid;

  const spawnedAt = performance.now();
  const deadline = spawnedAt + timeoutMs;
  type Sample = { t: number; done: number; cpu: number; brokerCpu: number; redisCpu: number; machine: MachineTicks };
  const samples: Sample[] = [];
  let publishes = 0;
  let committed = 0;
  let peakRssMiB = 0;
  let error: string | undefined;
  let firstIndex = -1;
  let endIndex = -1;
  let committedAt = NaN;
  let eventsPublished = NaN;
  let redisCommands = NaN;

  const readPublishes = async (): Promise<number> => {
    const info = await monitor.info('commandstats');
    return Number(/^cmdstat_publish:calls=(\d+)/m.exec(info)?.[1] ?? 0);
  };
  const readCommitted = async (): Promise<number> => {
    let sum = 0;
    for (const { partitions } of await admin.fetchOffsets({ groupId, topics: [...(ctx.topics ?? env.topics)] })) {
      for (const p of partitions) sum += Math.max(0, Number(p.offset));
    }
    return sum;
  };

  try {
    for (;;) {
      const exit = child.exitInfo();
      if (exit !== undefined) throw new Error(`${variant.name} exited early (${exit}):\n${child.tail()}`);
      if (performance.now() > deadline) {
        throw new Error(`${variant.name} did not finish within ${timeoutMs} ms (${Math.max(publishes, committed)} of ${total} events)`);
      }
      // The sample's time is taken right after the read that defines its progress.
      let done: number;
      if (variant.progress === 'publishes') done = publishes = await readPublishes();
      else done = committed = await readCommitted();
      const t = performance.now();
      samples.push({
        t,
        done,
        cpu: cpuSecondsOf(pid),
        brokerCpu: cpuSecondsOf(brokerPid),
        redisCpu: cpuSecondsOf(redisPid),
        machine: readMachineTicks(),
      });
      peakRssMiB = Math.max(peakRssMiB, (readRssAndPeak(pid)?.hwm ?? 0) / MiB);
      if (firstIndex < 0 && done > 0) firstIndex = samples.length - 1;
      if (endIndex < 0 && done >= total) endIndex = samples.length - 1;
      if (endIndex >= 0) {
        // Offsets are only read once everything is published: a slow OffsetFetch must not stall sampling.
        if (variant.progress === 'publishes') committed = await readCommitted();
        if (committed >= total) {
          committedAt = performance.now();
          publishes = await readPublishes();
          redisCommands = await readRedisCommands(monitor);
          if (variant.metrics === true) eventsPublished = await readPublishedMetric(metricsPort);
          break;
        }
      }
      await sleep(SAMPLE_INTERVAL_MS);
    }
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    await child.stop();
  }

  // The window opens at the last sample before any event was done: the first fetch and the
  // first chunk's conversion happened after it, so the rate is, if anything, understated.
  const start = samples[Math.max(0, firstIndex - 1)];
  const end = samples[endIndex];
  if (error !== undefined || start === undefined || end === undefined || firstIndex < 0) {
    return failed(variant.name, total, error ?? 'no progress recorded', publishes, committed);
  }
  if (variant.metrics === true && eventsPublished !== total) {
    return failed(variant.name, total, `the app published ${eventsPublished} events, expected exactly ${total} (duplicates or losses)`, publishes, committed);
  }
  const wallMs = end.t - start.t;
  const cpuS = end.cpu - start.cpu;
  const at = (fraction: number): number => timeAt(samples, total * fraction);
  return {
    variant: variant.name,
    ok: true,
    events: total,
    wallMs,
    eventsPerS: total / (wallMs / 1000),
    steadyEventsPerS: (total * 0.8) / ((at(0.9) - at(0.1)) / 1000),
    startupMs: start.t - spawnedAt,
    commitLagMs: committedAt - end.t,
    cpuS,
    cpuPct: (cpuS / (wallMs / 1000)) * 100,
    cpuUsPerEvent: (cpuS * 1e6) / total,
    peakRssMiB,
    brokerCpuPct: ((end.brokerCpu - start.brokerCpu) / (wallMs / 1000)) * 100,
    redisCpuPct: ((end.redisCpu - start.redisCpu) / (wallMs / 1000)) * 100,
    redisCpuMsPer10k: ((end.redisCpu - start.redisCpu) * 1000 * 10_000) / total,
    redisCommandsPerEvent: redisCommands / total,
    eventsPublished,
    machineBusyPct: ((end.machine.busy - start.machine.busy) / (end.machine.total - start.machine.total)) * 100,
    machineStealPct: ((end.machine.steal - start.machine.steal) / (end.machine.total - start.machine.total)) * 100,
    publishes,
    committed,
  };
}

/** Sum of the app's `wirestream_ingest_published_total` series. */
async function readPublishedMetric(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return [...text.matchAll(/^wirestream_ingest_published_total(?:\{[^}]*\})? (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** Commands Redis executed since CONFIG RESETSTAT, without the bench's own (INFO, CONFIG, FLUSHALL). */
async function readRedisCommands(monitor: Redis): Promise<number> {
  const info = await monitor.info('commandstats');
  let sum = 0;
  for (const m of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
    if (!['info', 'config', 'config|resetstat', 'flushall'].includes(m[1] as string)) sum += Number(m[2]);
  }
  return sum;
}

/** Time at which `done` first reached `target`, linearly interpolated between samples. */
function timeAt(samples: readonly { t: number; done: number }[], target: number): number {
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    if (a === undefined || b === undefined || b.done < target) continue;
    if (b.done === a.done) return b.t;
    return a.t + ((target - a.done) / (b.done - a.done)) * (b.t - a.t);
  }
  return NaN;
}

function failed(variant: string, events: number, error: string, publishes: number, committed: number): RunResult {
  return {
    variant,
    ok: false,
    error,
    events,
    wallMs: NaN,
    eventsPerS: NaN,
    steadyEventsPerS: NaN,
    startupMs: NaN,
    commitLagMs: NaN,
    cpuS: NaN,
    cpuPct: NaN,
    cpuUsPerEvent: NaN,
    peakRssMiB: NaN,
    brokerCpuPct: NaN,
    redisCpuPct: NaN,
    machineBusyPct: NaN,
    machineStealPct: NaN,
    publishes,
    eventsPublished: NaN,
    redisCommandsPerEvent: NaN,
    redisCpuMsPer10k: NaN,
    committed,
  };
}
