/** A server's extra environment as a bench's command line gives it (`--gateway-env`, variants). */

/** The system's jemalloc, for `LD_PRELOAD`. */
export const JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';

/** `A=1,B=2` → { A: '1', B: '2' }; `jemalloc` is short for LD_PRELOAD of the system's libjemalloc.so.2. */
export function parseEnvList(spec: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const part of spec.split(',').map((p) => p.trim())) {
    if (part === '' || part === 'default') continue;
    if (part === 'jemalloc') {
      env['LD_PRELOAD'] = JEMALLOC;
      continue;
    }
    const at = part.indexOf('=');
    if (at <= 0) throw new RangeError(`env entry "${part}": expected NAME=VALUE (e.g. MALLOC_ARENA_MAX=2), "jemalloc" or "default"`);
    env[part.slice(0, at)] = part.slice(at + 1);
  }
  return env;
}
