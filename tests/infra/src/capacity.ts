import { readRepoFile } from './repo.js';

/**
 * The capacity numbers of docs/operations.md (the table between `<!-- capacity:numbers -->`
 * markers): key → value. The manifests' resources and grace periods are derived from them.
 */
export function readCapacityNumbers(): ReadonlyMap<string, number> {
  const doc = readRepoFile('docs/operations.md');
  const start = doc.indexOf('<!-- capacity:numbers -->');
  const end = doc.indexOf('<!-- /capacity:numbers -->');
  if (start < 0 || end < start) throw new Error('docs/operations.md has no <!-- capacity:numbers --> table');
  const numbers = new Map<string, number>();
  for (const line of doc.slice(start, end).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`([a-z_.]+)`$/.exec(cells[1] ?? '')?.[1];
    if (key === undefined) continue;
    const value = Number(cells[2]);
    if (!Number.isFinite(value)) throw new Error(`docs/operations.md capacity ${key}: '${cells[2]}' is not a number`);
    numbers.set(key, value);
  }
  return numbers;
}

/** A capacity number; throws naming the key when the table lacks it. */
export function capacity(numbers: ReadonlyMap<string, number>, key: string): number {
  const value = numbers.get(key);
  if (value === undefined) throw new Error(`docs/operations.md capacity table has no \`${key}\``);
  return value;
}

/** Kubernetes quantity of memory in MiB (`512Mi`, `1Gi`, `268435456`). */
export function mebibytes(quantity: string | number): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(quantity));
  if (!match) throw new Error(`cannot read memory quantity '${quantity}'`);
  const factor: Record<string, number> = { '': 1 / 1_048_576, Ki: 1 / 1024, Mi: 1, Gi: 1024, K: 1e3 / 1_048_576, M: 1e6 / 1_048_576, G: 1e9 / 1_048_576 };
  return Number(match[1]) * factor[match[2] ?? '']!;
}
