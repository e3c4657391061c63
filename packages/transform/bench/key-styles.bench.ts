/**
 * Key styles on the ingest step, one style per process (a process of ingest uses one; in one process
 * the styles would share the rewriter's type feedback and slow each other down, see decision 0019):
 * transformJsonBytes() with the style against the rewriter before key styles (85ea526), rounds alternating
 * in order so that load on the shared box and GC debt hit both alike.
 *   tsc -p tsconfig.bench.json && for s in snake lodash none; do BENCH_BASE_DIR=<base checkout> node bench-dist/bench/key-styles.bench.js $s; done
 */
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createKeyTransformer, KEY_STYLES, type KeyStyle } from '../src/index.js';
import { consume } from './measure.js';
import { loadBaseRewriter } from './base-rewriter.js';

const style = (process.argv[2] ?? 'snake') as KeyStyle;
if (!KEY_STYLES.includes(style)) throw new Error(`give one of ${KEY_STYLES.join(', ')}`);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 22);
const perRound = 30_000;
const generator = createAuctionEventGenerator({ seed: 42 });
const corpus = Array.from({ length: 4_096 }, () => Buffer.from(JSON.stringify(generator.next().value)));
const head = '{"v":1,"topic":"listing-events","partition":0,"offset":"1000000","ts":1735722000000,"key":"lst-000001","payload":';
const transformer = createKeyTransformer({ keyStyle: style });
const before = await loadBaseRewriter(64, 2_048);
if (before === undefined) throw new Error('set BENCH_BASE_DIR to a checkout of the base commit with packages/transform built (base-rewriter.ts)');
const candidates: [string, (value: Buffer) => Buffer][] = [
  [`keyStyle ${style}`, (value) => transformer.transformJsonBytes(value, head, '}')],
  ['before key styles (snake)', (value) => before.rewrite(value, head, '}')],
];
const samples = candidates.map(() => [] as number[]);
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? [0, 1] : [1, 0];
  for (const c of order) {
    const run = (candidates[c] as [string, (value: Buffer) => Buffer])[1];
    const start = process.hrtime.bigint();
    // Deliberately imperative: the loop overhead is part of both numbers.
    for (let i = 0; i < perRound; i++) consume(run(corpus[i % corpus.length] as Buffer));
    (samples[c] as number[]).push(Number(process.hrtime.bigint() - start) / perRound);
  }
}
const median = (values: number[]): number => {
  const counted = values.slice(2).sort((a, b) => a - b); // the first two rounds warm up the JIT
  return counted[Math.floor(counted.length / 2)] as number;
};
const [now, old] = samples.map(median) as [number, number];
process.stdout.write(`| ${style} | ${Math.round(1e9 / now).toLocaleString('en')} | ${Math.round(now).toLocaleString('en')} | ${Math.round(old).toLocaleString('en')} | ${(now / old).toFixed(2)}× |\n`);
