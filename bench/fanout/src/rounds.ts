/**
 * The loop every comparing scenario shares: each item (a stack, a config, a filter arm) once per
 * repetition, repetitions outermost, so that slow drifts of a shared machine hit every item alike.
 */

/** The items in the order of repetition `rep` (1-based): it starts with item `rep` (mod their count). */
export function rotated<T>(items: readonly T[], rep: number): T[] {
  return items.map((_, i) => items[(i + rep - 1) % items.length] as T);
}

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
