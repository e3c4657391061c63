/** At most `max` calls in flight; the others wait in arrival order (a source's concurrency bound). */
export function createRequestLimit(max: number): <T>(run: () => Promise<T>) => Promise<T> {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxConcurrentRequests must be an integer ≥ 1, got ${max}`);
  let active = 0;
  const waiting: (() => void)[] = [];
  const next = (): void => {
    active--;
    waiting.shift()?.();
  };
  return async <T>(run: () => Promise<T>): Promise<T> => {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await run();
    } finally {
      next();
    }
  };
}
