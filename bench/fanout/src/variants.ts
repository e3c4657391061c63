/**
 * Environment variants of our gateway measured one after the other in one run (memory-return's
 * allocator candidates, heap-limit's bounds on/off): `A=1,B=2` is one variant, `;` separates them.
 */
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import type { StackName } from './servers.js';

export interface EnvVariant {
  /** As written on the command line (`default` for none). */
  readonly label: string;
  readonly env: Readonly<Record<string, string>>;
}

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

/** `default;MALLOC_ARENA_MAX=2;jemalloc` → three variants. */
export function parseVariants(spec: string): EnvVariant[] {
  const variants = spec
    .split(';')
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((label) => ({ label, env: parseEnvList(label) }));
  if (variants.length === 0) throw new RangeError(`no variants in "${spec}": separate them with ";", e.g. "default;MALLOC_ARENA_MAX=2"`);
  return variants;
}

/** One run of `stack` with the variant's env on top of the run's --gateway-env (and optionally in a cgroup). */
export function runVariant(stack: StackName, spec: RunSpec, ctx: RunContext, env: Readonly<Record<string, string>>, cgroupProcs?: string): Promise<StackRun> {
  return runStack(stack, spec, {
    ...ctx,
    gatewayEnv: { ...ctx.gatewayEnv, ...env },
    ...(cgroupProcs === undefined ? {} : { cgroupProcs }),
  });
}
