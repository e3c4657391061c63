/**
 * A bounded memo of key conversions with two generations (an approximate LRU):
 * lookups hit `young` first; a key found only in `old` is promoted to `young`; when `young` is full
 * it becomes `old` and the previous `old` is dropped. A hit costs one `Map.get` (a true LRU pays a
 * `delete` + `set` per hit), memory stays below `maxEntries` keys, and the few hundred business
 * keys survive any amount of one-off keys because each use promotes them again.
 * See docs/decisions/0003-transform.md for the measurements against a plain size cap and an LRU.
 */
export interface KeyCache {
  readonly convert: (key: string) => string;
  readonly size: number;
}

export function createKeyCache(maxEntries: number, convert: (key: string) => string): KeyCache {
  if (maxEntries === 0) return { convert, size: 0 };
  const generationSize = Math.max(1, Math.floor(maxEntries / 2));
  let young = new Map<string, string>();
  let old = new Map<string, string>();
  return {
    convert(key) {
      let converted = young.get(key);
      if (converted !== undefined) return converted;
      converted = old.get(key);
      if (converted === undefined) converted = convert(key);
      if (young.size >= generationSize) {
        old = young;
        young = new Map();
      }
      young.set(key, converted);
      return converted;
    },
    get size() {
      return young.size + old.size;
    },
  };
}
