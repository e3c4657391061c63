/** Forced garbage collection for benches that measure a heap from a clean start. */

/** `global.gc`, or an error saying how to run the bench (`hint`) when node was started without `--expose-gc`. */
export function requireGc(hint = 'run with node --expose-gc'): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error(hint);
  return gc;
}
