/**
 * The transform bench: one run, three tables, every baseline measured in the same process.
 *   pnpm bench                                   compiles (tsc) and runs on plain node, like production
 *   BENCH_ROUND_MS=100 pnpm bench                quicker, noisier
 *   BENCH_OUT=../../bench/results/transform.md pnpm bench   also writes the markdown there
 * Corpus: @wirestream/demo-events, seed 42 (70 % listing events ≈ 2 KB, 30 % bid events ≈ 0.4 KB).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createKeyTransformer } from '../src/index.js';
import {
  createRebuildEverything,
  createRegexRewrite,
  createReviverParse,
  lodashBaseline,
  lodashMemoized,
  toSnakeCase,
} from './candidates.js';
import { formatTable, measureAll } from './measure.js';
import type { Candidate, Measurement } from './measure.js';
import { memoStrategyTable } from './memo-strategies.js';
import { loadBaseRewriter } from './base-rewriter.js';

const roundTimeMs = Number(process.env['BENCH_ROUND_MS'] ?? 300);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);
const CORPUS_SIZE = 4_096;

const generator = createAuctionEventGenerator({ seed: 42 });
const corpus = Array.from({ length: CORPUS_SIZE }, (_, offset) => {
  const event = generator.next();
  return {
    topic: event.topic,
    partition: offset % 6,
    offset: String(1_000_000 + offset),
    key: event.key,
    ts: 1_735_722_000_000 + offset,
    text: JSON.stringify(event.value),
    value: Buffer.from(JSON.stringify(event.value)),
  };
});
type Message = (typeof corpus)[number];
const meanBytes = corpus.reduce((sum, m) => sum + m.value.length, 0) / corpus.length;
const meanKeys = corpus.reduce((sum, m) => sum + (m.text.match(/":/g)?.length ?? 0), 0) / corpus.length;

let cursor = 0;
function nextMessages(count: number): Message[] {
  const batch: Message[] = [];
  for (let i = 0; i < count; i++) batch.push(corpus[cursor++ % CORPUS_SIZE] as Message);
  return batch;
}
/** Fresh parsed payloads, as JSON.parse hands them to the transform (which consumes them). */
const parsedBatch = (count: number): unknown[] => nextMessages(count).map((m) => JSON.parse(m.text) as unknown);

// --- Table 1: parsed payload → snake_cased payload ---------------------------------------------
const ours = createKeyTransformer();
const oursFrozen = createKeyTransformer({ freeze: 'deep' });
const oursUnmemoized = createKeyTransformer({ maxCacheEntries: 0 });
const rebuildEverything = createRebuildEverything(createKeyTransformer().convertKey);

const objectCandidates: [string, (value: unknown) => unknown][] = [
  ['baseline: lodash cloneDeep + mapKeys/mapValues/map + snakeCase', lodashBaseline],
  ['lodash, memoize(snakeCase)', lodashMemoized],
  ['hand-written, rebuilds every object/array (memoized; no collision check, not __proto__-safe)', rebuildEverything],
  ['**ours: transform()** (in place, memo 2048)', (v) => ours.transform(v)],
  ['ours, freeze: deep', (v) => oursFrozen.transform(v)],
  ['ours, memo disabled (toSnakeCase per key)', (v) => oursUnmemoized.transform(v)],
];

// --- Table 2: the ingest step, Kafka value Buffer → envelope Buffer for Redis ------------------
/** Same format as @wirestream/wire encodeEnvelope (kept local so the bench has no app deps). */
function envelopeText(m: Message, payloadJson: string): string {
  return (
    '{"v":1,"topic":' + JSON.stringify(m.topic) + ',"partition":' + m.partition + ',"offset":"' + m.offset +
    '","key":' + JSON.stringify(m.key) + ',"ts":' + m.ts + ',"payload":' + payloadJson + '}'
  );
}
function envelopeObject(m: Message, payload: unknown): string {
  return JSON.stringify({ v: 1, topic: m.topic, partition: m.partition, offset: m.offset, key: m.key, ts: m.ts, payload });
}
const reviverParse = createReviverParse(ours.convertKey);
const regexRewrite = createRegexRewrite(ours.convertKey);
const textTransformer = createKeyTransformer();
const bytesTransformer = createKeyTransformer();
// No lodash / none transformers in this process: they run the same function literal as the default one, and
// V8 shares its type feedback and optimized code across those closures, so exercising them here slowed the
// default row by ~20-25 % in this bench (a process of ingest uses one style). See decision 0019.
const rewriterBeforeKeyStyles = await loadBaseRewriter(64, 2048);

