#!/usr/bin/env node
/**
 * What a unicast subscribe costs the compiler (issue 37), in one process: N clients each sending
 * `subscription { listingUpdated(listing_id: "lst-…") { … } }` with its own literal, all N subscribing
 * again in every round (reconnects), through the real compiler (default document cache, 1,000 texts)
 * in alternating rounds of two sides:
 *   - `moved`:   root-field literals moved into variables before the cache (literals.ts, the default);
 *   - `as sent`: each text its own cache entry (`normalizeLiterals: false`, the compiler before it).
 * Each side keeps its compiler across rounds, as a gateway does. Reported: CPU per subscribe (the
 * whole compile: cache, parse and validate when missed, arguments, filter, dedup key) and the
 * document cache's hit rate.
 *
 *   node bench/fanout/dist/unicast-compile.js [--clients 10000] [--rounds 6]
 */
import { markdownTable, parseCli, positiveInts } from '@wirestream/bench-kit';
import { allowAll, alternate, cpuMicros, createCompiler, listingKey, medianRange, runEngineBench } from './engine-fixture.js';

const { values } = parseCli({
  options: {
    clients: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '6' },
  },
});
const { clients: CLIENTS, rounds: ROUNDS } = positiveInts(values, ['clients', 'rounds']);

const queries = Array.from(
  { length: CLIENTS },
  (_, i) => `subscription { listingUpdated(listing_id: "${listingKey(i)}") { listing_id event_type occurred_at listing { title current_price { amount_cents } } } }`,
);

type Side = 'moved' | 'as sent';
const sides: Side[] = ['moved', 'as sent'];
const compilers = new Map(sides.map((side) => [side, createCompiler({ normalizeLiterals: side === 'moved' })]));

function round(side: Side): Promise<number> {
  const compiler = compilers.get(side);
  if (compiler === undefined) throw new Error(side);
  return cpuMicros(() => {
    for (const query of queries) {
      const result = compiler.compile({ query }, allowAll);
      if (!result.ok) throw new Error(`bench operation does not compile: ${JSON.stringify(result.errors)}`);
    }
  });
}

runEngineBench(async () => {
  // The first round (every cache cold) is the warm-up, reported on its own.
  const { first, samples } = await alternate(sides, ROUNDS, round);
  console.log(`unicast subscribes through the compiler: ${CLIENTS} clients, each its own literal, ${ROUNDS} rounds each after a first, alternating (node ${process.version})`);
  const perClient = (us: number): string => (us / CLIENTS).toFixed(1);
  const rows = sides.map((side) => {
    const compiler = compilers.get(side);
    const { hits, misses } = compiler?.documentCache ?? { hits: 0, misses: 0 };
    return [side, perClient(first.get(side) ?? 0), medianRange(samples.get(side) ?? [], perClient), `${((hits / (hits + misses)) * 100).toFixed(2)} %`, String(misses), String(compiler?.cachedDocuments ?? 0)];
  });
  const header = ['side', 'µs per subscribe, first round', 'µs per subscribe, later rounds, median (min–max)', 'document cache hit rate', 'texts parsed and validated', 'cached documents'];
  console.log(markdownTable([header, ...rows]));
});
