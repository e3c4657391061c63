/**
 * Whether kafkajs's error holds a broker error of one of `types` anywhere in its chain: kafkajs wraps
 * protocol errors in retry errors (`originalError`, `cause`), and createTopics's aggregate holds one
 * error per topic (`errors`). Bounded: a cycle cannot loop.
 */
export function hasKafkaErrorType(err: unknown, ...types: readonly string[]): boolean {
  const pending: unknown[] = [err];
  for (let seen = 0; pending.length > 0 && seen < 20; seen++) {
    const e = pending.shift();
    if (e === null || typeof e !== 'object') continue;
    const { type, errors, cause, originalError } = e as { type?: unknown; errors?: unknown; cause?: unknown; originalError?: unknown };
    if (typeof type === 'string' && types.includes(type)) return true;
    pending.push(originalError ?? cause);
    if (Array.isArray(errors)) pending.push(...(errors as unknown[]));
  }
  return false;
}