const ingestCandidates: [string, (m: Message) => unknown][] = [
  ['baseline: parse + lodash (field) + stringify envelope object',
    (m) => Buffer.from(envelopeObject(m, lodashBaseline(JSON.parse(m.value.toString())))),],
  ['parse + lodash memoize(snakeCase) + stringify envelope object',
    (m) => Buffer.from(envelopeObject(m, lodashMemoized(JSON.parse(m.value.toString()))))],
  ['parse + ours transform() + stringify envelope object',
    (m) => Buffer.from(envelopeObject(m, ours.transform(JSON.parse(m.value.toString()))))],
  ['parse + ours transform() + stringify payload + concat envelope',
    (m) => Buffer.from(envelopeText(m, JSON.stringify(ours.transform(JSON.parse(m.value.toString())))))],
  ['JSON.parse reviver (memoized) + stringify payload + concat',
    (m) => Buffer.from(envelopeText(m, JSON.stringify(reviverParse(m.value.toString()))))],
  ['regex key rewrite on text + concat (no validation, no collision check)',
    (m) => Buffer.from(envelopeText(m, regexRewrite(m.value.toString())))],
  ['ours: transformJson() text → text + concat envelope',
    (m) => Buffer.from(envelopeText(m, textTransformer.transformJson(m.value.toString())))],
  ['**ours: transformJsonBytes()** bytes → envelope bytes, one pass',
    (m) => { const head = envelopeText(m, ''); return bytesTransformer.transformJsonBytes(m.value, head.slice(0, -1), '}'); }],
  ['reference: parse + stringify, no key conversion (floor of parse-based)',
    (m) => Buffer.from(envelopeText(m, JSON.stringify(JSON.parse(m.value.toString()))))],
  // With BENCH_BASE_DIR (base-rewriter.ts): the base checkout's rewriter in the same run.
  ...(rewriterBeforeKeyStyles === undefined
    ? []
    : [['the same in the BENCH_BASE_DIR checkout (base of a change)', (m: Message) => { const head = envelopeText(m, ''); return rewriterBeforeKeyStyles.rewrite(m.value, head.slice(0, -1), '}'); }] as [string, (m: Message) => unknown]]),
];

function table<I>(title: string, candidates: [string, (input: I) => unknown][], prepare: (n: number) => I[]): { text: string; rows: Measurement[] } {
  const rows = measureAll(
    candidates.map(([name, run]): Candidate<I> => ({ name, run })),
    { prepare, roundTimeMs, rounds, onProgress: (message) => process.stderr.write(`  ${title}: ${message}\n`) },
  );
  return { text: `### ${title}\n\n${formatTable(rows, rows[0] as Measurement, 'event')}\n`, rows };
}

const intro = [
  '# transform bench results',
  '',
  'Regenerate (≈ 3 minutes): `cd packages/transform && BENCH_OUT=../../bench/results/transform.md pnpm bench`',
  '(after `pnpm install` and a build of `@wirestream/demo-events`; `npx turbo run bench --filter @wirestream/transform`',
  'builds first). The bench compiles with tsc and runs on plain node: under `tsx` the JSON-bytes path measured up to',
  '~1.5× slower than the same code compiled. Decision and alternatives: `docs/decisions/0003-transform.md`.',
  '',
].join('\n');

const header = [
  `## Run of ${new Date().toISOString()}`,
  '',
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, ${os.platform()} ${os.release()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at start.`,
  'Shared, noisy 2-core box: absolute numbers move from run to run, ratios within one run are what matter.',
  `Corpus: @wirestream/demo-events seed 42, ${CORPUS_SIZE} events, mean ${Math.round(meanBytes)} bytes and ${Math.round(meanKeys)} keys per event.`,
  `Each row: median of ${rounds} rounds of ${roundTimeMs} ms (candidates round-robin) over fresh inputs in batches of 256`,
  'prepared untimed; bytes allocated = median V8 heap growth per event over batches during which no GC ran',
  '(`--expose-gc`, `v8.GCProfiler`).',
  '',
].join('\n');

process.stdout.write(`${header}\n`);
const objects = table('Payload transform: parsed object → snake_cased object', objectCandidates, parsedBatch);
process.stdout.write(`${objects.text}\n`);
const ingest = table('Ingest step: Kafka value (Buffer) → envelope (Buffer) for Redis', ingestCandidates, nextMessages);
process.stdout.write(`${ingest.text}\n`);
const memo = memoStrategyTable(roundTimeMs, rounds, corpus.map((m) => m.text), toSnakeCase, (message) => process.stderr.write(`  memo: ${message}\n`));
process.stdout.write(`${memo}\n`);

/** Issue 3's target applies to the transform itself: ≥ 10× the field baseline's events/s, ≤ 1/5 of its bytes. */
function ratios(rows: Measurement[], marker: string): { speed: number; bytes: number } {
  const baseline = rows[0] as Measurement;
  const ours = rows.find((row) => row.name.includes(marker)) as Measurement;
  return { speed: ours.itemsPerSecond / baseline.itemsPerSecond, bytes: ours.bytesPerItem / baseline.bytesPerItem };
}
const ofTransform = ratios(objects.rows, 'ours: transform()');
const ofIngest = ratios(ingest.rows, 'transformJsonBytes');
const ofParseBased = ratios(ingest.rows, 'parse + ours transform() + stringify envelope object');
const summary = [
  '### Summary',
  '',
  `- \`transform()\`: ${ofTransform.speed.toFixed(1)}× the field baseline's events/s and ${ofTransform.bytes.toFixed(2)}× its bytes/event ` +
    `(target ≥ 10× and ≤ 0.20×: ${ofTransform.speed >= 10 && ofTransform.bytes <= 0.2 ? 'met' : 'NOT met'}).`,
  `- Ingest step (parse and serialize included, which every candidate pays): \`transformJsonBytes()\` ${ofIngest.speed.toFixed(1)}× ` +
    `the baseline and ${(ofIngest.speed / ofParseBased.speed).toFixed(1)}× parse + \`transform()\` + stringify, ` +
    `with ${ofIngest.bytes.toFixed(2)}× the baseline's bytes/event: the API ingest should call.`,
  '',
].join('\n');
process.stdout.write(`${summary}\n`);

const out = process.env['BENCH_OUT'];
if (out !== undefined) writeFileSync(out, [intro, header, summary, objects.text, ingest.text, memo].join('\n'));
