import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findRepoRoot } from '@wirestream/testkit';
import type { Variant } from './run-process.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const appMain = join(findRepoRoot(), 'apps', 'ingest', 'dist', 'main.js');
/** `--import` target that applies BENCH_KAFKAJS_CONSUMER and BENCH_WRAP_JSON in the child. */
export const childHooks = pathToFileURL(join(here, 'child-hooks.js')).href;

const MiB = 1_048_576;

/** Placeholder of OTEL_EXPORTER_OTLP_ENDPOINT: bench.ts replaces it with the URL of the OTLP receiver it starts. */
export const OTLP_RECEIVER = 'bench:otlp-receiver';

/** Tracing on (decision 0020), exporting to the bench's receiver, sampling `ratio` of the chunks (the preloaded records carry no traceparent). */
function traced(ratio: string): Record<string, string> {
  return { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: OTLP_RECEIVER, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio, OTEL_BSP_SCHEDULE_DELAY: '1000' };
}

function app(name: string, env: Record<string, string> = {}, consumer?: Record<string, number>, nodeArgs: string[] = [], patches?: string[]): Variant {
  return {
    name,
    script: appMain,
    ...(patches === undefined ? {} : { patches }),
    nodeArgs,
    env: consumer === undefined ? env : { ...env, BENCH_KAFKAJS_CONSUMER: JSON.stringify(consumer) },
    imports: [childHooks],
    // Committed offsets, not PUBLISH calls: the batch form publishes one message per key shard per chunk.
    progress: 'commits',
    metrics: true,
  };
}

function loop(name: string, file: string, mode: 'publish' | 'consume-only', env: Record<string, string> = {}, nodeArgs: string[] = []): Variant {
  return {
    name,
    nodeArgs,
    script: join(here, 'loops', file),
    env: { BENCH_LOOP_MODE: mode, ...env },
    imports: [childHooks],
    progress: mode === 'publish' ? 'publishes' : 'commits',
  };
}

/**
 * The built app of another checkout (`<appDir>/dist/main.js`, e.g. a git worktree of the base
 * commit), run exactly like `app`: `--base <appDir>` measures it as the baseline of the same run.
 */
export function baseVariant(appDir: string, node?: string): Variant {
  const runtime = node === undefined ? '' : `, ${node}`;
  return { ...app(`base: app defaults (${appDir}${runtime})`), script: join(appDir, 'dist', 'main.js'), ...(node === undefined ? {} : { node }) };
}

