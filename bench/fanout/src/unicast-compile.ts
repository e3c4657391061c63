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
 */
import { markdownTable } from '@wirestream/bench-kit';
import { allowAll, alternate, cpuMicros, createCompiler, medianRange, unicastQuery } from './engine-fixture.js';
import { countOption, type MicroBench } from './scenario.js';

export const unicastCompile: MicroBench = {
  description: 'µs per unicast subscribe through the compiler, literals moved into variables vs each text cached as sent (issue 37)',
  options: { clients: countOption(10_000, 'clients, each its own literal'), rounds: countOption(6, 'rounds per side after a first') },
  async run(o) {
    const clients = o.positiveInt('clients');
    const rounds = o.positiveInt('rounds');
    const queries = Array.from({ length: clients }, (_, i) => unicastQuery(i));
    const sides = ['moved', 'as sent'] as const;
    const compilers = new Map(sides.map((side) => [side, createCompiler({ normalizeLiterals: side === 'moved' })]));
    const round = (side: (typeof sides)[number]): Promise<number> => {
      const compiler = compilers.get(side);
      if (compiler === undefined) throw new Error(side);
      return cpuMicros(() => {
        for (const query of queries) {
          const result = compiler.compile({ query }, allowAll);
          if (!result.ok) throw new Error(`bench operation does not compile: ${JSON.stringify(result.errors)}`);
        }
      });
    };
    // The first round (every cache cold) is the warm-up, reported on its own.
    const { first, samples } = await alternate(sides, rounds, round);
    const perClient = (us: number): string => (us / clients).toFixed(1);
    const rows = sides.map((side) => {
      const compiler = compilers.get(side);
      const { hits, misses } = compiler?.documentCache ?? { hits: 0, misses: 0 };
      return [side, perClient(first.get(side) ?? 0), medianRange(samples.get(side) ?? [], perClient), `${((hits / (hits + misses)) * 100).toFixed(2)} %`, String(misses), String(compiler?.cachedDocuments ?? 0)];
    });
    const header = ['side', 'µs per subscribe, first round', 'µs per subscribe, later rounds, median (min–max)', 'document cache hit rate', 'texts parsed and validated', 'cached documents'];
    return [
      `unicast subscribes through the compiler: ${clients} clients, each its own literal, ${rounds} rounds each after a first, alternating (node ${process.version})`,
      markdownTable([header, ...rows]),
    ].join('\n');
  },
};
