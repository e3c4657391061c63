/**
 * The loop every comparing scenario shares: each item (a stack, a config, a filter arm) once per
 * repetition, repetitions outermost, so that slow drifts of a shared machine hit every item alike.
 */

import { rotated } from '@wirestream/bench-kit';

/**
 * `measure` of every item, `repeat` times, the results in the order they ran. With `rotate`, each
 * repetition starts one item later, so that a position effect within a round favours none.
 */
export async function inRounds<T, R>(
  repeat: number,
  items: readonly T[],
  measure: (item: T, rep: number) => Promise<R>,
  { rotate = false }: { readonly rotate?: boolean } = {},
): Promise<R[]> {
  const results: R[] = [];
  for (let rep = 1; rep <= repeat; rep++) {
    for (const item of rotate ? rotated(items, rep) : items) results.push(await measure(item, rep));
  }
  return results;
}

/** ` (2/4)` after a run's label when the items repeat, else nothing. */
export function roundTag(rep: number, repeat: number): string {
  return repeat > 1 ? ` (${rep}/${repeat})` : '';
}