/** Every process the bench knows how to measure, by id. The first of a selection is its baseline. */
export const VARIANTS: Readonly<Record<string, Variant>> = {
  // apps/ingest as built, configured only through its env vars.
  app: app('app defaults (chunk 500, conc 3)'),
  // The same app without its history writes: what history costs.
  'app-history-off': app('app, history off (INGEST_HISTORY_LENGTH=0)', { INGEST_HISTORY_LENGTH: '0' }),
  // The forms gateways before decision 0012 read (one message and one history entry per event), and the two batch forms apart.
  'app-chunk100': app('app chunk 100', { INGEST_PUBLISH_CHUNK: '100' }),
  // Issue #19: tracing on at 0 %, 1 % and 100 % of chunks sampled (the default `app` is tracing off).
  'app-otel-0': app('app, tracing on, 0 % sampled', traced('0')),
  'app-otel-1': app('app, tracing on, 1 % sampled', traced('0.01')),
  'app-otel-100': app('app, tracing on, 100 % sampled', traced('1')),
  'app-chunk2000': app('app chunk 2000', { INGEST_PUBLISH_CHUNK: '2000' }),
  'app-chunk5000': app('app chunk 5000', { INGEST_PUBLISH_CHUNK: '5000' }),
  'app-conc1': app('app conc 1', { INGEST_PARTITIONS_CONCURRENTLY: '1' }),
  'app-conc6': app('app conc 6', { INGEST_PARTITIONS_CONCURRENTLY: '6' }),
  'app-conc12': app('app conc 12', { INGEST_PARTITIONS_CONCURRENTLY: '12' }),
  // kafkajs fetch sizes (defaults: maxBytesPerPartition 1 MiB, maxBytes 10 MiB), injected by child-hooks.
  // The app with kafkajs's own fetch sizes (1 MiB per partition, 10 MiB per response), the defaults before decision 0026.
  'app-fetch1m': app('app, kafkajs fetch sizes (1 MiB/partition, 10 MiB)', {}, { maxBytesPerPartition: MiB, maxBytes: 10 * MiB }),
  'app-fetch256k': app('app fetch 256 KiB/partition', {}, { maxBytesPerPartition: MiB / 4 }),
  'app-fetch2m': app('app fetch 2 MiB/partition, 50 MiB', {}, { maxBytesPerPartition: 2 * MiB, maxBytes: 50 * MiB }),
  'app-fetch4m': app('app fetch 4 MiB/partition, 50 MiB', {}, { maxBytesPerPartition: 4 * MiB, maxBytes: 50 * MiB }),
  'app-fetch8m-conc12': app('app fetch 8 MiB/p, 100 MiB, conc 12', { INGEST_PARTITIONS_CONCURRENTLY: '12' }, { maxBytesPerPartition: 8 * MiB, maxBytes: 100 * MiB }),
  // V8 young generation (default 16 MiB semi-spaces on 64-bit): fewer scavenges, fewer promotions.
  'app-semi32': app('app --max-semi-space-size=32', {}, undefined, ['--max-semi-space-size=32']),
  'app-semi64': app('app --max-semi-space-size=64', {}, undefined, ['--max-semi-space-size=64']),
  // Minimal consume → convert → publish → commit loops, one per Kafka client (loops/*.ts).
  'kafkajs-loop': loop('kafkajs loop: consume+convert+publish', 'kafkajs-loop.js', 'publish'),
  'kafkajs-loop-lua': loop('kafkajs loop, EVALSHA batch publish', 'kafkajs-loop.js', 'publish', { BENCH_PUBLISH: 'lua' }),
  'kafkajs-loop-bytes': loop('kafkajs loop, JSON-bytes rewriter', 'kafkajs-loop.js', 'publish', { BENCH_CONVERT: 'bytes' }),
  'kafkajs-loop-bytes-lua': loop('kafkajs loop, bytes rewriter + EVALSHA', 'kafkajs-loop.js', 'publish', { BENCH_CONVERT: 'bytes', BENCH_PUBLISH: 'lua' }),
  'kafkajs-loop-lua-semi64': loop('kafkajs loop, EVALSHA, semi-space 64', 'kafkajs-loop.js', 'publish', { BENCH_PUBLISH: 'lua' }, ['--max-semi-space-size=64']),
  'kafkajs-loop-bytes-lua-semi64': loop('kafkajs loop, bytes + EVALSHA, semi-space 64', 'kafkajs-loop.js', 'publish', { BENCH_CONVERT: 'bytes', BENCH_PUBLISH: 'lua' }, ['--max-semi-space-size=64']),
  'kafkajs-consume': loop('kafkajs loop: consume only', 'kafkajs-loop.js', 'consume-only'),
  'platformatic-loop': loop('@platformatic/kafka loop: consume+convert+publish', 'platformatic-loop.js', 'publish'),
  'platformatic-consume': loop('@platformatic/kafka loop: consume only', 'platformatic-loop.js', 'consume-only'),
  'platformatic-consume-big': loop('@platformatic/kafka consume only, hwm 8192, 4 MiB/p, chunk 2000', 'platformatic-loop.js', 'consume-only', { BENCH_PLATFORMATIC: JSON.stringify({ highWaterMark: 8192, maxBytesPerPartition: 4 * MiB, maxBytes: 50 * MiB }), INGEST_PUBLISH_CHUNK: '2000' }),
  'kafkajs-consume-big': loop('kafkajs consume only, 4 MiB/p, chunk 2000', 'kafkajs-loop.js', 'consume-only', { BENCH_KAFKAJS_CONSUMER: JSON.stringify({ maxBytesPerPartition: 4 * MiB, maxBytes: 50 * MiB }), INGEST_PUBLISH_CHUNK: '2000' }),
  // Issue #14: the same demo events as JSON (the app's default topics), Avro and Protobuf (formats-e2e.ts).
  'app-json': app('app, JSON values (as the demo producer writes them)'),
  'app-avro': { ...app('app, Avro values (Confluent wire format, SCHEMA_DIR)'), encoding: 'AVRO' },
  'app-protobuf': { ...app('app, Protobuf values (Confluent wire format, SCHEMA_DIR)'), encoding: 'PROTOBUF' },
  'platformatic-loop-big': loop('@platformatic/kafka loop, hwm 8192, 4 MiB/p', 'platformatic-loop.js', 'publish', { BENCH_PLATFORMATIC: JSON.stringify({ highWaterMark: 8192, maxBytesPerPartition: 4 * MiB, maxBytes: 50 * MiB }) }),
};

/** Named selections for --variants. */
export const PRESETS: Readonly<Record<string, readonly string[]>> = {
  defaults: ['app'],
  knobs: ['app', 'app-chunk100', 'app-chunk2000', 'app-chunk5000', 'app-conc1', 'app-conc6', 'app-conc12'],
  fetch: ['app', 'app-fetch256k', 'app-fetch4m', 'app-fetch8m-conc12'],
  pipeline: ['app', 'kafkajs-loop', 'kafkajs-loop-lua', 'kafkajs-loop-bytes', 'kafkajs-loop-bytes-lua', 'kafkajs-consume'],
  clients: ['kafkajs-loop', 'platformatic-loop', 'platformatic-loop-big', 'kafkajs-consume', 'platformatic-consume', 'kafkajs-consume-big', 'platformatic-consume-big'],
  gc: ['app', 'app-semi32', 'app-semi64'],
  // Everything the results file reports, in one run.
  final: [
    'app', 'app-chunk100', 'app-chunk2000', 'app-chunk5000', 'app-conc1', 'app-conc6', 'app-conc12',
    'app-fetch256k', 'app-fetch4m', 'app-semi64',
    'kafkajs-loop', 'kafkajs-loop-lua', 'kafkajs-loop-bytes', 'kafkajs-loop-bytes-lua',
    'platformatic-loop', 'kafkajs-consume', 'platformatic-consume', 'kafkajs-consume-big', 'platformatic-consume-big',
  ],
  // Decision 0012: the batch forms with and without history, against the consume-only ceiling
  // (the per-event forms are gone since 2026-12-05: compare with --base at an earlier commit).
  batching: ['app', 'app-history-off', 'kafkajs-consume'],
  headline: ['app', 'app-chunk2000', 'app-conc12', 'app-fetch4m', 'kafkajs-consume'],
  // Decision 0026 (issue #18): CPU per event against the consume-only ceiling, and the fetch sizes apart.
  cpu: ['app', 'app-fetch1m', 'kafkajs-consume'],
  // Decision 0020: what tracing costs per event.
  tracing: ['app', 'app-otel-0', 'app-otel-1', 'app-otel-100'],
  // Issue #14: ingest's CPU per event for each encoding of the same events, JSON the baseline.
  formats: ['app-json', 'app-avro', 'app-protobuf'],
};
