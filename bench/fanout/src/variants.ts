/**
 * Environment variants of our gateway measured one after the other in one run (memory-return's
 * allocator candidates, heap-limit's bounds on/off): `A=1,B=2` is one variant, `;` separates them.
 */
import { JEMALLOC, parseEnvList } from '@wirestream/bench-kit';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import type { StackName } from './servers.js';

export interface EnvVariant {
  /** As written on the command line (`default` for none). */
  readonly label: string;
  readonly env: Readonly<Record<string, string>>;
}

export { JEMALLOC, parseEnvList };

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
