/**
 * One HTTP request of a look-up source, with its timeout, answered as parsed JSON; every way it
 * can fail is a {@link LookupError} that names the source (shared by every source kind).
 */
import { LookupError } from './types.js';

export async function fetchJson(source: string, url: string, init: RequestInit, timeoutMs: number): Promise<{ readonly status: number; readonly body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    throw new LookupError(timedOut ? `look-up source "${source}" did not answer within ${timeoutMs} ms` : `look-up source "${source}" is unreachable: ${causeOf(err)}`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new LookupError(`look-up source "${source}" answered HTTP ${response.status} without JSON`);
  }
}

function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
