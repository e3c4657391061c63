/**
 * A memory budget for one server process, as a container limit would set it: a child cgroup of
 * the bench's own cgroup with a hard memory limit (cgroup v2 `memory.max`, or v1
 * `memory.limit_in_bytes` where the memory controller is still on the v1 hierarchy). The kernel
 * OOM-kills the process (SIGKILL) when it goes over, as it would kill the pod.
 *
 * Needs write access to the cgroup filesystem (root in the bench's container). Where that is
 * missing, `createMemoryBudget` says why and the heap-limit scenario runs without the budget
 * (and says so in its report): `prlimit --as` is no substitute, V8 reserves far more address
 * space than it ever touches and would not even start.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MemoryBudget {
  /** `cgroup v2 memory.max` or `cgroup v1 memory.limit_in_bytes`, and the path. */
  readonly description: string;
  /** Write a pid here to put that process under the budget. */
  readonly procsFile: string;
  /** Highest usage the cgroup saw, bytes (v1 `memory.max_usage_in_bytes`, v2 `memory.peak` when the kernel has it). */
  peakBytes(): number | undefined;
  /** OOM kills inside the budget so far. */
  oomKills(): number | undefined;
  /** Removes the cgroup (its processes must have exited). */
  remove(): void;
}

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** The v1 and v2 paths of this process's own cgroup, from /proc/self/cgroup. */
function ownCgroups(): { v1Memory: string | undefined; v2: string | undefined } {
  const lines = (read('/proc/self/cgroup') ?? '').trim().split('\n');
  let v1Memory: string | undefined;
  let v2: string | undefined;
  for (const line of lines) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === '') v2 = path;
    else if (controllers?.split(',').includes('memory')) v1Memory = path;
  }
  return { v1Memory, v2 };
}

/**
 * A fresh child cgroup limited to `limitBytes` (swap off where the knob exists), or the reason
 * it cannot be made.
 */
export function createMemoryBudget(limitBytes: number, name: string): MemoryBudget | string {
  const { v1Memory, v2 } = ownCgroups();
  const attempts: string[] = [];
  // v2 first: unified hierarchy with the memory controller available to our cgroup's children.
  const v2Root = existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : undefined;
  if (v2Root !== undefined && v2 !== undefined) {
    const parent = join(v2Root, v2);
    if ((read(join(parent, 'cgroup.subtree_control')) ?? '').split(/\s+/).includes('memory')) {
      const dir = join(parent, name);
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'memory.max'), String(limitBytes));
        if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
        return budgetAt(dir, `cgroup v2 memory.max = ${limitBytes} in ${dir}`, 'v2');
      } catch (err) {
        attempts.push(`v2 ${dir}: ${(err as Error).message}`);
      }
    } else attempts.push(`v2: the memory controller is not enabled for children of ${parent}`);
  }
  if (v1Memory !== undefined && existsSync('/sys/fs/cgroup/memory')) {
    const dir = join('/sys/fs/cgroup/memory', v1Memory, name);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
      // memsw (memory + swap) exists only with swap accounting; the machine may have no swap at all.
      if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(limitBytes));
      return budgetAt(dir, `cgroup v1 memory.limit_in_bytes = ${limitBytes} in ${dir}`, 'v1');
    } catch (err) {
      attempts.push(`v1 ${dir}: ${(err as Error).message}`);
    }
  }
  return attempts.length > 0 ? attempts.join('; ') : 'no writable cgroup memory controller found (/proc/self/cgroup)';
}

function budgetAt(dir: string, description: string, version: 'v1' | 'v2'): MemoryBudget {
  const num = (file: string): number | undefined => {
    const text = read(join(dir, file));
    return text === undefined ? undefined : Number(text.trim());
  };
  return {
    description,
    procsFile: join(dir, 'cgroup.procs'),
    peakBytes: () => (version === 'v1' ? num('memory.max_usage_in_bytes') : num('memory.peak')),
    oomKills() {
      const text = read(join(dir, version === 'v1' ? 'memory.oom_control' : 'memory.events'));
      const match = /^oom_kill (\d+)$/m.exec(text ?? '');
      return match ? Number(match[1]) : undefined;
    },
    remove() {
      try {
        rmdirSync(dir);
      } catch {
        // Still has a (dying) process, or already gone: the kernel removes nothing by itself, but an empty leftover is harmless.
      }
    },
  };
}
