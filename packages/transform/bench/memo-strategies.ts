/**
 * Memo strategies for key conversion, measured on key conversion alone (the rest of the transform
 * is the same for all): realistic traffic, and realistic traffic after and among one-off keys
 * (a payload map keyed by ids), which is what makes an unbounded memo leak.
 */
import { createKeyCache } from '../src/key-cache.js';
import { formatTable, measureAll } from './measure.js';
import type { Measurement } from './measure.js';

type Convert = (key: string) => string;
interface Strategy {
  convert: Convert;
  size: () => number;
}

const CAPACITY = 2_048;

function unbounded(convert: Convert): Strategy {
  const cache = new Map<string, string>();
  return {
    convert(key) {
      let v = cache.get(key);
      if (v === undefined) cache.set(key, (v = convert(key)));
      return v;
    },
    size: () => cache.size,
  };
}

/** Caches until full, then converts without caching. */
function sizeCap(convert: Convert): Strategy {
  const cache = new Map<string, string>();
  return {
    convert(key) {
      let v = cache.get(key);
      if (v === undefined) {
        v = convert(key);
        if (cache.size < CAPACITY) cache.set(key, v);
      }
      return v;
    },
    size: () => cache.size,
  };
}

/** Exact LRU on a Map (insertion order): a hit moves the key to the end. */
function lru(convert: Convert): Strategy {
  const cache = new Map<string, string>();
  return {
    convert(key) {
      let v = cache.get(key);
      if (v !== undefined) {
        cache.delete(key);
        cache.set(key, v);
        return v;
      }
      v = convert(key);
      if (cache.size >= CAPACITY) cache.delete(cache.keys().next().value as string);
      cache.set(key, v);
      return v;
    },
    size: () => cache.size,
  };
}

function twoGenerations(convert: Convert): Strategy {
  const cache = createKeyCache(CAPACITY, convert);
  return { convert: cache.convert, size: () => cache.size };
}

function none(convert: Convert): Strategy {
  return { convert, size: () => 0 };
}

const STRATEGIES: [string, (convert: Convert) => Strategy][] = [
  ['none: toSnakeCase per key', none],
  ['unbounded Map (lodash.memoize)', unbounded],
  [`size cap ${CAPACITY}, then uncached`, sizeCap],
  [`exact LRU ${CAPACITY} (Map delete + set per hit)`, lru],
  [`**ours: two generations** of ${CAPACITY / 2}`, twoGenerations],
];

/** One-off keys with upper case letters (so every strategy has to convert them). */
let junkSeq = 0;
const junkKey = (): string => `Lst${(junkSeq++).toString(36).toUpperCase()}Id`;

export function memoStrategyTable(
  roundTimeMs: number,
  rounds: number,
  texts: readonly string[],
  convert: Convert,
  onProgress: (message: string) => void,
): string {
  const keyLists = texts.map((text) => Array.from(text.matchAll(/"([^"\\]*)":/g), (m) => m[1] as string));
  let cursor = 0;
  const realistic = (n: number): string[][] => Array.from({ length: n }, () => keyLists[cursor++ % keyLists.length] as string[]);
  // Each event also carries a map of 20 one-off ids.
  const mixed = (n: number): string[][] =>
    realistic(n).map((keys) => [...keys, ...Array.from({ length: 20 }, junkKey)]);

  const sections: string[] = [];
  for (const [scenario, prepare, pollute] of [
    ['realistic keys only', realistic, false],
    ['after 10,000 one-off keys, then 20 one-off keys per event', mixed, true],
  ] as const) {
    const strategies = STRATEGIES.map(([name, make]) => {
      const strategy = make(convert);
      if (pollute) for (let i = 0; i < 10_000; i++) strategy.convert(junkKey());
      return { name, strategy };
    });
    const rows = measureAll(
      strategies.map(({ name, strategy }) => ({
        name,
        run: (keys: string[]) => {
          let last = '';
          // Deliberately imperative, like the transform's own loop.
          for (let i = 0; i < keys.length; i++) last = strategy.convert(keys[i] as string);
          return last;
        },
      })),
      { prepare, roundTimeMs: Math.max(50, roundTimeMs / 3), rounds, onProgress: (m) => onProgress(`${scenario}: ${m}`) },
    );
    const sizes = strategies.map(({ name, strategy }) => `${name.replace(/\*/g, '')}: ${strategy.size().toLocaleString('en-US')}`);
    sections.push(
      `#### ${scenario}\n\n${formatTable(rows, rows[0] as Measurement, 'event')}\n\nCache entries after the run: ${sizes.join('; ')}.\n`,
    );
  }
  return `### Memo strategies: key conversion only (all keys of one event)\n\n${sections.join('\n')}`;
}
