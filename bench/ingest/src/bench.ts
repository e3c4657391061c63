// End-to-end ingest throughput: real Kafka broker + Redis, one measured process at a time over the
// same preloaded topics (each run with a fresh consumer group, so each reads everything again).
//
//   pnpm --filter @wirestream/bench-ingest bench -- [--events 200000] [--variants knobs,fetch]
//        [--repeat 3] [--profile app] [--json out.json] [--base /path/to/other/checkout/apps/ingest]
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { createBenchEnvironment, highWatermarks, preload, type BenchEnvironment, type PreloadResult } from './environment.js';
import { summarizeCpuProfile, type ProfileSummary } from './profile-summary.js';
import { runOnce, type RunContext, type RunResult, type Variant } from './run-process.js';
import { machineText, median, paddedTable, parseCli, positiveInt } from '@wirestream/bench-kit';
import { fixed, int } from './format.js';
import { findRepoRoot, startOtlpReceiver } from '@wirestream/testkit';
import { buildPatchedApp } from './patched-app.js';
import { prepareFormatTopics, type FormatTopics } from './formats-e2e.js';
import { baseVariant, OTLP_RECEIVER, PRESETS, VARIANTS } from './variants.js';

const { values: args } = parseCli({
  usage: `usage: node bench/ingest/dist/bench.js [options]
End-to-end ingest throughput against a real Kafka broker and redis-server started for the run.`,
  options: {
    events: { type: 'string', default: '200000' },
    partitions: { type: 'string', default: '6' },
    variants: { type: 'string', default: 'knobs' },
    repeat: { type: 'string', default: '1' },
    profile: { type: 'string' },
    'timeout-s': { type: 'string', default: '180' },
    warmup: { type: 'boolean', default: true },
    'no-warmup': { type: 'boolean', default: false },
    json: { type: 'string' },
    'profile-dir': { type: 'string' },
    base: { type: 'string' },
    'base-node': { type: 'string' },
  },
  help: {
    events: 'events preloaded and consumed by each run',
    partitions: 'partitions of each topic',
    variants: 'comma-separated variants or presets',
    repeat: 'rounds, variants interleaved in each',
    profile: 'variants to run once more under --cpu-prof',
    'profile-dir': 'where the CPU profiles go',
    'timeout-s': 'give up on a run after N seconds',
    warmup: 'run an unmeasured warm-up first',
    'no-warmup': 'skip the unmeasured warm-up run',
    json: 'also write every run as JSON',
    base: 'another build of apps/ingest, measured as app-base in the same run',
    'base-node': 'the node binary that runs app-base (default: this one), for a runtime change',
  },
  epilog: `presets: ${Object.entries(PRESETS).map(([name, ids]) => `${name} (${ids.join(', ')})`).join('; ')}
variants: ${Object.keys(VARIANTS).join(', ')}`,
});

// --base: another build of apps/ingest (e.g. a git worktree of the base commit) measured as the
// baseline `app-base` in the same run, interleaved with this checkout's variants.
const known: Readonly<Record<string, Variant>> = args.base === undefined ? VARIANTS : { 'app-base': baseVariant(resolve(args.base), args['base-node']), ...VARIANTS };

function selectVariants(spec: string): string[] {
  const ids: string[] = [];
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const expanded = PRESETS[part] ?? [part];
    for (const id of expanded) {
      if (!(id in known)) {
        throw new RangeError(`--variants: unknown "${id}"; known: ${[...Object.keys(PRESETS), ...Object.keys(known)].join(', ')}`);
      }
      if (!ids.includes(id)) ids.push(id);
    }
  }
  if (ids.length === 0) throw new RangeError('--variants selected nothing');
  return ids;
}

