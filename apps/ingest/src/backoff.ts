const MAX_BACKOFF_MS = 2_000; // 2 seconds: a recovered Redis is used within this

/** Pause before retry `attempt` (0-based): `baseMs` doubled per attempt, at most 2 s. */
export function backoffMs(attempt: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attempt, 16), MAX_BACKOFF_MS);
}
