// Memory per connection context: eager (every backend built per connection, what the field
// deployment did) vs lazy (`createLazyContext`, nothing built until read).
//
//   node --expose-gc --import tsx bench/context.bench.ts        (or: pnpm bench)
//
// Each variant builds CONTEXTS contexts, keeps them alive, forces GC and divides the heap growth
// by CONTEXTS. Every variant runs ROUNDS times, interleaved, and the median is printed, so all
// numbers come from the same process and the same heap state. The "base only" row is the
// baseline: the per-connection base object every variant also holds.
//
// The five backends are stand-ins shaped like the per-connection clients of a GraphQL server (a
// DataLoader: options, a Map cache, a queue, bound closures). Real clients are usually larger,
// so the eager numbers are a floor; the lazy numbers do not depend on them.
import { createLazyContext, type LazyFactories } from '../src/index.js';

const CONTEXTS = 10_000;
const ROUNDS = 5;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('Run with --expose-gc: node --expose-gc --import tsx bench/context.bench.ts');
  process.exit(1);
}

interface Base {
  readonly connectionId: string;
  readonly scopes: readonly string[];
}

interface Backend {
  readonly name: string;
  readonly options: { readonly maxBatchSize: number; readonly cache: boolean };
  readonly cache: Map<string, unknown>;
  readonly queue: string[];
  load(key: string): unknown;
  clear(): void;
  close(): void;
}

let factoryCalls = 0;

function createBackend(name: string, base: Base): Backend {
  factoryCalls++;
  const cache = new Map<string, unknown>();
  const queue: string[] = [];
  return {
    name,
    options: { maxBatchSize: 100, cache: true },
    cache,
    queue,
    load: (key) => cache.get(`${base.connectionId}:${key}`),
    clear: () => cache.clear(),
    close: () => {
      queue.length = 0;
    },
  };
}

interface Members {
  readonly listings: Backend;
  readonly bids: Backend;
  readonly prices: Backend;
  readonly users: Backend;
  readonly redis: Backend;
}

// Defined once for the whole server, as the package requires.
const factories: LazyFactories<Members, Base> = {
  listings: (ctx) => createBackend('listings', ctx),
  bids: (ctx) => createBackend('bids', ctx),
  prices: (ctx) => createBackend('prices', ctx),
  users: (ctx) => createBackend('users', ctx),
  redis: (ctx) => createBackend('redis', ctx),
};

const SCOPES = Object.freeze(['listings', 'bids']);
const makeBase = (i: number): Base => ({ connectionId: `conn-${i}`, scopes: SCOPES });

// A lazy context done the obvious way: per connection, an object with one getter closure per
// member plus a cache. Shows what sharing the Proxy handler and factories saves.
function createClosureLazyContext(base: Base): object {
  const cache: Partial<Record<keyof Members, Backend>> = {};
  const ctx: Record<string, unknown> = { ...base };
  for (const key of Object.keys(factories) as (keyof Members)[]) {
    Object.defineProperty(ctx, key, {
      enumerable: true,
      get: () => (cache[key] ??= factories[key](ctx as unknown as Base & Members)),
    });
  }
  return ctx;
}

interface Variant {
  readonly name: string;
  readonly create: (i: number) => object;
}

const variants: readonly Variant[] = [
  { name: 'base only (baseline)', create: makeBase },
  {
    name: 'eager: all 5 backends built',
    create: (i) => {
      const base = makeBase(i);
      return {
        ...base,
        listings: createBackend('listings', base),
        bids: createBackend('bids', base),
        prices: createBackend('prices', base),
        users: createBackend('users', base),
        redis: createBackend('redis', base),
      };
    },
  },
  { name: 'lazy, closures per connection, none read', create: (i) => createClosureLazyContext(makeBase(i)) },
  { name: 'lazy (createLazyContext), none read', create: (i) => createLazyContext(factories, makeBase(i)) },
  {
    name: 'lazy (createLazyContext), 1 of 5 read',
    create: (i) => {
      const ctx = createLazyContext(factories, makeBase(i));
      void ctx.redis;
      return ctx;
    },
  },
  {
    name: 'lazy (createLazyContext), all 5 read',
    create: (i) => {
      const ctx = createLazyContext(factories, makeBase(i));
      void [ctx.listings, ctx.bids, ctx.prices, ctx.users, ctx.redis];
      return ctx;
    },
  },
];

function collect(): void {
  // Several passes: one full GC can leave garbage that a finalizer or weak reference freed late.
  for (let i = 0; i < 4; i++) gc!();
}

function measure(variant: Variant): { bytes: number; calls: number } {
  const kept: object[] = new Array<object>(CONTEXTS);
  collect();
  const callsBefore = factoryCalls;
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < CONTEXTS; i++) kept[i] = variant.create(i);
  collect();
  const after = process.memoryUsage().heapUsed;
  if (kept.length !== CONTEXTS) throw new Error('unreachable: keeps `kept` alive until after the measurement');
  return { bytes: (after - before) / CONTEXTS, calls: factoryCalls - callsBefore };
}

const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
const calls = new Map<string, number>();
measure(variants[1]!); // warm up: compile the code paths before measuring
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of variants) {
    const result = measure(variant);
    samples.get(variant.name)!.push(result.bytes);
    calls.set(variant.name, result.calls);
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const baseline = median(samples.get(variants[0]!.name)!);
const eager = median(samples.get(variants[1]!.name)!);

console.log(
  `Heap per connection context, ${CONTEXTS.toLocaleString('en')} contexts, median of ${ROUNDS} rounds (Node ${process.version})\n`,
);
console.log('| variant | bytes / context | over base | vs eager | factory calls |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  const bytes = median(samples.get(variant.name)!);
  const over = bytes - baseline;
  const vsEager = variant === variants[0] ? '' : `${((over / (eager - baseline)) * 100).toFixed(1)}%`;
  console.log(
    `| ${variant.name} | ${bytes.toFixed(0)} | ${variant === variants[0] ? '' : over.toFixed(0)} | ${vsEager} | ${calls.get(variant.name)!.toLocaleString('en')} |`,
  );
}