const events = positiveInt('events', args.events);
const partitions = positiveInt('partitions', args.partitions);
const repeat = positiveInt('repeat', args.repeat);
const timeoutMs = positiveInt('timeout-s', args['timeout-s']) * 1000;
const selected = selectVariants(args.variants ?? 'knobs');
// The base goes first: the first variant is every table's baseline ("vs first").
const variantIds = args.base === undefined ? selected : ['app-base', ...selected.filter((id) => id !== 'app-base')];
const profileIds = args.profile === undefined ? [] : selectVariants(args.profile);
const warmup = args.warmup === true && args['no-warmup'] !== true;

let env: BenchEnvironment | undefined;
// A Ctrl-C must not leave a broker, Redis or ingest behind: exit runs testkit's and runOnce's kill hooks.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping\n`);
    void (env?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

try {
  log(`starting Kafka + Redis, ${partitions} partitions per topic…`);
  env = await createBenchEnvironment({ partitions });
  log(`broker ${env.broker.brokers.join(',')} (pid ${env.broker.pid}, ${env.broker.startupMs} ms), redis ${env.redis.url}`);
  log(`preloading ${events.toLocaleString('en-US')} events…`);
  const loaded = await preload(env, { events });
  const total = await highWatermarks(env.kafka, env.topics);
  if (total !== events) throw new Error(`the topics hold ${total} messages, expected ${events}`);
  // The `formats` variants: the same events again in each Confluent wire format they read, on topics of their own.
  const encodings = new Set([...variantIds, ...profileIds].flatMap((id) => known[id]?.encoding ?? []));
  const formatTopics = new Map<string, FormatTopics>();
  for (const format of encodings) {
    log(`preloading the same ${events.toLocaleString('en-US')} events as ${format} (Confluent's serializer, MockClient)…`);
    const prepared = await prepareFormatTopics(env, { events, partitions, format });
    const held = await highWatermarks(env.kafka, prepared.topics);
    if (held !== events) throw new Error(`the ${format} topics hold ${held} messages, expected ${events}`);
    formatTopics.set(format, prepared);
  }

  const monitor = new Redis(env.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  monitor.on('error', () => undefined); // reported by the command that fails, once Redis is gone at the end
  await monitor.connect();
  const admin = env.kafka.admin();
  await admin.connect();
  const ctx: RunContext = { env, monitor, admin, total, timeoutMs };
  // Variants that run a patched copy of apps/ingest: build each copy once, before any run.
  const patchedScripts = new Map<string, string>();
  for (const id of new Set([...variantIds, ...profileIds])) {
    const patches = known[id]?.patches;
    if (patches !== undefined && !patchedScripts.has(patches.join('+'))) {
      log(`building apps/ingest + ${patches.join(' + ')}…`);
      patchedScripts.set(patches.join('+'), buildPatchedApp(patches));
    }
  }
  // Variants with tracing on export to a receiver in this process (its CPU is not the measured app's).
  const wantsReceiver = [...variantIds, ...profileIds].some((id) => known[id]?.env?.['OTEL_EXPORTER_OTLP_ENDPOINT'] === OTLP_RECEIVER);
  const receiver = wantsReceiver ? await startOtlpReceiver({ keepBodies: false }) : undefined;
  const withReceiver = (v: Variant): Variant =>
    receiver === undefined || v.env?.['OTEL_EXPORTER_OTLP_ENDPOINT'] !== OTLP_RECEIVER ? v : { ...v, env: { ...v.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } };
  const variant = (id: string): Variant => {
    const v = withReceiver(known[id] as Variant);
    const patched = v.patches === undefined ? v : { ...v, script: patchedScripts.get(v.patches.join('+')) ?? v.script };
    const wire = v.encoding === undefined ? undefined : formatTopics.get(v.encoding);
    return wire === undefined ? patched : { ...patched, env: { ...patched.env, SCHEMA_PATH: wire.schemaPath, SCHEMA_DIR: wire.schemaDir } };
  };
  // A variant in a wire format counts the commits on its own topics.
  const run = (v: Variant, extra: Partial<RunContext> = {}): Promise<RunResult> => {
    const topics = v.encoding === undefined ? undefined : formatTopics.get(v.encoding)?.topics;
    return runOnce({ ...ctx, ...(topics === undefined ? {} : { topics }), ...extra }, v);
  };

  try {
    if (warmup) {
      log(`warm-up run (not counted): ${variant(variantIds[0] as string).name}`);
      await run(variant(variantIds[0] as string));
    }
    const results: RunResult[] = [];
    for (let round = 1; round <= repeat; round++) {
      // Interleaved rounds: a noisy neighbour slows every variant of a round, not one variant.
      for (const id of variantIds) {
        const result = await run(variant(id));
        results.push(result);
        log(
          result.ok
            ? `[${round}/${repeat}] ${result.variant}: ${int(result.eventsPerS)} events/s, cpu ${fixed(result.cpuPct, 0)} %, peak rss ${fixed(result.peakRssMiB, 0)} MiB`
            : `[${round}/${repeat}] ${result.variant}: FAILED ${result.error ?? ''}`,
        );
      }
    }

    const profiles: { variant: string; result: RunResult; summary: ProfileSummary; file: string }[] = [];
    for (const id of profileIds) {
      // .wirestream/ is git-ignored; profiles are large and machine-specific.
      const dir = args['profile-dir'] ?? join(findRepoRoot(), '.wirestream', 'bench-ingest-profiles');
      const runDir = join(dir, id);
      rmSync(runDir, { recursive: true, force: true });
      mkdirSync(runDir, { recursive: true });
      const v = variant(id);
      log(`profiling ${v.name} (--cpu-prof, JSON wrapped)…`);
      const result = await run({ ...v, env: { ...v.env, BENCH_WRAP_JSON: '1' } }, { cpuProfileDir: runDir });
      const file = readdirSync(runDir).find((f) => f.endsWith('.cpuprofile'));
      if (file === undefined) throw new Error(`no .cpuprofile written in ${runDir}`);
      profiles.push({ variant: v.name, result, summary: summarizeCpuProfile(join(runDir, file)), file: join(runDir, file) });
    }

    const preloads = [{ label: 'JSON', loaded }, ...[...formatTopics.values()].map((f) => ({ label: f.format, loaded: f.loaded }))];
    process.stdout.write(report(preloads, results, profiles) + '\n');
    if (args.json !== undefined) {
      writeFileSync(args.json, JSON.stringify({ date: new Date().toISOString(), node: process.version, events, partitions, repeat, base: args.base, loaded, formats: Object.fromEntries([...formatTopics].map(([f, t]) => [f, t.loaded])), results, profiles }, null, 2));
    }
    if (results.some((r) => !r.ok) || profiles.some((p) => !p.result.ok)) process.exitCode = 1;
  } finally {
    monitor.disconnect();
    await admin.disconnect();
    if (receiver !== undefined) log(`OTLP receiver: ${receiver.requests.length} export requests, ${receiver.bytes().toLocaleString('en-US')} bytes`);
    await receiver?.stop();
  }
} finally {
  await env?.close();
}

function report(
  preloads: readonly { label: string; loaded: PreloadResult }[],
  results: readonly RunResult[],
  profiles: readonly { variant: string; result: RunResult; summary: ProfileSummary; file: string }[],
): string {
  const out: string[] = [];
  out.push(`## Ingest throughput — ${new Date().toISOString()}, ${machineText()}`);
  out.push('');
  out.push(
    paddedTable(
      ['preload', 'events', 'listing / bid', 'mean value', 'total', 'generate', 'produce', 'produce rate'],
      preloads.map(({ label, loaded }) => [
          `${label}: kafkajs sendBatch, acks 1, no compression`,
          int(loaded.events),
          `${int(loaded.listingEvents)} / ${int(loaded.bidEvents)}`,
          `${int(loaded.meanValueBytes)} B`,
          `${fixed(loaded.valueBytes / 1_048_576, 0)} MiB`,
          `${int(loaded.generateMs)} ms`,
          `${int(loaded.produceMs)} ms`,
          `${int(loaded.events / (loaded.produceMs / 1000))} ev/s, ${fixed(loaded.producedMiBPerS, 0)} MiB/s`,
        ]),
    ),
  );
  out.push('');
  const names = [...new Set(results.map((r) => r.variant))];
  const medianOf = (name: string, f: (r: RunResult) => number): number => median(results.filter((r) => r.variant === name && r.ok).map(f));
  const base = medianOf(names[0] ?? '', (r) => r.eventsPerS);
  const baseCpu = medianOf(names[0] ?? '', (r) => r.cpuUsPerEvent);
  out.push(
    paddedTable(
      [
        'variant', 'events/s', 'best ev/s', 'steady ev/s', 'vs first', 'runs (events/s each)', 'CPU %', 'CPU µs/event', 'CPU/event vs first', 'CPU µs/event each', 'peak RSS MiB', 'broker CPU %', 'redis CPU %',
        'redis CPU ms / 10k ev', 'redis cmds / event', 'machine busy / steal %', 'startup ms', 'PUBLISH calls', 'events published',
      ],
      names.map((name) => {
        const runs = results.filter((r) => r.variant === name);
        const eps = medianOf(name, (r) => r.eventsPerS);
        return [
          name,
          int(eps),
          int(Math.max(...runs.filter((r) => r.ok).map((r) => r.eventsPerS))),
          int(medianOf(name, (r) => r.steadyEventsPerS)),
          `${fixed(eps / base, 2)}×`,
          runs.map((r) => (r.ok ? int(r.eventsPerS) : 'FAIL')).join(' '),
          fixed(medianOf(name, (r) => r.cpuPct), 0),
          fixed(medianOf(name, (r) => r.cpuUsPerEvent), 1),
          `${fixed(medianOf(name, (r) => r.cpuUsPerEvent) / baseCpu, 2)}×`,
          runs.map((r) => (r.ok ? fixed(r.cpuUsPerEvent, 1) : 'FAIL')).join(' '),
          fixed(medianOf(name, (r) => r.peakRssMiB), 0),
          fixed(medianOf(name, (r) => r.brokerCpuPct), 0),
          fixed(medianOf(name, (r) => r.redisCpuPct), 0),
          fixed(medianOf(name, (r) => r.redisCpuMsPer10k), 1),
          fixed(medianOf(name, (r) => r.redisCommandsPerEvent), 3),
          `${fixed(medianOf(name, (r) => r.machineBusyPct), 0)} / ${fixed(medianOf(name, (r) => r.machineStealPct), 1)}`,
          int(medianOf(name, (r) => r.startupMs)),
          runs.map((r) => int(r.publishes)).join(' '),
          runs.map((r) => (Number.isNaN(r.eventsPublished) ? '–' : int(r.eventsPublished))).join(' '),
        ];
      }),
    ),
  );
  for (const r of results.filter((x) => !x.ok)) out.push(`\nFAILED ${r.variant}: ${r.error ?? ''}`);
  for (const p of profiles) {
    out.push('');
    out.push(
      `### CPU profile: ${p.variant} — ${int(p.result.eventsPerS)} events/s while profiled; busy ${int(p.summary.busyMs)} ms, idle ${int(p.summary.idleMs)} ms (whole process life)`,
    );
    out.push('');
    out.push(paddedTable(['self time by category', 'ms', '% of busy'], p.summary.categories.map((c) => [c.name, int(c.ms), fixed(c.pct)])));
    out.push('');
    out.push(paddedTable(['top self-time functions', 'category', 'ms', '% of busy'], p.summary.top.map((f) => [f.name, f.category, int(f.ms), fixed(f.pct)])));
    out.push(`\nprofile: ${p.file}`);
  }
  return out.join('\n');
}
