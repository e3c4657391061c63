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
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createOperationCompiler } from '@wirestream/gateway/internals';
import { median, parseCli } from '@wirestream/bench-kit';

const { values } = parseCli({
  options: {
    clients: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '6' },
  },
});
const CLIENTS = Number(values.clients);
const ROUNDS = Number(values.rounds);

const schema = loadWirestreamSchema(auctionSchemaPath);
const queries = Array.from(
  { length: CLIENTS },
  (_, i) => `subscription { listingUpdated(listing_id: "lst-${String(i).padStart(6, '0')}") { listing_id event_type occurred_at listing { title current_price { amount_cents } } } }`,
);
const access = { key: 'bench', authorize: (_route: unknown, args: Readonly<Record<string, unknown>>) => ({ ok: true as const, args }) };

type Side = 'moved' | 'as sent';
const sides: Side[] = ['moved', 'as sent'];
const compilers = new Map(sides.map((side) => [side, createOperationCompiler(schema, { channelPrefix: 'ws', normalizeLiterals: side === 'moved' })]));

function round(side: Side): number {
  const compiler = compilers.get(side);
  if (compiler === undefined) throw new Error(side);
  const started = process.cpuUsage();
  for (const query of queries) {
    const result = compiler.compile({ query }, access);
    if (!result.ok) throw new Error(`bench operation does not compile: ${JSON.stringify(result.errors)}`);
  }
  const used = process.cpuUsage(started);
  return used.user + used.system;
}

const first = new Map<Side, number>();
for (const side of sides) first.set(side, round(side)); // the first round: every cache cold
const timings = new Map<Side, number[]>(sides.map((s) => [s, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) timings.get(side)?.push(round(side));
}
console.log(`unicast subscribes through the compiler: ${CLIENTS} clients, each its own literal, ${ROUNDS} rounds each after a first, alternating (node ${process.version})`);
console.log('| side | µs per subscribe, first round | µs per subscribe, later rounds, median (min–max) | document cache hit rate | texts parsed and validated | cached documents |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const side of sides) {
  const t = timings.get(side) ?? [];
  const compiler = compilers.get(side);
  const { hits, misses } = compiler?.documentCache ?? { hits: 0, misses: 0 };
  console.log(
    `| ${side} | ${((first.get(side) ?? 0) / CLIENTS).toFixed(1)} | ${(median(t) / CLIENTS).toFixed(1)} (${(Math.min(...t) / CLIENTS).toFixed(1)}–${(Math.max(...t) / CLIENTS).toFixed(1)}) | ${((hits / (hits + misses)) * 100).toFixed(2)} % | ${misses} | ${compiler?.cachedDocuments ?? 0} |`,
  );
}
process.exit(0);
